"""What the passes before the detectors hand on, for one kernel.

The analysis of a kernel is a chain of passes, each a pure function of what the passes
before it returned: ``facts`` (:class:`~.context.KernelContext`: metrics, stall mix, SASS,
CFG, blame) -> ``traits`` and ``sol`` (sol.py) -> ``launch`` (launch_shape.py) and ``perf`` (the SASS performance model,
perfmodel/) -> findings (findings.py over detectors/) -> the tree (stall_tree.py). Nothing
is written into an earlier pass' result afterwards.

Contract: :func:`stall_cycles` is pure; :class:`Passes` is an immutable record of the
results the detectors, the findings and the tree read besides the facts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .context import KernelContext
from .launch_shape import LaunchShape
from .perfmodel import KernelModel
from .sol import SpeedOfLight, Traits


@dataclass(frozen=True)
class StallCycles:
    """DrGPU's root: stall-cycle % = (ideal IPC - achieved IPC) / ideal IPC."""

    pct: float  # NaN when neither the issue counters nor warp samples were collected
    achieved_ipc: float
    ideal_ipc: float
    how: str  # the counter the achieved IPC is, or how it was estimated


@dataclass(frozen=True)
class Passes:
    """The results of the passes after the facts: what detectors, findings and tree read."""

    traits: Traits | None
    sol: SpeedOfLight | None
    perf: KernelModel | None
    stall: StallCycles
    launch: LaunchShape | None = None


def stall_cycles(ctx: KernelContext) -> StallCycles:
    """The kernel's stall-cycle share from its achieved IPC (issued, else executed, else
    estimated from the share of warp samples that issued)."""
    ideal = float(ctx.arch["issue_slots_per_sm"])
    kernel = ctx.kernel
    ipc = kernel.m("sm__inst_issued.avg.per_cycle_active")
    how = "sm__inst_issued.avg.per_cycle_active"
    if ipc is None:
        ipc = kernel.m("sm__inst_executed.avg.per_cycle_active")
        how = "sm__inst_executed.avg.per_cycle_active"
    if ipc is None:
        if ctx.total > 0:
            # Per scheduler, the share of samples that issued approximates issue utilisation.
            ipc = ideal * ctx.reasons.get("selected", 0.0) / ctx.total * max(1.0, _warps_per_scheduler(ctx))
            ipc = min(ipc, ideal)
            how = "estimated from warp samples"
        else:
            return StallCycles(math.nan, math.nan, ideal, "not collected")
    return StallCycles(max(0.0, (ideal - ipc) / ideal * 100.0), ipc, ideal, how)


def _warps_per_scheduler(ctx: KernelContext) -> float:
    warps = ctx.kernel.m("smsp__warps_active.avg.per_cycle_active")
    return 1.0 if warps is None else warps
