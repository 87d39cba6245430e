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
        kernel = ka.kernel
        total = groups.total_ns(kernel)
        for finding in ka.findings:
            saved = groups.time_saved(total, finding.estimated_speedup)
            for loc in finding.locations or [{}]:
                rows.append(
                    {
                        "kernel": kernel.name,
                        "kernel_id": kernel.id,
                        "launches": groups.launches(kernel),
                        "id": finding.id,
                        "severity": finding.severity,
                        "estimated_speedup": finding.estimated_speedup,
                        "time_saved_ns": saved,
                        "title": finding.title,
                        "file": loc.get("file"),
                        "line": loc.get("line"),
                        "share": loc.get("share"),
                        "sass": loc.get("sass"),
                        "advice": finding.advice,
                    }
                )
    return pd.DataFrame(rows, columns=FINDING_COLUMNS)


def kernels_frame(analysis: _Analysis) -> pd.DataFrame:
    by_id = {ka.kernel.id: ka for ka in analysis.kernels}
    rows = []
    for row in analysis.summary():
        ka = by_id[row["kernel_id"]]
        top = row["findings"][0] if row["findings"] else {}
        rows.append(
            {
                "kernel": row["name"],
                "kernel_id": row["kernel_id"],
                "launches": row["launches"],
                "total_ns": row["total_ns"],
                "mean_ns": row["mean_ns"],
                "time_share": row["time_share"],
                "bound": row["bound"],
                "grade": row["grade"],
                "limiter": row["limiter"],
                "limiter_pct": row["limiter_pct"],
                "stall_cycle_pct": ka.stall_cycle_pct,
                "top_finding": top.get("id"),
                "top_time_saved_ns": top.get("time_saved_ns"),
            }
        )
    return pd.DataFrame(rows, columns=KERNEL_COLUMNS)
