"""pandas views of an analysis, for notebooks and scripts (docs/api.md lists their columns,
dtypes and joins).

Contract: every frame is a pure function of an analysis, a live one
(:class:`~drgpu_py.analysis.Analysis`) or one read back from its JSON
(:class:`~drgpu_py.analysis.saved.SavedAnalysis`). One row stands for one thing, so a column
sums to a total without double counting:

- ``kernels_frame``: one row per kernel (group), key ``kernel_id``;
- ``findings_frame``: one row per finding, key ``(kernel_id, id)``;
- ``locations_frame``: one row per location of a finding, key ``(kernel_id, id, location)``;
- ``stalls_frame``: one row per stall reason of a kernel, key ``(kernel_id, reason)``;
- ``stall_lines_frame``: one row per source line the tree shows under a stall reason, key
  ``(kernel_id, reason, file, line)``;
- ``source_frame`` (needs the report): one row per source line of a kernel's SASS, key
  ``(kernel_id, file, line)``;
- ``metrics_frame`` (needs the report): one row per raw metric of a kernel, key
  ``(kernel_id, metric)``.

The first five read only what the JSON document holds, with its values (rounded as it
rounds them), so a live analysis and its saved JSON give equal frames; the last two read the
report's per-instruction table and metrics, which the JSON does not hold, and raise a
UsageError on a saved analysis. Every frame has its columns and dtypes whatever its rows
(an empty frame too): text ``string``, counts and lines ``Int64`` (nullable: ``<NA>`` where
not measured), measures ``float64`` (NaN where not measured), severity and grade ordered
categoricals (``low < medium < high``, ``poor < okay < good < excellent``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from ..errors import UsageError
from ..profile import KernelProfile, short_names
from .display import NAME_WIDTH
from ..specs import loader as data
from .findings import SEVERITIES, Finding
from .sol import GRADES
from .tree import Node, location_text

#: Severity as an ordered categorical: ``df.severity >= "medium"`` and sorting work by rank.
SEVERITY_DTYPE = pd.CategoricalDtype(list(reversed(SEVERITIES)), ordered=True)
#: Speed-of-light grade as an ordered categorical, worst first.
GRADE_DTYPE = pd.CategoricalDtype(list(GRADES), ordered=True)
TEXT = pd.StringDtype()
COUNT = "Int64"
MEASURE = "float64"

KERNEL_DTYPES: dict[str, Any] = {
    "kernel": TEXT,
    "short_name": TEXT,
    "kernel_id": COUNT,
    "launches": COUNT,
    "total_ns": MEASURE,
    "mean_ns": MEASURE,
    "time_share": MEASURE,
    "bound": TEXT,
    "grade": GRADE_DTYPE,
    "limiter": TEXT,
    "limiter_pct": MEASURE,
    "stall_cycle_pct": MEASURE,
    "findings": COUNT,
    "top_finding": TEXT,
    "top_time_saved_ns": MEASURE,
}
FINDING_DTYPES: dict[str, Any] = {
    "kernel": TEXT,
    "short_name": TEXT,
    "kernel_id": COUNT,
    "launches": COUNT,
    "id": TEXT,
    "severity": SEVERITY_DTYPE,
    "estimated_speedup": MEASURE,
    "estimate_capped": "bool",
    "time_share": MEASURE,
    "time_saved_ns": MEASURE,
    "title": TEXT,
    "where": TEXT,
    "locations": COUNT,
    "audience": TEXT,
    "advice": TEXT,
}
LOCATION_DTYPES: dict[str, Any] = {
    "kernel_id": COUNT,
    "id": TEXT,
    "location": COUNT,
    "where": TEXT,
    "file": TEXT,
    "line": COUNT,
    "share": MEASURE,
    "pc_offset": COUNT,
    "sass": TEXT,
    "code": TEXT,
    "role": TEXT,
}
STALL_DTYPES: dict[str, Any] = {
    "kernel_id": COUNT,
    "cause": TEXT,
    "reason": TEXT,
    "label": TEXT,
    "stall_pct": MEASURE,
}
STALL_LINE_DTYPES: dict[str, Any] = {
    "kernel_id": COUNT,
    "reason": TEXT,
    "where": TEXT,
    "file": TEXT,
    "line": COUNT,
    "reason_pct": MEASURE,
    "pc_offset": COUNT,
    "sass": TEXT,
    "code": TEXT,
}
METRIC_DTYPES: dict[str, Any] = {"kernel_id": COUNT, "metric": TEXT, "value": MEASURE}
#: source_frame's columns before one ``stall_<reason>`` column per stall reason (samples).
SOURCE_DTYPES: dict[str, Any] = {
    "kernel_id": COUNT,
    "file": TEXT,
    "line": COUNT,
    "code": TEXT,
    "instructions": COUNT,
    "inst_executed": MEASURE,
    "samples": MEASURE,
}

#: Prefix of a metric drgpu itself adds to a profile (a group's launch count): not a raw metric.
_OWN_METRIC = "drgpu__"


@dataclass(frozen=True)
class FrameKernel:
    """One kernel as every frame reads it, from either kind of analysis."""

    kernel_id: int | None
    name: str
    launches: int | None
    stall_cycle_pct: float | None  # rounded as the JSON rounds it
    findings: list[Finding]
    tree: Node | None
    profile: KernelProfile | None  # None: a saved analysis (the JSON holds no report data)


@dataclass(frozen=True)
class FrameInput:
    """What the frames read of an analysis: its summary rows and kernels."""

    report: str | None
    summary: list[dict[str, Any]]
    kernels: list[FrameKernel]
    saved: bool  # read back from JSON: the report's data (per-line table, metrics) is not there


class Framed(Protocol):
    """An analysis the frames read: analysis.Analysis or saved.SavedAnalysis (each says what
    it holds; a protocol, as neither module may be imported here)."""

    def frame_input(self) -> FrameInput: ...


def _frame(rows: Iterable[Mapping[str, Any]], dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """Rows as a frame with exactly these columns and dtypes (also when there are no rows)."""
    frame = pd.DataFrame(list(rows), columns=list(dtypes))
    return frame.astype(dict(dtypes)) if len(frame) else _empty(dtypes)


def _empty(dtypes: Mapping[str, Any]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in dtypes.items()})


def _short_names(source: FrameInput) -> dict[str, str]:
    """Every kernel name's short form: different for different names, as wide as the terminal
    summary's (display.NAME_WIDTH; ``profile.short_names``), the same in every frame."""
    names = [row["name"] or "" for row in source.summary] + [k.name or "" for k in source.kernels]
    return short_names(names, NAME_WIDTH)


def kernels_frame(analysis: Framed) -> pd.DataFrame:
    """One row per kernel (group), by total GPU time (the summary's order)."""
    source = analysis.frame_input()
    by_id = {k.kernel_id: k for k in source.kernels}
    short = _short_names(source)
    rows = []
    for row in source.summary:
        kernel = by_id.get(row["kernel_id"])
        top = row["findings"][0] if row["findings"] else {}
        rows.append(
            {
                "kernel": row["name"],
                "short_name": short[row["name"] or ""],
                "kernel_id": row["kernel_id"],
                "launches": row["launches"],
                "total_ns": row["total_ns"],
                "mean_ns": row["mean_ns"],
                "time_share": row["time_share"],
                "bound": row["bound"],
                "grade": row["grade"],
                "limiter": row["limiter"],
                "limiter_pct": row["limiter_pct"],
                "stall_cycle_pct": kernel.stall_cycle_pct if kernel is not None else None,
                "findings": len(row["findings"]),
                "top_finding": top.get("id"),
                "top_time_saved_ns": top.get("time_saved_ns"),
            }
        )
    return _frame(rows, KERNEL_DTYPES)


def findings_frame(analysis: Framed) -> pd.DataFrame:
    """One row per finding, kernels in the analysis's order and each kernel's findings
    ranked (best first). ``time_saved_ns`` is the summary's (group time x (1 - 1/estimated
    speedup)); its locations are in :func:`locations_frame`."""
    source = analysis.frame_input()
    saved_by_kernel = {
        row["kernel_id"]: {f["id"]: f.get("time_saved_ns") for f in row["findings"]} for row in source.summary
    }
    short = _short_names(source)
    rows = []
    for kernel in source.kernels:
        saved = saved_by_kernel.get(kernel.kernel_id, {})
        for finding in kernel.findings:
            doc = finding.to_dict()  # the JSON's values, rounded as it rounds them
            rows.append(
                {
                    "kernel": kernel.name,
                    "short_name": short[kernel.name or ""],
                    "kernel_id": kernel.kernel_id,
                    "launches": kernel.launches,
                    "id": doc["id"],
                    "severity": doc["severity"],
                    "estimated_speedup": doc["estimated_speedup"],
                    "estimate_capped": bool(doc["estimate_capped"]),
                    "time_share": doc["time_share"],
                    "time_saved_ns": saved.get(finding.id),
                    "title": doc["title"],
                    "where": location_text(finding.locations[0]) if finding.locations else None,
                    "locations": len(finding.locations),
                    "audience": doc["audience"],
                    "advice": doc["advice"],
                }
            )
    return _frame(rows, FINDING_DTYPES)


def locations_frame(analysis: Framed) -> pd.DataFrame:
    """One row per location of a finding (a finding without one has no row), in the
    finding's order (``location`` 0 is the one ``where`` names). Join to findings_frame on
    ``["kernel_id", "id"]``."""
    rows = []
    for kernel in analysis.frame_input().kernels:
        for finding in kernel.findings:
            for index, loc in enumerate(finding.locations):
                rows.append(
                    {
                        "kernel_id": kernel.kernel_id,
                        "id": finding.id,
                        "location": index,
                        "where": location_text(loc),
                        "file": loc.get("file"),
                        "line": loc.get("line"),
                        "share": loc.get("share"),
                        "pc_offset": loc.get("pc_offset"),
                        "sass": loc.get("sass"),
                        "code": loc.get("code"),
                        "role": loc.get("role"),
                    }
                )
    return _frame(rows, LOCATION_DTYPES)


def _reason_nodes(tree: Node | None) -> Iterator[tuple[str, Node]]:
    """(cause group id, reason node) of a stall tree, in the tree's order."""
    for group in tree.children if tree is not None else []:
        if group.kind != "group":
            continue
        for node in group.children:
            if node.kind == "reason":
                yield str(group.attrs.get("group", "")), node


def stalls_frame(analysis: Framed) -> pd.DataFrame:
    """One row per stall reason with stall cycles: its cause (the tree's group), label and
    % of the kernel's stall cycles (``stall_pct``; a kernel's rows sum to about 100)."""
    rows = [
        {
            "kernel_id": kernel.kernel_id,
            "cause": cause,
            "reason": node.attrs.get("reason"),
            "label": node.name,
            "stall_pct": node.value,
        }
        for kernel in analysis.frame_input().kernels
        for cause, node in _reason_nodes(kernel.tree)
    ]
    return _frame(rows, STALL_DTYPES)


def stall_lines_frame(analysis: Framed) -> pd.DataFrame:
    """One row per source line the tree shows under a stall reason (its top three), with
    the % of that reason's samples at the line (``reason_pct``). Join to stalls_frame on
    ``["kernel_id", "reason"]``; source_frame has every line's samples per reason."""
    rows = []
    for kernel in analysis.frame_input().kernels:
        for _, node in _reason_nodes(kernel.tree):
            for line in node.children:
                if line.kind != "line":
                    continue
                loc = line.attrs
                rows.append(
                    {
                        "kernel_id": kernel.kernel_id,
                        "reason": node.attrs.get("reason"),
                        "where": line.name,
                        "file": loc.get("file"),
                        "line": loc.get("line"),
                        "reason_pct": line.value,
                        "pc_offset": loc.get("pc_offset"),
                        "sass": loc.get("sass"),
                        "code": loc.get("code"),
                    }
                )
    return _frame(rows, STALL_LINE_DTYPES)


def _profiles(analysis: Framed, frame: str) -> list[tuple[int | None, KernelProfile]]:
    """Each kernel's profile; a saved analysis has none (the JSON holds no report data)."""
    source = analysis.frame_input()
    if source.saved:
        raise UsageError(
            f"{frame}() needs the report: a saved analysis holds no per-instruction table or raw metrics",
            hint=f"drgpu_py.analyze({source.report or 'REPORT'!r}).{frame}() reads it from the report",
        )
    return [(k.kernel_id, k.profile) for k in source.kernels if k.profile is not None]


def source_frame(analysis: Framed) -> pd.DataFrame:
    """One row per source line of each kernel's SASS (a kernel group: its mean launch), in
    the order of the code: the line's text (where the report embeds the source), its SASS
    instructions, the instructions executed, PC samples and PC samples per stall reason
    (``stall_<reason>``; NaN where the report has no such column). Instructions without a
    line are one row with no file and line. Needs the report."""
    reasons = [f"stall_{r}" for r in data.stall_reasons()]
    dtypes = {**SOURCE_DTYPES, **{col: MEASURE for col in reasons}}
    frames = []
    for kernel_id, profile in _profiles(analysis, "source_frame"):
        table = profile.instructions
        if table.empty or "file" not in table or "line" not in table:
            continue
        sums = [c for c in ("inst_executed", "samples", *reasons) if c in table]
        # Lines in the order of their first instruction; dropna=False keeps SASS without a line.
        lines = table.groupby(["file", "line"], dropna=False, sort=False)
        out = lines[sums].sum(min_count=1).reset_index() if sums else lines.size().reset_index()[["file", "line"]]
        out["instructions"] = lines.size().to_numpy()
        out["kernel_id"] = kernel_id
        out["code"] = [
            profile.source_line(str(f), int(ln)) if isinstance(f, str) and pd.notna(ln) else None
            for f, ln in zip(out["file"], out["line"])
        ]
        frames.append(out.reindex(columns=list(dtypes)))
    if not frames:
        return _empty(dtypes)
    return pd.concat(frames, ignore_index=True).astype(dtypes)


def metrics_frame(analysis: Framed) -> pd.DataFrame:
    """One row per raw metric of each kernel, by its canonical name (specs/metrics.yaml; a
    kernel group: the mean launch's value). Metrics the report lacks have no row. Needs the
    report."""
    rows = [
        {"kernel_id": kernel_id, "metric": name, "value": value}
        for kernel_id, profile in _profiles(analysis, "metrics_frame")
        for name, value in profile.metrics.items()
        if not name.startswith(_OWN_METRIC)
    ]
    return _frame(rows, METRIC_DTYPES)
