"""Finding ``lsu-throttle``: global loads and stores that wait for room in the LSU's queue.

Contract: ``lg_throttle(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: many small global accesses per thread fill the local/global (LG) queue; the next
one stalls until an entry frees (``lg_throttle``).

Evidence: the LG-throttle samples at global loads and stores (atomics and local accesses are
other findings'), at least ``lg_throttle_share`` of stall samples. Without PC samples the
kernel-wide share cannot be split among them: ``not_measured()`` where it would pass the gate.

Estimate: half of those samples' share removed (``eliminate``).

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
    not_measured,
)


@detector()
def lg_throttle(ctx: KernelContext, passes: Passes) -> Detection | None:
    pcs = ctx.pcs_where(lambda i: (i.is_global_load() or i.opcode in ("STG", "ST")) and not i.is_atomic())
    at = ctx.samples_at(pcs, ("lg_throttle",))
    tot = ctx.samples_total
    if tot <= 0:
        # The kernel-wide counters cannot tell the global loads' and stores' throttle from that
        # of local accesses and atomics (other findings'), or from throttle samples elsewhere.
        if ctx.share("lg_throttle") < ctx.th["lg_throttle_share"]:
            return None
        return not_measured()
    removed_share = sum(at.values()) / tot
    stall_share = ctx.as_stall_share(removed_share)
    if stall_share < ctx.th["lg_throttle_share"]:
        return None
    return Detection(
        stall_share=stall_share,
        speedup=eliminate(removed_share * 0.5),
        locations=ctx.locations(at),
        fmt={"share_pct": 100 * stall_share},
    )
