"""Physical bounds on a finding's estimated speedup: one place, applied to every finding.

Contract: ``physical_bounds(ctx, sol, relieves, model, stall_pct, partial) -> list[Bound]`` is pure;
``apply_bounds(speed, bounds) -> (speed, binding bound or None)`` takes the smallest.

The bounds (``unit``, ``launch_floor``, ``latency_hiding``, ``stall_cycles``), their formulas
and sources: docs/json-schema.md, "Bounds on every estimate".

``beyond_launch_floor(speed, duration_ns, floor_ns, model) -> float`` (where ``floor_applies``) turns a what-if over the
time warps run (what the stall samples and the model see) into one over the kernel's duration,
of which the launch floor is a fixed part no change to the code removes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .context import KernelContext
from .sol import UNIT_METRICS, SpeedOfLight

#: a catalogue `relieves` entry -> the speed-of-light units a fix of that kind unloads
RELIEF = {
    "sm": {"sm", "issue", "fma", "alu", "fp64", "xu", "lsu"},
    "fp64": {"fp64"},
    "shared": {"l1tex", "lsu"},
    "l1tex": {"l1tex", "lsu"},
    "lts": {"lts"},
    "dram": {"dram"},
    "tensor": {"tensor"},
}
STALL_MODELS = ("stall_elimination", "latency_hiding", "dependency_chains")
#: models of the launch itself (its shape, batching launches) and of the balance of ranks'
#: durations: they model the elapsed time,
#: launch floor included, so the floor is not taken out of their estimate again
LAUNCH_MODELS = ("launch", "launch_shape", "batching", "balance")
HIDING_MODELS = ("latency_hiding", "occupancy")


@dataclass
class Bound:
    kind: str  # unit | launch_floor | latency_hiding | stall_cycles
    limit: float  # the largest speedup it allows
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "limit": round(self.limit, 3), "why": self.why}


def relieved_units(relieves: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for relief in relieves:
        out |= RELIEF.get(relief, {relief})
    return out


def physical_bounds(
    ctx: KernelContext,
    sol: SpeedOfLight,
    relieves: Iterable[str],
    model: str,
    stall_pct: float,
    partial: dict[str, float] | None = None,
) -> list[Bound]:
    relieved = relieved_units(relieves)
    out: list[Bound] = []
    units = dict(sol.units)
    sm = ctx.units.get("sm")
    if sm is not None:
        units.setdefault("sm", sm)
    if model in ("launch", "launch_shape"):
        # A launch change (more blocks, even waves) keeps SMs busy for more of the elapsed
        # time; units measured per active cycle are that much less loaded over the elapsed time.
        share = ctx.kernel.active_share
        if share is not None:
            units = {
                unit: (unit_pct * share if UNIT_METRICS.get(unit, ("", "", False))[2] else unit_pct)
                for unit, unit_pct in units.items()
            }
    others = {
        unit: unit_pct
        for unit, unit_pct in units.items()
        if unit not in relieved and unit_pct > 0 and not math.isnan(unit_pct)
    }
    # A relieved unit whose removed share of traffic is measured keeps the rest of its load.
    removed = partial or {}
    left = {
        unit: units[unit] * (1.0 - w)
        for unit, w in removed.items()
        if unit in units and not math.isnan(units[unit]) and units[unit] * (1.0 - w) > 0
    }
    cands = {**others, **left}
    if cands:
        unit = max(cands, key=cands.__getitem__)
        unit_pct = cands[unit]
        why = (
            f"{sol.labels.get(unit, unit)} runs at {unit_pct:.0f}% of its peak and this change does not unload it"
            if unit not in left
            else f"{sol.labels.get(unit, unit)} would still run at {unit_pct:.0f}% of its peak: the change removes {100 * removed[unit]:.0f}% of its traffic"
        )
        out.append(Bound("unit", 100.0 / min(unit_pct, 100.0), why))
    dur = ctx.kernel.duration_ns
    floor = sol.launch_floor_ns
    if dur and floor and not math.isnan(floor) and floor > 0:
        # Batching n launches into one pays the floor once for all n.
        launches = max(1, ctx.kernel.launch_count) if model == "batching" else 1
        out.append(
            Bound(
                "launch_floor",
                max(1.0, launches * dur / floor),
                f"the kernel takes {dur / 1000:.1f} µs and no launch on this GPU is shorter than {floor / 1000:.1f} µs"
                + (f" ({launches:.0f} launches batched into one)" if launches > 1 else ""),
            )
        )
    if model in HIDING_MODELS:
        lim = ctx.th["latency_hiding_max"]
        out.append(Bound("latency_hiding", lim, f"hiding latency gains at most {lim:g}x (GPA)"))
    # Only a change that issues the same instructions is bounded by the stall cycles; one
    # that removes instructions (relieves the issue slots) can beat the ideal-IPC time.
    if model in STALL_MODELS and "issue" not in relieved and not math.isnan(stall_pct) and stall_pct < 100.0:
        out.append(
            Bound(
                "stall_cycles",
                1.0 / max(1e-6, 1.0 - stall_pct / 100.0),
                f"removing every stall would reach the ideal issue rate: {stall_pct:.0f}% of issue cycles stall",
            )
        )
    # A limit that overflows (a unit at 1e-320 % of its peak in an edited report) bounds nothing.
    return [b for b in out if math.isfinite(b.limit)]


def floor_applies(duration_ns: float | None, floor_ns: float, model: str) -> bool:
    """Whether a what-if of ``model`` leaves out the launch floor: a model of the time warps
    run (not of the launch itself), on a measured duration and floor."""
    measured = duration_ns is not None and math.isfinite(duration_ns) and floor_ns > 0
    return measured and model not in LAUNCH_MODELS


def beyond_launch_floor(speed: float, duration_ns: float | None, floor_ns: float, model: str) -> float:
    """The kernel's speedup when a change speeds up only the time beyond the launch floor by
    ``speed``: duration / (floor + (duration - floor) / speed). The floor (an empty kernel's
    duration) is launch work no warp runs in, so neither the samples nor the model see it; on
    a 4 us kernel it is half the time (a 1.78x local-memory what-if measured 1.06x there)."""
    if not floor_applies(duration_ns, floor_ns, model) or speed <= 1.0:
        return speed
    assert duration_ns is not None  # floor_applies: measured
    variable = duration_ns - floor_ns
    if variable <= 0:
        return 1.0
    return duration_ns / (floor_ns + variable / speed)


def apply_bounds(speed: float, bounds: list[Bound]) -> tuple[float, Bound | None]:
    speed = max(1.0, float(speed))
    binding = None
    for bound in bounds:
        if bound.limit < speed:
            speed, binding = max(1.0, bound.limit), bound
    return speed, binding
