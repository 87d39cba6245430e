"""Kernel groups: the launches of one kernel analyzed as one, and the application summary.

Contract: ``group_profile(profile) -> Profile`` is pure: launches with the same demangled
name, grid, block and code (the SASS listing, when the report has it) form a group; a group
of one launch is that launch, unchanged; a larger group becomes its mean launch
(``readers.merge.merge_kernels(..., ranks=False)``: counts, per-instruction samples and duration
averaged, so every ratio the analysis forms is a launch's; the group's totals are the mean
times the launch count). ``summary(analysis) -> list[dict]`` ranks the groups by GPU time
and each finding by the time it would save in the profiled run:
``time_saved = group time x (1 - 1/estimated speedup)``; its ``saved_share`` is that time over
all groups' time (the group's share of the GPU time x (1 - 1/estimate)), and its
``application_severity`` the severity of the speedup the whole run would get from that fix
alone, 1 / (1 - saved_share), by the thresholds that grade a kernel's findings: in a report of
one kernel it is the finding's severity, in a report of many a fix that saves a microsecond of
a small kernel is low (docs/json-schema.md, "Severity in the whole run").
``dominant(analysis, rows) -> dict | None`` names the group that holds at least
``dominant_share`` of the time when no finding of its own leads the priorities, with what to
collect (docs/json-schema.md, "The dominant kernel").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Protocol

from .tree import location_text
from ..profile import KernelProfile, Profile, rounded
from ..readers.merge import merge_kernels
from ..specs import loader as data
from ..specs.records import Thresholds
from .context import KernelContext
from .coverage import what_to_collect
from .findings import Finding, severity_of
from .sol import SpeedOfLight


class KernelResult(Protocol):
    """What the summary reads of a kernel's analysis (analysis.KernelAnalysis; a protocol,
    as the package's __init__ imports this module)."""

    @property
    def kernel(self) -> KernelProfile: ...
    @property
    def findings(self) -> list[Finding]: ...
    @property
    def bound(self) -> str | None: ...
    @property
    def stall_cycle_pct(self) -> float | None: ...
    @property
    def sol(self) -> SpeedOfLight | None: ...


class AnalysisResult(Protocol):
    """What the summary reads of an analysis (analysis.Analysis)."""

    @property
    def kernels(self) -> Sequence[KernelResult]: ...


def application_severities(rows: list[dict[str, Any]]) -> dict[tuple[int, str], str]:
    """Each finding's severity in the whole run by (kernel id, finding id), from ``summary``'s
    rows (a saved summary without the key: the finding's own severity)."""
    return {
        (r["kernel_id"], f["id"]): f.get("application_severity") or f["severity"] for r in rows for f in r["findings"]
    }


def group_key(kernel: KernelProfile) -> tuple[str, tuple[int, ...], tuple[int, ...], str]:
    df = kernel.instructions
    code = (
        hashlib.sha1("\n".join(map(str, df["sass"].tolist())).encode()).hexdigest()
        if not df.empty and "sass" in df
        else ""
    )
    return (kernel.name, tuple(kernel.grid), tuple(kernel.block), code)


def group_profile(profile: Profile) -> Profile:
    groups: dict[tuple[str, tuple[int, ...], tuple[int, ...], str], list[KernelProfile]] = {}
    for kernel in profile.kernels:
        groups.setdefault(group_key(kernel), []).append(kernel)
    if all(len(g) == 1 for g in groups.values()):
        return profile
    kernels = []
    for members in groups.values():
        if len(members) == 1:
            kernels.append(members[0])
        else:
            kernels.append(
                merge_kernels(
                    [(f"launch {kernel.id}", kernel) for kernel in members], members[0].id, len(members), ranks=False
                )
            )
    notes = list(profile.notes) + [
        f"{len(profile.kernels)} launches in {len(kernels)} kernel groups (same name, grid, "
        "block and code); each group is analyzed as its mean launch (--per-launch: every launch)"
    ]
    return Profile(path=profile.path, format=profile.format, kernels=kernels, notes=notes)


def total_ns(kernel: KernelProfile) -> float | None:
    """GPU time of a kernel group's launches (its one launch's duration); None when not measured."""
    total = kernel.m("drgpu__group_duration_total")
    return kernel.duration_ns if total is None else total


def launch_ids(kernel: KernelProfile) -> list[int]:
    ids = kernel.strings.get("drgpu__group_launch_ids")
    return [int(x) for x in ids.split(",")] if ids else [kernel.id]


def time_saved(total: float | None, speedup: float) -> float | None:
    """GPU time a fix would save in the profiled run: total x (1 - 1/speedup); None when
    the time is not measured (or the speedup not positive)."""
    return total * (1.0 - 1.0 / speedup) if total is not None and speedup > 0 else None


def application_severity(saved_share: float | None, severity: str, th: Thresholds) -> str:
    """The severity of a fix in the whole profiled run: that of the run's speedup from it
    alone, 1 / (1 - saved_share), by the kernel findings' thresholds (high_speedup,
    medium_speedup); without measured durations (``saved_share`` None) the finding's own."""
    if saved_share is None:
        return severity
    return severity_of(1.0 / max(1.0 - saved_share, 1e-9), th)


def _thresholds(analysis: AnalysisResult) -> Thresholds:
    """The thresholds the kernels were analyzed with (the defaults for literal analyses)."""
    for ka in analysis.kernels:
        context: KernelContext | None = getattr(ka, "context", None)
        if context is not None:
            return context.th
    return data.thresholds()


def summary(analysis: AnalysisResult) -> list[dict[str, Any]]:
    """One entry per group, by total GPU time: launches, time and share, grade and bound,
    and its findings with the time each would save, its share of all groups' time and the
    severity that share has in the whole run."""
    tot = sum(
        group_total for group_total in (total_ns(ka.kernel) for ka in analysis.kernels) if group_total is not None
    )
    th = _thresholds(analysis)
    alone = len(analysis.kernels) == 1  # the run is the kernel: its findings' own severities
    rows = [_group_row(ka, tot, th, alone) for ka in analysis.kernels]
    rows.sort(key=lambda r: -(r["total_ns"] or 0.0))
    return rows


def _group_row(ka: KernelResult, tot: float, th: Thresholds, alone: bool) -> dict[str, Any]:
    """A group's summary row: launches, time and share of all groups', grade and bound, and
    its findings, most time saved first."""
    kernel, sol = ka.kernel, ka.sol
    group_total = total_ns(kernel)
    finds = [_finding_row(finding, group_total, tot, th, alone) for finding in ka.findings]
    return {
        "kernel_id": kernel.id,
        "name": kernel.name,
        "launches": kernel.launch_count,
        "launch_ids": launch_ids(kernel),
        "total_ns": rounded(group_total, 1),
        "mean_ns": rounded(kernel.duration_ns, 1),
        "time_share": rounded(group_total / tot, 5) if group_total is not None and tot > 0 else None,
        "bound": ka.bound,
        "grade": sol.grade if sol else None,
        "limiter": sol.limiter if sol else None,
        "limiter_pct": rounded(sol.limiter_pct, 1) if sol is not None else None,
        "findings": sorted(finds, key=lambda finding: -(finding["time_saved_ns"] or 0.0)),
    }


def _finding_row(
    finding: Finding, group_total: float | None, tot: float, th: Thresholds, alone: bool
) -> dict[str, Any]:
    """A finding of a group: the time its fix would save, that time's share of all groups'
    and the severity the share has in the whole run (its own when the run is one kernel)."""
    saved = time_saved(group_total, finding.estimated_speedup)
    share = saved / tot if saved is not None and tot > 0 else None
    return {
        "id": finding.id,
        "severity": finding.severity,
        "estimated_speedup": round(finding.estimated_speedup, 3),
        "estimate_capped": finding.estimate_capped,
        "time_saved_ns": rounded(saved, 1),
        "saved_share": rounded(share, 5),
        "application_severity": finding.severity if alone else application_severity(share, finding.severity, th),
        "where": location_text(finding.locations[0]) if finding.locations else None,
    }


def dominant(analysis: AnalysisResult, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The kernel group that holds most of the profiled time (at least ``dominant_share``)
    in a report of several groups, when no finding of its own leads the priorities (it has
    none, or they save less than another group's first): named first all the same, with why
    and what to collect to say more about it (``coverage.what_to_collect``; None when the
    report lacks nothing drgpu reads). None otherwise: the priorities name it first."""
    if len(rows) < 2:
        return None
    top = rows[0]
    share = top["time_share"]
    if share is None or share < _thresholds(analysis)["dominant_share"]:
        return None
    first = priorities(rows, 1)
    if first and first[0]["kernel_id"] == top["kernel_id"]:
        return None
    ka = next(ka for ka in analysis.kernels if ka.kernel.id == top["kernel_id"])
    collect = what_to_collect(ka.kernel)
    said = "its findings save less than the first priority's" if top["findings"] else "no finding was made on it"
    lacks = "the report lacks what would say more" if collect else "the report has every metric drgpu reads"
    return {
        "kernel_id": top["kernel_id"],
        "name": top["name"],
        "time_share": share,
        "why": f"it holds {100 * share:.1f}% of the profiled GPU time; {said}, and {lacks}",
        "collect": collect,
    }


def priorities(rows: list[dict[str, Any]], limit: int | None = None) -> list[dict[str, Any]]:
    """Findings across the report, most time saved first: what to fix first (their
    ``application_severity`` follows the same order: it grows with the time saved)."""
    out = [
        {"kernel_id": r["kernel_id"], "name": r["name"], **f}
        for r in rows
        for f in r["findings"]
        if f["time_saved_ns"] is not None and f["time_saved_ns"] > 0
    ]
    out.sort(key=lambda f: -f["time_saved_ns"])
    return out[:limit] if limit else out
