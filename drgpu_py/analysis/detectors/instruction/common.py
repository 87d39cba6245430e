"""What two or more instruction rules share: ``model_change``, the best of the performance
model's what-ifs for the kernel as measured (instruction-overhead's unrolling, low-ilp's
unrolling or more warps).

Contract: pure functions of the kernel's context and the performance model; no detector here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...context import KernelContext
from ...perfmodel import KernelModel, measured_speedup, what_if


def model_change(
    ctx: KernelContext, model: KernelModel | None, changes: Iterable[str], hoist: bool
) -> tuple[float, dict[str, Any]] | None:
    """The best of the performance model's what-ifs ``changes`` (analysis/perfmodel.py) for
    the kernel as measured (perfmodel.measured_speedup), with its evidence; None without a model or
    when no change applies (the caller's own estimate stands)."""
    if model is None or not model.available:
        return None
    unroll_k = int(ctx.th["model_unroll_k"])
    best = None
    for change in changes:
        got = what_if(model, change, k=unroll_k, hoist=hoist) if change == "unroll" else what_if(model, change)
        if got is not None:
            speedup = measured_speedup(model, got)
            if best is None or speedup > best[0]:
                best = (speedup, got)
    if best is None:
        return None
    speedup, got = best
    return speedup, {
        "model_change": got["description"],
        "model_predicted_cycles": round(model.predicted_cycles, 1),
        "model_predicted_cycles_after": got["predicted_cycles"],
        "model_bottleneck_after": got["bottleneck_after"],
    }
