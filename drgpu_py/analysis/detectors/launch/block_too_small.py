"""Finding ``block-too-small``: blocks of one or two warps, many more than fit at once, whose
count per SM caps the resident warps.

Contract: ``block_too_small(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: an SM holds a fixed number of blocks; with tiny blocks that limit, not registers
or shared memory, keeps the resident warps few (``small_blocks``).

Evidence: the launch shape's blocks per SM by limit, its block size and lanes per warp.

Estimate: GPA's thread increase: k blocks merged into one of k times the threads
(``merged_warps``, k to about 256 threads) let the SM hold the warps its next limit allows,
shared memory per block growing k times, and fill partly empty warps; the launch-shape
model's what-if gives the time, bounded by the work the grid has, and is the estimate and its
``mechanism_limit``. Merging that adds no warps leaves the kernel to partial-warps.

Metrics (declared): the throughput units and grid, the occupancy limits, shared memory per
block (static, dynamic, with the driver's reserve) and
``sm__maximum_warps_per_active_cycle_pct``.

Helpers: shared ``small_blocks``, ``merged_warps``, ``what_if_limit``, ``BOUND_WORDS``
(common.py).
"""

from __future__ import annotations

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    GRID_METRICS,
    Detection,
    detector,
)
from .common import BOUND_WORDS, merged_warps, small_blocks, what_if_limit


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
    if shape is None or not small_blocks(shape):
        return None
    lim = shape.blocks_per_sm_limits
    eff = shape.lanes_per_warp / 32.0
    merge, w_cur, w_new = merged_warps(ctx, shape)
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
            "mechanism_limit": what_if_limit(what_if, f"{merge} blocks merged into one"),
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
            "limited_by": BOUND_WORDS[what_if.limited_by],
        },
        relieves_override=["sm", "l1tex"],
    )
