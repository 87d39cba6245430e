"""Coalesce reports of the same program taken on several GPUs or ranks into one profile.

Contract: ``merge_profiles(profiles) -> Profile`` is pure (inputs are not modified). Launches
are matched by demangled name and launch order: the i-th launch of kernel K in one report
joins the i-th launch of K in every other report. A launch missing from some reports is
merged from those that have it (a note says so). For each matched launch:

* per-instruction rows are joined by **function offset**, never by absolute PC or row
  position: each process loads the code at its own address. Counter columns (executed
  instructions, samples, stall samples, sectors, ...) are summed; the merged table is
  indexed by the first report's function base plus the offset. Reports whose SASS differs at
  an offset are not the same program and are refused;
* scalar metrics are combined by their rollup (:func:`rollup`; the table is in docs/compare.md);
* the spread of durations across ranks is stored under ``drgpu__rank_*`` metrics, which the
  ``rank-imbalance`` finding reads.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

import pandas as pd

from ..errors import InputError, NoKernelsError, UsageError
from ..profile import KernelProfile, Profile

#: Per-instruction columns that are not counters: joined, not summed.
_TEXT_COLUMNS = ("sass", "file", "line")
#: Per-instruction columns that are per-request factors: averaged, weighted by executions.
_WEIGHTED_COLUMNS = {"shared_nway": "inst_executed"}

#: Metric names (after any "SECTION.Group." prefix of a CSV export) with no rollup suffix
#: that still count events, so they add up across ranks.
_UNSUFFIXED_COUNTS = re.compile(
    r"(_sample_count|_requests|_excessive|_sectors(_\w+)?|_bytes)$|^smsp__pcsamp_warps_issue_stalled_"
)

DURATION = "gpu__time_duration.sum"
SPREAD = "drgpu__rank_duration_spread"


def rollup(name: str) -> str:
    """How a metric combines across ranks: ``sum``, ``avg``, ``max``, ``min`` or ``first``.

    Follows ncu's naming ``unit__counter.rollup[.submetric]``: configuration (``launch__*``,
    ``device__*``) ``first``; the kernel duration ``avg``; event counts ``sum``; ``.max``/``.min``
    as named; averages, rates and ratios ``avg`` (a sum of ratios means nothing). The full
    table: docs/compare.md, ``drgpu merge``.
    """
    parts = name.split(".")
    # CSV exports qualify some metrics with their section, e.g. "TPC.TriageCompute.sm__x.avg".
    lead = next((i for i, p in enumerate(parts) if "__" in p), 0)
    name = ".".join(parts[lead:])
    if name.startswith(("launch__", "device__")):
        return "first"
    if name == DURATION:
        return "avg"
    parts = name.split(".")
    if len(parts) == 1:
        return "sum" if _UNSUFFIXED_COUNTS.search(name) else "avg"
    roll, sub = parts[1], parts[2:]
    if roll in ("ratio", "pct") or sub:
        return "avg"  # rates, ratios, percentages of peak, peaks: the rank-typical value
    return {"sum": "sum", "max": "max", "min": "min"}.get(roll, "avg")


def combine(values: list[float], rule: str) -> float:
    vals = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return math.nan
    if rule == "sum":
        return float(sum(vals))
    if rule == "max":
        return max(vals)
    if rule == "min":
        return min(vals)
    if rule == "first":
        return vals[0]
    return float(sum(vals) / len(vals))


def rank_labels(profiles: list[Profile]) -> list[str]:
    """A short, unique label per report (its file stem; '#2' and on for repeats)."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for p in profiles:
        stem = Path(p.path).name
        for suffix in (".ncu-rep", ".raw.csv", ".csv", ".json"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        seen[stem] += 1
        out.append(stem if seen[stem] == 1 else f"{stem}#{seen[stem]}")
    return out


def match_launches(profiles: list[Profile]) -> list[list[tuple[int, KernelProfile]]]:
    """Group launches across reports by (demangled name, occurrence of that name). Each group
    lists (report index, launch); groups come in the first report's launch order, then the
    launches only later reports have."""
    groups: dict[tuple[str, int], list[tuple[int, KernelProfile]]] = {}
    for ri, p in enumerate(profiles):
        seen: dict[str, int] = defaultdict(int)
        for k in p.kernels:
            key = (k.name, seen[k.name])
            seen[k.name] += 1
            groups.setdefault(key, []).append((ri, k))
    return list(groups.values())


def _opcode(sass: str) -> str:
    toks = [t for t in str(sass or "").split() if not t.startswith("@")]
    return toks[0].rstrip(";") if toks else ""


def merge_instructions(kernels: list[KernelProfile], labels: list[str]) -> tuple[pd.DataFrame, int | None]:
    """Join per-instruction tables by function offset; return the merged table (indexed by
    the first table's function base + offset) and that base."""
    frames = [(lab, k.instructions) for lab, k in zip(labels, kernels) if not k.instructions.empty]
    if not frames:
        return pd.DataFrame(), kernels[0].function_base
    first_k = next(k for k in kernels if not k.instructions.empty)
    df0 = first_k.instructions
    base = first_k.function_base
    if base is None:
        base = int(df0.index[0]) - int(df0["offset"].iloc[0])
    # The same program has the same instruction at each offset; anything else means the
    # reports come from different builds, and adding their counts would be meaningless.
    ref: dict[int, tuple[str, str]] = {}
    opcodes: dict[str, str] = {}  # launches of one function repeat each text
    for lab, df in frames:
        for off, s in zip(df["offset"].astype(int), df["sass"]):
            op = opcodes.get(s)
            if op is None:
                op = opcodes[s] = _opcode(s)
            if not op:
                continue
            if off in ref and ref[off][0] != op:
                raise InputError(
                    f"kernel {kernels[0].name}: SASS differs at offset +0x{off:x} ({ref[off][1]}: {ref[off][0]}, {lab}: {op})",
                    hint="merge only reports of the same build of the same program",
                )
            ref.setdefault(off, (op, lab))
    stacked = pd.concat([df.reset_index(drop=True) for _, df in frames], ignore_index=True, sort=False)
    stacked["offset"] = stacked["offset"].astype("int64")
    text = [c for c in _TEXT_COLUMNS if c in stacked]
    numeric = [c for c in stacked.columns if c not in text and c != "offset"]
    g = stacked.groupby("offset", sort=True)
    summed_cols = [c for c in numeric if c not in _WEIGHTED_COLUMNS]
    out = g[summed_cols].sum(min_count=1).fillna(0.0) if summed_cols else pd.DataFrame(index=g.size().index)
    for col, weight in _WEIGHTED_COLUMNS.items():
        if col not in stacked:
            continue
        w = stacked[weight].fillna(0.0) if weight in stacked else pd.Series(1.0, index=stacked.index)
        num = (stacked[col].fillna(0.0) * w).groupby(stacked["offset"]).sum()
        den = w.groupby(stacked["offset"]).sum()
        plain = stacked[col].groupby(stacked["offset"]).max()
        out[col] = (num / den.where(den > 0)).fillna(plain).fillna(0.0)
    for c in text:
        # 'first' skips missing values, and the first report comes first in the stack.
        out[c] = g[c].first()
    if "line" in out:
        out["line"] = out["line"].astype("Int64")
    if "sass" in out:
        out["sass"] = out["sass"].fillna("")
    out = out.reset_index()
    out.index = pd.Index([int(base) + int(o) for o in out["offset"]], name="pc", dtype="int64")
    cols = (
        ["offset"]
        + [c for c in df0.columns if c != "offset" and c in out]
        + [c for c in out.columns if c not in df0.columns and c != "offset"]
    )
    return out[cols], int(base)


def merge_kernels(  # noqa: PLR0912 - one branch per kind of value merged (counts, rates, strings)
    members: list[tuple[str, KernelProfile]], kid: int, n_reports: int, ranks: bool = True
) -> KernelProfile:
    """Merge labelled KernelProfiles into one: launches of one kernel taken on several ranks
    (``ranks``: one per report, their duration spread kept for rank-imbalance) or several
    launches of one kernel in one report (``ranks=False``, drgpu_py.analysis.groups: the result is the
    group's mean launch, so counts, per-instruction counts and the duration stay consistent
    with one another; launch count and total, min and max duration are kept as
    ``drgpu__group_*`` metrics, and the group's totals are the mean times the launch count)."""
    labels = [lab for lab, _ in members]
    ks = [k for _, k in members]
    first = ks[0]
    chips = {k.chip or k.compute_capability for k in ks if (k.chip or k.compute_capability)}
    if len(chips) > 1:
        raise InputError(
            f"kernel {first.name}: reports come from different GPU architectures ({', '.join(sorted(chips))})",
            hint="merge reports of one GPU type; compare different GPUs with drgpu diff",
        )
    names = sorted({n for k in ks for n in k.metrics})
    metrics = {n: combine([k.metrics.get(n, math.nan) for k in ks], rollup(n)) for n in names}
    metrics = {n: v for n, v in metrics.items() if not math.isnan(v)}
    if not ranks:
        metrics = {n: v / len(ks) if rollup(n) == "sum" else v for n, v in metrics.items()}
    notes = []
    durs = [(lab, dur) for lab, k in members if (dur := k.duration_ns) is not None]
    strings = dict(first.strings)
    if durs:
        vals = [d for _, d in durs]
        mean = sum(vals) / len(vals)
        pre = "drgpu__rank" if ranks else "drgpu__group"
        metrics.update(
            {f"{pre}_duration_min": min(vals), f"{pre}_duration_max": max(vals), f"{pre}_duration_mean": mean}
        )
        if ranks:
            metrics["drgpu__rank_count"] = float(len(durs))
            if len(durs) >= 2 and mean > 0:
                metrics[SPREAD] = (max(vals) - min(vals)) / mean
            strings["drgpu__rank_slowest"] = max(durs, key=lambda t: t[1])[0]
            strings["drgpu__rank_fastest"] = min(durs, key=lambda t: t[1])[0]
            strings["drgpu__rank_durations"] = ", ".join(f"{lab}={d / 1000:.2f}us" for lab, d in durs)
        else:
            metrics["drgpu__group_duration_total"] = sum(vals)
    if ranks:
        notes.append(
            f"merged from {len(ks)} of {n_reports} reports ({', '.join(labels)}); metrics combined by rollup "
            "(sums for counts, averages for rates and the duration, max for .max), per-instruction counts summed by function offset"
        )
        if len(ks) < n_reports:
            notes.append(f"this launch is missing from {n_reports - len(ks)} report(s)")
    else:
        metrics["drgpu__group_launches"] = float(len(ks))
        strings["drgpu__group_launch_ids"] = ",".join(str(k.id) for k in ks)
        notes.append(
            f"aggregated over {len(ks)} launches of this kernel: the mean launch (counts, per-instruction "
            "samples, rates and duration averaged; --per-launch analyzes each launch)"
        )
    grids = {(k.grid, k.block) for k in ks}
    if len(grids) > 1:
        notes.append(
            "launch configuration differs between reports: "
            + "; ".join(f"{lab}: grid {k.grid} block {k.block}" for lab, k in members)
        )
    devices = {k.device for k in ks if k.device}
    if len(devices) > 1:
        notes.append("devices differ: " + ", ".join(sorted(devices)))
    df, base = merge_instructions(ks, labels)
    if not ranks and not df.empty:
        counts = [c for c in df.columns if c not in _TEXT_COLUMNS and c != "offset" and c not in _WEIGHTED_COLUMNS]
        df[counts] = df[counts] / len(ks)
    source_text: dict[str, list[str]] = {}
    for k in ks:
        for f, lines in k.source_text.items():
            source_text.setdefault(f, lines)
    return KernelProfile(
        id=kid,
        name=first.name,
        mangled=first.mangled,
        device=first.device,
        compute_capability=first.compute_capability,
        chip=first.chip,
        sm_count=first.sm_count,
        grid=first.grid,
        block=first.block,
        metrics=metrics,
        metric_names={c: n for k in reversed(ks) for c, n in k.metric_names.items()},
        strings=strings,
        instructions=df,
        function_base=base,
        source_text=source_text,
        process=first.process,
        notes=list(dict.fromkeys(notes + [n for k in ks for n in k.notes])),
    )


def merge_profiles(profiles: list[Profile]) -> Profile:
    """Merge reports of one program from several GPUs or ranks (see the module docstring)."""
    if len(profiles) < 2:
        raise UsageError("merging needs at least two reports")
    labels = rank_labels(profiles)
    groups = match_launches(profiles)
    if not groups:
        raise NoKernelsError("none of the reports holds a kernel launch")
    kernels = [
        merge_kernels([(labels[ri], k) for ri, k in members], kid, len(profiles)) for kid, members in enumerate(groups)
    ]
    notes = [f"merged {len(profiles)} reports: " + ", ".join(f"{lab} ({p.path})" for lab, p in zip(labels, profiles))]
    partial = [k.name for k, members in zip(kernels, groups) if len(members) < len(profiles)]
    if partial:
        notes.append(f"{len(partial)} launch(es) are not in every report: " + "; ".join(partial[:5]))
    for p in profiles:
        notes.extend(n for n in p.notes if n not in notes)
    return Profile(path=" + ".join(p.path for p in profiles), format="merged", kernels=kernels, notes=notes)
