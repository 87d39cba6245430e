"""Kernel groups: the launches of one kernel analyzed as one, and the application summary.

Contract: ``group_profile(profile) -> Profile`` is pure: launches with the same demangled
name, grid, block and code (the SASS listing, when the report has it) form a group; a group
of one launch is that launch, unchanged; a larger group becomes its mean launch
(``readers.merge.merge_kernels(..., ranks=False)``: counts, per-instruction samples and duration
averaged, so every ratio the analysis forms is a launch's; the group's totals are the mean
times the launch count). ``summary(analysis) -> list[dict]`` ranks the groups by GPU time
and each finding by the time it would save in the profiled run:
``time_saved = group time x (1 - 1/estimated speedup)``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, Protocol

from .tree import location_text
from ..profile import KernelProfile, Profile, rounded
from ..readers.merge import merge_kernels
from .findings import Finding
from .sol import SpeedOfLight


class KernelResult(Protocol):
    """What the summary reads of a kernel's analysis (analysis.KernelAnalysis; a protocol,
    as the package's __init__ imports this module)."""

    @property
    def kernel(self) -> KernelProfile: ...
    @property
    def findings(self) -> list[Finding]: ...
    @property
    def bound(self) -> str: ...
    @property
    def sol(self) -> SpeedOfLight | None: ...


class AnalysisResult(Protocol):
    """What the summary reads of an analysis (analysis.Analysis)."""

    @property
    def kernels(self) -> Sequence[KernelResult]: ...


def group_key(k: KernelProfile) -> tuple[str, tuple[int, ...], tuple[int, ...], str]:
    df = k.instructions
    code = (
        hashlib.sha1("\n".join(map(str, df["sass"].tolist())).encode()).hexdigest()
        if not df.empty and "sass" in df
        else ""
    )
    return (k.name, tuple(k.grid), tuple(k.block), code)


def group_profile(profile: Profile) -> Profile:
    groups: dict[tuple[str, tuple[int, ...], tuple[int, ...], str], list[KernelProfile]] = {}
    for k in profile.kernels:
        groups.setdefault(group_key(k), []).append(k)
    if all(len(g) == 1 for g in groups.values()):
        return profile
    kernels = []
    for members in groups.values():
        if len(members) == 1:
            kernels.append(members[0])
        else:
            kernels.append(
                merge_kernels([(f"launch {k.id}", k) for k in members], members[0].id, len(members), ranks=False)
            )
    notes = list(profile.notes) + [
        f"{len(profile.kernels)} launches in {len(kernels)} kernel groups (same name, grid, "
        "block and code); each group is analyzed as its mean launch (--per-launch: every launch)"
    ]
    return Profile(path=profile.path, format=profile.format, kernels=kernels, notes=notes)


def launches(k: KernelProfile) -> int:
    n = k.m("drgpu__group_launches")
    return 1 if math.isnan(n) else int(n)


def total_ns(k: KernelProfile) -> float:
    t = k.m("drgpu__group_duration_total")
    return k.duration_ns if math.isnan(t) else t


def launch_ids(k: KernelProfile) -> list[int]:
    ids = k.strings.get("drgpu__group_launch_ids")
    return [int(x) for x in ids.split(",")] if ids else [k.id]


def time_saved(total: float, speedup: float) -> float:
    """GPU time a fix would save in the profiled run: total x (1 - 1/speedup)."""
    return total * (1.0 - 1.0 / speedup) if not math.isnan(total) and speedup > 0 else math.nan


def summary(analysis: AnalysisResult) -> list[dict[str, Any]]:
    """One entry per group, by total GPU time: launches, time and share, grade and bound,
    and its findings with the time each would save."""
    tot = sum(t for t in (total_ns(ka.kernel) for ka in analysis.kernels) if not math.isnan(t))
    rows: list[dict[str, Any]] = []
    for ka in analysis.kernels:
        k, sol = ka.kernel, ka.sol
        t = total_ns(k)
        finds: list[dict[str, Any]] = []
        for f in ka.findings:
            saved = time_saved(t, f.estimated_speedup)
            finds.append(
                {
                    "id": f.id,
                    "severity": f.severity,
                    "estimated_speedup": round(f.estimated_speedup, 3),
                    "estimate_capped": f.estimate_capped,
                    "time_saved_ns": rounded(saved, 1),
                    "where": location_text(f.locations[0]) if f.locations else None,
                }
            )
        rows.append(
            {
                "kernel_id": k.id,
                "name": k.name,
                "launches": launches(k),
                "launch_ids": launch_ids(k),
                "total_ns": rounded(t, 1),
                "mean_ns": rounded(k.duration_ns, 1),
                "time_share": rounded(t / tot, 5) if tot > 0 else None,
                "bound": ka.bound,
                "grade": sol.grade if sol else None,
                "limiter": sol.limiter if sol else None,
                "limiter_pct": rounded(sol.limiter_pct, 1) if sol is not None else None,
                "findings": sorted(finds, key=lambda f: -(f["time_saved_ns"] or 0.0)),
            }
        )
    rows.sort(key=lambda r: -(r["total_ns"] or 0.0))
    return rows


def priorities(rows: list[dict[str, Any]], limit: int | None = None) -> list[dict[str, Any]]:
    """Findings across the report, most time saved first: what to fix first."""
    out = [
        {"kernel_id": r["kernel_id"], "name": r["name"], **f}
        for r in rows
        for f in r["findings"]
        if f["time_saved_ns"] is not None and f["time_saved_ns"] > 0
    ]
    out.sort(key=lambda f: -f["time_saved_ns"])
    return out[:limit] if limit else out
