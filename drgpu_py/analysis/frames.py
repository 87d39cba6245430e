"""pandas views of an analysis, for notebooks and scripts.

Contract: ``findings_frame(analysis)`` has one row per finding and location (a finding
without a location has one row with empty file/line), ``kernels_frame(analysis)`` one row
per kernel (group) analyzed. Both are pure and take only what the JSON document holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pandas as pd

from . import groups


class _KernelRow(groups.KernelResult, Protocol):
    @property
    def stall_cycle_pct(self) -> float: ...


class _Analysis(Protocol):
    """What the frames read of an analysis (analysis.Analysis; a protocol, as the package's
    __init__ imports this module)."""

    @property
    def kernels(self) -> Sequence[_KernelRow]: ...
    def summary(self) -> list[dict[str, Any]]: ...


FINDING_COLUMNS = [
    "kernel",
    "kernel_id",
    "launches",
    "id",
    "severity",
    "estimated_speedup",
    "time_saved_ns",
    "title",
    "file",
    "line",
    "share",
    "sass",
    "advice",
]
KERNEL_COLUMNS = [
    "kernel",
    "kernel_id",
    "launches",
    "total_ns",
    "mean_ns",
    "time_share",
    "bound",
    "grade",
    "limiter",
    "limiter_pct",
    "stall_cycle_pct",
    "top_finding",
    "top_time_saved_ns",
]


def findings_frame(analysis: _Analysis) -> pd.DataFrame:
    rows = []
    for ka in analysis.kernels:
        k = ka.kernel
        t = groups.total_ns(k)
        for f in ka.findings:
            saved = groups.time_saved(t, f.estimated_speedup)
            for loc in f.locations or [{}]:
                rows.append(
                    {
                        "kernel": k.name,
                        "kernel_id": k.id,
                        "launches": groups.launches(k),
                        "id": f.id,
                        "severity": f.severity,
                        "estimated_speedup": f.estimated_speedup,
                        "time_saved_ns": saved,
                        "title": f.title,
                        "file": loc.get("file"),
                        "line": loc.get("line"),
                        "share": loc.get("share"),
                        "sass": loc.get("sass"),
                        "advice": f.advice,
                    }
                )
    return pd.DataFrame(rows, columns=FINDING_COLUMNS)


def kernels_frame(analysis: _Analysis) -> pd.DataFrame:
    by_id = {ka.kernel.id: ka for ka in analysis.kernels}
    rows = []
    for r in analysis.summary():
        ka = by_id[r["kernel_id"]]
        top = r["findings"][0] if r["findings"] else {}
        rows.append(
            {
                "kernel": r["name"],
                "kernel_id": r["kernel_id"],
                "launches": r["launches"],
                "total_ns": r["total_ns"],
                "mean_ns": r["mean_ns"],
                "time_share": r["time_share"],
                "bound": r["bound"],
                "grade": r["grade"],
                "limiter": r["limiter"],
                "limiter_pct": r["limiter_pct"],
                "stall_cycle_pct": ka.stall_cycle_pct,
                "top_finding": top.get("id"),
                "top_time_saved_ns": top.get("time_saved_ns"),
            }
        )
    return pd.DataFrame(rows, columns=KERNEL_COLUMNS)
