"""Speed of light: how close a kernel runs to the hardware's limits, unit by unit.

Contract: ``speed_of_light(ctx) -> SpeedOfLight`` and ``kernel_traits(ctx) -> Traits`` are
pure functions of a :class:`KernelContext` (its metrics, SASS and per-instruction counts).
SpeedOfLight holds each unit's % of peak, the limiter and its grade (specs/thresholds.yaml
``grade_*``), FLOPs per precision and tensor FLOPs, and the roofline point; Traits say
whether tensor cores and warp-specialized synchronization are used and whether the report
has source lines for the kernel.

How each unit, FLOP count and grade is derived: docs/json-schema.md, "Speed of light".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..profile import KernelProfile
from ..specs.records import ArchConstants, Thresholds
from ..sass.isa import Instruction
from .context import KernelContext

#: unit key -> (label, metric, measured over active cycles?)
UNIT_METRICS = {
    "issue": ("Issue slots", "smsp__issue_active.avg.pct_of_peak_sustained_active", True),
    "tensor": ("Tensor cores", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", True),
    "fma": ("FMA pipe", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", True),
    "alu": ("ALU pipe", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", True),
    "fp64": ("FP64 pipe", "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", True),
    "xu": (
        "XU pipe (special functions, conversions)",
        "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
        True,
    ),
    "lsu": ("LSU pipe", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", True),
    "l1tex": ("L1/shared memory", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed", False),
    "lts": ("L2 cache", "lts__throughput.avg.pct_of_peak_sustained_elapsed", False),
    "dram": ("DRAM", "dram__throughput.avg.pct_of_peak_sustained_elapsed", False),
}
L1_FALLBACK = "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed"
GRADES = ("poor", "okay", "good", "excellent")

# FLOPs per thread instruction of the non-tensor math opcodes (an FMA is two; a packed
# half2 instruction does two lanes).
_SCALAR_FLOPS = {
    "FFMA": ("fp32", 2),
    "FADD": ("fp32", 1),
    "FMUL": ("fp32", 1),
    "FFMA2": ("fp32", 4),
    "FADD2": ("fp32", 2),
    "FMUL2": ("fp32", 2),
    "DFMA": ("fp64", 2),
    "DADD": ("fp64", 1),
    "DMUL": ("fp64", 1),
    "HFMA2": ("fp16", 4),
    "HADD2": ("fp16", 2),
    "HMUL2": ("fp16", 2),
}
_COUNTER_FLOPS = {
    "fp32": (("ffma", 2), ("fadd", 1), ("fmul", 1)),
    "fp64": (("dfma", 2), ("dadd", 1), ("dmul", 1)),
    "fp16": (("hfma", 4), ("hadd", 2), ("hmul", 2)),
}

#: Every kernel metric the speed of light reads (``speed_of_light``, ``counter_flops``,
#: ``grid_and_sms``) when the report has it: drgpu's default metric set collects them all
#: (analysis/coverage.py lists them with the findings' metrics; the parity test checks).
SOL_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    *(metric for _, metric, _ in UNIT_METRICS.values()),
    "sm__cycles_elapsed.avg.per_second",
    "launch__grid_size",
    "launch__sm_count",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    *(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for parts in _COUNTER_FLOPS.values() for op, _ in parts),
    "dram__bytes.sum",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
)
#: Metrics the speed of light reads only in place of one of SOL_METRICS that the report
#: lacks (stand-in -> what it stands in for; sm__throughput stands in for the issue and pipe
#: units together): reports of other sets may have only these.
SOL_STAND_INS: dict[str, str] = {
    L1_FALLBACK: "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "device__attribute_clock_rate": "sm__cycles_elapsed.avg.per_second",
    "dram__bytes_read.sum": "dram__bytes.sum",
    "dram__bytes_write.sum": "dram__bytes.sum",
}
_TENSOR_OPS = {
    "HMMA",
    "HGMMA",
    "QGMMA",
    "IMMA",
    "IGMMA",
    "DMMA",
    "BMMA",
    "BGMMA",
    "OMMA",
    "QMMA",
    "UTCHMMA",
    "UTCQMMA",
    "UTCIMMA",
}
_WARPGROUP_OPS = {"HGMMA", "QGMMA", "IGMMA", "BGMMA"}
# SASS signs of warp-specialized producer/consumer pipelines (Hopper and later).
_SPECIALIZED = {"SYNCS", "WARPGROUP", "NANOSLEEP", "UTMALDG", "UBLKCP", "UTMASTG", "ARRIVES", "SETMAXREG", "USETMAXREG"}


@dataclass
class Traits:
    tensor_core: bool = False
    warp_specialized: bool = False
    has_line_info: bool = False
    signs: list[str] = field(default_factory=list)  # the SASS opcodes that showed specialization

    def to_dict(self) -> dict[str, Any]:
        return {
            "tensor_core": self.tensor_core,
            "warp_specialized": self.warp_specialized,
            "source_lines": self.has_line_info,
            "specialization_signs": self.signs,
        }


@dataclass
class SpeedOfLight:
    units: dict[str, float]  # unit -> % of peak (only units the report measures)
    unit_sources: dict[str, str]
    limiter: str | None
    limiter_pct: float | None  # None: no unit measured
    grade: str | None
    flops: dict[str, float]  # precision -> FLOPs (fp32, fp64, fp16, tensor_<type>)
    flops_source: str  # "counters" | "sass" | "counters+sass" | "none"
    duration_s: float | None  # None: not measured (nor when the duration is 0)
    sm_clock_hz: float | None  # None: not measured
    dram_bytes: float | None  # None: not measured
    peak_bytes_per_s: float | None  # None: neither measured nor in the architecture's specs
    peak_flops_per_s: dict[str, float]  # precision -> FLOP/s at the measured clock
    launch_floor_ns: float
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def dominant(self) -> str | None:
        vals = {p: v for p, v in self.flops.items() if v > 0}
        return max(vals, key=vals.__getitem__) if vals else None

    def roofline(self) -> dict[str, Any]:
        precision = self.dominant
        out: dict[str, Any] = {
            "precision": precision,
            "flops": self.flops.get(precision) if precision else None,
            "dram_bytes": _n(self.dram_bytes),
            "flop_per_s": None,
            "dram_bytes_per_s": None,
            "arithmetic_intensity": None,
            "peak_flop_per_s": None,
            "peak_dram_bytes_per_s": _n(self.peak_bytes_per_s),
            "ridge_point": None,
            "side": None,
            "attainable_flop_per_s": None,
            "pct_of_attainable": None,
        }
        duration = self.duration_s
        if duration is not None and duration > 0 and self.dram_bytes is not None:
            out["dram_bytes_per_s"] = self.dram_bytes / duration
        if precision is None or duration is None or not duration > 0:
            return out
        flops = self.flops[precision]
        out["flop_per_s"] = flops / duration
        peak = self.peak_flops_per_s.get(precision, math.nan)
        out["peak_flop_per_s"] = _n(peak)
        if self.dram_bytes is not None and self.dram_bytes > 0:
            out["arithmetic_intensity"] = flops / self.dram_bytes
            out.update(self._ridge(flops, duration, peak))
        return out

    def _ridge(self, flops: float, duration: float, peak: float) -> dict[str, Any]:
        """The ridge point, the kernel's side of it and the FLOP/s attainable at its
        arithmetic intensity; nothing without both peaks."""
        bw = self.peak_bytes_per_s
        if math.isnan(peak) or bw is None or not bw > 0 or self.dram_bytes is None:
            return {}
        ai = flops / self.dram_bytes
        ridge = peak / bw
        att = min(peak, ai * bw)
        return {
            "ridge_point": ridge,
            "side": "memory" if ai < ridge else "compute",
            "attainable_flop_per_s": att,
            "pct_of_attainable": 100.0 * flops / duration / att if att > 0 else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "limiter": self.limiter,
            "limiter_pct": _n(self.limiter_pct),
            "limiter_label": self.labels.get(self.limiter) if self.limiter else None,
            "grade": self.grade,
            "units": {
                u: {"label": self.labels.get(u, u), "pct": round(v, 2), "source": self.unit_sources.get(u)}
                for u, v in sorted(self.units.items(), key=lambda kv: -kv[1])
            },
            "flops": {p: v for p, v in self.flops.items() if v > 0},
            "flops_source": self.flops_source,
            "roofline": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.roofline().items()},
            "launch_floor_ns": _n(self.launch_floor_ns),
        }


def _n(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value))) else value


class Rated(Protocol):
    """A finding as near_speed_of_light reads it (findings.Finding; a protocol, as findings
    imports this module)."""

    @property
    def severity(self) -> str: ...


def grade_of(pct: float | None, th: Thresholds) -> str | None:
    if pct is None or math.isnan(pct):
        return None
    if pct > th["grade_excellent"]:
        return "excellent"
    if pct >= th["grade_good"]:
        return "good"
    if pct >= th["grade_okay"]:
        return "okay"
    return "poor"


def grade_at_least(grade: str | None, floor: str) -> bool:
    return grade is not None and GRADES.index(grade) >= GRADES.index(floor)


def near_speed_of_light(
    pct: float | None, findings: Iterable[Rated], th: Thresholds, efficiency_pct: float | None = None
) -> bool:
    """A unit at ``pct`` % of its peak is near its speed of light: at or above ``sol_pct``
    with no high finding among ``findings`` (little to gain without reducing its work), and,
    where the useful work is known (``efficiency_pct``, ledger.py), the kernel graded at least
    good on it: a unit kept busy by excess sectors or conflicts is busy with waste."""
    return (
        pct is not None
        and pct >= th["sol_pct"]  # a NaN compares false
        and not any(f.severity == "high" for f in findings)
        and (efficiency_pct is None or efficiency_pct >= th["grade_good"])
    )


def grid_and_sms(ctx: KernelContext) -> tuple[float, float]:
    """(blocks in the grid, SMs), each 0 when unknown or not a positive finite number."""
    kernel = ctx.kernel
    blocks = kernel.m("launch__grid_size")
    if blocks is None:
        blocks = float(kernel.grid[0] * kernel.grid[1] * kernel.grid[2])
    sms = kernel.sm_count or kernel.m("launch__sm_count")
    return finite_positive(blocks), finite_positive(sms)


def finite_positive(v: float | None) -> float:
    """``v`` when a positive finite number, else 0 (not measured, or a hostile CSV's nan, inf
    or negative)."""
    return v if v and math.isfinite(v) and v > 0 else 0.0


def sm_fill(ctx: KernelContext) -> float:
    """Share of SMs that had at least one block (1 when the grid covers the GPU or is unknown)."""
    blocks, sms = grid_and_sms(ctx)
    return min(1.0, blocks / sms) if blocks and sms else 1.0


def tensor_shape(ins: Instruction) -> tuple[int, int, int] | None:
    """(M, N, K) of a tensor-core instruction: 'HGMMA.64x128x16...' or 'HMMA.16816...'."""
    if not ins.modifiers:
        return None
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", ins.modifiers[0])
    if match:
        return int(match[1]), int(match[2]), int(match[3])
    shape_text = ins.modifiers[0]
    if shape_text.isdigit():
        if shape_text.startswith("16"):
            return 16, int(shape_text[2]), int(shape_text[3:])
        if shape_text.startswith("88"):
            return 8, 8, int(shape_text[2:])
    return None


def tensor_precision(ins: Instruction) -> str:
    mods = set(ins.modifiers[1:])
    if ins.opcode == "DMMA":
        return "tensor_fp64"
    if ins.opcode in ("QGMMA", "QMMA", "UTCQMMA") or mods & {"E4M3", "E5M2"}:
        return "tensor_fp8"
    if ins.opcode in ("IMMA", "IGMMA", "UTCIMMA") or mods & {"S8", "U8", "S4", "U4"}:
        return "tensor_int8"
    if "TF32" in mods:
        return "tensor_tf32"
    if "BF16" in mods:
        return "tensor_bf16"
    return "tensor_fp16"


def sass_flops(ctx: KernelContext) -> dict[str, float]:
    """FLOPs per precision from the executed SASS (per-instruction counts)."""
    df = ctx.df
    out: dict[str, float] = {}
    if df.empty:
        return out
    executed = ctx.executed()
    threads = dict(zip(df.index.tolist(), df["thread_inst_executed"].tolist())) if "thread_inst_executed" in df else {}
    for ins in ctx.insts:
        if ins.opcode in _SCALAR_FLOPS and "MMA" not in ins.modifiers:
            prec, flops = _scalar_flops(ins, threads, executed)
        elif ins.opcode in _TENSOR_OPS:
            counted = _tensor_flops(ins, executed)
            if counted is None:
                continue
            prec, flops = counted
        else:
            continue
        out[prec] = out.get(prec, 0.0) + flops
    return out


def _scalar_flops(ins: Instruction, threads: dict[int, float], executed: dict[int, float]) -> tuple[str, float]:
    """A scalar floating-point instruction's precision and FLOPs: per thread that executed it,
    or 32 per warp-level execution where the thread count is missing."""
    prec, flops_each = _SCALAR_FLOPS[ins.opcode]
    count = threads.get(ins.pc)
    if count is None or count != count:
        count = (executed.get(ins.pc) or 0.0) * 32.0
    return prec, flops_each * float(count or 0.0)


def _tensor_flops(ins: Instruction, executed: dict[int, float]) -> tuple[str, float] | None:
    """A tensor-core instruction's precision and FLOPs (2 m n k per warp execution, a
    warpgroup's shared by its four warps); None without its shape or count."""
    shape = tensor_shape(ins)
    count = executed.get(ins.pc)
    if shape is None or count is None or count != count:
        return None
    dim_m, nn, kk = shape
    per = 2.0 * dim_m * nn * kk / (4.0 if ins.opcode in _WARPGROUP_OPS else 1.0)
    return tensor_precision(ins), per * float(count)


def counter_flops(ctx: KernelContext) -> dict[str, float]:
    kernel = ctx.kernel
    out: dict[str, float] = {}
    for prec, parts in _COUNTER_FLOPS.items():
        vals = [(kernel.m(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"), f) for op, f in parts]
        if all(v is None for v, _ in vals):
            continue
        out[prec] = sum(0.0 if v is None else v * f for v, f in vals)
    return out


def kernel_traits(ctx: KernelContext) -> Traits:
    df = ctx.df
    executed = ctx.executed()
    ran: Callable[[Instruction], bool] = lambda ins: (executed.get(ins.pc) or 0.0) > 0  # noqa: E731  (NaN compares false)
    tensor = any(i.opcode in _TENSOR_OPS and ran(i) for i in ctx.insts)
    signs = sorted({i.opcode for i in ctx.insts if i.opcode in _SPECIALIZED})
    if any(_named_barrier(i) for i in ctx.insts):
        signs.append("BAR (named barriers)")
    # Named barriers alone are common in ordinary code; with mbarrier/warpgroup/TMA/sleep
    # signs the waiting is the pipeline's hand-off between producer and consumer warps.
    specialized = bool(set(signs) & {"SYNCS", "WARPGROUP", "UTMALDG", "UBLKCP", "NANOSLEEP", "SETMAXREG", "USETMAXREG"})
    lines = not df.empty and "line" in df and bool(df["line"].notna().any())
    return Traits(tensor_core=tensor, warp_specialized=specialized, has_line_info=lines, signs=signs)


def _named_barrier(i: Instruction) -> bool:
    """A BAR on a barrier other than 0 (__syncthreads' own)."""
    return i.opcode == "BAR" and bool(i.operands) and i.operands[0] not in ("0", "0x0")


def speed_of_light(ctx: KernelContext) -> SpeedOfLight:
    kernel, th, arch = ctx.kernel, ctx.th, ctx.arch
    units, sources = _unit_throughputs(kernel, sm_fill(ctx))
    dur_ns = kernel.duration_ns
    dur = dur_ns * 1e-9 if dur_ns else None
    clock = _sm_clock(kernel)
    peak_flops = _peak_flops(kernel, arch, clock)
    flops, src = _flops(ctx)
    # Tensor unit: achieved tensor FLOP/s against the dense peak of each operand type.
    tensor = _tensor_share(flops, peak_flops, dur)
    if tensor is not None:
        units["tensor"] = 100.0 * tensor
        sources["tensor"] = "tensor FLOPs (SASS) / (duration x dense peak at the measured SM clock)"
    if not units.keys() & {"issue", "tensor", "fma", "alu", "fp64", "xu", "lsu"}:
        _sm_throughput(kernel, units, sources)
    limiter: str | None = None
    lim_pct: float | None = None
    if units:
        limiter, lim_pct = max(units, key=units.__getitem__), max(units.values())
    labels = {unit: spec[0] for unit, spec in UNIT_METRICS.items()} | {"sm": "SM (busiest sub-unit)"}
    return SpeedOfLight(
        units=units,
        unit_sources=sources,
        limiter=limiter,
        limiter_pct=lim_pct,
        grade=grade_of(lim_pct, th),
        flops=flops,
        flops_source=src,
        duration_s=dur,
        sm_clock_hz=clock,
        dram_bytes=_dram_bytes(kernel),
        peak_bytes_per_s=_peak_dram_bandwidth(kernel, arch),
        peak_flops_per_s=peak_flops,
        launch_floor_ns=float(arch.get("launch_floor_ns", math.nan)),
        labels=labels,
    )


def _unit_throughputs(kernel: KernelProfile, fill: float) -> tuple[dict[str, float], dict[str, str]]:
    """Each unit's throughput (% of peak) and the metric it comes from; the units measured
    while active scaled by the share of SMs with a block (``fill``)."""
    units: dict[str, float] = {}
    sources: dict[str, str] = {}
    for unit, (_, metric, active) in UNIT_METRICS.items():
        value = kernel.m(metric)
        if unit == "l1tex" and value is None:
            metric, value = L1_FALLBACK, kernel.m(L1_FALLBACK)
        if value is not None and not math.isinf(value):
            units[unit] = max(0.0, value * (fill if active else 1.0))
            sources[unit] = metric + (f" x {fill:.3f} (share of SMs with a block)" if active and fill < 1.0 else "")
    return units, sources


def _sm_clock(kernel: KernelProfile) -> float | None:
    """The measured SM clock (Hz), else the boost clock (peaks become upper bounds)."""
    clock = kernel.m("sm__cycles_elapsed.avg.per_second")
    if clock is not None and clock > 0:
        return clock
    khz = kernel.m("device__attribute_clock_rate")
    return khz * 1e3 if khz is not None and khz > 0 else None


def _peak_flops(kernel: KernelProfile, arch: ArchConstants, clock: float | None) -> dict[str, float]:
    """Peak FLOP/s per precision: the architecture's per-SM-cycle peaks (none without a
    measured SM count and clock), then ncu's own per-cycle FMA peaks for fp32 and fp64."""
    sms = kernel.sm_count or kernel.m("launch__sm_count")
    peak_flops = {}
    for prec, per in arch.get("peak_flops_per_sm_cycle", {}).items():
        if per and sms and clock is not None:
            peak_flops[prec] = float(per) * float(sms) * clock
    for prec, metric in (
        ("fp32", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"),
        ("fp64", "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"),
    ):
        value = kernel.m(metric)
        if value is not None and value > 0 and clock is not None:
            peak_flops[prec] = 2.0 * value * clock  # ncu's own per-cycle FMA peak, whole GPU
    return peak_flops


def _flops(ctx: KernelContext) -> tuple[dict[str, float], str]:
    """FLOPs per precision (tensor ones from the SASS; fp32, fp64, fp16 from the counters,
    else the SASS) and where they came from."""
    cflops = counter_flops(ctx)
    sflops = sass_flops(ctx)
    flops = {precision: value for precision, value in sflops.items() if precision.startswith("tensor_")}
    for precision in ("fp32", "fp64", "fp16"):
        if precision in cflops:
            flops[precision] = cflops[precision]
        elif precision in sflops:
            flops[precision] = sflops[precision]
    src = "+".join(s for s, ok in (("counters", bool(cflops)), ("sass", bool(sflops))) if ok) or "none"
    return flops, src


def _tensor_share(flops: dict[str, float], peak_flops: dict[str, float], dur: float | None) -> float | None:
    """Achieved tensor FLOP/s over the dense peak, summed over operand types; None without a peak."""
    share = 0.0
    have_peak = False
    for precision, value in flops.items():
        if precision.startswith("tensor_") and value > 0 and precision in peak_flops and dur is not None and dur > 0:
            share += value / dur / peak_flops[precision]
            have_peak = True
    return share if have_peak else None


def _sm_throughput(kernel: KernelProfile, units: dict[str, float], sources: dict[str, str]) -> None:
    """Without per-pipe figures (e.g. ncu's basic set), the SM's overall throughput (the
    busiest of its sub-units, as ncu's SpeedOfLight section reports it) stands in."""
    value = kernel.m("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    if value is not None and not math.isinf(value):
        units["sm"], sources["sm"] = max(0.0, value), "sm__throughput.avg.pct_of_peak_sustained_elapsed"


def _dram_bytes(kernel: KernelProfile) -> float | None:
    """DRAM bytes moved: the total, else reads plus writes."""
    dram_bytes = kernel.m("dram__bytes.sum")
    if dram_bytes is not None:
        return dram_bytes
    read_bytes, write_bytes = kernel.m("dram__bytes_read.sum"), kernel.m("dram__bytes_write.sum")
    return read_bytes + write_bytes if read_bytes is not None and write_bytes is not None else None


def _peak_dram_bandwidth(kernel: KernelProfile, arch: ArchConstants) -> float | None:
    """Peak DRAM bytes/s: ncu's per-cycle peak at the DRAM clock, else the architecture's."""
    per_cycle, dram_clock = kernel.m("dram__bytes.sum.peak_sustained"), kernel.m("dram__cycles_elapsed.avg.per_second")
    peak_bw = per_cycle * dram_clock if per_cycle is not None and dram_clock is not None else None
    if peak_bw is None and arch.get("dram_bytes_per_s"):
        peak_bw = float(arch["dram_bytes_per_s"])
    return peak_bw
