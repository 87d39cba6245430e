"""Finding ``pipe-contention``: warps that wait for a busy math pipe, the special-function
unit's MIO queue included.

Contract: ``pipe_contention(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: an instruction whose pipe is busy waits (math-pipe throttle); the special-function
unit (XU: MUFU transcendentals, reciprocals, conversions) is fed through the MIO queue, so a
saturated XU shows as MIO throttle at its MUFU instructions instead.

Evidence: the math pipes' utilisation (FMA, ALU, FP64, XU); the math-pipe-throttle samples,
plus, when the XU is the busiest pipe, the MIO-throttle samples at MUFUs
(``_xu_waits_by_pc``); at least ``pipe_throttle_share`` of stall samples. Locations: the
MUFUs, else the lines of the throttle samples.

Estimate: half of those waits' share of all time removed (``eliminate``).

Metrics (declared): ``sm__inst_executed_pipe_{alu,fma,fp64,xu}.avg.pct_of_peak_sustained_active``.

Helpers (this rule's own): ``_xu_waits_by_pc``.
"""

from __future__ import annotations

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    Detection,
    detector,
    eliminate,
)


def _xu_waits_by_pc(ctx: KernelContext) -> dict[int, float]:
    """MIO-throttle samples at MUFU instructions: the XU's queue was full when they issued."""
    mufus = ctx.pcs_where(lambda i: i.is_mufu())
    return {pc: v for pc, v in ctx.samples_at(mufus, ("mio_throttle",)).items() if v > 0}


@detector(
    metrics=(
        "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
        "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
        "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active",
        "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
    )
)
def pipe_contention(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Warps wait for a busy math pipe. Most pipes show it as math-pipe throttle; the
    special-function unit (XU: MUFU transcendentals, reciprocals, conversions) is fed through
    the MIO queue, so a saturated XU shows as MIO throttle at its MUFU instructions instead
    (seen on a public kernel of powf with a run-time exponent: XU at 92% of peak, 53% of stall
    cycles MIO throttle at MUFU.LG2/EX2). Those waits count when the XU is the busiest pipe."""
    kernel = ctx.kernel
    measured = {
        p: kernel.m(f"sm__inst_executed_pipe_{p}.avg.pct_of_peak_sustained_active")
        for p in ("fma", "alu", "fp64", "xu")
    }
    pipes = {p: v for p, v in measured.items() if v is not None}
    pipe = max(pipes, key=pipes.__getitem__) if pipes else "math"
    xu_waits = _xu_waits_by_pc(ctx) if pipe == "xu" else {}
    xu_frac = sum(xu_waits.values()) / ctx.total if ctx.total > 0 else 0.0
    waits = ctx.frac("math_pipe_throttle") + xu_frac
    stall_share = ctx.as_stall_share(waits)
    if stall_share < ctx.th["pipe_throttle_share"]:
        return None
    locations = ctx.locations(xu_waits) if xu_frac > 0 else ctx.line_samples("math_pipe_throttle")
    return Detection(
        stall_share=stall_share,
        speedup=eliminate(waits * 0.5),
        evidence={f"pipe_{p}_pct": round(v, 1) for p, v in pipes.items()}
        | ({"xu_queue_stall_share": round(ctx.as_stall_share(xu_frac), 3)} if xu_frac > 0 else {}),
        locations=locations,
        fmt={"share_pct": 100 * stall_share, "pipe": pipe.upper()},
        variant="special_function" if xu_frac > 0 else None,
    )
