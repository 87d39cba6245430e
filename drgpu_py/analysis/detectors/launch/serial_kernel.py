"""Finding ``serial-kernel``: a grid of one block (or ``serial_blocks``) per launch, fewer than
the SMs.

Contract: ``serial_kernel(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: each launch occupies a few SMs and pays the launch floor; a sequence of such
launches runs the GPU mostly idle.

Evidence: the grid's blocks and the SMs (``grid_and_sms``), the kernel's duration, the launch
floor from the speed of light, and the launches the report holds (a kernel group).

Estimate: what is sure whatever the launches depend on: a CUDA graph (or fused steps) saves
about one launch floor per launch, ``duration / max(duration - floor, floor)``, which is also
its ``mechanism_limit``. With several launches profiled, the launch-shape model's what-if for
them batched into one grid is evidence and a conditional in the text, never the estimate.

Metrics (declared): the grid (``GRID_METRICS``) and ``drgpu__group_launches``.

Helpers (this rule's own): ``_BATCHED_TEXT``, ``_ONE_LAUNCH_TEXT``, ``_LIMIT_TEXT``.
"""

from __future__ import annotations

import math
from typing import Any

from ...context import KernelContext
from ...passes import Passes
from ...sol import grid_and_sms
from ..base import (
    GRID_METRICS,
    Detection,
    detector,
    within_limit,
)


_BATCHED_TEXT = (
    "The report holds {launches} such launches. Only if their pieces are independent (one per "
    "tensor, matrix or row group; the report cannot tell) can they become one launch of {blocks:,} "
    "blocks (blockIdx picks the piece), which the launch model puts at {speed:.1f}x for those "
    "launches; the estimate assumes they depend on each other."
)


#: The mechanism's limit (every launch's floor gone and nothing else: the estimate's own closed
#: form, so that a later model cannot raise it past what the launches cost).
_LIMIT_TEXT = "one launch floor removed per launch: duration / max(duration - floor, floor)"


_ONE_LAUNCH_TEXT = (
    "If the program launches it many times for independent pieces, launch it once with one block "
    "per piece (profile all the launches, e.g. --launch-count, for an estimate)."
)


@detector(metrics=(*GRID_METRICS, "drgpu__group_launches"))
def serial_kernel(ctx: KernelContext, passes: Passes) -> Detection | None:
    """A grid of one block (or ``serial_blocks``) per launch.

    The estimate is what is sure whatever the launches depend on: a CUDA graph (or the steps
    fused into one kernel) saves about one launch floor per launch. Whether each launch needs
    the previous one's result (an outer loop's steps) or the launches are independent pieces
    (one per tensor or matrix) is not in the report: ncu keeps no kernel arguments, and both
    read and write memory alike. Where the report holds several launches (a kernel group,
    groups.py), the launch-shape model's what-if for them batched into one grid
    (LaunchShape.batched) is evidence and a conditional in the text, never the estimate: it
    grows with the number of launches the user chose to profile, and it is false for
    dependent steps."""
    blocks, sms = grid_and_sms(ctx)
    if not sms or not blocks or blocks > ctx.th["serial_blocks"] or blocks >= sms:
        return None
    dur = ctx.kernel.duration_ns
    floor = passes.sol.launch_floor_ns if passes.sol is not None else math.nan
    if not dur or math.isnan(floor):
        return None
    graph = max(1.0, dur / max(dur - floor, floor))
    launches = ctx.kernel.launch_count
    shape = passes.launch
    batched = shape.batched(launches) if shape is not None and launches > 1 else None
    idle = 1.0 - blocks / sms
    evidence: dict[str, Any] = {
        "blocks": int(blocks),
        "sms": int(sms),
        "launch_floor_ns": round(floor, 1),
        "launches": launches,
    }
    if batched is not None:
        evidence["if_independent"] = batched.to_dict()
    speed = within_limit(graph, graph, _LIMIT_TEXT, evidence)
    return Detection(
        stall_share=idle,
        speedup=speed,
        evidence=evidence,
        fmt={
            "blocks": int(blocks),
            "sms": int(sms),
            "idle_pct": 100 * idle,
            "floor_us": floor / 1000,
            "dur_us": dur / 1000,
            "launches": launches,
            "graph": graph,
            "batched": _BATCHED_TEXT.format(launches=launches, blocks=int(blocks * launches), speed=batched.speedup)
            if batched is not None
            else _ONE_LAUNCH_TEXT,
        },
    )
