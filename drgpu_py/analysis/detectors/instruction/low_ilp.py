"""Finding ``low-ilp``: warps wait on the previous instruction's fixed-latency result and no
other warp is ready to issue in their place.

Contract: ``low_ilp(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: a chain of dependent arithmetic (one accumulator, a recurrence) makes each
instruction wait for the one before it (the ``wait`` stall); with few eligible warps per
scheduler the scheduler has nothing else to issue, so the latency is exposed.

Evidence: the wait samples' share of all time (at least ``low_ilp_share``) and
``smsp__warps_eligible.avg.per_cycle_active`` below ``low_ilp_eligible`` (not measured:
``not_measured()``). Locations: the instructions the blamer charges the waits to, else where
the waits were sampled.

Estimate: the better of the performance model's what-ifs (``model_change``: the hot loop
unrolled with independent accumulators, or more resident warps); without a model and with
SASS but no executed counts, ``not_measured()``; otherwise every wait removed
(``eliminate``), bounded by one instruction per cycle (1 / the ``selected`` share).

Metrics (declared): ``smsp__warps_eligible.avg.per_cycle_active``.

Helpers: ``model_change`` (common.py, shared with instruction-overhead); none of its own.
"""

from __future__ import annotations

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    Detection,
    detector,
    eliminate,
    evidence_number,
    not_measured,
)
from .common import model_change


@detector(metrics=("smsp__warps_eligible.avg.per_cycle_active",))
def low_ilp(ctx: KernelContext, passes: Passes) -> Detection | None:
    stall_share = ctx.share("wait")
    if ctx.frac("wait") < ctx.th["low_ilp_share"]:
        return None
    elig = ctx.kernel.m("smsp__warps_eligible.avg.per_cycle_active")
    if elig is None:
        # Whether other warps were ready to hide the waits is not measured.
        return not_measured()
    if elig >= ctx.th["low_ilp_eligible"]:
        return None
    # The performance model's what-ifs: the hot loop unrolled by k with k independent
    # accumulators, or more resident warps; the better one. Without a model: the wait stalls
    # removed, at most up to one instruction per cycle.
    change = model_change(ctx, passes.perf, ("unroll", "warps"), hoist=False)
    if change is not None:
        speed, model_ev = change
    elif not ctx.df.empty and not ctx.measured("inst_executed"):
        # With the SASS, the estimate is the model's what-if, which needs the executed counts;
        # every wait gone (the fallback below) is the most the change could give, no estimate.
        return not_measured()
    else:
        speed, model_ev = eliminate(ctx.frac("wait")), {}
        sel = ctx.frac("selected")
        if sel > 0:
            speed = min(speed, 1.0 / sel)
    weights = ctx.blamed_by_pc([i.pc for i in ctx.insts], ("wait",)) or {}
    return Detection(
        stall_share=stall_share,
        speedup=speed,
        evidence={
            "wait_stall_share": round(stall_share, 3),
            "eligible_warps_per_scheduler": evidence_number(elig),
            **model_ev,
        },
        locations=ctx.locations(weights) or ctx.line_samples("wait"),
        fmt={"share_pct": 100 * stall_share, "eligible": elig},
    )
