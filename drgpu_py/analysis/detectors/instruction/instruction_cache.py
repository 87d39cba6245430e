"""Finding ``instruction-cache``: warps wait for their next instruction to be fetched.

Contract: ``icache(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: code that does not fit the instruction cache (heavily unrolled or inlined loops,
many distinct kernels' code in turn) makes warps stall on fetch (the ``no_instruction``
stall).

Evidence: the ``no_instruction`` share of stall samples, at least ``icache_share``.
Locations: the lines where those samples fall.

Estimate: half of those samples' share of all time removed (``eliminate``); no other limit.

Metrics (declared): none (stall samples only).

Helpers: none.
"""

from __future__ import annotations

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    Detection,
    detector,
    eliminate,
)


@detector()
def icache(ctx: KernelContext, passes: Passes) -> Detection | None:
    stall_share = ctx.share("no_instruction")
    if stall_share < ctx.th["icache_share"]:
        return None
    return Detection(
        stall_share=stall_share,
        speedup=eliminate(ctx.frac("no_instruction") * 0.5),
        locations=ctx.line_samples("no_instruction"),
        fmt={"share_pct": 100 * stall_share},
    )
