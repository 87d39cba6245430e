"""Finding ``partial-warps``: blocks whose size is not a multiple of 32, so every block's last
warp runs with empty lanes.

Contract: ``partial_warps(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: each instruction issues for a whole warp; a 48-thread block's second warp does
half a warp's work per issue slot.

Evidence: the block size and the launch's lanes per warp (``launch_lanes``), their fill at
most ``partial_warp_fill``. Kernels whose small blocks the resident-block limit caps are
block-too-small's (``merging_adds_warps``); blocks of one or two warps whose block limit is
not measured give ``not_measured()``.

Estimate: GPA's thread increase through the launch-shape model: the same threads in full
warps issue lanes/32 of the instructions and, in a small grid, need fewer SMs; the bytes stay,
so a kernel at DRAM's or L2's bandwidth gains little. The what-if is the estimate and its
``mechanism_limit``.

Metrics (declared): the throughput units (``UNIT_METRICS``).

Helpers: shared ``what_if_limit``, ``BOUND_WORDS``, ``merging_adds_warps`` (common.py).
"""

from __future__ import annotations

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    Detection,
    detector,
    launch_lanes,
    not_measured,
)
from .common import BOUND_WORDS, merging_adds_warps, what_if_limit


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
    if merging_adds_warps(ctx, shape):
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
            "mechanism_limit": what_if_limit(what_if, "the same threads in full warps"),
        },
        locations=[],
        fmt={
            "block": int(threads),
            "lanes": lanes,
            "fill_pct": 100 * eff,
            "limited_by": BOUND_WORDS[what_if.limited_by],
        },
        relieves_override=["sm", "l1tex"],
    )
