"""GPA-style instruction blamer: move each stall from the instruction that waits to the
instructions that caused it.

Each dependency stall (long/short scoreboard, wait) is walked back over the CFG to its
candidate producers (read-after-write, write-after-read and, with control codes, scoreboard
barriers), pruned by opcode, barrier and latency, and the survivors share the samples (GPA
Eq. 1). Every edge carries a dependency ``kind``. Method and kinds: docs/slicing.md.

Contract: ``blame_stalls`` is a pure function of its inputs, bounded by its ``budget`` of
sampled instructions (the most sampled first; ``Blame.unsliced_*`` say what was left);
``reaching_defs`` (also used by the loop-invariance detector) returns ``(producer index,
distance)`` pairs.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .cfg import CFG
from .control import sets_barriers, waits_on
from .isa import Instruction
from .pruning import DEFAULT_LATENCY, compatible, fixed_latency, kind_of, latency_bound, reads_late

if TYPE_CHECKING:  # the record type only
    from ..profile import ControlCode

DEPENDENCY_REASONS = ("long_scoreboard", "short_scoreboard", "wait")
KINDS = (
    "global_memory",
    "local_memory",
    "constant_memory",
    "shared_memory",
    "arithmetic",
    "war",
    "stall_count",
    "unresolved",
    "synchronization",
    "none",
)
DEPENDENCY_KINDS = KINDS[:8]

EDGE_COLUMNS = ["consumer_pc", "producer_pc", "reason", "samples", "distance", "kind"]
#: One blame edge, in EDGE_COLUMNS order.
Edge = tuple[int, int, str, float, int, str]


@dataclass
class Blame:
    #: one tuple per edge, in EDGE_COLUMNS order; ``edges`` is the same as a DataFrame
    rows: list[Edge]
    single_dependency_coverage: float
    stalled_instructions: int
    source: str = "report"
    notes: list[str] = field(default_factory=list)
    #: share of dependency-stall samples whose stall went to a single producer
    single_dependency_sample_coverage: float = 1.0
    #: the budget's cut (``blame_stalls(budget=...)``): sampled instructions left unsliced and
    #: their share of the samples; 0 and 0.0 when every sampled instruction was sliced
    unsliced_instructions: int = 0
    unsliced_sample_share: float = 0.0
    _edges: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def edges(self) -> pd.DataFrame:
        # Built on first use: the analysis aggregates the rows directly, and a DataFrame per
        # launch cost more than the aggregations over a report of many small kernels.
        if self._edges is None:
            self._edges = pd.DataFrame(self.rows, columns=EDGE_COLUMNS)
        return self._edges

    def producer_sums(self, reasons: Iterable[str] | None = None) -> dict[int, float]:
        """Samples charged to each producer PC (ascending PC), over edges of ``reasons``
        (all when None); NaN samples count as 0, as pandas sums them."""
        wanted = None if reasons is None else set(reasons)
        sums: dict[int, float] = {}
        for _, producer, reason, s, _, _ in self.rows:
            if wanted is None or reason in wanted:
                sums[producer] = sums.get(producer, 0.0) + (0.0 if s != s else s)
        return dict(sorted(sums.items()))

    def kind_shares(self) -> dict[str, float]:
        """Share of dependency-stall samples per kind of dependency."""
        by_kind: dict[str, float] = {}
        total = 0.0
        for _, _, reason, s, _, kind in self.rows:
            if reason in DEPENDENCY_REASONS and s == s:
                by_kind[kind] = by_kind.get(kind, 0.0) + s
                total += s
        if total <= 0:
            return {}
        return {k: round(by_kind[k] / total, 4) for k in DEPENDENCY_KINDS if by_kind.get(k, 0.0) / total > 0}


@dataclass(frozen=True)
class Reach:
    index: int  # producer instruction index
    distance: int  # instructions on the path, producer included, consumer excluded
    cycles: int  # lower bound on the issue cycles along that path


# ---- backward search ---------------------------------------------------------------------------


def _negate(g: str) -> str:
    return g[1:] if g.startswith("!") else "!" + g


def _covers(consumer_guard: str | None, guards: frozenset[str | None]) -> bool:
    """Do definitions under ``guards`` together cover every execution of the consumer?"""
    if None in guards:
        return True
    if consumer_guard is not None and consumer_guard in guards:
        return True
    return any(g is not None and _negate(g) in guards for g in guards)  # None: returned above


def _guard_of(ins: Instruction) -> str | None:
    return None if ins.guard in (None, "PT") else ins.guard


def _search(
    cfg: CFG,
    idx: int,
    is_def: Callable[[int], bool],
    *,
    max_distance: int,
    stop: Callable[[int], bool] | None = None,
    kill: bool = True,
    cycles_of: Callable[[int], int] | None = None,
) -> dict[int, Reach]:
    """Instructions ``j`` with ``is_def(j)`` reaching instruction ``idx`` backwards through
    the CFG, each with its shortest path (in issue cycles). ``kill``: a definition ends the
    path once the guards of the definitions met on it cover the consumer's guard.
    ``stop(j)``: the path ends at ``j`` (after ``j`` was checked as a definition)."""
    walk = _BackWalk(cfg, is_def, max_distance, stop, kill, cycles_of or (lambda _j: 1), _guard_of(cfg.insts[idx]))
    blocks = cfg.blocks
    # (cycles, distance, tie, block, last index to look at, guards met so far, first visit?)
    heap: list[tuple[int, int, int, int, int, frozenset[str | None], bool]] = [
        (0, 0, 0, cfg.block_of[idx], idx - 1, frozenset(), True)
    ]
    done: set[tuple[int, frozenset[str | None]]] = set()
    tie = 1
    while heap:
        c, d, _, b, i, guards, first = heapq.heappop(heap)
        if not _first_visit(done, b, guards, first):
            continue
        went = walk.block(blocks[b].start, i, c, d, guards)
        if went is None:
            continue
        c, d, guards = went
        for p in blocks[b].preds:
            if (p, guards) not in done:
                heapq.heappush(heap, (c, d, tie, p, blocks[p].end - 1, guards, False))
                tie += 1
    return walk.found


def _first_visit(
    done: set[tuple[int, frozenset[str | None]]], b: int, guards: frozenset[str | None], first: bool
) -> bool:
    """Whether a block is walked with these guards for the first time (the consumer's own
    block is walked first whatever its guards), marking it walked."""
    if first:
        return True
    if (b, guards) in done:
        return False
    done.add((b, guards))
    return True


@dataclass
class _BackWalk:
    """One backward search's rules (``_search``) and what it found so far."""

    cfg: CFG
    is_def: Callable[[int], bool]
    max_distance: int
    stop: Callable[[int], bool] | None
    kill: bool
    cyc: Callable[[int], int]
    consumer_guard: str | None
    found: dict[int, Reach] = field(default_factory=dict)

    def block(
        self, lo: int, i: int, c: int, d: int, guards: frozenset[str | None]
    ) -> tuple[int, int, frozenset[str | None]] | None:
        """Walk a block back from index ``i`` to ``lo``: (cycles, distance, guards) at its
        start, or None where the path ends in it (too far, guards covered, a stop)."""
        insts = self.cfg.insts
        while i >= lo:
            ins = insts[i]
            d += 1
            c += self.cyc(i)
            if d > self.max_distance:
                return None
            if ins.guard != "!PT" and self.is_def(i):
                self._found(i, d, c)
                if self.kill:
                    guards = guards | {_guard_of(ins)}
                    if _covers(self.consumer_guard, guards):
                        return None
            if self.stop is not None and self.stop(i):
                return None
            i -= 1
        return c, d, guards

    def _found(self, i: int, d: int, c: int) -> None:
        r = self.found.get(i)
        if r is None or c < r.cycles:
            self.found[i] = Reach(i, d, c)


# Predicates for _search, one closure per register (a lambda written in the caller's loop
# would need the register bound as a default argument, which mypy cannot type).
def _writes(insts: list[Instruction], reg: str) -> Callable[[int], bool]:
    return lambda j: reg in insts[j].defs


def _reads(insts: list[Instruction], reg: str) -> Callable[[int], bool]:
    return lambda j: reg in insts[j].uses


@dataclass
class _Memo:
    #: reaching_defs by (consumer index, register, max_distance)
    reaching_defs: dict[tuple[int, str, int], list[tuple[int, int]]] = field(default_factory=dict)
    #: searches of a stalled instruction without control codes, by (index, max_distance)
    consumers: dict[tuple[int, int], _Consumer] = field(default_factory=dict)
    #: indices of the instructions defining each register (``!PT``-guarded ones left out), ascending
    writers: dict[str, list[int]] | None = None


def _memo(cfg: CFG) -> _Memo:
    """Results that depend on nothing but the CFG, kept on it: launches of one function share
    their CFG (analysis.context.AnalysisCache), so each search is made once per function."""
    memo = cfg.__dict__.get("_slicing_memo")
    if not isinstance(memo, _Memo):
        memo = cfg.__dict__["_slicing_memo"] = _Memo()
    return memo


def reaching_defs(cfg: CFG, idx: int, reg: str, max_distance: int) -> list[tuple[int, int]]:
    """(producer index, distance) of definitions of ``reg`` reaching instruction ``idx``."""
    m = _memo(cfg)
    memo = m.reaching_defs
    key = (idx, reg, max_distance)
    got = memo.get(key)
    if got is None:
        if m.writers is None:
            m.writers = {}
            for j, ins in enumerate(cfg.insts):
                if ins.guard != "!PT":
                    for written in ins.defs:
                        m.writers.setdefault(written, []).append(j)
        got = memo[key] = sorted(_search_writers(cfg, idx, m.writers.get(reg, []), max_distance).items())
    return list(got)


def _search_writers(cfg: CFG, idx: int, writers: list[int], max_distance: int) -> dict[int, int]:
    """``_search(cfg, idx, lambda j: reg in cfg.insts[j].defs, max_distance=max_distance)`` as
    {index: distance}, for ``writers`` the indices of the instructions defining ``reg``
    (``!PT``-guarded ones left out). The same paths in the same order, a block at a time: the
    instructions between two definitions only lengthen the path, so a block's definitions are
    looked up (bisect) instead of each instruction tested. Every instruction costs one issue
    cycle here, so a path's cycles are its distance."""
    insts, blocks = cfg.insts, cfg.blocks
    consumer_guard = _guard_of(insts[idx])
    found: dict[int, int] = {}
    # (distance, tie, block, last index to look at, guards met so far, first visit?), as _search's
    # heap with the cycles left out (equal to the distance)
    heap: list[tuple[int, int, int, int, frozenset[str | None], bool]] = [
        (0, 0, cfg.block_of[idx], idx - 1, frozenset(), True)
    ]
    done: set[tuple[int, frozenset[str | None]]] = set()
    tie = 1
    while heap:
        d, _, b, i, guards, first = heapq.heappop(heap)
        if not _first_visit(done, b, guards, first):
            continue
        lo = blocks[b].start
        if i >= lo:
            went = _writers_back(writers, insts, lo, i, d, guards, max_distance, consumer_guard, found)
            if went is None:
                continue
            d, guards = went
        for p in blocks[b].preds:
            if (p, guards) not in done:
                heapq.heappush(heap, (d, tie, p, blocks[p].end - 1, guards, False))
                tie += 1
    return found


def _writers_back(
    writers: list[int],
    insts: list[Instruction],
    lo: int,
    i: int,
    d: int,
    guards: frozenset[str | None],
    max_distance: int,
    consumer_guard: str | None,
    found: dict[int, int],
) -> tuple[int, frozenset[str | None]] | None:
    """A block walked back from ``i`` to ``lo`` by its writers alone: (distance, guards) at
    its start, or None where the path ends in it. _search steps to index k at distance
    d + (i - k + 1) and gives up at the first k past max_distance: at k = i - (max_distance - d),
    when that is in the block."""
    dies = i - (max_distance - d)
    first_k = max(lo, dies + 1)
    pos = bisect.bisect_right(writers, i) - 1
    while pos >= 0 and writers[pos] >= first_k:
        k = writers[pos]
        dk = d + (i - k + 1)
        if k not in found or dk < found[k]:
            found[k] = dk
        guards = guards | {_guard_of(insts[k])}
        if _covers(consumer_guard, guards):
            return None
        pos -= 1
    if dies >= lo:
        return None
    return d + (i - lo + 1), guards


# ---- the blamer -----------------------------------------------------------------------------------


#: Which of its barriers an instruction sets: for its result, or for reading its operands.
_BarrierKind = Literal["write_barrier", "read_barrier"]


class _Consumer:
    """Searches for one stalled instruction, computed once and shared by its reasons."""

    def __init__(
        self,
        cfg: CFG,
        idx: int,
        control: dict[int, ControlCode] | None,
        max_distance: int,
        cycles_of: Callable[[int], int] | None,
    ) -> None:
        self.cfg, self.idx, self.control = cfg, idx, control
        self.ins = cfg.insts[idx]
        self.max_distance, self.cycles_of = max_distance, cycles_of
        self._raw: dict[int, Reach] | None = None
        self._war: dict[int, Reach] | None = None
        self._bar: dict[int, Reach] | None = None
        self._candidates: dict[tuple[str, tuple[tuple[str, float], ...]], dict[int, tuple[Reach, str]]] = {}

    def cw(self, j: int) -> ControlCode | None:
        """Instruction ``j``'s control code; None without control codes or without one for it."""
        return self.control.get(self.cfg.insts[j].pc) if self.control else None

    def barrier(self, j: int, which: _BarrierKind) -> int | None:
        """The barrier instruction ``j`` sets (``which``: write or read), None when none."""
        cw = self.cw(j)
        return cw.get(which) if cw else None

    def _sets(self, b: int) -> Callable[[int], bool]:
        return lambda j: b in sets_barriers(self.cw(j))

    def _waits_for(self, b: int) -> Callable[[int], bool]:
        return lambda j: b in waits_on(self.cw(j))

    def raw(self) -> dict[int, Reach]:
        if self._raw is None:
            insts = self.cfg.insts
            out: dict[int, Reach] = {}
            for reg in self.ins.uses:
                for j, r in _search(
                    self.cfg, self.idx, _writes(insts, reg), max_distance=self.max_distance, cycles_of=self.cycles_of
                ).items():
                    if j not in out or r.cycles < out[j].cycles:
                        out[j] = r
            self._raw = out
        return self._raw

    def war(self) -> dict[int, Reach]:
        if self._war is None:
            insts = self.cfg.insts
            out: dict[int, Reach] = {}
            for reg in (r for r in self.ins.defs if "P" not in r):
                found = _search(
                    self.cfg,
                    self.idx,
                    _reads(insts, reg),
                    stop=_writes(insts, reg),
                    kill=False,
                    max_distance=self.max_distance,
                    cycles_of=self.cycles_of,
                )
                for j, r in found.items():
                    if j not in out or r.cycles < out[j].cycles:
                        out[j] = r
            self._war = out
        return self._war

    def waits(self) -> set[int]:
        """Barriers the consumer waits on: its wait mask, and for ``DEPBAR.LE SBn, k`` (wait
        until at most k operations on barrier n are outstanding) barrier n."""
        w = waits_on(self.cw(self.idx))
        if self.ins.opcode == "DEPBAR":
            w |= {int(m) for m in re.findall(r"\bSB(\d)\b", self.ins.text) if int(m) < 6}
        return w

    def barrier_setters(self) -> dict[int, Reach]:
        """Setters of the barriers the consumer waits on, back to the last full wait on each."""
        if self._bar is None:
            out: dict[int, Reach] = {}
            for b in self.waits():
                found = _search(
                    self.cfg,
                    self.idx,
                    self._sets(b),
                    stop=self._waits_for(b),
                    kill=False,
                    max_distance=self.max_distance,
                    cycles_of=self.cycles_of,
                )
                for j, r in found.items():
                    if j not in out or r.cycles < out[j].cycles:
                        out[j] = r
            self._bar = out
        return self._bar

    def candidates(self, reason: str, lat: dict[str, float]) -> dict[int, tuple[Reach, str]]:
        """Producers kept after pruning, each with its dependency kind (callers only read it)."""
        key = (reason, tuple(sorted(lat.items())))
        got = self._candidates.get(key)
        if got is None:
            got = self._candidates[key] = self._prune(reason, lat)
        return got

    def _prune(self, reason: str, lat: dict[str, float]) -> dict[int, tuple[Reach, str]]:
        insts = self.cfg.insts
        raw = {j: r for j, r in self.raw().items() if compatible(reason, insts[j])}
        kept = self._kept(reason, raw)
        timely = {j: v for j, v in kept.items() if v[0].cycles <= latency_bound(insts[j], lat)}
        if reason == "wait":
            return _due_last(timely, insts, lat) or self.stall_count()
        if len(timely) > 1:
            timely = _drop_dominated_war(timely)
        return timely or kept  # a scoreboard wait: someone is outstanding even if slower than our bound

    def _with_kinds(self, found: dict[int, Reach]) -> dict[int, tuple[Reach, str]]:
        """Producers with the kind of dependency each producer's opcode makes."""
        insts = self.cfg.insts
        return {j: (r, kind_of(insts[j])) for j, r in found.items()}

    def _kept(self, reason: str, raw: dict[int, Reach]) -> dict[int, tuple[Reach, str]]:
        """The producers a stall of ``reason`` can wait on: the register writers compatible
        with it, narrowed by the barriers the consumer waits on (control codes); else the
        late readers it would overwrite (write-after-read)."""
        if reason == "wait":
            return self._with_kinds(raw)
        insts = self.cfg.insts
        war = {j: r for j, r in self.war().items() if reads_late(reason, insts[j]) and j not in raw}
        wait = self.waits() if self.control else set()
        if wait:
            return self._kept_by_barriers(reason, raw, war, wait)
        return self._with_kinds(raw) or {j: (r, "war") for j, r in war.items()}

    def _kept_by_barriers(
        self, reason: str, raw: dict[int, Reach], war: dict[int, Reach], wait: AbstractSet[int | None]
    ) -> dict[int, tuple[Reach, str]]:
        """The producers behind the barriers the consumer waits on: writers on a write
        barrier, late readers on a read barrier; else any setter of those barriers (a wait
        no register explains: ordering, an unparsed operand); else every writer."""
        bar = self.barrier_setters()
        kept = self._with_kinds({j: r for j, r in raw.items() if self._behind(j, bar, "write_barrier", wait)})
        kept.update(
            {j: (r, "war") for j, r in war.items() if self._behind(j, bar, "read_barrier", wait) and j not in kept}
        )
        if not kept:
            kept = self._any_setter(reason, bar, wait)
        return kept or self._with_kinds(raw)

    def _behind(self, j: int, bar: dict[int, Reach], which: _BarrierKind, wait: AbstractSet[int | None]) -> bool:
        """Whether producer ``j`` sets one of the barriers waited on as its ``which`` barrier."""
        return j in bar and self.barrier(j, which) in wait

    def _any_setter(
        self, reason: str, bar: dict[int, Reach], wait: AbstractSet[int | None]
    ) -> dict[int, tuple[Reach, str]]:
        insts = self.cfg.insts
        return {
            j: (r, kind_of(insts[j], war=self.barrier(j, "write_barrier") not in wait))
            for j, r in bar.items()
            if compatible(reason, insts[j]) or reads_late(reason, insts[j])
        }

    def stall_count(self) -> dict[int, tuple[Reach, str]]:
        """A wait stall no fixed-latency producer explains is the stall count the compiler
        put on the instruction issued just before (the only one when straight-line)."""
        cfg, idx = self.cfg, self.idx
        b = cfg.blocks[cfg.block_of[idx]]
        if idx > b.start:
            j = idx - 1
        elif len(b.preds) == 1:
            j = cfg.blocks[b.preds[0]].end - 1
        else:
            return {}
        cw = self.cw(j)
        if cw and cw.get("stall") == 1:  # the next issue was allowed at once
            return {}
        return {j: (Reach(j, 1, 1), "stall_count")}


def _due_last(
    timely: dict[int, tuple[Reach, str]], insts: list[Instruction], lat: dict[str, float]
) -> dict[int, tuple[Reach, str]]:
    """Fixed latencies are known: of several producers, the one whose result is due last binds."""
    if len(timely) <= 1:
        return timely
    due = {j: fixed_latency(insts[j], lat) - v[0].cycles for j, v in timely.items()}
    last = max(due.values())
    return {j: v for j, v in timely.items() if due[j] >= last}


def _drop_dominated_war(kept: dict[int, tuple[Reach, str]]) -> dict[int, tuple[Reach, str]]:
    """A late operand read issued before a variable-latency read-after-write producer has
    happened by the time that producer's result arrives (memory instructions of a warp enter
    the MIO/LSU queues in order), so the write-after-read candidate cannot be the one waited on."""
    raw_first = min((r.cycles for r, k in kept.values() if k != "war" and k != "arithmetic"), default=None)
    if raw_first is None:
        return kept
    return {j: v for j, v in kept.items() if v[1] != "war" or v[0].cycles < raw_first} or kept


def blame_stalls(
    cfg: CFG,
    df: pd.DataFrame,
    control: dict[int, ControlCode] | None = None,
    max_distance: int = 400,
    latency: Mapping[str, object] | None = None,
    matrix: tuple[dict[str, int], npt.NDArray[np.float64]] | None = None,
    budget: int | None = None,
) -> Blame:
    """``df``: the per-instruction table (indexed by PC, with ``stall_<reason>`` columns).
    ``control``: decoded control codes per PC (``stall``, ``wait_mask``, ``write_barrier``,
    ``read_barrier``) for barrier-based pruning and cycle counts; ``latency``: the
    architecture's latencies (``specs/arch``: l1, l2, dram, shared, fp32, fp64, mufu,
    constant_miss) for latency-based pruning. ``matrix``: ``df``'s stall_* columns already
    copied out, as (column -> position, array), to save copying them again. ``budget``: the
    most sampled instructions sliced (None: all); past it, those with the most samples are
    sliced and the rest counted in ``unsliced_instructions`` / ``unsliced_sample_share``, so
    that a function of tens of thousands of sampled instructions ends in bounded time."""
    lat = _latencies(latency)
    cycles_of = _cycle_counter(cfg, control) if control else None
    pcs = df.index.tolist()
    # Plain arrays and dicts: per-row and per-label pandas access dominated large reports.
    where, arr = matrix if matrix is not None else _stall_matrix(df)
    selected = dict(zip(pcs, arr[:, where["stall_selected"]].tolist())) if "stall_selected" in where else {}
    reason_cols, values, busy = _stall_reasons(where, arr)
    busy, unsliced, unsliced_share = _within_budget(busy, values, budget)
    rows: list[Edge] = []
    cov = _Coverage()
    for ri in busy:
        pc = pcs[ri]
        idx = cfg.index_of_pc.get(int(pc))
        if idx is None:
            continue
        sampled = _Sampled(cfg, int(pc), idx, control, max_distance, cycles_of)
        for c, col in enumerate(reason_cols):
            s = float(values[ri][c])
            if s > 0:
                rows += sampled.edges(col[len("stall_") :], s, lat, selected, cov)
    return Blame(
        rows=rows,
        single_dependency_coverage=cov.single_share(),
        stalled_instructions=cov.stalled,
        source="cubin" if control else "report",
        single_dependency_sample_coverage=cov.single_sample_share(),
        unsliced_instructions=unsliced,
        unsliced_sample_share=unsliced_share,
    )


def _within_budget(
    busy: Iterable[int], values: npt.NDArray[np.float64], budget: int | None
) -> tuple[list[int], int, float]:
    """The sampled rows to slice: all within the budget, else the ``budget`` rows with the
    most samples, in their listing order (so that the edges keep the order an unbounded run
    gives them); with the count of rows left out and their share of the samples."""
    rows = list(busy)
    if budget is None or len(rows) <= budget:
        return rows, 0, 0.0
    weight = np.nan_to_num(values[rows].sum(axis=1), nan=0.0)
    order = np.argsort(-weight, kind="stable")
    kept = sorted(rows[i] for i in order[:budget])
    total = float(weight.sum())
    left = float(weight[order[budget:]].sum())
    return kept, len(rows) - budget, (left / total if total > 0 else 0.0)


def _latencies(latency: Mapping[str, object] | None) -> dict[str, float]:
    """The default latencies, overridden by the architecture's numeric ones."""
    lat: dict[str, float] = dict(DEFAULT_LATENCY)
    lat.update({k: float(v) for k, v in (latency or {}).items() if isinstance(v, (int, float))})
    return lat


def _stall_reasons(
    where: dict[str, int], arr: npt.NDArray[np.float64]
) -> tuple[list[str], npt.NDArray[np.float64], Iterable[int]]:
    """The stall reasons' columns (issuing, stall_selected, apart), their values, and the rows
    with a sample: rows with nothing above zero append no edge (NaN counts as a sample, as before)."""
    reason_cols = [c for c in where if c != "stall_selected"]
    values = arr[:, [where[c] for c in reason_cols]]
    busy = np.flatnonzero((~(values <= 0)).any(axis=1)) if reason_cols else ()
    return reason_cols, values, busy


def _cycle_counter(cfg: CFG, control: dict[int, ControlCode]) -> Callable[[int], int]:
    """Issue cycles of an instruction: its control code's stall count (at least 1)."""

    def cycles(j: int) -> int:
        cw = control.get(cfg.insts[j].pc)
        return max(1, int((1 if cw is None else cw.get("stall", 1)) or 1))

    return cycles


def _stall_matrix(df: pd.DataFrame) -> tuple[dict[str, int], npt.NDArray[np.float64]]:
    """``df``'s stall_* columns as (column -> position, array)."""
    cols = [c for c in df.columns if c.startswith("stall_")]
    return {c: j for j, c in enumerate(cols)}, df[cols].to_numpy(dtype=float)


@dataclass
class _Coverage:
    """How many stalled instructions (and their samples) waited on a dependency, and how many
    of them on a single candidate producer."""

    stalled: int = 0
    single: int = 0
    dep_samples: float = 0.0
    single_samples: float = 0.0

    def count(self, s: float, candidates: int) -> None:
        self.stalled += 1
        self.dep_samples += s
        if candidates == 1:
            self.single += 1
            self.single_samples += s

    def single_share(self) -> float:
        return self.single / self.stalled if self.stalled else 1.0

    def single_sample_share(self) -> float:
        return self.single_samples / self.dep_samples if self.dep_samples else 1.0


@dataclass
class _Sampled:
    """A sampled instruction whose stalls are being blamed; its producers are searched once,
    on the first dependency stall (``consumer``)."""

    cfg: CFG
    pc: int
    idx: int
    control: dict[int, ControlCode] | None
    max_distance: int
    cycles_of: Callable[[int], int] | None
    _consumer: _Consumer | None = None

    def consumer(self) -> _Consumer:
        if self._consumer is None:
            self._consumer = self._make_consumer()
        return self._consumer

    def _make_consumer(self) -> _Consumer:
        if self.control:  # control codes are per launch: no sharing
            return _Consumer(self.cfg, self.idx, self.control, self.max_distance, self.cycles_of)
        memo = _memo(self.cfg).consumers
        cons = memo.get((self.idx, self.max_distance))
        if cons is None:
            cons = memo[(self.idx, self.max_distance)] = _Consumer(self.cfg, self.idx, None, self.max_distance, None)
        return cons

    def edges(
        self, reason: str, s: float, lat: dict[str, float], selected: dict[int, float], cov: _Coverage
    ) -> list[Edge]:
        """The edges of ``s`` samples of one stall reason."""
        cfg, pc, idx = self.cfg, self.pc, self.idx
        if reason in SYNC_REASONS and not SYNC_REASONS[reason](cfg.insts[idx]):
            # Samples land on the instruction after the barrier/fence: charge the sync op.
            j = _preceding(cfg, idx, SYNC_REASONS[reason])
            return [
                (
                    pc,
                    cfg.insts[j].pc if j is not None else pc,
                    reason,
                    s,
                    0 if j is None else idx - j,
                    "synchronization",
                )
            ]
        if reason not in DEPENDENCY_REASONS:
            return [(pc, pc, reason, s, 0, "synchronization" if reason in SYNC_REASONS else "none")]
        kept = self.consumer().candidates(reason, lat)
        cov.count(s, len(kept))
        if not kept:
            return [(pc, pc, reason, s, 0, "unresolved")]
        # Shared among the candidates: the nearer, and the more often issued, get more.
        weights = {
            j: (1.0 + float(selected.get(cfg.insts[j].pc, 0.0))) / max(1, r.distance) for j, (r, _k) in kept.items()
        }
        total = sum(weights.values())
        return [
            (pc, cfg.insts[j].pc, reason, s * w / total, kept[j][0].distance, kept[j][1]) for j, w in weights.items()
        ]


SYNC_REASONS: dict[str, Callable[[Instruction], bool]] = {
    "barrier": lambda i: i.opcode == "BAR",
    "membar": lambda i: i.opcode in ("MEMBAR", "FENCE", "ERRBAR"),
}


def _preceding(cfg: CFG, idx: int, pred: Callable[[Instruction], bool], limit: int = 8) -> int | None:
    """Nearest instruction before ``idx`` in program order satisfying ``pred`` (few steps)."""
    for j in range(idx - 1, max(-1, idx - 1 - limit), -1):
        if pred(cfg.insts[j]):
            return j
    return None
