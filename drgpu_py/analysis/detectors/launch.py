"""Launch findings: occupancy, a grid too small for the GPU, serial kernels, partial warps,
the tail of the last wave, and imbalance between ranks.

Contract: each detector is ``fn(ctx, passes) -> Detection | None`` (detectors/base.py),
pure, registered by ``@detector`` with the kernel-level metrics it reads.
"""

from __future__ import annotations

import math
from typing import Any

from ..context import KernelContext
from ..passes import Passes
from ..sol import grid_and_sms
from .base import (
    UNIT_METRICS,
    GRID_METRICS,
    LATENCY_REASONS,
    MAX_REMOVABLE,
    Detection,
    bounded_by_units,
    detector,
    evidence_number,
    launch_lanes,
)


LIMITERS = {
    "registers": (
        "launch__occupancy_limit_registers",
        "Use fewer registers per thread (__launch_bounds__, -maxrregcount, fewer live values).",
    ),
    "shared memory": (
        "launch__occupancy_limit_shared_mem",
        "Use less shared memory per block (smaller tiles, or only what the kernel touches).",
    ),
    "block size": ("launch__occupancy_limit_warps", "Change the block size so more blocks fit per SM."),
    "blocks per SM": (
        "launch__occupancy_limit_blocks",
        "Use larger blocks: the SM's limit on resident blocks is reached first.",
    ),
    "barriers": ("launch__occupancy_limit_barriers", "Use fewer named barriers per block."),
}


def occupancy_limiter(ctx: KernelContext) -> tuple[str | None, dict[str, float]]:
    kernel = ctx.kernel
    lim = {name: kernel.m(metric) for name, (metric, _) in LIMITERS.items()}
    lim = {n: v for n, v in lim.items() if not math.isnan(v)}
    if not lim:
        return None, {}
    return min(lim, key=lim.__getitem__), lim


def _limiter_advice(ctx: KernelContext, limiter: str, w_new: float) -> str:
    """The limiter's advice; for registers, with what the change costs: the register count
    per thread that fits the target warps, against today's (a cap below what the code needs
    spills, and spills in hot code can cost more than the extra warps gain; the estimate
    assumes none)."""
    text = LIMITERS[limiter][1]
    regs = ctx.kernel.m("launch__registers_per_thread")
    per_sm = ctx.kernel.m("device__attribute_max_registers_per_multiprocessor", ctx.arch.get("registers_per_sm", 65536))
    if limiter != "registers" or math.isnan(regs) or w_new <= 0:
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
    if math.isnan(theo) or theo >= ctx.th["occupancy_pct"]:
        return None
    latency_share = ctx.share(*LATENCY_REASONS)
    if ctx.th["latency_share"] > latency_share:
        return None
    limiter, lim = occupancy_limiter(ctx)
    if limiter is None:
        return None
    wpb = max(1, math.ceil(max(1, kernel.block[0] * kernel.block[1] * kernel.block[2]) / 32))
    max_warps = kernel.m("device__attribute_max_warps_per_multiprocessor", ctx.arch["max_warps_per_sm"])
    others = [v for n, v in lim.items() if n != limiter]
    new_blocks = min(others) if others else lim[limiter]
    w_cur = theo / 100.0 * max_warps
    w_new = min(max_warps, new_blocks * wpb)
    if w_new <= w_cur:
        return None
    speed = 1.0 / max(1.0 - MAX_REMOVABLE, 1.0 - ctx.frac(*LATENCY_REASONS) * (1.0 - w_cur / w_new))
    issue = kernel.m("smsp__issue_active.avg.pct_of_peak_sustained_active")
    if not math.isnan(issue) and issue > 0:
        speed = min(speed, 100.0 / issue)
    speed = bounded_by_units(ctx, speed)
    achieved = kernel.m("sm__warps_active.avg.pct_of_peak_sustained_active")
    return Detection(
        stall_share=latency_share,
        speedup=max(speed, 1.0),
        evidence={
            "theoretical_occupancy_pct": round(theo, 1),
            "achieved_occupancy_pct": evidence_number(achieved),
            "limiter": limiter,
            "blocks_per_sm_limits": {n: int(v) for n, v in lim.items()},
            "warps_per_sm_if_relieved": int(w_new),
        },
        locations=ctx.line_samples("long_scoreboard", 3),
        fmt={"limiter": limiter, "theoretical": theo, "limiter_advice": _limiter_advice(ctx, limiter, w_new)},
    )


@detector(
    metrics=(
        *UNIT_METRICS,
        *GRID_METRICS,
        "device__attribute_max_warps_per_multiprocessor",
        "sm__maximum_warps_per_active_cycle_pct",
    )
)
def grid_too_small(ctx: KernelContext, passes: Passes) -> Detection | None:
    blocks, sms = grid_and_sms(ctx)
    if not sms or not blocks or blocks <= ctx.th["serial_blocks"]:
        return None
    fill = blocks / sms
    if fill >= ctx.th["grid_fill"]:
        return None
    idle = 1.0 - fill
    # GPA's block increase: more blocks fill the idle SMs, and each SM also gets up to its
    # theoretical occupancy of warps instead of one block's, which hides latency (occupancy
    # model, at most latency_hiding_max).
    kernel = ctx.kernel
    wpb = max(1, math.ceil(max(1, kernel.block[0] * kernel.block[1] * kernel.block[2]) / 32))
    theo = kernel.m("sm__maximum_warps_per_active_cycle_pct")
    max_warps = kernel.m("device__attribute_max_warps_per_multiprocessor", ctx.arch["max_warps_per_sm"])
    w_new = theo / 100.0 * max_warps if not math.isnan(theo) else float(wpb)
    hide = 1.0
    if w_new > wpb:
        hide = 1.0 / max(1.0 - MAX_REMOVABLE, 1.0 - ctx.frac(*LATENCY_REASONS) * (1.0 - wpb / w_new))
        hide = min(hide, ctx.th["latency_hiding_max"])
    speed = bounded_by_units(ctx, hide / max(fill, 1.0 / sms))
    return Detection(
        stall_share=idle,
        speedup=max(speed, 1.0),
        evidence={
            "blocks": int(blocks),
            "sms": int(sms),
            "blocks_per_sm": round(fill, 3),
            "warps_per_sm_after": round(max(w_new, wpb), 1),
        },
        locations=[],
        fmt={"blocks": int(blocks), "sms": int(sms), "fill": fill, "idle_pct": 100 * idle},
    )


@detector(metrics=(*GRID_METRICS,))
def serial_kernel(ctx: KernelContext, passes: Passes) -> Detection | None:
    """A grid of one block (or ``serial_blocks``): whether the work could be split is not
    visible in the counters, so no SMs/blocks estimate. What batching the launches surely
    removes is about one launch floor of GPU time per launch."""
    blocks, sms = grid_and_sms(ctx)
    if not sms or not blocks or blocks > ctx.th["serial_blocks"] or blocks >= sms:
        return None
    dur = ctx.kernel.duration_ns
    floor = passes.sol.launch_floor_ns if passes.sol is not None else math.nan
    if not dur or math.isnan(dur) or math.isnan(floor):
        return None
    speed = dur / max(dur - floor, floor)
    idle = 1.0 - blocks / sms
    return Detection(
        stall_share=idle,
        speedup=max(speed, 1.0),
        evidence={"blocks": int(blocks), "sms": int(sms), "launch_floor_ns": round(floor, 1)},
        fmt={
            "blocks": int(blocks),
            "sms": int(sms),
            "idle_pct": 100 * idle,
            "floor_us": floor / 1000,
            "dur_us": dur / 1000,
        },
    )


SHARED_UNITS = ("dram", "lts")  # shared by all SMs: a partial wave gets more of them per block


@detector(metrics=(*UNIT_METRICS,))
def partial_warps(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Blocks whose size is not a multiple of 32 leave lanes of every last warp empty: each
    instruction issues for a whole warp and does part of its work, and the SM's block limit
    caps the resident warps. GPA's thread increase: filling the warps does the same work in
    lanes/32 of the issue slots, bounded like every estimate by the busiest other unit, and by
    what DRAM or L2 has left below saturation when either already bounds the kernel (the bytes
    stay the same)."""
    kernel = ctx.kernel
    bs = kernel.block[0] * kernel.block[1] * kernel.block[2]
    if not bs or bs % 32 == 0:
        return None
    lanes = launch_lanes(kernel)
    eff = lanes / 32.0
    if eff > ctx.th["partial_warp_fill"]:
        return None
    speed = 1.0 / eff
    evidence: dict[str, Any] = {"block_size": int(bs), "lanes_per_warp": round(lanes, 2)}
    # Filling the warps moves the same bytes: where DRAM or L2 already runs at bound_pct or more,
    # the kernel can gain at most what is left of that unit below saturation (a 16-thread
    # triangular-solve tile streaming panels at 80% of DRAM peak: 1.01x measured).
    shared = [(u, ctx.units.get(u, math.nan)) for u in SHARED_UNITS]
    busy = [(u, v) for u, v in shared if not math.isnan(v) and v >= ctx.th["bound_pct"]]
    if busy:
        unit, pct = max(busy, key=lambda uv: uv[1])
        cap = max(1.0, ctx.th["saturation_pct"] / pct)
        if cap < speed:
            speed = cap
            evidence["memory_bound"] = {"unit": unit, "pct_of_peak": round(pct, 1), "limit": round(cap, 3)}
    return Detection(
        stall_share=1.0 - eff,
        speedup=speed,
        evidence=evidence,
        locations=[],
        fmt={"block": int(bs), "lanes": lanes, "fill_pct": 100 * eff},
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
    """A last wave that fills part of the GPU. Wave model: with W waves (ncu's
    ``launch__waves_per_multiprocessor``), F = ceil(W) of them take a wave's time T, except
    that the blocks of the partial last wave (a fraction f of a wave) run alone: the part of
    T spent waiting on units all SMs share (DRAM, L2: utilisation u) shrinks to f of it, and
    with several resident blocks per SM the SM's own units are shared by fewer blocks too. The
    last wave takes T * max(f, s), s = 1 - u, the part that does not shrink. Evenly spread
    work takes W * T, so the speedup is (F - 1 + max(f, s)) / W. A memory-bound kernel's tail
    costs little (s small): evening it out gains little, as measured."""
    kernel = ctx.kernel
    waves = kernel.m("launch__waves_per_multiprocessor")
    if math.isnan(waves) or waves < 1.0 or waves >= ctx.th["tail_waves"]:
        return None
    full = math.ceil(waves - 1e-9)
    last = waves - (full - 1)
    blocks, sms = grid_and_sms(ctx)
    per_sm = kernel.m("launch__occupancy_limit_blocks")
    resident = blocks / (waves * sms) if blocks and sms and waves > 0 else (per_sm if per_sm == per_sm else 1.0)
    units = {u: v for u, v in ctx.units.items() if not math.isnan(v)}
    shared = [units[u] for u in SHARED_UNITS if u in units]
    if resident > 1.5:
        shared += [v for u, v in units.items() if u not in SHARED_UNITS]
    idle_share = 1.0 - min(100.0, max(shared or [0.0])) / 100.0
    tail = max(last, idle_share)
    loss = (tail - last) / (full - 1 + tail)  # time the last wave runs with idle SMs
    if loss < ctx.th["tail_loss"]:
        return None
    speed = bounded_by_units(ctx, (full - 1 + tail) / waves)
    return Detection(
        stall_share=loss,
        speedup=max(speed, 1.0),
        evidence={
            "waves_per_sm": round(waves, 2),
            "last_wave_fill": round(last, 3),
            "last_wave_time_share": round(tail, 3),
            "resident_blocks_per_sm": round(resident, 2),
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
    if math.isnan(spread) or spread < ctx.th["rank_imbalance"]:
        return None
    hi, mean = kernel.m("drgpu__rank_duration_max"), kernel.m("drgpu__rank_duration_mean")
    if math.isnan(hi) or math.isnan(mean) or mean <= 0 or hi <= 0:
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
