"""Reader for Nsight Compute reports (``.ncu-rep``) through NVIDIA's ``ncu_report`` module.

Contract: ``read_ncu_rep(path)`` returns a Profile with one KernelProfile per profiled
launch (all ranges, in report order, ids 0..n-1). Only the metrics drgpu uses are read
(each once). Per-PC metrics are joined by their correlation id (the PC); the instruction
listing covers the whole function (walked from its entry until the SASS ends), so
instructions that never executed are present too, with zero counts. File/line come from
the report's line table; source text from the imported sources, when the report has them.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .. import data
from ..errors import ReportFormatError, ToolNotFoundError
from ..model import KernelProfile, Profile
from .common import NCU_MAGIC, clean_sass, instruction_frame

_STRING_METRICS = ("device__attribute_display_name", "launch__func_cache_config")
_MAX_FUNCTION_BYTES = 4 << 20


def _module():
    try:
        import ncu_report  # type: ignore
    except ImportError as e:  # pragma: no cover - dependency is declared
        raise ToolNotFoundError("the ncu_report module is not installed",
                                hint="pip install ncu-report") from e
    return ncu_report


def _wanted_scalar_metrics() -> list[str]:
    names = []
    for canon in data.metrics_table()["metrics"]:
        names.append(canon)
    for spec in data.stall_reasons().values():
        names.extend(spec["counter"])
    return names


def read_ncu_rep(path: Path, progress=None) -> Profile:
    with open(path, "rb") as fh:
        if fh.read(4) != NCU_MAGIC:
            raise ReportFormatError(f"{path} is not an Nsight Compute report (bad magic)")
    nr = _module()
    try:
        ctx = nr.load_report(str(path))
    except Exception as e:  # the module raises plain exceptions for corrupt files
        raise ReportFormatError(f"{path}: ncu_report could not load it ({e})",
                                hint="the report may be truncated or from an incompatible ncu") from e
    if ctx is None:
        raise ReportFormatError(f"{path}: ncu_report could not load it")
    actions = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for i in range(rng.num_actions()):
            actions.append(rng.action_by_idx(i))
    kernels = []
    for kid, a in enumerate(actions):
        kernels.append(_read_action(nr, a, kid))
        if progress:
            progress(kid + 1, len(actions))
    return Profile(path=str(path), format="ncu-rep", kernels=kernels)


def _scalar(m) -> float:
    try:
        v = m.as_double()
    except Exception:
        return math.nan
    return float(v) if v is not None else math.nan


def _read_action(nr, a, kid: int) -> KernelProfile:
    metrics: dict[str, float] = {}
    for canon in _wanted_scalar_metrics():
        for name in data.metric_aliases(canon):
            m = a.metric_by_name(name)
            if m is not None:
                metrics[canon] = _scalar(m)
                break
    # Stall counters: store under the canonical (first) name of each reason.
    for spec in data.stall_reasons().values():
        for name in spec["counter"]:
            if name in metrics and spec["counter"][0] not in metrics:
                metrics[spec["counter"][0]] = metrics[name]
    strings = {}
    for name in _STRING_METRICS:
        m = a.metric_by_name(name)
        if m is not None:
            try:
                strings[name] = m.as_string()
            except Exception:
                pass
    name = a.name(nr.IAction.NameBase_DEMANGLED) or a.name()
    mangled = a.name(nr.IAction.NameBase_MANGLED) or ""
    cc = ""
    if "device__attribute_compute_capability_major" in metrics:
        cc = f"{int(metrics['device__attribute_compute_capability_major'])}.{int(metrics.get('device__attribute_compute_capability_minor', 0))}"
    sm_count = metrics.get("device__attribute_multiprocessor_count", metrics.get("launch__sm_count"))
    grid = tuple(int(metrics.get(f"launch__grid_dim_{d}", 0) or 0) for d in "xyz")
    block = tuple(int(metrics.get(f"launch__block_dim_{d}", 0) or 0) for d in "xyz")
    df, base = _instructions(a)
    source_text = {}
    try:
        files = a.source_files()
        for f in files:
            source_text[str(f)] = str(files[f]).splitlines()
    except Exception:
        pass
    return KernelProfile(
        id=kid, name=name, mangled=mangled, device=strings.get("device__attribute_display_name", ""),
        compute_capability=cc, chip=data.chip_for(cc),
        sm_count=int(sm_count) if sm_count and not math.isnan(sm_count) else None,
        grid=grid, block=block, metrics=metrics, strings=strings, instructions=df,
        function_base=base, source_text=source_text)


def _per_pc(m) -> dict[int, float]:
    n = m.num_instances()
    if n == 0 or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    out = {}
    for i in range(n):
        try:
            out[int(ids.as_uint64(i))] = float(m.as_double(i))
        except Exception:
            continue
    return out


def _instructions(a):
    cols: dict[str, dict[int, float]] = {}
    for canon, spec in data.metrics_table()["instruction_columns"].items():
        for name in spec.get("rep", []):
            m = a.metric_by_name(name)
            if m is not None and m.has_correlation_ids() and m.num_instances() > 0:
                vals = _per_pc(m)
                if vals:
                    cols[canon] = vals
                    break
    not_issued: dict[int, float] = {}
    for rid, spec in data.stall_reasons().items():
        for name in spec["sampling"]:
            m = a.metric_by_name(name)
            if m is None:
                continue
            vals = _per_pc(m)
            if vals or m.num_instances() == 0:
                cols[f"stall_{rid}"] = vals
                mn = a.metric_by_name(name + "_not_issued")
                if mn is not None:
                    for pc, v in _per_pc(mn).items():
                        not_issued[pc] = not_issued.get(pc, 0.0) + v
                break
    if not_issued:
        cols["samples_not_issued"] = not_issued
    if "samples" not in cols and any(k.startswith("stall_") for k in cols):
        tot: dict[int, float] = {}
        for k, vals in cols.items():
            if k.startswith("stall_"):
                for pc, v in vals.items():
                    tot[pc] = tot.get(pc, 0.0) + v
        cols["samples"] = tot
    known = set()
    for vals in cols.values():
        known.update(vals)
    base = None
    m = a.metric_by_name("launch__function_pcs")
    if m is not None:
        try:
            base = int(m.as_uint64(0))
        except Exception:
            base = None
    if base is None and known:
        base = min(known)
    sass: dict[int, str] = {}
    if base is not None:
        end = max(known) if known else base
        pc = base
        while pc - base < _MAX_FUNCTION_BYTES:
            text = a.sass_by_pc(pc)
            if not text:
                if pc > end:
                    break
            else:
                sass[pc] = clean_sass(text)
            pc += 16
    lines: dict[int, tuple[str | None, int | None]] = {}
    for pc in sass:
        try:
            si = a.source_info(pc)
        except Exception:
            si = None
        if si is not None:
            f, ln = si.file_name(), si.line()
            if f:
                lines[pc] = (str(f), int(ln))
    df = instruction_frame(list(sass) or sorted(known), cols, sass, lines, base)
    return df, base


def read_line_table(path: Path) -> list[tuple[str, dict[int, tuple[str, int, str]], dict[str, list[str]]]]:
    """Per kernel launch: (demangled name, {function offset: (file, line, sass)}, sources).
    Used to give CSV exports the line numbers a SASS-only source page lacks."""
    with open(path, "rb") as fh:
        if fh.read(4) != NCU_MAGIC:
            raise ReportFormatError(f"{path} is not an Nsight Compute report")
    nr = _module()
    try:
        ctx = nr.load_report(str(path))
    except Exception as e:
        raise ReportFormatError(f"{path}: could not load ({e})") from e
    out = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for i in range(rng.num_actions()):
            a = rng.action_by_idx(i)
            df, _ = _instructions(a)
            table = {int(o): (f, int(ln), s) for o, f, ln, s in zip(df["offset"], df["file"], df["line"], df["sass"])
                     if f is not None and not pd.isna(ln)}
            src = {}
            try:
                files = a.source_files()
                for f in files:
                    src[str(f)] = str(files[f]).splitlines()
            except Exception:
                pass
            out.append((a.name(nr.IAction.NameBase_DEMANGLED) or a.name(), table, src))
    return out
