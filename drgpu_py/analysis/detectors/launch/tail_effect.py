"""Finding ``tail-effect``: a last wave of blocks that fills part of the GPU.

Contract: ``tail_effect(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: with fewer than ``tail_waves`` waves, the last partial wave's blocks run while the
other SMs idle.

Evidence: the launch shape's waves per SM, the last wave's fill and the resident blocks per SM.

Estimate: the launch-shape model's whole-waves what-if (``LaunchShape.whole_waves``: the
tail's blocks run alone, so its time shrinks only by the part not spent on units all SMs
share); it fires when the loss, ``1 - 1 / speedup`` before the busiest unit's bound, reaches
``tail_loss``. The what-if is the estimate and its ``mechanism_limit``.

Metrics (declared): the throughput units and grid, ``launch__occupancy_limit_blocks`` and
``launch__waves_per_multiprocessor``.

Helpers: shared ``what_if_limit`` (common.py).
"""

from __future__ import annotations

import math

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    GRID_METRICS,
    Detection,
    detector,
)
from .common import what_if_limit


@detector(
    metrics=(
        *UNIT_METRICS,
        *GRID_METRICS,
        "launch__occupancy_limit_blocks",
        "launch__waves_per_multiprocessor",
    )
)
def tail_effect(ctx: KernelContext, passes: Passes) -> Detection | None:
    """A last wave that fills part of the GPU: the launch-shape model's whole-waves what-if
    (LaunchShape.whole_waves: the tail's blocks run alone, so its time shrinks only by the
    part not spent on units all SMs share). The loss is the share of the time the even
    spread saves, 1 - 1/speedup before the busiest unit's bound."""
    shape = passes.launch
    if shape is None or shape.waves is None or shape.waves >= ctx.th["tail_waves"]:
        return None
    what_if = shape.whole_waves()
    if what_if is None:
        return None
    waves = shape.waves
    full = math.ceil(waves - 1e-9)
    last = waves - (full - 1)
    unbounded = shape.tail_speedup() or 1.0
    loss = 1.0 - 1.0 / unbounded
    if loss < ctx.th["tail_loss"]:
        return None
    return Detection(
        stall_share=loss,
        speedup=what_if.speedup,
        evidence={
            "waves_per_sm": round(waves, 2),
            "last_wave_fill": round(last, 3),
            "last_wave_time_share": round(unbounded * waves - (full - 1), 3),
            "resident_blocks_per_sm": round(shape.blocks / (waves * shape.sms), 2),
            "launch_model": what_if.to_dict(),
            "mechanism_limit": what_if_limit(what_if, "the same work in whole waves"),
        },
        fmt={"waves": waves, "last_wave_pct": 100 * last},
    )
