"""Finding ``memory-latency``: warps wait on global loads while the memory system has headroom:
too few loads in flight.

Contract: ``memory_latency(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: a loop that issues one or two independent loads per iteration (rolled, or a chain
whose addresses come from the previous load), or loop-free code that issues one or two per
warp before it waits, keeps little memory traffic in flight; latency, not bandwidth, sets the
pace.

Evidence: long-scoreboard samples at least ``latency_load_share`` of stall samples; DRAM and
L2 throughput both measured (else ``not_measured()``) and below saturation; at or above
``bound_pct`` loop-free code qualifies only as a dependent chain (a loop's loads qualify up to
saturation: each thread still has one in flight). The loads' long-scoreboard waits (at them and
charged to them) count where their loop issues at most ``latency_loads_per_iteration`` per
iteration over its longest dependent chain (``_loads_per_iteration``), or loop-free code at
most that per warp (``_loads_per_warp``); they must reach half of ``latency_load_share``.

Estimate: with k independent loads in flight instead of one, (1 - 1/k) of the wait is hidden
(k = 4: 0.75 of it, ``eliminate``). No limit of its own here: the physical bounds
``evaluate`` applies to every finding (analysis/bounds.py) hold it to the units' headroom.

Advice: the loop advice (unroll, prefetch), or, chosen from the code's shape
(analysis/advice_shape.py), ``loop_free`` where none of the waiting loads' lines is in a loop
(several elements per thread, wider loads) and ``header`` where the top line is inlined header
code.

Metrics (declared): the throughput units (``UNIT_METRICS``).

Helpers (this rule's own): ``_loads_per_iteration``, ``_loads_per_warp``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ....sass.cfg import CFG, Loop
from ....sass.isa import Instruction
from ....sass.dataflow import (
    load_chain_depth,
)
from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    Detection,
    detector,
    eliminate,
    merge_weights,
    not_measured,
    warps_launched,
)


def _loads_per_iteration(ctx: KernelContext, cfg: CFG, loop: Loop) -> float:
    """Global loads executed per back-edge taken to the loop's header, over the longest chain
    of them whose addresses come from the previous one's value."""
    body = cfg.loop_instructions(loop)
    executed = ctx.executed()

    def count(pick: Callable[[Instruction], bool]) -> float:
        return sum(float(executed.get(cfg.insts[j].pc) or 0.0) for j in body if pick(cfg.insts[j]))

    iters = count(
        lambda i: (
            i.is_branch()
            and i.target is not None
            and cfg.index_of_pc.get(i.target) is not None
            and cfg.block_of[cfg.index_of_pc[i.target]] == loop.header
        )
    )
    depth = load_chain_depth(cfg, body)
    return count(lambda i: i.is_global_load()) / iters / depth if iters > 0 else math.inf


def _loads_per_warp(ctx: KernelContext, cfg: CFG, chains_only: bool) -> float:
    """Loop-free code: the global loads a warp issues outside loops, over the longest chain of
    them whose addresses come from the previous one's value (one element per thread: a load or
    two, then the warp waits); inf when the memory system is busy (``chains_only``)."""
    straight = [j for j in range(len(cfg.insts)) if cfg.innermost_loop(j) is None]
    warps = warps_launched(ctx.kernel)
    if not warps or chains_only:
        # A chain of a hop or two per warp is hidden by the other resident warps once the
        # memory system is this busy (an index-then-value gather at 66% of DRAM peak): only a
        # loop's long chain keeps each warp to one load in flight whatever the bandwidth.
        return math.inf
    depth = load_chain_depth(cfg, straight)
    executed = ctx.executed()
    n = sum(float(executed.get(cfg.insts[j].pc) or 0.0) for j in straight if cfg.insts[j].is_global_load())
    return n / warps / depth


@detector(metrics=(*UNIT_METRICS,))
def memory_latency(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Warps wait on global loads while the memory system has headroom: too few loads in
    flight. The loads that carry the waits sit in a loop issuing one or two independent loads
    per iteration (a rolled loop, a dependent index-then-value pair, or a longer body whose
    loads each take their address from the previous one), or in loop-free code that issues one
    or two per warp before it waits (one element per thread, a gather through an index). With k independent loads in flight
    instead of one, (1 - 1/k) of the wait is hidden (k = 4: unroll by 4); the memory units'
    headroom bounds it. With DRAM or L2 at bound_pct or more, only chains qualify."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or not ctx.sampling or ctx.share("long_scoreboard") < ctx.th["latency_load_share"]:
        return None
    measured = [v for v in (ctx.units.get(u) for u in ("dram", "lts")) if v is not None]
    mem = max(measured, default=None)
    # At or above bound_pct the memory system is busy enough to be the limit, except for a
    # chain of dependent loads: each warp has one in flight whatever the bandwidth in use
    # (hop_chains: random sector loads keep L2 at 63%, four chains in lockstep gain 1.37x),
    # up to saturation; the unit bound then caps the gain.
    if mem is not None and mem >= ctx.th["saturation_pct"]:
        return None
    if mem is None or len(measured) < 2:
        # Whether DRAM or L2 is the limit (the headroom the finding rests on) is not measured.
        return not_measured()
    chains_only = mem >= ctx.th["bound_pct"]
    loads = ctx.pcs_where(lambda i: i.is_global_load() and not i.is_atomic())
    waits = merge_weights(ctx.blamed_by_pc(loads, ("long_scoreboard",)), ctx.samples_at(loads, ("long_scoreboard",)))
    per_pass: dict[int | None, float] = {}  # loop header (None: loop-free code) -> loads in flight
    hot: dict[int, float] = {}
    for pc, wait in waits.items():
        idx = cfg.index_of_pc.get(pc)
        if idx is None or wait <= 0:
            continue
        loop = cfg.innermost_loop(idx)
        key = None if loop is None else loop.header
        if key not in per_pass:
            # A rolled loop keeps one load per thread in flight whatever the bandwidth in use
            # up to saturation (atomicReduction, HeCBench: DRAM at 61%, four loads in flight
            # measured 1.36x); the units' headroom bounds the gain. Loop-free code above
            # bound_pct counts only as a chain (its other warps hide a hop or two).
            per_pass[key] = (
                _loads_per_warp(ctx, cfg, chains_only) if loop is None else _loads_per_iteration(ctx, cfg, loop)
            )
        if per_pass[key] <= ctx.th["latency_loads_per_iteration"]:
            hot[pc] = wait
    tot = ctx.samples_total
    removed_share = sum(hot.values()) / tot if tot > 0 else 0.0
    if removed_share < ctx.th["latency_load_share"] * 0.5:
        return None
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=eliminate(removed_share * 0.75),
        evidence={"load_wait_share": round(removed_share, 3), "memory_throughput_pct": round(mem, 1)},
        locations=ctx.locations(hot),
        fmt={"share_pct": 100 * removed_share, "mem_pct": mem},
    )
