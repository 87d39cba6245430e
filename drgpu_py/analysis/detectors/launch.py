"""Launch findings: occupancy, a grid too small for the GPU, serial kernels, partial warps,
the tail of the last wave, and imbalance between ranks.

Contract: each detector is ``fn(ctx, passes) -> Detection | None`` (detectors/base.py),
pure, registered by ``@detector`` with the kernel-level metrics it reads.
"""

from __future__ import annotations

import math
from typing import Any

from ..context import KernelContext
from ..launch_shape import SPLIT_LOOPS, LaunchShape, WhatIf, occupancy_limits
from ..passes import Passes
from ..sol import grid_and_sms
from .base import (
    UNIT_METRICS,
    GRID_METRICS,
    LATENCY_REASONS,
    Detection,
    detector,
    evidence_number,
    launch_lanes,
    not_measured,
)


#: each occupancy limit's advice (its metric: launch_shape.OCCUPANCY_LIMITS)
LIMITER_ADVICE = {
    "registers": "Use fewer registers per thread (__launch_bounds__, -maxrregcount, fewer live values).",
    "shared memory": "Use less shared memory per block (smaller tiles, or only what the kernel touches).",
    "block size": "Change the block size so more blocks fit per SM.",
    "blocks per SM": "Use larger blocks: the SM's limit on resident blocks is reached first.",
    "barriers": "Use fewer named barriers per block.",
}


def occupancy_limiter(ctx: KernelContext) -> tuple[str | None, dict[str, float]]:
    """(the limit reached first, blocks per SM by limit) for a kernel without a launch shape
    (the tree's occupancy sub-tree); detectors read LaunchShape.limiter."""
    lim = occupancy_limits(ctx)
    return (min(lim, key=lim.__getitem__) if lim else None), lim


def _limiter_advice(ctx: KernelContext, limiter: str, w_new: float) -> str:
    """The limiter's advice; for registers, with what the change costs: the register count
    per thread that fits the target warps, against today's (a cap below what the code needs
    spills, and spills in hot code can cost more than the extra warps gain; the estimate
    assumes none)."""
    text = LIMITER_ADVICE[limiter]
    regs = ctx.kernel.m("launch__registers_per_thread")
    per_sm = ctx.kernel.m("device__attribute_max_registers_per_multiprocessor", ctx.arch.get("registers_per_sm", 65536))
    if limiter != "registers" or regs is None or w_new <= 0:
        return text
    cap = int(per_sm / (w_new * 32) // 8 * 8)
    return (
        f"{text} {int(w_new)} warps per SM fit at most {cap} registers per thread (now {int(regs)}): "
        f"check the spills a cap causes (-Xptxas -v); the estimate assumes none."
    )


@detector(
    metrics=(
        *UNIT_METRICS,
        "device__attribute_max_registers_per_multiprocessor",
        "device__attribute_max_warps_per_multiprocessor",
        "launch__occupancy_limit_barriers",
        "launch__occupancy_limit_blocks",
        "launch__occupancy_limit_registers",
        "launch__occupancy_limit_shared_mem",
        "launch__occupancy_limit_warps",
        "launch__registers_per_thread",
        "sm__maximum_warps_per_active_cycle_pct",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "smsp__issue_active.avg.pct_of_peak_sustained_active",
    )
)
def occupancy(ctx: KernelContext, passes: Passes) -> Detection | None:
    kernel = ctx.kernel
    theo = kernel.m("sm__maximum_warps_per_active_cycle_pct")
    shape = passes.launch
    if theo is None or theo >= ctx.th["occupancy_pct"] or shape is None:
        return None
    latency_share = ctx.share(*LATENCY_REASONS)
    if ctx.th["latency_share"] > latency_share:
        return None
    limiter, lim = shape.limiter, shape.blocks_per_sm_limits
    if limiter is None or _merging_adds_warps(ctx, shape):
        return None  # more threads per block is the change: block-too-small says it
    wpb = shape.warps_per_block
    max_warps = shape.max_warps_per_sm
    others = [v for n, v in lim.items() if n != limiter]
    new_blocks = min(others) if others else lim[limiter]
    w_cur = theo / 100.0 * max_warps
    # Relieved, an SM holds the next limiter's warps, but no more than the grid gives it.
    w_new = min(max_warps, new_blocks * wpb, shape.warps / shape.active_sms)
    if w_new <= w_cur:
        return None
    what_if = shape.what_if(
        active_sms=shape.active_sms,
        warps_per_scheduler=shape.warps_per_scheduler * w_new / w_cur,
    )
    achieved = kernel.m("sm__warps_active.avg.pct_of_peak_sustained_active")
    return Detection(
        stall_share=what_if.saved_share,
        speedup=what_if.speedup,
        evidence={
            "theoretical_occupancy_pct": round(theo, 1),
            "achieved_occupancy_pct": evidence_number(achieved),
            "limiter": limiter,
            "blocks_per_sm_limits": {n: int(v) for n, v in lim.items()},
            "warps_per_sm_if_relieved": int(w_new),
            "launch_model": what_if.to_dict(),
            "mechanism_limit": _what_if_limit(what_if, f"the {limiter} limit relieved, {w_new:.0f} warps per SM"),
        },
        locations=ctx.line_samples("long_scoreboard", 3),
        fmt={
            "limiter": limiter,
            "theoretical": theo,
            "limiter_advice": _limiter_advice(ctx, limiter, w_new),
            "warps_now": w_cur,
            "warps_after": w_new,
            "limited_by": _BOUND_WORDS[what_if.limited_by],
        },
    )


def _what_if_limit(what_if: WhatIf, change: str) -> dict[str, float | str]:
    """The evidence's ``mechanism_limit`` of a launch finding: the launch-shape model's what-if
    for its change is its estimate and the most the change gives."""
    return {"value": round(what_if.speedup, 3), "what": f"the launch-shape model's what-if: {change}"}


#: the launch model's bounds, as the advice names them
_BOUND_WORDS = {
    "issue": "the SM's issue slots and pipes",
    "l1": "L1/shared memory throughput",
    "shared": "DRAM/L2 bandwidth",
    "latency": "each warp's own chain of dependent instructions",
    "launch floor": "the launch floor",
    "dispatch": "the rate at which the SMs start blocks",
    "no bound measured": "nothing the report measures",
}


def _small_blocks(shape: LaunchShape) -> bool:
    """GPA's thread increase applies: blocks of at most two warps, more than fit at once,
    whose count per SM (the SM's limit on resident blocks) caps the resident warps, alone or
    tied with another limit that is per block too (the driver's 1 KB of shared memory per
    block ties with it on kernels that use none)."""
    limits = shape.blocks_per_sm_limits
    blocks_limit = limits.get("blocks per SM")
    return (
        blocks_limit is not None
        and blocks_limit <= min(limits.values())
        and shape.warps_per_block <= 2
        and blocks_limit * shape.warps_per_block < shape.max_warps_per_sm
        and shape.blocks > blocks_limit * shape.sms
    )


def _merging_adds_warps(ctx: KernelContext, shape: LaunchShape) -> bool:
    """block-too-small applies: small blocks capped by the block limit, and merging them lets
    the SM hold more warps."""
    if not _small_blocks(shape):
        return False
    _, w_cur, w_new = _merged_warps(ctx, shape)
    return w_new > w_cur


def _merged_warps(ctx: KernelContext, shape: LaunchShape) -> tuple[int, float, float]:
    """(blocks merged into one, warps per SM now, warps per SM after) for block-too-small."""
    lim, wpb = shape.blocks_per_sm_limits, shape.warps_per_block
    merge = max(2, int(256 // shape.threads_per_block))
    w_cur = lim["blocks per SM"] * wpb
    w_new = min(shape.max_warps_per_sm, _warps_if_merged(ctx, lim, wpb, merge))
    return merge, w_cur, w_new


def _warps_if_merged(ctx: KernelContext, lim: dict[str, float], wpb: int, merge: int) -> float:
    """Warps per SM the limits other than the block count allow once ``merge`` blocks become
    one: the kernel's shared memory per block grows ``merge`` times, the driver's reserve per
    block does not."""
    kernel = ctx.kernel
    # Registers are per thread: the warps they allow stay. Barriers are per block, as the
    # block count is: a merged block holds merge times the warps under the same count.
    out = [v * wpb for n, v in lim.items() if n == "registers"]
    out += [v * merge * wpb for n, v in lim.items() if n == "barriers"]
    smem_limit = lim.get("shared memory")
    if smem_limit is not None:
        own = sum(
            v
            for v in (kernel.m("launch__shared_mem_per_block_static"), kernel.m("launch__shared_mem_per_block_dynamic"))
            if v is not None
        )
        total = kernel.m("launch__shared_mem_per_block")
        total = own if total is None or total < own else total
        after = (total - own) + merge * own
        if after > 0:
            out.append(math.floor(smem_limit * total / after) * merge * wpb)
    return min(out) if out else math.inf


@detector(
    metrics=(
        *UNIT_METRICS,
        *GRID_METRICS,
        "device__attribute_max_warps_per_multiprocessor",
        "sm__maximum_warps_per_active_cycle_pct",
    )
)
def grid_too_small(ctx: KernelContext, passes: Passes) -> Detection | None:
    """GPA's block increase, bounded by the work that exists (the launch-shape model): a
    loop whose iterations other threads could take (grid- or block-stride, or a per-thread
    sum) lets a larger grid fill every SM up to its theoretical occupancy; without one the
    same threads can only be spread over more SMs in smaller blocks, which shortens nothing
    but the time warps wait for each other's issue slots."""
    shape = passes.launch
    if shape is None or shape.blocks <= ctx.th["serial_blocks"]:
        return None
    blocks, sms = shape.blocks, shape.sms
    fill = blocks / sms
    if fill >= ctx.th["grid_fill"]:
        return None
    idle = 1.0 - fill
    what_if, relaunch = _relaunch(shape)
    speed = what_if.speedup
    return Detection(
        stall_share=what_if.saved_share,
        speedup=speed,
        evidence={
            "blocks": int(blocks),
            "sms": int(sms),
            "blocks_per_sm": round(fill, 3),
            "work_split": shape.work_split,
            "launch_model": what_if.to_dict(),
            "mechanism_limit": _what_if_limit(what_if, f"the re-launch on {what_if.active_sms:.0f} SMs"),
        },
        locations=[],
        fmt={
            "blocks": int(blocks),
            "sms": int(sms),
            "fill": fill,
            "idle_pct": 100 * idle,
            "relaunch": relaunch,
            "limited_by": _BOUND_WORDS[what_if.limited_by],
        },
    )


def _relaunch(shape: LaunchShape) -> tuple[WhatIf, str]:
    """The best re-launch the work allows, and how to say it."""
    sms, tpb = shape.sms, shape.threads_per_block
    if shape.work_split in SPLIT_LOOPS:
        per_sched = min(shape.theoretical_warps_per_scheduler, shape.work_warps() / (sms * shape.schedulers_per_sm))
        blocks_new = max(sms, math.ceil(per_sched * shape.schedulers_per_sm * sms / shape.warps_per_block))
        what_if = shape.what_if(active_sms=sms, warps_per_scheduler=per_sched, blocks=blocks_new)
        how = {
            "grid-stride": "its grid-stride loop has the work for more",
            "block-stride": "its block-stride loop has the work for more (split each block's range over several blocks)",
            "loop-split": "each thread's loop could be shared out (split it over more threads and combine the partial results)",
        }[shape.work_split]
        return what_if, f"Launch about {blocks_new:,} blocks of {tpb} ({how})"
    # Each thread's work is fixed by the launch: the same threads, spread in smaller blocks.
    warps = shape.warps
    blocks_new = max(1, min(int(sms), int(warps)))
    wpb_new = math.ceil(warps / blocks_new)
    per_sched = warps / (blocks_new * shape.schedulers_per_sm)
    what_if = shape.what_if(active_sms=blocks_new, warps_per_scheduler=per_sched, blocks=blocks_new)
    return what_if, (
        f"Each thread's work is fixed (no loop whose iterations other threads could take), so "
        f"the re-launch that helps is the same {int(shape.blocks * tpb):,} threads in {blocks_new:,} "
        f"blocks of {wpb_new * 32} (more SMs, fewer warps each); to gain more, give each thread less work"
    )


@detector(metrics=(*GRID_METRICS, "drgpu__group_launches"))
def serial_kernel(ctx: KernelContext, passes: Passes) -> Detection | None:
    """A grid of one block (or ``serial_blocks``) per launch.

    The estimate is what is sure whatever the launches depend on: a CUDA graph (or the steps
    fused into one kernel) saves about one launch floor per launch. Whether each launch needs
    the previous one's result (an outer loop's steps) or the launches are independent pieces
    (one per tensor or matrix) is not in the report: ncu keeps no kernel arguments, and both
    read and write memory alike. Where the report holds several launches (a kernel group,
    groups.py), the launch-shape model's what-if for them batched into one grid
    (LaunchShape.batched) is evidence and a conditional in the text, never the estimate: it
    grows with the number of launches the user chose to profile, and it is false for
    dependent steps."""
    blocks, sms = grid_and_sms(ctx)
    if not sms or not blocks or blocks > ctx.th["serial_blocks"] or blocks >= sms:
        return None
    dur = ctx.kernel.duration_ns
    floor = passes.sol.launch_floor_ns if passes.sol is not None else math.nan
    if not dur or math.isnan(floor):
        return None
    graph = max(1.0, dur / max(dur - floor, floor))
    launches = ctx.kernel.launch_count
    shape = passes.launch
    batched = shape.batched(launches) if shape is not None and launches > 1 else None
    idle = 1.0 - blocks / sms
    evidence: dict[str, Any] = {
        "blocks": int(blocks),
        "sms": int(sms),
        "launch_floor_ns": round(floor, 1),
        "launches": launches,
    }
    if batched is not None:
        evidence["if_independent"] = batched.to_dict()
    return Detection(
        stall_share=idle,
        speedup=graph,
        evidence=evidence,
        fmt={
            "blocks": int(blocks),
            "sms": int(sms),
            "idle_pct": 100 * idle,
            "floor_us": floor / 1000,
            "dur_us": dur / 1000,
            "launches": launches,
            "graph": graph,
            "batched": _BATCHED_TEXT.format(launches=launches, blocks=int(blocks * launches), speed=batched.speedup)
            if batched is not None
            else _ONE_LAUNCH_TEXT,
        },
    )


_BATCHED_TEXT = (
    "The report holds {launches} such launches. Only if their pieces are independent (one per "
    "tensor, matrix or row group; the report cannot tell) can they become one launch of {blocks:,} "
    "blocks (blockIdx picks the piece), which the launch model puts at {speed:.1f}x for those "
    "launches; the estimate assumes they depend on each other."
)
_ONE_LAUNCH_TEXT = (
    "If the program launches it many times for independent pieces, launch it once with one block "
    "per piece (profile all the launches, e.g. --launch-count, for an estimate)."
)


@detector(metrics=(*UNIT_METRICS,))
def partial_warps(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Blocks whose size is not a multiple of 32 leave lanes of every last warp empty: each
    instruction issues for a whole warp and does part of its work. GPA's thread increase,
    through the launch-shape model: filled warps issue lanes/32 of the instructions for the
    same work, and the blocks packed into them need fewer SMs when the grid is small (a few
    16-thread tiles gain nothing: each SM would hold one warp either way); the bytes stay,
    so a kernel already at DRAM's or L2's bandwidth gains little."""
    kernel = ctx.kernel
    shape = passes.launch
    threads = kernel.threads_per_block
    if threads is None or threads % 32 == 0 or shape is None:
        return None
    lanes = launch_lanes(kernel)
    eff = lanes / 32.0
    if eff > ctx.th["partial_warp_fill"]:
        return None
    if _merging_adds_warps(ctx, shape):
        return None  # block-too-small makes the blocks larger, which fills the lanes too
    if shape.warps_per_block <= 2 and "blocks per SM" not in shape.blocks_per_sm_limits:
        # Whether the SM's limit on resident blocks caps these small blocks (block-too-small's
        # change, which fills the lanes too) is not measured.
        return not_measured()
    packed = max(1.0, shape.blocks * eff)
    active = min(shape.sms, packed) if packed < shape.active_sms else shape.active_sms
    per_sched = min(shape.warps_per_scheduler, shape.warps * eff / (active * shape.schedulers_per_sm))
    what_if = shape.what_if(active_sms=active, warps_per_scheduler=per_sched, k_inst=eff, blocks=packed)
    return Detection(
        stall_share=what_if.saved_share,
        speedup=what_if.speedup,
        evidence={
            "block_size": int(threads),
            "lanes_per_warp": round(lanes, 2),
            "launch_model": what_if.to_dict(),
            "mechanism_limit": _what_if_limit(what_if, "the same threads in full warps"),
        },
        locations=[],
        fmt={
            "block": int(threads),
            "lanes": lanes,
            "fill_pct": 100 * eff,
            "limited_by": _BOUND_WORDS[what_if.limited_by],
        },
        relieves_override=["sm", "l1tex"],
    )


@detector(
    metrics=(
        *UNIT_METRICS,
        *GRID_METRICS,
        "launch__occupancy_limit_blocks",
        "launch__occupancy_limit_registers",
        "launch__occupancy_limit_shared_mem",
        "launch__occupancy_limit_warps",
        "launch__shared_mem_per_block",
        "launch__shared_mem_per_block_dynamic",
        "launch__shared_mem_per_block_static",
        "sm__maximum_warps_per_active_cycle_pct",
    )
)
def block_too_small(ctx: KernelContext, passes: Passes) -> Detection | None:
    """GPA's thread increase for small blocks: blocks of one or two warps, many more than fit
    at once, whose count per SM (the SM's limit on resident blocks) caps the resident warps.
    Merging k blocks into one of k times the threads (each former block a group of its
    threads) lets the SM hold the warps its next limiter allows and fills partly empty warps;
    the launch-shape model gives the time, bounded by the work the grid has."""
    shape = passes.launch
    if shape is None or not _small_blocks(shape):
        return None
    lim = shape.blocks_per_sm_limits
    eff = shape.lanes_per_warp / 32.0
    merge, w_cur, w_new = _merged_warps(ctx, shape)
    if w_new <= w_cur:
        return None  # the block limit is not what caps the warps: partial-warps, if any
    # Merged blocks fill their warps: the same threads need eff of today's warps, of which
    # the SM holds w_new (at today's share of achieved to theoretical occupancy).
    # Blocks that start no faster than the SM finishes them leave warp slots empty (achieved
    # below theoretical occupancy because of the dispatch bound): merged, the slots fill.
    dispatch_bound = shape.bounds.get("dispatch", 0.0) >= 0.9 * max(shape.bounds.values())
    achieved_share = (
        1.0 if dispatch_bound else shape.warps_per_scheduler / max(1e-9, shape.theoretical_warps_per_scheduler)
    )
    per_sched = min(
        w_new / shape.schedulers_per_sm * achieved_share,
        shape.warps * eff / (shape.active_sms * shape.schedulers_per_sm),
    )
    what_if = shape.what_if(
        active_sms=shape.active_sms, warps_per_scheduler=per_sched, k_inst=eff, blocks=shape.blocks / merge
    )
    return Detection(
        stall_share=what_if.saved_share,
        speedup=what_if.speedup,
        evidence={
            "block_size": shape.threads_per_block,
            "blocks_per_sm_limits": {n: int(v) for n, v in lim.items()},
            "warps_per_sm_now": int(w_cur),
            "warps_per_sm_after": int(w_new),
            "launch_model": what_if.to_dict(),
            "mechanism_limit": _what_if_limit(what_if, f"{merge} blocks merged into one"),
        },
        locations=[],
        fmt={
            "block": shape.threads_per_block,
            "block_limit": int(lim["blocks per SM"]),
            "warps_now": w_cur,
            "warps_after": w_new,
            "merge": merge,
            "merged": merge * shape.threads_per_block,
            "fill_pct": 100 * eff,
            "limited_by": _BOUND_WORDS[what_if.limited_by],
        },
        relieves_override=["sm", "l1tex"],
    )


@detector(
    metrics=(
        *UNIT_METRICS,
        *GRID_METRICS,
        "launch__occupancy_limit_blocks",
        "launch__waves_per_multiprocessor",
    )
)
def tail_effect(ctx: KernelContext, passes: Passes) -> Detection | None:
    """A last wave that fills part of the GPU: the launch-shape model's whole-waves what-if
    (LaunchShape.whole_waves: the tail's blocks run alone, so its time shrinks only by the
    part not spent on units all SMs share). The loss is the share of the time the even
    spread saves, 1 - 1/speedup before the busiest unit's bound."""
    shape = passes.launch
    if shape is None or shape.waves is None or shape.waves >= ctx.th["tail_waves"]:
        return None
    what_if = shape.whole_waves()
    if what_if is None:
        return None
    waves = shape.waves
    full = math.ceil(waves - 1e-9)
    last = waves - (full - 1)
    unbounded = shape.tail_speedup() or 1.0
    loss = 1.0 - 1.0 / unbounded
    if loss < ctx.th["tail_loss"]:
        return None
    return Detection(
        stall_share=loss,
        speedup=what_if.speedup,
        evidence={
            "waves_per_sm": round(waves, 2),
            "last_wave_fill": round(last, 3),
            "last_wave_time_share": round(unbounded * waves - (full - 1), 3),
            "resident_blocks_per_sm": round(shape.blocks / (waves * shape.sms), 2),
            "launch_model": what_if.to_dict(),
            "mechanism_limit": _what_if_limit(what_if, "the same work in whole waves"),
        },
        fmt={"waves": waves, "last_wave_pct": 100 * last},
    )


@detector(
    metrics=(
        "drgpu__rank_count",
        "drgpu__rank_duration_max",
        "drgpu__rank_duration_mean",
        "drgpu__rank_duration_min",
        "drgpu__rank_duration_spread",
        "drgpu__rank_durations",
        "drgpu__rank_fastest",
        "drgpu__rank_slowest",
    )
)
def rank_imbalance(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Only merged profiles (drgpu_py.readers.merge) carry the duration spread across ranks. If the
    ranks wait for each other after the kernel, the slowest sets the pace; balanced, every
    rank would take the mean time: speedup max/mean."""
    kernel = ctx.kernel
    spread = kernel.m("drgpu__rank_duration_spread")
    if spread is None or spread < ctx.th["rank_imbalance"]:
        return None
    hi, mean = kernel.m("drgpu__rank_duration_max"), kernel.m("drgpu__rank_duration_mean")
    if hi is None or mean is None or mean <= 0 or hi <= 0:
        return None
    slow, fast = kernel.strings.get("drgpu__rank_slowest", "?"), kernel.strings.get("drgpu__rank_fastest", "?")
    return Detection(
        stall_share=1.0 - mean / hi,
        speedup=hi / mean,
        evidence={
            "duration_spread": round(spread, 3),
            "slowest_rank": slow,
            "fastest_rank": fast,
            "durations": kernel.strings.get("drgpu__rank_durations", ""),
        },
        fmt={
            "spread_pct": 100 * spread,
            "ranks": int(kernel.m("drgpu__rank_count", 0)),
            "slowest": slow,
            "fastest": fast,
            "max_us": hi / 1000,
            "min_us": kernel.m("drgpu__rank_duration_min", 0) / 1000,
        },
    )
