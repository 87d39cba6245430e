"""GPA-style instruction blamer: move each stall from the instruction that waits to the
instructions that caused it.

For every instruction with dependency-stall samples (long/short scoreboard, wait), walk the
CFG backwards from it to the reaching definitions of the registers and predicates it reads
(continuing past predicated definitions, since another path may define the value), then
prune the candidates:

* opcode-based: a long-scoreboard stall only blames global/local/texture memory producers,
  a short-scoreboard stall shared-memory/MUFU/conversion/other variable-latency producers,
  a wait stall fixed-latency producers;
* barrier-based (when control codes are known): the consumer's wait mask must include the
  scoreboard barrier the producer sets;
* latency-based: producers farther than ``max_distance`` instructions are dropped.

What survives shares the samples in proportion to (1 + issued samples) / path length (GPA
Eq. 1). Stalls that are their own cause (barrier, membar, throttles, IMC miss, no
instruction...) stay on the stalled instruction. Contract: pure function of its inputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .cfg import CFG
from .isa import Instruction

DEPENDENCY_REASONS = ("long_scoreboard", "short_scoreboard", "wait")


@dataclass
class Blame:
    #: rows: consumer_pc, producer_pc, reason, samples, distance
    edges: pd.DataFrame
    single_dependency_coverage: float
    stalled_instructions: int
    source: str = "report"
    notes: list[str] = field(default_factory=list)

    def producer_samples(self, reasons=None) -> pd.Series:
        e = self.edges if reasons is None else self.edges[self.edges["reason"].isin(list(reasons))]
        return e.groupby("producer_pc")["samples"].sum() if not e.empty else pd.Series(dtype=float)


def _compatible(reason: str, producer: Instruction) -> bool:
    if reason == "long_scoreboard":
        return producer.is_global_load() or producer.is_local() or (producer.opcode in ("LD", "ATOM", "ATOMG"))
    if reason == "short_scoreboard":
        return producer.variable_latency() and not (producer.is_global_load() or producer.is_local())
    if reason == "wait":
        return not producer.variable_latency()
    return True


def _reaching_defs(cfg: CFG, idx: int, reg: str, max_distance: int) -> list[tuple[int, int]]:
    """(producer index, distance) of definitions of ``reg`` reaching instruction ``idx``."""
    insts, blocks = cfg.insts, cfg.blocks
    consumer_guard = insts[idx].guard
    found: list[tuple[int, int]] = []
    # Work list of (block id, last index to look at, distance so far).
    b0 = cfg.block_of[idx]
    work = [(b0, idx - 1, 1)]
    seen: set[int] = set()
    while work:
        b, i, dist = work.pop()
        start = blocks[b].start
        covered = False
        while i >= start:
            ins = insts[i]
            if reg in ins.defs:
                found.append((i, dist))
                # An unpredicated def (or one under the consumer's own guard) kills the search.
                if ins.guard is None or ins.guard == consumer_guard:
                    covered = True
                    break
            i -= 1
            dist += 1
            if dist > max_distance:
                covered = True
                break
        if covered:
            continue
        for p in blocks[b].preds:
            if p not in seen:
                seen.add(p)
                work.append((p, blocks[p].end - 1, dist))
    return found


def blame_stalls(cfg: CFG, df: pd.DataFrame, control: dict[int, dict] | None = None,
                 max_distance: int = 400) -> Blame:
    """``df``: the per-instruction table (indexed by PC, with ``stall_<reason>`` columns).
    ``control``: optional decoded control codes per PC (``wait_mask``, ``write_barrier``,
    ``read_barrier``) for barrier-based pruning."""
    rows = []
    stalled = single = 0
    selected = df["stall_selected"] if "stall_selected" in df else pd.Series(0.0, index=df.index)
    reason_cols = [c for c in df.columns if c.startswith("stall_") and c != "stall_selected"]
    for pc, row in df[reason_cols].iterrows():
        idx = cfg.index_of_pc.get(int(pc))
        if idx is None:
            continue
        consumer = cfg.insts[idx]
        dep_total = 0.0
        for col in reason_cols:
            s = float(row[col])
            if s <= 0:
                continue
            reason = col[len("stall_"):]
            if reason in SYNC_REASONS and not SYNC_REASONS[reason](consumer):
                # Samples land on the instruction after the barrier/fence: charge the sync op.
                j = _preceding(cfg, idx, SYNC_REASONS[reason])
                rows.append((int(pc), cfg.insts[j].pc if j is not None else int(pc), reason, s, 0 if j is None else idx - j))
                continue
            if reason not in DEPENDENCY_REASONS:
                rows.append((int(pc), int(pc), reason, s, 0))
                continue
            dep_total += s
            cands: dict[int, int] = {}
            for reg in consumer.uses:
                for j, dist in _reaching_defs(cfg, idx, reg, max_distance):
                    if j not in cands or dist < cands[j]:
                        cands[j] = dist
            kept = {j: d for j, d in cands.items() if _compatible(reason, cfg.insts[j])}
            if control and kept and reason != "wait":
                cw = control.get(int(pc), {})
                mask = cw.get("wait_mask")
                if mask is not None:
                    by_barrier = {j: d for j, d in kept.items()
                                  if _barrier_of(control.get(cfg.insts[j].pc, {})) in _mask_bits(mask)}
                    if by_barrier:
                        kept = by_barrier
            stalled += 1
            if not kept:
                rows.append((int(pc), int(pc), reason, s, 0))
                continue
            single += len(kept) == 1
            weights = {j: (1.0 + float(selected.get(cfg.insts[j].pc, 0.0))) / d for j, d in kept.items()}
            total = sum(weights.values())
            for j, w in weights.items():
                rows.append((int(pc), cfg.insts[j].pc, reason, s * w / total, kept[j]))
    edges = pd.DataFrame(rows, columns=["consumer_pc", "producer_pc", "reason", "samples", "distance"])
    cov = single / stalled if stalled else 1.0
    return Blame(edges=edges, single_dependency_coverage=cov, stalled_instructions=stalled,
                 source="cubin" if control else "report")


SYNC_REASONS = {"barrier": lambda i: i.opcode == "BAR", "membar": lambda i: i.opcode in ("MEMBAR", "FENCE", "ERRBAR")}


def _preceding(cfg: CFG, idx: int, pred, limit: int = 8) -> int | None:
    """Nearest instruction before ``idx`` in program order satisfying ``pred`` (few steps)."""
    for j in range(idx - 1, max(-1, idx - 1 - limit), -1):
        if pred(cfg.insts[j]):
            return j
    return None


def _mask_bits(mask: int) -> set[int]:
    return {b for b in range(6) if mask >> b & 1}


def _barrier_of(cw: dict) -> int | None:
    wb = cw.get("write_barrier")
    return wb if wb is not None and wb != 7 else cw.get("read_barrier") if cw.get("read_barrier") not in (None, 7) else None
