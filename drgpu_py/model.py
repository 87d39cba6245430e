"""The profile model every reader returns and every analysis pass consumes.

A :class:`Profile` is a list of :class:`KernelProfile`, one per kernel launch. Each launch
carries its identity, launch configuration, a metric table under canonical names (see
``specs/metrics.yaml``; a metric the report lacks is simply absent, never zero) and a
per-instruction table indexed by absolute PC. Readers join per-instruction data by PC,
never by row position; ``offset`` is the PC relative to the function entry, which is what
cubin disassembly and cross-report merging use.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

#: Columns of :attr:`KernelProfile.instructions` besides the ``stall_<reason>`` columns.
INSTRUCTION_COLUMNS = [
    "offset", "sass", "file", "line", "inst_executed", "thread_inst_executed",
    "samples", "samples_not_issued", "l2_sectors_global", "l2_sectors_global_ideal",
    "l2_sectors_global_excessive", "l1_tag_requests_global", "shared_nway",
    "divergent_branches",
]


@dataclass
class KernelProfile:
    """One kernel launch."""

    id: int
    name: str
    mangled: str = ""
    device: str = ""
    compute_capability: str = ""
    chip: str | None = None
    sm_count: int | None = None
    grid: tuple[int, int, int] = (0, 0, 0)
    block: tuple[int, int, int] = (0, 0, 0)
    metrics: dict[str, float] = field(default_factory=dict)
    strings: dict[str, str] = field(default_factory=dict)
    instructions: pd.DataFrame = field(default_factory=pd.DataFrame)
    function_base: int | None = None
    source_text: dict[str, list[str]] = field(default_factory=dict)
    process: str = ""
    notes: list[str] = field(default_factory=list)

    def m(self, name: str, default: float = math.nan) -> float:
        """Metric value by canonical name, ``default`` (NaN) when not collected."""
        v = self.metrics.get(name)
        return default if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def has(self, name: str) -> bool:
        return not math.isnan(self.m(name))

    @property
    def duration_ns(self) -> float:
        return self.m("gpu__time_duration.sum")

    @property
    def has_sampling(self) -> bool:
        df = self.instructions
        return not df.empty and "samples" in df and float(df["samples"].sum()) > 0

    def source_line(self, file: str, line: int) -> str | None:
        lines = self.source_text.get(file)
        if lines and 1 <= line <= len(lines):
            return lines[line - 1].rstrip("\n")
        return None


@dataclass
class Profile:
    """A whole report: where it came from and its kernel launches."""

    path: str
    format: str
    kernels: list[KernelProfile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
