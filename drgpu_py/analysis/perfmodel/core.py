"""The model's records and its kernel terms: LoopModel, KernelModel, the bottleneck.

Contract: :class:`KernelModel` (with one :class:`LoopModel` per executed loop) is what
build.kernel_model fills in; ``evaluate_terms(model, ...)`` turns it into the kernel terms, the
predicted cycles and the bottleneck (stored on ``model`` when called without overrides: what-ifs
pass a changed hot loop, occupancy or instruction counts); ``combined(terms, norm)`` is how
the latency and issue-side terms add up; ``family_of(bottleneck)`` is the class compared with
the counters' verdict (one of ``VERDICTS``). ``executed_count(executed, pc)`` reads a per-PC
executed count (0 when missing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..context import KernelContext


VERDICTS = ("ilp", "latency", "compute", "memory", "launch")


@dataclass
class LoopModel:
    header_pc: int
    depth: int
    body: list[int]  # instruction indices (innermost to this loop, executed)
    iterations: float  # header executions summed over warps
    executed: float  # warp instructions executed in the body
    mix: dict[str, float]  # class -> share of the body's executed instructions
    useful_share: float
    issue_per_iteration: float
    critical_path_cycles: float
    single_warp_cycles: float
    chain: list[int]
    chain_memory: bool
    control_pcs: list[int] = field(default_factory=list)  # compare-and-branch of each iteration
    invariant: list[int] = field(default_factory=list)  # indices of loop-invariant instructions
    constant_misses: dict[int, float] = field(default_factory=dict)  # index -> miss cycles per iteration


@dataclass
class KernelModel:
    available: bool
    reason: str | None = None
    predicted_cycles: float = math.nan
    measured_cycles: float = math.nan
    bottleneck: str | None = None
    terms: dict[str, float] = field(default_factory=dict)
    instruction_efficiency: dict[str, float] = field(default_factory=dict)
    mix: dict[str, float] = field(default_factory=dict)
    loops: list[LoopModel] = field(default_factory=list)
    straight_cycles: float = 0.0  # per-warp cycles outside loops
    warps_per_scheduler: float = math.nan  # resident (W)
    warps_run_per_scheduler: float = math.nan  # over the kernel's life, busiest scheduler
    warps_launched: float = math.nan
    global_latency: float = math.nan
    pipe_counts: dict[str, float] = field(default_factory=dict)
    pipe_rate: dict[str, float] = field(default_factory=dict)
    inst_total: float = 0.0
    memory_cycles: float = 0.0
    memory_source: str = ""
    max_warps_per_scheduler: float = 16.0
    f2f64_pipe: str = "fp64"  # the pipe FP64 conversions issue to (specs/arch f2f64_pipe)
    overlap_norm: float = math.inf  # how the latency and issue-side terms combine (specs/arch)
    tensor_cycles: float = 0.0  # tensor FLOPs at the dense peak, busiest SM
    launch_cycles: float = 0.0  # the chip's shortest launch (specs/arch launch_floor_ns)
    verdict: str | None = None  # the counters' verdict (speed of light / top stall)
    what_if: list[dict[str, Any]] = field(default_factory=list)
    #: the model's notes for the kernel's notes (a budget cut: analysis/budget.py)
    notes: list[str] = field(default_factory=list)
    ctx: KernelContext | None = field(default=None, repr=False, compare=False)

    @property
    def hot(self) -> LoopModel | None:
        return self.loops[0] if self.loops else None

    @property
    def family(self) -> str | None:
        return family_of(self.bottleneck)

    def gap(self) -> float:
        """(predicted - measured) / measured."""
        if not (self.measured_cycles > 0) or math.isnan(self.predicted_cycles):
            return math.nan
        return (self.predicted_cycles - self.measured_cycles) / self.measured_cycles


def family_of(bottleneck: str | None) -> str | None:
    """ilp | latency | compute | memory: the class the counters' verdict is compared with."""
    if bottleneck is None:
        return None
    if bottleneck in ("ilp", "latency", "memory", "launch"):
        return bottleneck
    if bottleneck == "pipe:lsu":
        return "memory"
    return "compute"  # issue, pipe:fma/alu/fp64/xu/tensor


def executed_count(executed: dict[int, float], pc: int) -> float:
    count = executed.get(pc)
    return float(count) if count is not None and count == count else 0.0


def evaluate_terms(
    model: KernelModel,
    loops: list[LoopModel] | None = None,
    warps: float | None = None,
    inst_total: float | None = None,
    pipe_counts: dict[str, float] | None = None,
) -> tuple[float, str, dict[str, float]]:
    """Terms, predicted cycles and bottleneck; stored on ``model`` when called without overrides."""
    store = loops is None and warps is None and inst_total is None and pipe_counts is None
    loops = model.loops if loops is None else loops
    resident = model.warps_per_scheduler if warps is None else warps
    inst_total = model.inst_total if inst_total is None else inst_total
    pipe_counts = model.pipe_counts if pipe_counts is None else pipe_counts
    launched = model.warps_launched if model.warps_launched and model.warps_launched == model.warps_launched else 1.0
    run = model.warps_run_per_scheduler
    # Per-warp time: straight-line code plus each loop's iterations at its single-warp rate.
    per_warp = model.straight_cycles + sum(lm.iterations / launched * lm.single_warp_cycles for lm in loops)
    terms = {"latency": per_warp * run / max(1.0, min(resident, run)), "issue": inst_total / launched * run}
    for pipe, count in pipe_counts.items():
        rate = model.pipe_rate.get(pipe)
        if rate:
            terms[f"pipe:{pipe}"] = count / launched * run / rate
    terms["memory"] = model.memory_cycles
    if model.tensor_cycles > 0:
        terms["pipe:tensor"] = model.tensor_cycles
    if model.launch_cycles > 0:
        terms["launch"] = model.launch_cycles
    name = max(terms, key=terms.__getitem__)
    pred = max(terms[name], combined(terms, model.overlap_norm))
    if name == "latency":
        hot = loops[0] if loops else None
        name = "latency" if hot is None or hot.chain_memory else "ilp"
    if store:
        model.terms = {t: round(v, 1) for t, v in terms.items()}
        model.predicted_cycles, model.bottleneck = pred, name
    return pred, name, terms


def combined(terms: dict[str, float], norm: float) -> float:
    """The latency term and the largest issue-side term (issue, the warp-instruction pipes)
    together: their ``norm``-norm. Each alone assumes the other hides completely (the W warps'
    waits behind the others' issue; the pipe never idle); where both are near, a warp held at
    a busy pipe also delays its own dependency chain, and the time exceeds both. An infinite
    norm is the plain maximum."""
    lat = terms.get("latency", 0.0)
    side = max(
        (v for t, v in terms.items() if t == "issue" or t.startswith("pipe:") and t != "pipe:tensor"), default=0.0
    )
    if not (lat > 0 and side > 0) or math.isinf(norm):
        return max(lat, side)
    hi = max(lat, side)
    # (positive bases: each power is a float, though typeshed types float ** float as Any)
    out: float = hi * ((lat / hi) ** norm + (side / hi) ** norm) ** (1.0 / norm)
    return out
