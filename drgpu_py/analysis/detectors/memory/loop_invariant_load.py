"""Finding ``loop-invariant-load``: a load in a loop whose address does not change across its
iterations, reloaded every iteration.

Contract: ``loop_invariant_load(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: the compiler keeps a load in the loop when it cannot prove that the loop's stores
leave its address alone (aliasing); each iteration then pays the load and waits for it.

Evidence: global loads and register-indexed constant loads in a loop whose address registers
are loop-invariant (dataflow) and whose memory the loop does not write; the long- and
short-scoreboard waits the blamer charges to them, at least ``invariant_load_share`` (needs
the blamer).

Estimate: hoisted, the reloads leave the loop with every sample at them; accesses to one
fixed address per thread in the loop then get promoted to a register (``promoted_by_hoisting``)
and their memory samples go too: ``eliminate`` of the sum. Partial relief: the reloads' and
promoted accesses' share of the L2 sectors on L1 and L2 (0 without per-instruction sectors),
and their LSU share (``lsu_relief``).

Metrics (declared): none (SASS, per-instruction sectors and samples).

Helpers: none of its own.
"""

from __future__ import annotations

from ....sass.dataflow import (
    loop_invariant,
    promoted_by_hoisting,
    registers_in,
    written_in_loop,
)
from ...context import KernelContext
from ...passes import Passes
from ..base import (
    MEMORY_REASONS,
    Detection,
    cost_share,
    detector,
    eliminate,
    l2_sector_share,
    lsu_relief,
)


@detector()
def loop_invariant_load(ctx: KernelContext, passes: Passes) -> Detection | None:
    cfg = ctx.cfg
    if cfg is None or not cfg.loops or ctx.blame is None:
        return None
    invariant: list[int] = []
    for idx, ins in enumerate(cfg.insts):
        if not (ins.is_global_load() or ins.opcode == "LDC") or ins.is_atomic():
            continue
        loop = cfg.innermost_loop(idx)
        if loop is None or ins.opcode == "LDC" and not ins.is_const_indexed():
            continue
        addr_regs = {r for o in ins.operands if "[" in o for r in registers_in(o)} & ins.uses
        if (
            addr_regs
            and all(loop_invariant(cfg, idx, reg, loop, {}, 0) for reg in addr_regs)
            and not written_in_loop(cfg, ins, loop)
        ):
            invariant.append(ins.pc)
    if not invariant:
        return None
    removed_share, weights = cost_share(ctx, invariant, (), ("long_scoreboard", "short_scoreboard"))
    if removed_share < ctx.th["invariant_load_share"]:
        return None
    # Hoisted, the reloads leave the loop: besides the waits for their data, every sample at
    # them (their issue, their fixed-latency waits, the LSU queue) goes with them.
    r_own = cost_share(ctx, invariant, None, ("long_scoreboard", "short_scoreboard"))[0]
    # Once the reloads leave the loop, accesses to one fixed address per thread inside it
    # (x = *p ... *p = x every iteration) no longer meet a possibly aliasing load: the
    # compiler keeps the value in a register and stores it once after the loop (LICM's scalar
    # promotion; lcg_state and oscillator_params' fixed loops have no STG). Their own stalls
    # and their traffic go away with the reloads.
    promoted = promoted_by_hoisting(cfg, invariant)
    gone = invariant + promoted
    r_prom = (
        (
            sum(ctx.samples_at(promoted, MEMORY_REASONS).values())
            + sum(ctx.blamed_by_pc(promoted, ("long_scoreboard",)).values())
        )
        / ctx.samples_total
        if promoted and ctx.samples_total > 0
        else 0.0
    )
    # The reloads' share of the L2 sectors the SMs request: what hoisting takes off L1 and L2
    # (the rest of the traffic, e.g. the loop's stores to varying addresses, stays and bounds the gain).
    # Without per-instruction sectors that share is not measured, and none is taken off.
    share = l2_sector_share(ctx, gone)
    partial = {"lts": share or 0.0, "l1tex": share or 0.0, **lsu_relief(ctx, gone)}
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=eliminate(max(removed_share, r_own) + r_prom),
        evidence={
            "invariant_loads_in_loops": len(invariant),
            "blamed_sample_share": round(removed_share, 3),
            "removed_sample_share": round(max(removed_share, r_own), 3),
            "promoted_accesses": len(promoted),
            "promoted_sample_share": round(r_prom, 3),
        },
        locations=ctx.locations(weights),
        fmt={"share_pct": 100 * removed_share},
        partial_relief=partial,
    )
