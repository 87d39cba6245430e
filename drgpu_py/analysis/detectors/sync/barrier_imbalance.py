"""Finding ``barrier-imbalance``: warps wait at a barrier for work before it that only some
warps run, or run longer (and triangular loops).

Contract: ``barrier(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: ``__syncthreads`` holds every warp until the slowest arrives; code under a branch
whose guard or trip count depends on the thread or warp index (from the SASS:
``thread_dependent_blocks``, ``thread_predicated``) makes some warps slower.

Evidence: the barrier share of stall samples, at least ``barrier_share``; per barrier
(``_barrier_regions``): its waits, the thread-dependent work since the previous barrier and
the interval between the two in cycles (``_warp_cycles_per_sample``). Only waits at barriers
with such work and an interval of at least ``barrier_interval_latencies`` DRAM latencies count
(``_unbalanced``: shorter intervals are the slowest warp's memory latency); intervals not
measured where their waits would decide give ``not_measured()``. Warp-specialized kernels
keep all their waits.

Estimate: the waits go (each warp keeps its share of the work, 1 - 1/warps of them), with two
readings of the work: a triangular loop (``_triangular_loops``: trip count growing with the
thread index, lanes of a warp leaving it more than an iteration apart) also loses its repeated
steps beyond about 2 / (warps + 1) of the mean, with partial relief of the issue slots and
memory units; work on full warps (at least ``barrier_full_warp_lanes`` lanes, or lanes not
measured) spread over idle warps is latency hiding, capped at ``latency_hiding_max``.

Metrics (declared): the grid (``GRID_METRICS``), ``sm__cycles_active.avg`` and
``sm__warps_active.avg.per_cycle_active`` (the intervals).

Helpers (this rule's own): ``BarrierRegion``, ``_triangular_loops``,
``_warp_cycles_per_sample``, ``_barrier_regions``, ``_unbalanced``.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from ....sass.dataflow import index_bound_branches, thread_dependent_blocks, thread_predicated
from ...context import KernelContext
from ...passes import Passes
from ...tree import Location
from ...sol import grid_and_sms
from ...tree import location_text as loc_text
from ..base import (
    GRID_METRICS,
    Detection,
    blamed_locations,
    detector,
    eliminate,
    evidence_number,
    not_measured,
)


class BarrierRegion(TypedDict):
    """One barrier's region (_barrier_regions): its instruction index, the barrier waits
    at it, all samples of the region (waits included), the thread-dependent work before it
    (PC -> samples), the mean interval between the two barriers in cycles (NaN unknown),
    and the PCs where its waits are sampled."""

    barrier: int
    wait: float
    region: float
    work: dict[int, float]
    interval_cycles: float
    waits_at: list[int]


def _triangular_loops(ctx: KernelContext) -> dict[int, float]:
    """Loops whose trip count grows with the thread index (thread t runs about t steps: a
    running sum or prefix that each thread recomputes from the start): block id -> the
    lanes' spread of trip counts within a warp, in loop iterations. Two signs, both needed:
    the loop's exit branch is decided by the thread index through arithmetic alone (SASS),
    and the lanes of a warp leave the loop more than one iteration apart (the counters: the
    lane-iterations a body block misses against the lanes that enter the loop). A loop that
    strides by the block size (``for (i = tid; i < n; i += blockDim.x)``) also exits on an
    index-derived value, but its lanes differ by at most one iteration."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or "thread_inst_executed" not in df:
        return {}
    exits = index_bound_branches(cfg)
    executed = ctx.executed()
    threads = dict(zip(df.index.tolist(), df["thread_inst_executed"].tolist()))
    out: dict[int, float] = {}
    for loop in cfg.loops:
        idx = cfg.loop_instructions(loop)
        if not any(
            j in exits and any(s not in loop.blocks or s == loop.header for s in cfg.blocks[cfg.block_of[j]].succs)
            for j in idx
        ):
            continue
        # Lanes entering the loop: the thread instructions of its first instruction from
        # outside (a predecessor block's last instruction).
        preds = [b.id for b in cfg.blocks if loop.header in b.succs and b.id not in loop.blocks]
        lanes_in = sum(float(threads.get(cfg.insts[cfg.blocks[b].end - 1].pc) or 0.0) for b in preds)
        if lanes_in <= 0:
            continue
        for block_id in loop.blocks:
            pc = cfg.insts[cfg.blocks[block_id].start].pc
            warp_insts, thread_insts = float(executed.get(pc) or 0.0), float(threads.get(pc) or 0.0)
            if warp_insts <= 0 or math.isnan(thread_insts):
                continue
            spread = (32.0 * warp_insts - thread_insts) / lanes_in
            if spread > 1.0:
                out[block_id] = max(out.get(block_id, 0.0), spread)
    return out


def _warp_cycles_per_sample(ctx: KernelContext) -> float:
    """Warp-cycles one PC sample stands for: resident warps x active cycles x SMs over the
    kernel's samples (NaN when a counter is missing)."""
    kernel = ctx.kernel
    _, sms = grid_and_sms(ctx)
    warps = kernel.m("sm__warps_active.avg.per_cycle_active")
    cycles = kernel.m("sm__cycles_active.avg")
    total = ctx.samples_total
    if not sms or total <= 0 or warps is None or cycles is None or warps <= 0 or cycles <= 0:
        return math.nan
    return warps * cycles * sms / total


def _barrier_regions(ctx: KernelContext) -> list[BarrierRegion]:
    """Per barrier (program order): the waits at it (barrier samples from it to the next
    barrier: a waiting warp is sampled at an instruction shortly after the BAR), the
    thread-dependent work since the previous barrier, and how long a warp's interval
    between the two lasts on average (cycles: the region's samples, waits included, in
    warp-cycles per crossing of the barrier)."""
    cfg = ctx.cfg
    if cfg is None or not ctx.sampling or ctx.df.empty:
        return []
    # BAR.ARV only arrives; every other BAR form waits for the block.
    bars = [j for j, i in enumerate(cfg.insts) if i.opcode == "BAR" and "ARV" not in i.modifiers]
    if not bars:
        return []
    dependent = thread_dependent_blocks(cfg)
    # Guarded work the compiler predicated instead of branching around runs, lanes switched
    # off, in every warp: its wait at the barrier is the slowest warp's, as under a branch.
    predicated = thread_predicated(cfg, through_memory=False)
    pcs = [i.pc for i in cfg.insts]
    every = ctx.samples_at(pcs)
    waits = ctx.samples_at(pcs, ("barrier",))
    busy = {pc: every.get(pc, 0.0) - waits.get(pc, 0.0) for pc in pcs}
    executed = ctx.executed()
    per_sample = _warp_cycles_per_sample(ctx)
    out: list[BarrierRegion] = []
    for position, bar_index in enumerate(bars):
        before = range(bars[position - 1] if position else 0, bar_index)
        after = range(bar_index, bars[position + 1] if position + 1 < len(bars) else len(pcs))
        wait = sum(waits.get(pcs[j], 0.0) for j in after)
        region = wait + sum(busy[pcs[j]] for j in before)
        work = {
            pcs[j]: busy[pcs[j]]
            for j in before
            if (cfg.block_of[j] in dependent or j in predicated) and busy[pcs[j]] > 0
        }
        crossings = float(executed.get(pcs[bar_index]) or 0.0)
        interval = region * per_sample / crossings if crossings > 0 else math.nan
        out.append(
            {
                "barrier": bar_index,
                "wait": wait,
                "region": region,
                "work": work,
                "interval_cycles": interval,
                "waits_at": [pcs[j] for j in after],
            }
        )
    return out


def _unbalanced(ctx: KernelContext, regions: list[BarrierRegion]) -> list[BarrierRegion] | None:
    """The barrier regions with work before the barrier that depends on the thread index and
    an interval that outlasts a few memory round trips; None when that is not measured: no
    PC samples at the barriers (no regions), or intervals not measured (no SM cycles or
    resident warps) where those regions' waits would make the finding."""
    if not regions:
        return None
    min_cycles = ctx.th["barrier_interval_latencies"] * float((ctx.arch.get("latency") or {}).get("dram", 600))
    # An interval not measured is not taken to be long.
    timed = [region for region in regions if region["work"] and region["interval_cycles"] >= min_cycles]
    untimed = [region for region in regions if region["work"] and math.isnan(region["interval_cycles"])]
    waits = sum(region["wait"] for region in timed)
    if (
        waits / max(ctx.stall_total, 1e-9) < ctx.th["barrier_share"]
        and (waits + sum(region["wait"] for region in untimed)) / max(ctx.stall_total, 1e-9) >= ctx.th["barrier_share"]
    ):
        return None
    return timed


@detector(
    metrics=(
        *GRID_METRICS,
        "sm__cycles_active.avg",
        "sm__warps_active.avg.per_cycle_active",
    )
)
def barrier(ctx: KernelContext, passes: Passes) -> Detection | None:  # noqa: PLR0915 - the two readings of unbalanced work (triangular loop, spread work) are read together
    """Warps wait at a barrier for work before it that only some warps run, or run longer:
    code under a branch whose guard or trip count depends on the thread or warp index (from
    the SASS). Only the waits at such barriers count, and only where the interval between
    barriers outlasts a few memory round trips: waits in shorter intervals are the latency of
    the slowest warp's access (a transpose, a block that syncs after one load per segment),
    which no rebalancing removes.

    Estimate: the waits go (each warp keeps its share of the work, 1 - 1/warps of the waits
    removed), with two readings of the unbalanced work. A triangular loop (trip count growing
    with the thread index) also loses its repeated steps beyond the first warp's share, and
    with them their load on the issue slots and shared memory. Work that already runs on
    full warps, spread over idle warps, issues the same instructions from more warps: latency
    hiding, at most latency_hiding_max."""
    barrier_share = ctx.share("barrier")
    if barrier_share < ctx.th["barrier_share"]:
        return None
    regions = _barrier_regions(ctx)
    specialized = passes.traits is not None and passes.traits.warp_specialized
    unbalanced = _unbalanced(ctx, regions)
    if not specialized:
        if unbalanced is None:
            return not_measured()
        barrier_share = sum(region["wait"] for region in unbalanced) / max(ctx.stall_total, 1e-9)
        if barrier_share < ctx.th["barrier_share"]:
            return None
    unbalanced = unbalanced or []
    kernel = ctx.kernel
    warps = kernel.warps_per_block or 1
    frac = barrier_share * ctx.stall_total / ctx.total if ctx.total > 0 else 0.0
    removed_share = frac * (1.0 - 1.0 / warps if warps > 1 else 0.5)
    evidence: dict[str, Any] = {"barrier_stall_share": round(barrier_share, 3), "warps_per_block": warps}
    relieves, partial, cap = None, None, math.inf
    work_pcs = {pc for reg in unbalanced for pc in reg["work"]}
    tri = _triangular_loops(ctx) if unbalanced and warps > 1 else {}
    cfg = ctx.cfg
    tri_pcs = {i.pc for j, i in enumerate(ctx.insts) if cfg is not None and cfg.block_of[j] in tri and i.pc in work_pcs}
    if tri_pcs and ctx.total > 0:
        # A triangular loop repeats in every thread the steps the threads before it took;
        # sharing the partial results (a scan) leaves each warp about the first warp's
        # share: with trip counts growing linearly over the block's W warps, 2 / (W + 1) of
        # the mean. The waits go, and so do the loop's other instructions, which unloads
        # the issue slots and the units they use (partial relief, measured per instruction).
        keep = 2.0 / (warps + 1)
        loop = sum(reg["work"].get(pc, 0.0) for reg in unbalanced for pc in tri_pcs)
        removed_share = (frac * ctx.total + loop * (1.0 - keep)) / ctx.total
        executed = ctx.executed()
        ins_all = ctx.executed_total()
        mem_all = ctx.executed_where(lambda i: i.is_memory())
        ins_loop = sum(float(executed.get(pc) or 0.0) for pc in tri_pcs)
        mem_loop = sum(float(executed.get(pc) or 0.0) for pc in tri_pcs if ctx.by_pc[pc].is_memory())
        w_ins = (1.0 - keep) * ins_loop / ins_all if ins_all > 0 else 0.0
        w_mem = (1.0 - keep) * mem_loop / mem_all if mem_all > 0 else 0.0
        relieves = ["sm", "shared"]
        partial = {u: w_ins for u in ("sm", "issue", "fma", "alu", "fp64", "xu")}
        partial.update({"lsu": w_mem, "l1tex": w_mem})
        evidence["triangular_loop_share"] = evidence_number(loop / ctx.total)
        evidence["triangular_lane_spread"] = evidence_number(max(tri.values()), 2)
    elif unbalanced and work_pcs:
        # Work that runs on (nearly) full warps, spread over the block's other warps, issues
        # the same instructions from more warps at once: a latency-hiding change, credited
        # at most latency_hiding_max. Work in one or a few lanes (a thread-0 loop) also
        # fills the idle lanes, which is more than hiding latency.
        threads = ctx.df["thread_inst_executed"] if ctx.measured("thread_inst_executed") else None
        executed = ctx.executed()
        work_insts = sum(float(executed.get(pc) or 0.0) for pc in work_pcs)
        if threads is not None and work_insts > 0:
            lanes = sum(float(threads.get(pc, 0.0) or 0.0) for pc in work_pcs) / work_insts
            evidence["unbalanced_work_lanes"] = evidence_number(lanes, 1)
            if lanes >= ctx.th["barrier_full_warp_lanes"]:
                cap = ctx.th["latency_hiding_max"]
        else:
            # The work's lanes not measured: the reading that gains less (latency hiding).
            cap = ctx.th["latency_hiding_max"]
    locations = blamed_locations(ctx, "barrier")
    work_text = ""
    if unbalanced:
        # The barriers named are those the unbalanced work precedes.
        pcs = [pc for reg in unbalanced for pc in reg["waits_at"]]
        blamed = ctx.blamed_by_pc(pcs, ("barrier",)) or ctx.samples_at(pcs, ("barrier",))
        locations = ctx.locations(blamed) or locations
        work: dict[int, float] = {}
        for reg in unbalanced:
            work.update(reg["work"])
        lines: list[Location] = [
            {**loc, "role": "work before the barrier that depends on the thread index"}
            for loc in ctx.locations(work, 3)
        ]
        evidence["unbalanced_work"] = [loc_text(loc) for loc in lines]
        evidence["barrier_interval_cycles"] = [evidence_number(reg["interval_cycles"], 0) for reg in unbalanced]
        locations = locations[:1] + lines + locations[1:]
        if lines:
            work_text = (
                " The work before it whose trip count or guard depends on the thread index is at "
                + ", ".join(evidence["unbalanced_work"])
                + "."
            )
    return Detection(
        stall_share=min(1.0, barrier_share),
        speedup=min(eliminate(removed_share), max(1.0, cap)),
        evidence=evidence,
        locations=locations,
        fmt={"share_pct": 100 * min(1.0, barrier_share), "unbalanced_work": work_text},
        relieves_override=relieves,
        partial_relief=partial,
    )
