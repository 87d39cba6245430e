"""Finding ``repeated-pass``: a thread reads the same global data again in a later pass (a
row read for its maximum, read again for its sum, read a third time to normalize it).

Contract: ``repeated_pass(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: an algorithm in passes (max, then sum, then scale; a histogram, then a mapping; a
mean, then a variance) loads its input once per pass, because each pass needs a result that
the whole previous pass produced (a warp or block reduction between them). The later passes'
loads, their waits and their traffic are work a one-pass form does not do: an online
algorithm (online softmax, Welford) or the data kept in registers or shared memory between
the passes.

Evidence (SASS and per-instruction counts): executed global loads, grouped by source line,
whose addresses are computed from the same thread and block indices and kernel parameters
(``address_leaves``), where a later line's loads come after a cross-thread exchange (shuffle,
barrier, atomic or reduction) that follows the earlier line's, and execute about as often (a
pass over the same range, not a halo or a remainder). The samples at the later passes' loads
and those the blamer charges to them are at least ``repeated_pass_share`` of all samples.

Estimate: the later passes' loads and every sample at or blamed on them removed:
``eliminate`` of that share, within the limit of removing all of them. Partial relief: their
share of the L2 sectors on L1 and L2 (none without per-instruction sectors) and their LSU share.

Metrics (declared): none (SASS, per-instruction counts, sectors and samples).

Helpers: ``_pass_loads`` (the loads of each pass) and ``_later_passes`` (the repeated ones).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ....sass.cfg import CFG
from ....sass.dataflow import address_leaves
from ...context import KernelContext, LineKey
from ...passes import Passes
from ..base import (
    Detection,
    cost_share,
    detector,
    eliminate,
    l2_sector_share,
    lsu_relief,
    removed_limit,
    within_limit,
)

# Instructions through which the threads of a warp or block combine what a pass produced.
_EXCHANGES = frozenset({"SHFL", "BAR", "ATOM", "ATOMG", "ATOMS", "RED", "REDG", "REDUX"})
# A later pass reads about as much as the earlier one: between half and twice its loads.
_SAME_RANGE = (0.5, 2.0)


def _plain_load(ins_text: str) -> bool:
    """Not a load that must reach memory each time (strong or volatile: flags, spin waits)."""
    return "STRONG" not in ins_text and "VOLATILE" not in ins_text


def _pass_loads(ctx: KernelContext, cfg: CFG) -> dict[frozenset[str], list[list[int]]]:
    """Executed global loads by what their addresses are computed from (only addresses from at
    least one kernel parameter or launch constant), each group split into runs of one source
    line: instruction indices, the runs in program order."""
    executed = ctx.executed()
    groups: dict[tuple[frozenset[str], LineKey], list[int]] = defaultdict(list)
    for idx, ins in enumerate(cfg.insts):
        if not ins.is_global_load() or ins.is_atomic() or not _plain_load(ins.text):
            continue
        line = ctx.line_of(ins.pc)
        if line is None or not float(executed.get(ins.pc) or 0.0) > 0:
            continue
        leaves = address_leaves(cfg, idx)
        if leaves is None or not any(leaf.startswith("c[0x0]") for leaf in leaves):
            continue
        groups[(leaves, line)].append(idx)
    runs: dict[frozenset[str], list[list[int]]] = defaultdict(list)
    for (leaves, _line), idxs in groups.items():
        runs[leaves].append(idxs)  # in order: instructions are visited by index
    for same in runs.values():
        same.sort(key=min)
    return runs


def _later_passes(ctx: KernelContext, cfg: CFG) -> tuple[list[int], int]:
    """PCs of the loads that read again what an earlier pass read, and the number of passes
    of the data read most often."""
    executed = ctx.executed()
    exchanges = [i for i, ins in enumerate(cfg.insts) if ins.opcode in _EXCHANGES]

    def count(run: list[int]) -> float:
        return sum(float(executed.get(cfg.insts[i].pc) or 0.0) for i in run)

    def follows(first: tuple[list[int], float], later: tuple[list[int], float]) -> bool:
        end, start = first[0][-1], later[0][0]
        if start <= end or not any(end < e < start for e in exchanges):
            return False
        return _SAME_RANGE[0] <= later[1] / max(first[1], 1e-9) <= _SAME_RANGE[1]

    repeated: list[int] = []
    passes = 1
    for same in _pass_loads(ctx, cfg).values():
        counted = [(run, count(run)) for run in same]
        later = [run for k, run in enumerate(counted) if any(follows(first, run) for first in counted[:k])]
        repeated += [cfg.insts[i].pc for run, _ in later for i in run]
        passes = max(passes, 1 + len(later))
    return sorted(repeated), passes


@detector()
def repeated_pass(ctx: KernelContext, passes: Passes) -> Detection | None:
    cfg = ctx.cfg
    if cfg is None or ctx.blame is None:
        return None
    repeated, pass_count = _later_passes(ctx, cfg)
    if not repeated:
        return None
    removed_share, weights = cost_share(ctx, repeated, None, ("long_scoreboard", "short_scoreboard"))
    if removed_share < ctx.th["repeated_pass_share"]:
        return None
    evidence: dict[str, Any] = {
        "passes": pass_count,
        "repeated_loads": len(repeated),
        "removed_sample_share": round(removed_share, 3),
    }
    share = l2_sector_share(ctx, repeated)
    partial: dict[str, float] = {}
    if share is not None:
        evidence["repeated_sector_share"] = round(share, 3)
        partial = {"lts": share, "l1tex": share}
    partial |= lsu_relief(ctx, repeated)
    speed = within_limit(
        eliminate(removed_share),
        removed_limit(removed_share),
        "every sample at or blamed on the later passes' loads removed",
        evidence,
    )
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"share_pct": 100 * removed_share, "passes": pass_count},
        partial_relief=partial,
    )
