"""Finding ``memory-barrier``: fences executed more than once per warp, most often in a loop.

Contract: ``membar(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: a fence (MEMBAR, FENCE) waits until the warp's earlier writes are visible; in a loop
it also delays the next loads until memory has drained, and their waits show at the loads, not
on the fence line.

Evidence: fences per launched warp above 1.5 (where measured); the membar samples, plus, when DRAM is below
``fence_dram_pct`` (the waits are not bandwidth), the long-scoreboard waits of each global load
charged to the nearest fence before it (else its loop's last fence); at least
``membar_share`` of stall samples.

Estimate: ``eliminate`` of that share times ``1 - 1/fences per warp`` (0.5 when not measured);
a device-scope fence keeps ``fence_gpu_kept`` of its wait (its stores still take that long to
reach L2), a system-scope one does not.

Metrics (declared): the throughput units (``UNIT_METRICS``: DRAM's utilisation).

Helpers: none of its own.
"""

from __future__ import annotations

import math

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    Detection,
    detector,
    eliminate,
    evidence_number,
    merge_weights,
    warps_launched,
)


@detector(metrics=(*UNIT_METRICS,))
def membar(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Fences executed more than once per warp. A fence inside a loop also delays the loop's
    next loads until memory has drained: their long-scoreboard waits are charged to the fence
    (when DRAM is not busy, so the waits are not bandwidth), since they show up at the loads,
    not on the fence line."""
    kernel, df = ctx.kernel, ctx.df
    pcs = ctx.pcs_where(lambda i: i.opcode in ("MEMBAR", "FENCE"))
    warps = warps_launched(kernel)
    per_warp = float(df.loc[pcs, "inst_executed"].sum()) / warps if pcs and warps else math.nan
    if not math.isnan(per_warp) and per_warp <= 1.5:
        return None  # one fence per warp is the minimum a publish pattern needs
    r_fence = ctx.frac("membar")
    charged: dict[int, float] = {}
    cfg = ctx.cfg
    dram = ctx.units.get("dram")
    if cfg is not None and pcs and ctx.sampling and (dram is None or dram < ctx.th["fence_dram_pct"]):
        # A load waits for a fence when one precedes it (straight-line or unrolled code) or
        # shares its loop (the next iteration's load follows this iteration's fence). Each
        # load's waits go to the nearest fence before it (else the loop's last fence).
        fence_idx = sorted(cfg.index_of_pc[pc] for pc in pcs if pc in cfg.index_of_pc)
        owner: dict[int, int] = {}
        for index, ins in enumerate(cfg.insts):
            if not ins.is_global_load() or ins.is_atomic():
                continue
            before = [fence for fence in fence_idx if fence < index]
            loop = cfg.innermost_loop(index)
            in_loop = [fence for fence in fence_idx if loop is not None and cfg.block_of[fence] in loop.blocks]
            fence = before[-1] if before else (in_loop[-1] if in_loop else None)
            if fence is not None:
                owner[ins.pc] = cfg.insts[fence].pc
        if owner:
            waits = merge_weights(
                ctx.samples_at(list(owner), ("long_scoreboard",)), ctx.blamed_by_pc(list(owner), ("long_scoreboard",))
            )
            for load, wait in waits.items():
                charged[owner[load]] = charged.get(owner[load], 0.0) + wait
    removed_share = r_fence + (sum(charged.values()) / ctx.samples_total if ctx.samples_total > 0 else 0.0)
    stall_share = ctx.as_stall_share(removed_share)
    if stall_share < ctx.th["membar_share"]:
        return None
    factor = 1.0 - 1.0 / per_warp if not math.isnan(per_warp) else 0.5
    # A device-scope fence waits about as long as the stores before it take to reach L2; the
    # stores still go there without the fence, and other warps must cover that time, so only
    # part of the wait goes away (fence_gpu_kept). A system-scope fence waits far longer than
    # the stores themselves (sysfence_loop): its wait goes away.
    if not any("SYS" in ctx.by_pc[p].modifiers for p in pcs if p in ctx.by_pc):
        factor *= 1.0 - ctx.th["fence_gpu_kept"]
    blamed = ctx.blamed_by_pc([i.pc for i in ctx.insts], ("membar",))
    locs = ctx.locations(merge_weights(blamed, charged)) if (blamed or charged) else ctx.line_samples("membar")
    return Detection(
        stall_share=stall_share,
        speedup=eliminate(removed_share * factor),
        evidence={
            "membar_stall_share": round(ctx.share("membar"), 3),
            "fences_per_warp": evidence_number(per_warp),
            "load_wait_share_charged_to_fences": round(removed_share - r_fence, 3),
        },
        locations=locs,
        fmt={"share_pct": 100 * stall_share},
    )
