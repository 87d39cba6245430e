"""What two or more launch rules share: the ``mechanism_limit`` evidence of a launch-shape
what-if (``what_if_limit``), the words for the model's bounds (``BOUND_WORDS``), and
block-too-small's test and change (``small_blocks``, ``merging_adds_warps``,
``merged_warps``), which occupancy-limited and partial-warps read to leave such kernels to it.

Contract: pure functions of the kernel's context and its launch shape (analysis/launch_shape.py).
"""

from __future__ import annotations

import math

from ...context import KernelContext
from ...launch_shape import LaunchShape, WhatIf


def what_if_limit(what_if: WhatIf, change: str) -> dict[str, float | str]:
    """The evidence's ``mechanism_limit`` of a launch finding: the launch-shape model's what-if
    for its change is its estimate and the most the change gives."""
    return {"value": round(what_if.speedup, 3), "what": f"the launch-shape model's what-if: {change}"}


#: the launch model's bounds, as the advice names them
BOUND_WORDS = {
    "issue": "the SM's issue slots and pipes",
    "l1": "L1/shared memory throughput",
    "shared": "DRAM/L2 bandwidth",
    "latency": "each warp's own chain of dependent instructions",
    "launch floor": "the launch floor",
    "dispatch": "the rate at which the SMs start blocks",
    "no bound measured": "nothing the report measures",
}


def small_blocks(shape: LaunchShape) -> bool:
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


def merging_adds_warps(ctx: KernelContext, shape: LaunchShape) -> bool:
    """block-too-small applies: small blocks capped by the block limit, and merging them lets
    the SM hold more warps."""
    if not small_blocks(shape):
        return False
    _, w_cur, w_new = merged_warps(ctx, shape)
    return w_new > w_cur


def merged_warps(ctx: KernelContext, shape: LaunchShape) -> tuple[int, float, float]:
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
