"""Finding ``fp64-conversion``: double-precision instructions and conversions to and from
double in a kernel that converts (a float value promoted by a double literal or a double
math call).

Contract: ``fp64_conversion(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: FP64 arithmetic runs at a fraction of FP32's rate on most GPUs, and each
conversion (F2F.F64) adds an instruction and a dependent wait; a kernel that executes
conversions mixes the two precisions where one would do.

Evidence: the executed FP64 and F2F.F64 instructions (conversions executed, and the two
together at least ``fp64_inst_share`` of the executed instructions); the samples at them and
the short-scoreboard and wait samples the blamer charges to them (``cost_share``).

Estimate: the float version issues an instruction of its own in place of each double one, so
the samples where the warp was ready (``selected``, ``not_selected``) stay and the pipe,
latency and conversion waits go: ``eliminate`` of 0.9 of those, within ``removed_limit`` of
the same share (every sample the float version removes gone).

Metrics (declared): none (per-instruction counts and samples only).

Helpers: none of its own; ``removed_limit`` and ``cost_share`` from base.py.
"""

from __future__ import annotations

from typing import Any

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    Detection,
    cost_share,
    detector,
    eliminate,
    removed_limit,
    within_limit,
)


@detector()
def fp64_conversion(ctx: KernelContext, passes: Passes) -> Detection | None:
    df = ctx.df
    if df.empty:
        return None
    pcs = ctx.pcs_where(lambda i: i.is_fp64() or i.is_f2f64())
    conv = ctx.pcs_where(lambda i: i.is_f2f64())
    total = ctx.executed_total()
    if not pcs or total <= 0 or float(df.loc[conv, "inst_executed"].sum()) <= 0:
        return None
    share = float(df.loc[pcs, "inst_executed"].sum()) / total
    if share < ctx.th["fp64_inst_share"]:
        return None
    removed_share, weights = cost_share(ctx, pcs, None, ("short_scoreboard", "wait"))
    removed_share = min(removed_share, 1.0)
    # The float version issues an instruction of its own in place of each double one: the
    # samples where the warp was ready but the scheduler issued another warp (not_selected,
    # the issue slots' contention) stay; the pipe, latency and conversion waits go.
    kept = ("selected", "not_selected")
    r_gone, _ = cost_share(ctx, pcs, tuple(x for x in ctx.reasons if x not in kept), ("short_scoreboard", "wait"))
    r_gone = min(r_gone, 1.0)
    evidence: dict[str, Any] = {
        "fp64_and_conversion_instruction_share": round(share, 4),
        "removed_sample_share": round(r_gone, 3),
    }
    # All of the time those samples stand for gone is the most the change gives.
    speed = within_limit(
        eliminate(r_gone * 0.9),
        removed_limit(r_gone),
        f"1 / (1 - {r_gone:.3f}): every sample the float version removes gone",
        evidence,
    )
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"fp64_pct": 100 * share},
    )
