"""GPA-style instruction blamer: move each stall from the instruction that waits to the
instructions that caused it.

Each dependency stall (long/short scoreboard, wait) is walked back over the CFG to its
candidate producers (read-after-write, write-after-read and, with control codes, scoreboard
barriers), pruned by opcode, barrier and latency, and the survivors share the samples (GPA
Eq. 1). Every edge carries a dependency ``kind``. Method and kinds: docs/slicing.md.

Contract: ``blame_stalls`` is a pure function of its inputs; ``reaching_defs`` (also used
by the loop-invariance detector) returns ``(producer index, distance)`` pairs.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .cfg import CFG
from .control import sets_barriers, waits_on
from .isa import Instruction

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

# Latency bounds are upper bounds on how long a result may take, so they carry a margin for
# queueing: memory under contention (and shared memory with bank conflicts) takes several
# times its unloaded latency; fixed-latency pipes do not queue once issued.
_MEMORY_MARGIN = 4
_SHARED_MARGIN = 8
_VARIABLE_MARGIN = 8
_FIXED_MARGIN = 2
_DEFAULT_LATENCY = {
    "l1": 33,
    "l2": 200,
    "dram": 500,
    "shared": 23,
    "fp32": 4,
    "fp64": 8,
    "mufu": 20,
    "constant_miss": 100,
}

_L1TEX_READERS = {
    "STG",
    "ST",
    "STL",
    "RED",
    "REDG",
    "ATOM",
    "ATOMG",
    "LDG",
    "LD",
    "LDL",
    "TEX",
    "TLD",
    "TLD4",
    "SULD",
    "SUST",
    "SURED",
    "SUATOM",
    "LDGSTS",
}


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


def _search(  # noqa: PLR0912 - the backward search's stop rules are read together
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
    insts, blocks = cfg.insts, cfg.blocks
    consumer_guard = _guard_of(insts[idx])
    cyc = cycles_of or (lambda _j: 1)
    found: dict[int, Reach] = {}
    start = cfg.block_of[idx]
    # (cycles, distance, tie, block, last index to look at, guards met so far, first visit?)
    heap: list[tuple[int, int, int, int, int, frozenset[str | None], bool]] = [
        (0, 0, 0, start, idx - 1, frozenset(), True)
    ]
    done: set[tuple[int, frozenset[str | None]]] = set()
    tie = 1
    while heap:
        c, d, _, b, i, guards, first = heapq.heappop(heap)
        if not first:
            if (b, guards) in done:
                continue
            done.add((b, guards))
        alive = True
        lo = blocks[b].start
        while i >= lo:
            ins = insts[i]
            d += 1
            c += cyc(i)
            if d > max_distance:
                alive = False
                break
            if ins.guard != "!PT" and is_def(i):
                r = found.get(i)
                if r is None or c < r.cycles:
                    found[i] = Reach(i, d, c)
                if kill:
                    guards = guards | {_guard_of(ins)}
                    if _covers(consumer_guard, guards):
                        alive = False
                        break
            if stop is not None and stop(i):
                alive = False
                break
            i -= 1
        if not alive:
            continue
        for p in blocks[b].preds:
            if (p, guards) not in done:
                heapq.heappush(heap, (c, d, tie, p, blocks[p].end - 1, guards, False))
                tie += 1
    return found


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
        if not first:
            if (b, guards) in done:
                continue
            done.add((b, guards))
        lo = blocks[b].start
        alive = True
        if i >= lo:
            # _search steps to index k at distance d + (i - k + 1) and gives up at the first k
            # past max_distance: at k = i - (max_distance - d), when that is in the block.
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
                    alive = False
                    break
                pos -= 1
            if alive and dies >= lo:
                alive = False
            d += i - lo + 1
        if not alive:
            continue
        for p in blocks[b].preds:
            if (p, guards) not in done:
                heapq.heappush(heap, (d, tie, p, blocks[p].end - 1, guards, False))
                tie += 1
    return found


# ---- pruning rules ------------------------------------------------------------------------------


def _l1tex(p: Instruction) -> bool:
    return p.is_global_load() or p.is_local() or p.opcode in ("LD", "ATOM", "ATOMG")


def _compatible(reason: str, producer: Instruction) -> bool:
    """Can a read-after-write dependency on ``producer`` show up as this stall reason?"""
    if reason == "long_scoreboard":
        return _l1tex(producer)
    if reason == "short_scoreboard":
        return producer.variable_latency() and not _l1tex(producer)
    if reason == "wait":
        return not producer.variable_latency() or producer.is_fp64()
    return True


def _reads_late(reason: str | None, p: Instruction) -> bool:
    """Does ``p`` read its source registers after issue (so overwriting them waits)?"""
    l1tex = p.opcode in _L1TEX_READERS
    mio = (
        p.is_shared()
        or p.opcode in ("LDC", "SHFL", "MUFU")
        or (p.variable_latency() and not l1tex and not p.is_memory())
    )
    if reason == "long_scoreboard":
        return l1tex
    if reason == "short_scoreboard":
        return mio
    return l1tex or mio


def latency_bound(p: Instruction, lat: dict[str, float]) -> float:
    """Upper bound, in cycles, on the time ``p``'s result (or its late operand read) takes."""
    if _l1tex(p) or p.opcode in _L1TEX_READERS:
        return _MEMORY_MARGIN * lat["dram"]
    if p.is_shared():
        return _SHARED_MARGIN * lat["shared"] + 64
    if p.opcode in ("LDC", "ULDC"):
        return _MEMORY_MARGIN * lat["constant_miss"]
    if p.variable_latency() and not p.is_fp64():
        return _VARIABLE_MARGIN * max(lat["mufu"], lat["fp64"], lat["shared"])
    return _FIXED_MARGIN * _fixed_latency(p, lat)


def _fixed_latency(p: Instruction, lat: dict[str, float]) -> float:
    return lat["fp64"] if p.is_fp64() else lat["fp32"]


def kind_of(p: Instruction, war: bool = False) -> str:
    if war:
        return "war"
    if p.is_local():
        return "local_memory"
    if _l1tex(p) or p.opcode in _L1TEX_READERS:
        return "global_memory"
    if p.opcode in ("LDC", "ULDC"):
        return "constant_memory"
    if p.is_shared():
        return "shared_memory"
    return "arithmetic"


# ---- the blamer -----------------------------------------------------------------------------------


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

    def barrier(self, j: int, which: Literal["write_barrier", "read_barrier"]) -> int | None:
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
        raw = {j: r for j, r in self.raw().items() if _compatible(reason, insts[j])}
        if reason == "wait":
            kept = {j: (r, kind_of(insts[j])) for j, r in raw.items()}
        else:
            war = {j: r for j, r in self.war().items() if _reads_late(reason, insts[j]) and j not in raw}
            wait = self.waits() if self.control else set()
            if wait:
                bar = self.barrier_setters()
                kept = {
                    j: (r, kind_of(insts[j]))
                    for j, r in raw.items()
                    if j in bar and self.barrier(j, "write_barrier") in wait
                }
                kept.update(
                    {
                        j: (r, "war")
                        for j, r in war.items()
                        if j in bar and self.barrier(j, "read_barrier") in wait and j not in kept
                    }
                )
                if not kept:  # waits for a barrier no register explains (ordering, unparsed operand)
                    kept = {
                        j: (r, kind_of(insts[j], war=self.barrier(j, "write_barrier") not in wait))
                        for j, r in bar.items()
                        if _compatible(reason, insts[j]) or _reads_late(reason, insts[j])
                    }
                if not kept:
                    kept = {j: (r, kind_of(insts[j])) for j, r in raw.items()}
            else:
                kept = {j: (r, kind_of(insts[j])) for j, r in raw.items()}
                if not kept:
                    kept = {j: (r, "war") for j, r in war.items()}
        timely = {j: v for j, v in kept.items() if v[0].cycles <= latency_bound(insts[j], lat)}
        if reason == "wait":
            if len(timely) > 1:
                # Fixed latencies are known: the producer whose result is due last binds.
                due = {j: _fixed_latency(insts[j], lat) - v[0].cycles for j, v in timely.items()}
                last = max(due.values())
                timely = {j: v for j, v in timely.items() if due[j] >= last}
            return timely or self.stall_count()
        if len(timely) > 1:
            timely = _drop_dominated_war(timely)
        return timely or kept  # a scoreboard wait: someone is outstanding even if slower than our bound

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


def _drop_dominated_war(kept: dict[int, tuple[Reach, str]]) -> dict[int, tuple[Reach, str]]:
    """A late operand read issued before a variable-latency read-after-write producer has
    happened by the time that producer's result arrives (memory instructions of a warp enter
    the MIO/LSU queues in order), so the write-after-read candidate cannot be the one waited on."""
    raw_first = min((r.cycles for r, k in kept.values() if k != "war" and k != "arithmetic"), default=None)
    if raw_first is None:
        return kept
    return {j: v for j, v in kept.items() if v[1] != "war" or v[0].cycles < raw_first} or kept


def blame_stalls(  # noqa: C901, PLR0912, PLR0915 - the blame walk's pruning rules are read together
    cfg: CFG,
    df: pd.DataFrame,
    control: dict[int, ControlCode] | None = None,
    max_distance: int = 400,
    latency: Mapping[str, object] | None = None,
    matrix: tuple[dict[str, int], npt.NDArray[np.float64]] | None = None,
) -> Blame:
    """``df``: the per-instruction table (indexed by PC, with ``stall_<reason>`` columns).
    ``control``: decoded control codes per PC (``stall``, ``wait_mask``, ``write_barrier``,
    ``read_barrier``) for barrier-based pruning and cycle counts; ``latency``: the
    architecture's latencies (``specs/arch``: l1, l2, dram, shared, fp32, fp64, mufu,
    constant_miss) for latency-based pruning. ``matrix``: ``df``'s stall_* columns already
    copied out, as (column -> position, array), to save copying them again."""
    lat: dict[str, float] = dict(_DEFAULT_LATENCY)
    lat.update({k: float(v) for k, v in (latency or {}).items() if isinstance(v, (int, float))})
    cycles_of: Callable[[int], int] | None = None
    if control:

        def _cycles(j: int) -> int:
            cw = control.get(cfg.insts[j].pc)
            return max(1, int((1 if cw is None else cw.get("stall", 1)) or 1))

        cycles_of = _cycles
    rows: list[Edge] = []
    stalled = single = 0
    dep_samples = single_samples = 0.0
    pcs = df.index.tolist()
    # Plain arrays and dicts: per-row and per-label pandas access dominated large reports.
    if matrix is None:
        cols = [c for c in df.columns if c.startswith("stall_")]
        matrix = ({c: j for j, c in enumerate(cols)}, df[cols].to_numpy(dtype=float))
    where, arr = matrix
    selected = dict(zip(pcs, arr[:, where["stall_selected"]].tolist())) if "stall_selected" in where else {}
    reason_cols = [c for c in where if c != "stall_selected"]
    values = arr[:, [where[c] for c in reason_cols]]
    # Rows with nothing above zero append no edge (NaN counts as a sample, as before).
    busy = np.flatnonzero((~(values <= 0)).any(axis=1)) if reason_cols else ()
    for ri in busy:
        pc = pcs[ri]
        row = values[ri]
        idx = cfg.index_of_pc.get(int(pc))
        if idx is None:
            continue
        consumer = cfg.insts[idx]
        cons: _Consumer | None = None
        for c, col in enumerate(reason_cols):
            s = float(row[c])
            if s <= 0:
                continue
            reason = col[len("stall_") :]
            if reason in SYNC_REASONS and not SYNC_REASONS[reason](consumer):
                # Samples land on the instruction after the barrier/fence: charge the sync op.
                j = _preceding(cfg, idx, SYNC_REASONS[reason])
                rows.append(
                    (
                        int(pc),
                        cfg.insts[j].pc if j is not None else int(pc),
                        reason,
                        s,
                        0 if j is None else idx - j,
                        "synchronization",
                    )
                )
                continue
            if reason not in DEPENDENCY_REASONS:
                rows.append((int(pc), int(pc), reason, s, 0, "synchronization" if reason in SYNC_REASONS else "none"))
                continue
            if cons is None:
                if control:  # control codes are per launch: no sharing
                    cons = _Consumer(cfg, idx, control, max_distance, cycles_of)
                else:
                    memo = _memo(cfg).consumers
                    cons = memo.get((idx, max_distance))
                    if cons is None:
                        cons = memo[(idx, max_distance)] = _Consumer(cfg, idx, None, max_distance, None)
            kept = cons.candidates(reason, lat)
            stalled += 1
            dep_samples += s
            if not kept:
                rows.append((int(pc), int(pc), reason, s, 0, "unresolved"))
                continue
            if len(kept) == 1:
                single += 1
                single_samples += s
            weights = {
                j: (1.0 + float(selected.get(cfg.insts[j].pc, 0.0))) / max(1, r.distance) for j, (r, _k) in kept.items()
            }
            total = sum(weights.values())
            for j, w in weights.items():
                r, kind = kept[j]
                rows.append((int(pc), cfg.insts[j].pc, reason, s * w / total, r.distance, kind))
    return Blame(
        rows=rows,
        single_dependency_coverage=single / stalled if stalled else 1.0,
        stalled_instructions=stalled,
        source="cubin" if control else "report",
        single_dependency_sample_coverage=single_samples / dep_samples if dep_samples else 1.0,
    )


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
