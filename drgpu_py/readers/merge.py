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
    base = _function_base(first_k)
    _refuse_other_builds(kernels[0].name, frames)
    stacked = pd.concat([df.reset_index(drop=True) for _, df in frames], ignore_index=True, sort=False)
    stacked["offset"] = stacked["offset"].astype("int64")
    out = _merged_by_offset(stacked).reset_index()
    out.index = pd.Index([int(base) + int(o) for o in out["offset"]], name="pc", dtype="int64")
    return out[_column_order(df0, out)], int(base)


def _column_order(df0: pd.DataFrame, out: pd.DataFrame) -> list[str]:
    """The offset, the first table's columns in its order, then those only other tables have."""
    return (
        ["offset"]
        + [c for c in df0.columns if c != "offset" and c in out]
        + [c for c in out.columns if c not in df0.columns and c != "offset"]
    )


def _function_base(k: KernelProfile) -> int:
    """The function's base PC: as read, else its first row's PC less its offset."""
    if k.function_base is not None:
        return k.function_base
    df = k.instructions
    return int(df.index[0]) - int(df["offset"].iloc[0])


def _refuse_other_builds(name: str, frames: list[tuple[str, pd.DataFrame]]) -> None:
    """The same program has the same instruction at each offset; anything else means the
    reports come from different builds, and adding their counts would be meaningless."""
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
                    f"kernel {name}: SASS differs at offset +0x{off:x} ({ref[off][1]}: {ref[off][0]}, {lab}: {op})",
                    hint="merge only reports of the same build of the same program",
                )
            ref.setdefault(off, (op, lab))


def _merged_by_offset(stacked: pd.DataFrame) -> pd.DataFrame:
    """One row per offset: counters summed, per-request factors averaged by executions, text
    columns from the first report that has them."""
    text = [c for c in _TEXT_COLUMNS if c in stacked]
    g = stacked.groupby("offset", sort=True)
    summed_cols = [c for c in stacked.columns if c not in text and c != "offset" and c not in _WEIGHTED_COLUMNS]
    out = g[summed_cols].sum(min_count=1).fillna(0.0) if summed_cols else pd.DataFrame(index=g.size().index)
    for col, weight in _WEIGHTED_COLUMNS.items():
        if col in stacked:
            out[col] = _weighted_mean(stacked, col, weight)
    _first_text(out, g, text)
    return out


def _first_text(out: pd.DataFrame, g, text: list[str]) -> None:
    """The text columns of the first report that has them ('first' skips missing values,
    and the first report comes first in the stack)."""
    for c in text:
        out[c] = g[c].first()
    if "line" in out:
        out["line"] = out["line"].astype("Int64")
    if "sass" in out:
        out["sass"] = out["sass"].fillna("")


def _weighted_mean(stacked: pd.DataFrame, col: str, weight: str) -> pd.Series:
    """``col`` per offset averaged with ``weight`` (its largest value where nothing weighs)."""
    w = stacked[weight].fillna(0.0) if weight in stacked else pd.Series(1.0, index=stacked.index)
    num = (stacked[col].fillna(0.0) * w).groupby(stacked["offset"]).sum()
    den = w.groupby(stacked["offset"]).sum()
    plain = stacked[col].groupby(stacked["offset"]).max()
    return (num / den.where(den > 0)).fillna(plain).fillna(0.0)


def merge_kernels(
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
    _refuse_mixed_chips(ks)
    metrics = _combined_metrics(ks, ranks)
    strings = dict(first.strings)
    durs = [(lab, dur) for lab, k in members if (dur := k.duration_ns) is not None]
    if durs:
        _duration_metrics(metrics, strings, durs, ranks)
    notes = _rank_notes(labels, n_reports) if ranks else _group_launches(metrics, strings, ks)
    notes += _difference_notes(members)
    df, base = merge_instructions(ks, labels)
    if not ranks:
        _mean_launch_counts(df, len(ks))
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
        metric_names=_metric_names(ks),
        strings=strings,
        instructions=df,
        function_base=base,
        source_text=_first_source_text(ks),
        process=first.process,
        notes=list(dict.fromkeys(notes + [n for k in ks for n in k.notes])),
    )


def _metric_names(ks: list[KernelProfile]) -> dict[str, str]:
    """The name each canonical metric was read as, the first launch's winning."""
    return {c: n for k in reversed(ks) for c, n in k.metric_names.items()}


def _group_launches(metrics: dict[str, float], strings: dict[str, str], ks: list[KernelProfile]) -> list[str]:
    """Record a group's launch count and ids; the note that says the result is its mean launch."""
    metrics["drgpu__group_launches"] = float(len(ks))
    strings["drgpu__group_launch_ids"] = ",".join(str(k.id) for k in ks)
    return [
        f"aggregated over {len(ks)} launches of this kernel: the mean launch (counts, per-instruction "
        "samples, rates and duration averaged; --per-launch analyzes each launch)"
    ]


def _mean_launch_counts(df: pd.DataFrame, launches: int) -> None:
    """A group's per-instruction counts as its mean launch's (factors and text stay)."""
    if df.empty:
        return
    counts = [c for c in df.columns if c not in _TEXT_COLUMNS and c != "offset" and c not in _WEIGHTED_COLUMNS]
    df[counts] = df[counts] / launches


def _refuse_mixed_chips(ks: list[KernelProfile]) -> None:
    chips = {k.chip or k.compute_capability for k in ks if (k.chip or k.compute_capability)}
    if len(chips) > 1:
        raise InputError(
            f"kernel {ks[0].name}: reports come from different GPU architectures ({', '.join(sorted(chips))})",
            hint="merge reports of one GPU type; compare different GPUs with drgpu diff",
        )


def _combined_metrics(ks: list[KernelProfile], ranks: bool) -> dict[str, float]:
    """Every metric any launch has, combined by its rollup; a group's mean launch divides
    the sums by the launch count."""
    names = sorted({n for k in ks for n in k.metrics})
    metrics = {n: combine([k.metrics.get(n, math.nan) for k in ks], rollup(n)) for n in names}
    metrics = {n: v for n, v in metrics.items() if not math.isnan(v)}
    if ranks:
        return metrics
    return {n: v / len(ks) if rollup(n) == "sum" else v for n, v in metrics.items()}


def _duration_metrics(
    metrics: dict[str, float], strings: dict[str, str], durs: list[tuple[str, float]], ranks: bool
) -> None:
    """The spread of the launches' durations: min, max and mean; across ranks also their
    count, relative spread and the slowest and fastest rank; over a group its total."""
    vals = [d for _, d in durs]
    mean = sum(vals) / len(vals)
    pre = "drgpu__rank" if ranks else "drgpu__group"
    metrics.update({f"{pre}_duration_min": min(vals), f"{pre}_duration_max": max(vals), f"{pre}_duration_mean": mean})
    if not ranks:
        metrics["drgpu__group_duration_total"] = sum(vals)
        return
    metrics["drgpu__rank_count"] = float(len(durs))
    if len(durs) >= 2 and mean > 0:
        metrics[SPREAD] = (max(vals) - min(vals)) / mean
    strings["drgpu__rank_slowest"] = max(durs, key=lambda t: t[1])[0]
    strings["drgpu__rank_fastest"] = min(durs, key=lambda t: t[1])[0]
    strings["drgpu__rank_durations"] = ", ".join(f"{lab}={d / 1000:.2f}us" for lab, d in durs)


def _rank_notes(labels: list[str], n_reports: int) -> list[str]:
    notes = [
        f"merged from {len(labels)} of {n_reports} reports ({', '.join(labels)}); metrics combined by rollup "
        "(sums for counts, averages for rates and the duration, max for .max), per-instruction counts summed by function offset"
    ]
    if len(labels) < n_reports:
        notes.append(f"this launch is missing from {n_reports - len(labels)} report(s)")
    return notes


def _difference_notes(members: list[tuple[str, KernelProfile]]) -> list[str]:
    """What differs between the merged launches' configurations and devices."""
    notes = []
    if len({(k.grid, k.block) for _, k in members}) > 1:
        notes.append(
            "launch configuration differs between reports: "
            + "; ".join(f"{lab}: grid {k.grid} block {k.block}" for lab, k in members)
        )
    devices = {k.device for _, k in members if k.device}
    if len(devices) > 1:
        notes.append("devices differ: " + ", ".join(sorted(devices)))
    return notes


def _first_source_text(ks: list[KernelProfile]) -> dict[str, list[str]]:
    """Each source file's text as the first launch that has it gives it."""
    source_text: dict[str, list[str]] = {}
    for k in ks:
        for f, lines in k.source_text.items():
            source_text.setdefault(f, lines)
    return source_text


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
    notes = _merge_notes(profiles, labels, kernels, groups)
    return Profile(path=" + ".join(p.path for p in profiles), format="merged", kernels=kernels, notes=notes)


def _merge_notes(
    profiles: list[Profile],
    labels: list[str],
    kernels: list[KernelProfile],
    groups: list[list[tuple[int, KernelProfile]]],
) -> list[str]:
    """What was merged, which launches not every report has, then each report's own notes."""
    notes = [f"merged {len(profiles)} reports: " + ", ".join(f"{lab} ({p.path})" for lab, p in zip(labels, profiles))]
    partial = [k.name for k, members in zip(kernels, groups) if len(members) < len(profiles)]
    if partial:
        notes.append(f"{len(partial)} launch(es) are not in every report: " + "; ".join(partial[:5]))
    for p in profiles:
        notes.extend(n for n in p.notes if n not in notes)
    return notes
