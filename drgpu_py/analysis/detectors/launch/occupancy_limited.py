"""Finding ``occupancy-limited``: too few resident warps to hide latency, and the limit that
keeps them few.

Contract: ``occupancy(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py). Also ``occupancy_limiter(ctx)``: the limit reached first and the blocks
per SM by limit, for the stall tree's occupancy sub-tree (analysis/stall_tree.py).

Mechanism: an SM holds as many blocks as its tightest resource allows (registers, shared
memory, block size, the resident-block count, barriers); below ``occupancy_pct`` theoretical
occupancy, with latency stalls (base's ``LATENCY_REASONS``) at least ``latency_share``, too
few warps are left to issue while others wait. Small blocks capped by the block count are
block-too-small's (``merging_adds_warps``).

Evidence: ``sm__maximum_warps_per_active_cycle_pct``, the launch shape's limiter and blocks
per SM by limit (``launch__occupancy_limit_*``), achieved occupancy. Locations: the lines of
the long-scoreboard waits.

Estimate: the launch-shape model's what-if (GPA's occupancy model through
analysis/launch_shape.py) with the warps per scheduler raised from today's to those the next
limit allows, no more than the grid gives each active SM; the what-if is the estimate and its
``mechanism_limit``. The advice names the limiter's change, for registers with the register
count per thread that fits (``_limiter_advice``).

Metrics (declared): the throughput units (``UNIT_METRICS``), the occupancy limits and
registers per thread, the device's warps and registers per SM,
``sm__maximum_warps_per_active_cycle_pct``, ``sm__warps_active.avg.pct_of_peak_sustained_active``
and ``smsp__issue_active.avg.pct_of_peak_sustained_active``.

Helpers (this rule's own): ``LIMITER_ADVICE``, ``_limiter_advice``, ``occupancy_limiter``;
shared: ``what_if_limit``, ``BOUND_WORDS``, ``merging_adds_warps`` (common.py).
"""

from __future__ import annotations

from ...context import KernelContext
from ...launch_shape import occupancy_limits
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    LATENCY_REASONS,
    Detection,
    detector,
    evidence_number,
)
from .common import BOUND_WORDS, merging_adds_warps, what_if_limit


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
    if limiter is None or merging_adds_warps(ctx, shape):
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
            "mechanism_limit": what_if_limit(what_if, f"the {limiter} limit relieved, {w_new:.0f} warps per SM"),
        },
        locations=ctx.line_samples("long_scoreboard", 3),
        fmt={
            "limiter": limiter,
            "theoretical": theo,
            "limiter_advice": _limiter_advice(ctx, limiter, w_new),
            "warps_now": w_cur,
            "warps_after": w_new,
            "limited_by": BOUND_WORDS[what_if.limited_by],
        },
    )
