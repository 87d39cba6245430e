"""What every detector shares: the ``Detection`` a detector returns, the registry its
decorator fills, and the speedup models they compose from measured quantities.

Contract: ``@detector(metrics=...)`` registers ``fn(ctx, passes) -> Detection | None`` under
its function name (the ``detector`` key of ``specs/findings.yaml``) with the kernel-level
metrics it reads. Speedup models (GPA's, from measured quantities only):

* stall elimination: removing a fraction r of all warp time gives 1/(1-r);
* latency hiding: as above, bounded by total/issuing time;
* occupancy: 1/(1 - L(1 - W/W')) for latency share L and warps W -> W', bounded by issue
  slots and the busiest unit;
* traffic: cutting a fraction w of a saturated unit's traffic gives up to 1/(1-w);
* launch: filling idle SMs, bounded by the busiest unit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...profile import KernelProfile, rounded
from ..context import UNITS, KernelContext
from ..passes import Passes
from ..tree import Location


# At most this share of a kernel's time is removable by one change: the rest (launch, the
# first and last memory round trips, bookkeeping) stays. Tighter limits come from the
# physical bounds (analysis/bounds.py).
MAX_REMOVABLE = 0.99


LATENCY_REASONS = ("long_scoreboard", "short_scoreboard", "wait", "lg_throttle", "mio_throttle", "tex_throttle")


MEMORY_REASONS = ("long_scoreboard", "lg_throttle", "tex_throttle", "drain")


#: Metrics behind ``ctx.units`` (the throughput units a traffic or unit bound reads) and
#: behind ``sol.grid_and_sms``: declared by every detector that reads them through those.
UNIT_METRICS = tuple(metric for metric, _ in UNITS.values())
GRID_METRICS = ("launch__grid_size", "launch__sm_count")

DetectorFn = Callable[[KernelContext, Passes], "Detection | None"]


@dataclass(frozen=True)
class Detector:
    """A registered detector: its name (``findings.yaml``'s ``detector`` key), the function,
    and the kernel-level metrics it reads (``KernelProfile.m`` names, for the metric-set
    parity check; per-instruction columns are the readers' business)."""

    name: str
    run: DetectorFn
    metrics: tuple[str, ...] = ()


#: Detector name -> Detector, filled by ``@detector`` as the family modules are imported
#: (``detectors/__init__.py`` imports them all).
REGISTRY: dict[str, Detector] = {}


def detector(*, metrics: Iterable[str] = ()) -> Callable[[DetectorFn], DetectorFn]:
    """Register the decorated function under its name with the metrics it reads."""

    def register(fn: DetectorFn) -> DetectorFn:
        if fn.__name__ in REGISTRY:
            raise ValueError(f"detector {fn.__name__!r} registered twice")
        REGISTRY[fn.__name__] = Detector(fn.__name__, fn, tuple(metrics))
        return fn

    return register


@dataclass
class Detection:
    stall_share: float  # share of stall cycles this finding concerns (0..1)
    speedup: float  # estimated whole-kernel speedup (>= 1)
    evidence: dict[str, Any] = field(default_factory=dict)
    locations: list[Location] = field(default_factory=list)
    fmt: dict[str, Any] = field(default_factory=dict)
    relieves_override: list[str] | None = None
    partial_relief: dict[str, float] | None = None  # unit -> share of its traffic the fix removes (when measured)
    variant: str | None = None  # findings.yaml advice_when key the evidence supports


def not_measured() -> Detection:
    """What a detector returns when the kernel shows its pattern but a quantity the finding
    rests on (its gate, its measured mechanism, the limit of its estimate) is not measured: a
    detection at 1x, which ``findings.evaluate`` drops below the reporting floor while the
    kernel's coverage note names the metrics its detector reads that the report lacks. An
    absent value is never read as 0 or as a default that would make the finding fire."""
    return Detection(stall_share=0.0, speedup=1.0)


def within_limit(speedup: float, limit: float | None, what: str, evidence: dict[str, Any]) -> float:
    """``speedup`` capped at the most its mechanism can give (``limit``: the whole kernel's
    speedup if the change removed all of what the mechanism costs, e.g. every idle lane or
    every excess sector), recorded in ``evidence`` as ``mechanism_limit`` with what it is
    (docs/json-schema.md). No limit (None, not finite) leaves the estimate as it is."""
    if limit is None or not math.isfinite(limit):
        return speedup
    limit = max(1.0, limit)
    evidence["mechanism_limit"] = {"value": round(limit, 3), "what": what}
    return min(speedup, limit)


def positive_weights(per_pc: pd.Series[float]) -> dict[int, float]:
    """PC -> value of a per-instruction column's entries above zero."""
    pos = per_pc[per_pc > 0]
    return {int(pc): float(v) for pc, v in zip(pos.index, pos)}


def eliminate(removed_share: float) -> float:
    removed_share = min(max(removed_share, 0.0), MAX_REMOVABLE)
    return 1.0 / (1.0 - removed_share)


def removed_limit(share: float) -> float:
    """The most a change can give that removes all of a share of the time (or of an
    issue-bound kernel's instructions): 1 / (1 - share), the share held to [0, MAX_REMOVABLE]
    (no change removes all). The same model as ``eliminate``, read as an estimate's limit
    (``within_limit``): every sample or instruction the change touches gone."""
    return eliminate(share)


def queue_charge(ctx: KernelContext, pcs: Iterable[int], reason: str) -> float:
    """Throttle samples of ``reason`` at OTHER instructions, charged to ``pcs`` in proportion
    to their own share of that throttle: a queue (MIO, LSU) kept full by the matched
    instructions also stalls every other instruction that needs it. A share of all samples."""
    tot = ctx.samples_total
    if tot <= 0:
        return 0.0
    own = sum(ctx.samples_at(pcs, (reason,)).values())
    every = ctx.frac(reason) * tot
    every = max(every, own)
    if every <= 0:
        return 0.0
    return (every - own) * (own / every) / tot


def l2_sector_share(ctx: KernelContext, pcs: Iterable[int]) -> float | None:
    """The share of the L2 global sectors the SMs request that ``pcs`` request: what a change
    removing those instructions takes off L1 and L2. None where per-instruction sectors are
    not measured."""
    if not ctx.measured("l2_sectors_global"):
        return None
    mine = float(ctx.df.loc[[p for p in pcs if p in ctx.df.index], "l2_sectors_global"].sum())
    return mine / ctx.total_of("l2_sectors_global")


def lsu_relief(ctx: KernelContext, pcs: Iterable[int]) -> dict[str, float]:
    """The share of the kernel's memory instructions that ``pcs`` execute: a fix that
    removes them also unloads the SM's load/store and MIO pipelines by that share (the
    busiest SM sub-unit is often that pipeline in memory-bound code)."""
    executed = ctx.executed()
    mem = ctx.executed_where(lambda i: i.is_memory())
    mine = sum(float(executed.get(pc) or 0.0) for pc in pcs)
    if mem <= 0 or mine <= 0:
        return {}
    share = min(1.0, mine / mem)
    return {"sm": share, "lsu": share}


def traffic_speedup(ctx: KernelContext, units: Sequence[str], removed_share: float) -> float:
    """Traffic model: a fix that removes a fraction ``removed_share`` of the requests through ``units``
    shortens the time those units are busy by that fraction. The part of the kernel's time
    those units account for is their utilisation relative to saturation (``saturation_pct``:
    the share of peak a unit reaches when it is the bottleneck), so the speedup is
    1 / (1 - removed_share * min(1, u / saturation)), bounded by the busiest unit the fix leaves alone."""
    vals = [v for v in (ctx.units.get(u) for u in units) if v is not None]
    top, top_val = ctx.top_unit()
    # Only where these units limit the kernel: below bound_pct, or behind another unit, the
    # kernel waits on latency, not on their throughput, and the stall model applies.
    if (
        not vals
        or removed_share <= 0
        or max(vals) < ctx.th["bound_pct"]
        or (top_val is not None and max(vals) < top_val)
    ):
        return 1.0
    busy = min(1.0, max(vals) / ctx.th["saturation_pct"])
    return bounded_by_units(ctx, 1.0 / (1.0 - min(removed_share, MAX_REMOVABLE) * busy), exclude=tuple(units))


def bounded_by_units(ctx: KernelContext, speedup: float, exclude: Collection[str] = ()) -> float:
    vals = [v for u, v in ctx.units.items() if u not in exclude and v is not None and v > 0]
    return min(speedup, 100.0 / max(vals)) if vals else speedup


def merge_weights(*maps: dict[int, float]) -> dict[int, float]:
    out: dict[int, float] = {}
    for weights in maps:
        for pc, weight in weights.items():
            out[pc] = out.get(pc, 0.0) + weight
    return out


def cost_share(
    ctx: KernelContext,
    pcs: Collection[int],
    own_reasons: Iterable[str] | None = None,
    blamed_reasons: Iterable[str] | None = None,
) -> tuple[float, dict[int, float]]:
    """Samples at the instructions (throttles, their own stalls) plus samples the blamer
    charges to them, as a fraction of all samples; and the per-PC weights for locations."""
    at = ctx.samples_at(pcs, own_reasons)
    blamed = ctx.blamed_by_pc(pcs, blamed_reasons)
    weights = merge_weights(at, blamed)
    tot = ctx.samples_total
    return (sum(weights.values()) / tot if tot > 0 else 0.0), weights


def blamed_locations(ctx: KernelContext, reason: str) -> list[Location]:
    """Lines of the instructions the blamer charges (the barrier/fence itself), falling
    back to where the samples were observed."""
    weights = ctx.blamed_by_pc([i.pc for i in ctx.insts], (reason,))
    return ctx.locations(weights) if weights else ctx.line_samples(reason)


def warps_launched(kernel: KernelProfile) -> float:
    block = kernel.threads_per_block
    threads = kernel.grid[0] * kernel.grid[1] * kernel.grid[2] * block if block else 0
    return threads / 32.0 if threads else 0.0


def evidence_number(value: float | None, nd: int = 3) -> float | None:
    return rounded(value, nd)


def launch_lanes(kernel: KernelProfile) -> float:
    """Average lanes per warp the launch configuration fills (32 unless the block size is
    not a multiple of 32: a 16-thread block's one warp has 16)."""
    threads, warps = kernel.threads_per_block, kernel.warps_per_block
    if threads is None or warps is None:
        return 32.0
    return threads / warps


def at_call_sites(weights: dict[int, float], sites: dict[int, int]) -> dict[int, float]:
    out: dict[int, float] = {}
    for pc, weight in weights.items():
        out[sites.get(pc, pc)] = out.get(sites.get(pc, pc), 0.0) + weight
    return out
