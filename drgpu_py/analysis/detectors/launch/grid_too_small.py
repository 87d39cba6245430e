"""Finding ``grid-too-small``: a grid of fewer blocks than the GPU has SMs to fill.

Contract: ``grid_too_small(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: blocks per SM below ``grid_fill`` (and more than ``serial_blocks``: fewer is
serial-kernel's) leave SMs idle for the whole kernel.

Evidence: the launch shape's blocks, SMs and work split (grid- or block-stride loop, a
per-thread loop that could be split, or fixed work per thread).

Estimate: GPA's block increase, bounded by the work that exists: the launch-shape model's
what-if for the best re-launch (``_relaunch``): with a loop other threads could take, enough
blocks to fill every SM up to its theoretical occupancy; without one, the same threads in
smaller blocks over more SMs. The what-if is the estimate and its ``mechanism_limit``.

Metrics (declared): the throughput units and grid (``UNIT_METRICS``, ``GRID_METRICS``), the
device's warps per SM and ``sm__maximum_warps_per_active_cycle_pct`` (the launch shape's).

Helpers (this rule's own): ``_relaunch``; shared: ``what_if_limit``, ``BOUND_WORDS``
(common.py).
"""

from __future__ import annotations

import math

from ...context import KernelContext
from ...launch_shape import SPLIT_LOOPS, LaunchShape, WhatIf
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    GRID_METRICS,
    Detection,
    detector,
)
from .common import BOUND_WORDS, what_if_limit


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
            "mechanism_limit": what_if_limit(what_if, f"the re-launch on {what_if.active_sms:.0f} SMs"),
        },
        locations=[],
        fmt={
            "blocks": int(blocks),
            "sms": int(sms),
            "fill": fill,
            "idle_pct": 100 * idle,
            "relaunch": relaunch,
            "limited_by": BOUND_WORDS[what_if.limited_by],
        },
    )
