"""Per-kernel analysis context: what every detector and tree builder needs, computed once.

Contract: ``KernelContext.build(kernel, thresholds, slicing=...)`` is pure (reads the kernel,
returns a context). It resolves the architecture constants, the stall mix (from PC samples
when the report has them, those at no listed instruction included at kernel level, else
from the kernel-wide WarpStateStats counters), unit
utilisations, the parsed SASS with its CFG and loops, and the GPA blame of stalls.

Speed: ``build(..., cache=AnalysisCache())`` shares the parsed listing and its CFG between
launches of one function (same PCs and SASS text), which is most of a large report; the
lookups ``locations`` and ``consumers_of`` make per PC are answered from maps built once per
context, not from DataFrame queries. Results are the same with and without the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..specs import loader as data
from ..specs.records import ArchConstants, Thresholds
from ..profile import ControlCode, KernelProfile
from ..sass import CFG, Blame, blame_stalls, build_cfg, parse_listing
from ..sass.isa import Instruction, opcode_class
from .budget import budget_note
from .tree import Location

UNITS = {
    "sm": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM (compute)"),
    "l1tex": ("l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "L1/TEX cache"),
    "lts": ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 cache"),
    "dram": ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM"),
}
MEMORY_UNITS = ("l1tex", "lts", "dram")

#: A listing's identity for the cache: its PCs and SASS text.
ListingKey = tuple[tuple[int, ...], tuple[str, ...]]
#: What the cache keeps per listing: instructions, PC -> instruction, CFG, opcode classes.
StaticAnalysis = tuple[list[Instruction], dict[int, Instruction], CFG, list[str]]
#: (frame, stall_* column -> position, the stall_* columns as one float array, PCs).
StallMatrix = tuple[pd.DataFrame, dict[str, int], npt.NDArray[np.float64], npt.NDArray[Any]]
#: Where a PC's weight is summed: (file, line), (file, None), or ('<sass>', offset).
LineKey = tuple[str, int | None]
#: A PC's row: (file, line as in the table, offset, sass, inlined_from, LineKey, (file, line) or None).
RowInfo = tuple[str | None, Any, Any, str, Any, LineKey, LineKey | None]


class _LineWeight(TypedDict):
    """One source line's sum in ``locations``: weight, (heaviest weight, its PC), its PCs."""

    weight: float
    best: tuple[float, int]
    pcs: list[int]


class AnalysisCache:
    """Static analysis shared across the launches of a report: per (PC, SASS) listing, the
    parsed instructions, their PC map, the CFG and each instruction's instruction-mix class
    (none of them is changed by analysis)."""

    def __init__(self) -> None:
        self.listings: dict[ListingKey, StaticAnalysis] = {}
        self.hits = 0
        self.misses = 0

    def static(self, df: pd.DataFrame) -> StaticAnalysis:
        key: ListingKey = (tuple(df.index.tolist()), tuple(df["sass"].tolist()))
        got = self.listings.get(key)
        if got is None:
            self.misses += 1
            got = self.listings[key] = _static(df)
        else:
            self.hits += 1
        return got


def _static(df: pd.DataFrame) -> StaticAnalysis:
    insts = parse_listing(zip(df.index, df["sass"]))
    return insts, {i.pc: i for i in insts}, build_cfg(insts), [opcode_class(i) for i in insts]


@dataclass
class KernelContext:
    kernel: KernelProfile
    th: Thresholds
    arch: ArchConstants
    reasons: dict[str, float]  # reason -> stall weight (samples or counter ratio)
    reason_source: str  # "sampling" | "counters" | "none"
    total: float  # all weights incl. 'selected'
    stall_total: float  # excl. 'selected'
    units: dict[str, float | None]  # unit -> % of peak (None when not measured)
    sampling: bool = False  # the kernel's table has PC samples (KernelProfile.has_sampling)
    # KernelProfile.sample_accounting when sampling: samples at no instruction of the table
    # count in the stall mix and in samples_total (kernel level), never at a line.
    accounting: dict[str, Any] | None = None
    insts: list[Instruction] = field(default_factory=list)
    cfg: CFG | None = None
    blame: Blame | None = None
    by_pc: dict[int, Instruction] = field(default_factory=dict)
    classes: list[str] = field(default_factory=list)  # opcode_class of each of insts
    notes: list[str] = field(default_factory=list)
    control: dict[int, ControlCode] | None = None  # PC -> decoded control code (--cubin/--binary), else None
    # Lookup maps over the kernel's table and the blame edges are cached_property values,
    # built on first use and kept in the instance's __dict__ (not fields: they are neither
    # compared nor shown); drop_caches() forgets them when the kernel is detached.

    def __repr__(self) -> str:
        # The dataclass repr would print every instruction, the CFG and the blame edges.
        return (
            f"KernelContext(kernel={self.kernel!r}, reason_source={self.reason_source!r}, "
            f"sampling={self.sampling}, {len(self.insts)} instructions)"
        )

    # ---- construction -------------------------------------------------------------
    @classmethod
    def build(
        cls,
        kernel: KernelProfile,
        th: Thresholds,
        control: dict[int, ControlCode] | None = None,
        slicing_source: str = "report",
        cache: AnalysisCache | None = None,
    ) -> "KernelContext":
        arch = data.load_arch(kernel.chip)
        stall = _stall_matrix(kernel.instructions)
        sampling = kernel.has_sampling
        accounting = kernel.sample_accounting() if sampling else None
        reasons, source = _stall_weights(kernel, stall, sampling, accounting)
        total = sum(reasons.values())
        stall_total = total - reasons.get("selected", 0.0)
        units = {u: kernel.m(name) for u, (name, _) in UNITS.items()}
        ctx = cls(
            kernel=kernel,
            th=th,
            arch=arch,
            reasons=reasons,
            reason_source=source,
            total=total,
            stall_total=stall_total,
            units=units,
            sampling=sampling,
            control=control,
            accounting=accounting,
        )
        ctx._stall_arrays = stall  # made once here for the stall weights; stall_matrix() returns it
        if not arch.get("known"):
            ctx.notes.append(
                f"unknown chip for compute capability '{kernel.compute_capability}': base architecture constants used"
            )
        df = kernel.instructions
        if not df.empty:
            insts, by_pc, ctx.cfg, ctx.classes = cache.static(df) if cache is not None else _static(df)
            ctx.insts, ctx.by_pc = list(insts), dict(by_pc)
            if sampling:
                budget = int(th["slicing_budget_instructions"])
                ctx.blame = blame_stalls(
                    ctx.cfg, df, control=control, latency=arch.get("latency"), matrix=stall[1:3], budget=budget
                )
                ctx.blame.source = slicing_source
                if ctx.blame.unsliced_instructions:
                    ctx.notes.append(
                        budget_note("slicing", budget, ctx.blame.unsliced_instructions, ctx.blame.unsliced_sample_share)
                    )
        return ctx

    # ---- helpers used by detectors and the tree ----------------------------------------
    @property
    def df(self) -> pd.DataFrame:
        return self.kernel.instructions

    def share(self, *reasons: str) -> float:
        """Share of stall cycles (excluding issuing) in the given reasons."""
        if self.stall_total <= 0:
            return 0.0
        return sum(self.reasons.get(r, 0.0) for r in reasons) / self.stall_total

    def frac(self, *reasons: str) -> float:
        """Share of all warp time (issuing included) in the given reasons: GPA's M/T."""
        if self.total <= 0:
            return 0.0
        return sum(self.reasons.get(r, 0.0) for r in reasons) / self.total

    def as_stall_share(self, frac: float) -> float:
        """A share of all warp time (``frac``'s scale: issuing included) as a share of the
        stall cycles (``share``'s scale: issuing excluded), at most 1. A kernel with no stall
        weight divides by a tiny number: any time share then reads as all of the stalls."""
        return min(1.0, frac * self.total / max(self.stall_total, 1e-9))

    def drop_caches(self) -> None:
        """Forget every cached lookup map (each refers to the kernel's table or the blame
        edges); they are rebuilt on use, e.g. after another copy of the kernel is attached."""
        for name, attr in vars(type(self)).items():
            if isinstance(attr, cached_property):
                self.__dict__.pop(name, None)

    @cached_property
    def samples_total(self) -> float:
        if self.df.empty:
            return 0.0
        return float(self.stall_matrix()[2].sum()) + self.unattributed()

    def unattributed(self, *reasons: str) -> float:
        """Samples at no instruction of the table (all reasons when none given)."""
        got = (self.accounting or {}).get("by_reason") or {}
        if not got and not reasons and self.accounting:
            return float(self.accounting.get("unattributed", 0.0))
        return float(sum(v for r, v in got.items() if not reasons or r in reasons))

    def top_unit(self) -> tuple[str | None, float | None]:
        vals = {unit: v for unit, v in self.units.items() if v is not None}
        if not vals:
            return None, None
        unit = max(vals, key=vals.__getitem__)
        return unit, vals[unit]

    def executed_total(self) -> float:
        return self.total_of("inst_executed") if not self.df.empty else 0.0

    def total_of(self, column: str) -> float:
        """A per-instruction column's sum (pandas' sum: NaN skipped), computed once."""
        got = self._column_totals.get(column)
        if got is None:
            got = self._column_totals[column] = float(self.df[column].sum())
        return got

    @cached_property
    def _column_totals(self) -> dict[str, float]:
        return {}

    def measured(self, column: str) -> bool:
        """Whether the report holds the per-instruction counter ``column``. Readers fill a
        column the report lacks with 0 (readers.frame.instruction_frame), and none of these
        counters sums to 0 over a kernel that ran the instructions it counts (each executed
        instruction has at least one thread; a global access, at least one sector): a column
        that sums to 0 is not measured, and reads as unknown, never as 0 threads or sectors."""
        return not self.df.empty and column in self.df and self.total_of(column) > 0

    def executed(self) -> dict[int, float]:
        """PC -> warp instructions executed (NaN where not counted), built once."""
        return self._executed_by_pc

    @cached_property
    def _executed_by_pc(self) -> dict[int, float]:
        df = self.df
        return dict(zip(df.index.tolist(), df["inst_executed"].tolist())) if not df.empty else {}

    def pcs_where(self, pred: Callable[[Instruction], bool]) -> list[int]:
        return [i.pc for i in self.insts if pred(i)]

    def executed_where(self, pred: Callable[[Instruction], bool]) -> float:
        """Warp instructions executed by the kernel's instructions that ``pred`` picks, in
        program order (an instruction not counted adds 0)."""
        executed = self.executed()
        return sum(float(executed.get(i.pc) or 0.0) for i in self.insts if pred(i))

    def blamed_by_pc(self, pcs: Iterable[int], reasons: Iterable[str] | None = None) -> dict[int, float]:
        if self.blame is None:
            return {}
        # Per-producer sums are grouped once per reason set and then filtered: the same rows
        # in the same order per group, so the same sums as grouping the filtered edges.
        key = None if reasons is None else tuple(reasons)
        sums = self._producer_sums.get(key)
        if sums is None:
            sums = self._producer_sums[key] = self.blame.producer_sums(reasons)
        wanted = set(pcs)
        if len(wanted) < len(sums):
            # A loop's few PCs against a large function's many producers: look them up
            # (``sums`` is in ascending PC order, so sorting keeps the order of the filter).
            return {p: sums[p] for p in sorted(wanted) if p in sums}
        return {p: v for p, v in sums.items() if p in wanted}

    @cached_property
    def _producer_sums(self) -> dict[tuple[str, ...] | None, dict[int, float]]:
        """Reason set (None: all) -> producer PC -> blamed weight, filled on use."""
        return {}

    def consumers_of(self, pc: int) -> list[int]:
        if self.blame is None:
            return []
        return [int(c) for c in self._consumers.get(pc, ())]

    @cached_property
    def _consumers(self) -> dict[int, list[int]]:
        """Producer PC -> consumer PCs of the blame edges, in order of first appearance."""
        by_producer: dict[int, list[int]] = {}
        if self.blame is None:
            return by_producer
        for consumer, producer, *_ in self.blame.rows:
            if consumer != producer:
                got = by_producer.setdefault(producer, [])
                if consumer not in got:
                    got.append(consumer)
        return by_producer

    def row_map(self) -> dict[int, RowInfo]:
        return self._rows

    @cached_property
    def _rows(self) -> dict[int, RowInfo]:
        """PC -> (file, line, offset, sass, inlined_from, location key, (file, line) or None).
        The location key groups a PC's weight: (file, line), (file, None) for a file without
        a line, or ('<sass>', offset) without either."""
        df = self.df
        inlined = df["inlined_from"].tolist() if "inlined_from" in df.columns else repeat(None)
        rows: dict[int, RowInfo] = {}
        for pc, file, ln, off, sass, inl in zip(
            df.index.tolist(),
            df["file"].tolist(),
            df["line"].tolist(),
            df["offset"].tolist(),
            df["sass"].tolist(),
            inlined,
        ):
            line = None if pd.isna(ln) else int(ln)
            key: LineKey
            at: LineKey | None
            if file is not None:
                key, at = (file, line), ((file, line) if line is not None else None)
            else:
                key, at = ("<sass>", int(off)), None
            rows[pc] = (file, ln, off, sass, inl, key, at)
        return rows

    def line_of(self, pc: int) -> LineKey | None:
        """(file, line) of an instruction, None where the report gives it no line."""
        row = self.row_map().get(pc)
        return row[6] if row is not None else None

    def call_sites(self) -> dict[int, int]:
        """PC of each instruction of a called subroutine (the slow paths of precise pow,
        division and sqrt, placed after the kernel's code) -> PC of its most executed call.
        Built once."""
        return self._call_sites

    @cached_property
    def _call_sites(self) -> dict[int, int]:
        insts = self.insts
        index = {ins.pc: j for j, ins in enumerate(insts)}
        callers = _busiest_callers(insts, index, self.executed())
        sites: dict[int, int] = {}
        for target, (_, site) in callers.items():
            for ins in insts[index[target] :]:
                sites[ins.pc] = site
                if ins.opcode == "RET":
                    break
        return sites

    def locations(self, weights: dict[int, float], limit: int = 5) -> list[Location]:
        """Source lines ranked by the summed weight of their instructions (a PC->weight map).
        Each location names the line, its share of the weight, the heaviest SASS instruction
        on it, and the consumer line(s) where the stall was observed, if different."""
        df = self.df
        if df.empty or not weights:
            return []
        total = sum(weight for weight in weights.values() if weight > 0)
        if total <= 0:
            return []
        rows = self.row_map()
        ranked = sorted(_weights_by_line(weights, rows).items(), key=lambda kv: -kv[1]["weight"])[:limit]
        return [self._location(key, slot, total, rows) for key, slot in ranked]

    def _location(self, key: LineKey, slot: _LineWeight, total: float, rows: dict[int, RowInfo]) -> Location:
        """One ranked line: where, its share, its heaviest instruction, its code, what it was
        inlined from, and the lines where its consumers stalled."""
        file, ln = key
        _, _, off, sass, inlined, _, _ = rows[slot["best"][1]]
        loc: Location = {
            "file": file if file != "<sass>" else None,
            "line": ln if file != "<sass>" else None,
            "share": round(slot["weight"] / total, 4),
            "sass": sass,
            "pc_offset": int(off),
        }
        if file == "<sass>":
            loc["note"] = "no line information: SASS offset given"
        code = self.kernel.source_line(file, ln) if file not in (None, "<sass>") and ln is not None else None
        if code is not None:
            loc["code"] = code.strip()
        if isinstance(inlined, dict):  # from the cubin's inline info (--cubin/--binary)
            loc["inlined_from"] = inlined
        ctx_lines = self._stalled_lines(slot["pcs"], key, rows)
        if ctx_lines:
            loc["stalled_at"] = [{"file": cf, "line": cl} for cf, cl in sorted(ctx_lines)[:3]]
        return loc

    def _stalled_lines(self, pcs: list[int], key: LineKey, rows: dict[int, RowInfo]) -> set[LineKey]:
        """The other lines where the consumers of the instructions at ``pcs`` stalled."""
        ctx_lines = set()
        for member_pc in pcs:
            for consumer in self.consumers_of(member_pc):
                at = rows[consumer][6]
                if at is not None and at != key:
                    ctx_lines.add(at)
        return ctx_lines

    def stall_matrix(self) -> StallMatrix:
        """(frame, column -> position, stall_* columns as one array, PCs): see _stall_matrix."""
        return self._stall_arrays

    @cached_property
    def _stall_arrays(self) -> StallMatrix:
        return _stall_matrix(self.df)

    def row_of(self) -> dict[int, int]:
        """PC -> row position in the per-instruction table."""
        return self._row_positions

    @cached_property
    def _row_positions(self) -> dict[int, int]:
        return {pc: r for r, pc in enumerate(self.df.index.tolist())}

    def samples_at(self, pcs: Iterable[int], reasons: Iterable[str] | None = None) -> dict[int, float]:
        """Stall samples at each of ``pcs`` (those in the table, in the order given), over
        ``reasons`` (all but 'selected' when None); NaN counts as 0."""
        _, where, arr, _ = self.stall_matrix()
        cols = _reason_columns(where, reasons)
        row_of = self.row_of()
        sel = [p for p in pcs if p in row_of]
        if not sel or not cols:
            return {}
        sums = np.nansum(arr[np.ix_([row_of[p] for p in sel], cols)], axis=1)
        return dict(zip(sel, sums.tolist()))

    def line_samples(self, reason: str, limit: int = 5) -> list[Location]:
        """Top source lines by the samples of one stall reason, where the stall is observed."""
        col = f"stall_{reason}"
        df = self.df
        if df.empty or col not in df:
            return []
        _, where, arr, pcs = self.stall_matrix()
        vals = arr[:, where[col]]
        hit = np.flatnonzero(vals > 0)
        if not len(hit):
            return []
        return self.locations(dict(zip(pcs[hit].tolist(), vals[hit].tolist())), limit)


def _stall_matrix(df: pd.DataFrame) -> StallMatrix:
    """(frame, column -> position, the stall_* columns as one float array whose columns are
    contiguous, PCs): one copy out of the frame instead of a Series per column and use."""
    at = [j for j, c in enumerate(df.columns) if c.startswith("stall_")]
    # Positional selection skips the label lookup that df[cols] pays per call.
    arr = np.asfortranarray(df.iloc[:, at].to_numpy(dtype=float)) if at else np.zeros((len(df), 0))
    return df, {df.columns[j]: n for n, j in enumerate(at)}, arr, df.index.to_numpy()


def _busiest_callers(
    insts: list[Instruction], index: dict[int, int], executed: dict[int, float]
) -> dict[int, tuple[float, int]]:
    """Subroutine entry PC -> (executions, PC) of its most executed CALL."""
    callers: dict[int, tuple[float, int]] = {}
    for ins in insts:
        if ins.opcode == "CALL" and ins.target is not None and ins.target in index:
            ex = float(executed.get(ins.pc) or 0.0)
            if ins.target not in callers or ex > callers[ins.target][0]:
                callers[ins.target] = (ex, ins.pc)
    return callers


def _reason_columns(where: dict[str, int], reasons: Iterable[str] | None) -> list[int]:
    """The stall matrix's columns of ``reasons`` (those it has); all but 'selected' when None."""
    if reasons is None:
        return [j for c, j in where.items() if c != "stall_selected"]
    return [where[f"stall_{r}"] for r in reasons if f"stall_{r}" in where]


def _stall_weights(
    kernel: KernelProfile, stall: StallMatrix, sampling: bool, accounting: dict[str, Any] | None = None
) -> tuple[dict[str, float], str]:
    """Samples (or, without PC samples, kernel-wide counters) per stall reason, and which of
    the two they are; ``stall`` is the kernel's _stall_matrix. Samples the table could not
    place (``accounting['by_reason']``) count for their reason."""
    reasons = data.stall_reasons()
    if not kernel.instructions.empty and sampling:
        weights = _sampled_weights(stall, reasons, accounting)
        if sum(weights.values()) > 0:
            return weights, "sampling"
    weights = _counter_weights(kernel, reasons)
    if weights and sum(weights.values()) > 0:
        return weights, "counters"
    return {}, "none"


def _sampled_weights(
    stall: StallMatrix, reasons: dict[str, dict[str, Any]], accounting: dict[str, Any] | None
) -> dict[str, float]:
    """Each stall reason's samples in the table, and those the table could not place."""
    _, where, arr, _ = stall
    # One nansum over the columns adds what Series.sum adds per column (NaN as 0); the
    # values are sample counts, so the order of addition cannot change the result.
    sums = np.nansum(arr, axis=0).tolist()
    weights = {reason: float(sums[where[f"stall_{reason}"]]) for reason in reasons if f"stall_{reason}" in where}
    for reason, value in ((accounting or {}).get("by_reason") or {}).items():
        weights[reason] = weights.get(reason, 0.0) + value
    return weights


def _counter_weights(kernel: KernelProfile, reasons: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Each stall reason's kernel-wide counter, those the report has."""
    weights = {}
    for reason, spec in reasons.items():
        value = kernel.m(spec["counter"][0])
        if value is not None:
            weights[reason] = value
    return weights


def _weights_by_line(weights: dict[int, float], rows: dict[int, RowInfo]) -> dict[LineKey, _LineWeight]:
    """The positive weights summed by source line, with each line's heaviest PC and its PCs."""
    agg: dict[LineKey, _LineWeight] = {}
    for pc, weight in weights.items():
        if weight <= 0 or pc not in rows:
            continue
        key = rows[pc][5]
        slot = agg.setdefault(key, {"weight": 0.0, "best": (0.0, pc), "pcs": []})
        slot["weight"] += weight
        slot["pcs"].append(pc)
        if weight > slot["best"][0]:
            slot["best"] = (weight, pc)
    return agg
