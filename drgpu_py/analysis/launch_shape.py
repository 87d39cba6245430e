"""The launch-shape model: how a kernel's time depends on how its work is spread over SMs,
warps and lanes, and what a different launch would take.

Every launch finding (grid-too-small, partial-warps, block-too-small, occupancy-limited,
serial-kernel for a launch sequence, tail-effect) asks this model one what-if instead of a
formula of its own: :meth:`LaunchShape.what_if` for a different launch of the same work,
:meth:`LaunchShape.batched` for a sequence of launches as one grid, and
:meth:`LaunchShape.whole_waves` for the same work without a partial last wave.

The kernel's time T is split into bounds, each a share of T measured in the report:

* ``issue``: the busiest per-SM pipe, issue slots included, per cycle an SM is active;
  ``l1``: L1/shared throughput per cycle an SM is active;
* ``shared``: the busiest unit all SMs share (DRAM, L2) over its saturation share: its busy
  time does not change with the launch (the bytes stay);
* ``dispatch``: starting the blocks: blocks per SM x the chip's ``block_start_ns`` (measured:
  benchmarks/block_dispatch.cu); a kernel of a million tiny blocks is bound by it whatever
  the blocks do;
* ``latency``: the warps' own chains, the time warps spend issuing or waiting on their own
  dependencies (every warp state but contention: not selected, pipe and queue throttles,
  dispatch). With C warps per scheduler, C of those chains overlap (Little's law), so this
  bound is (1 - contention share) of T;

Bounds overlap imperfectly: the time is their p-norm (p = ``launch_overlap_norm``), between
their sum and their largest, and a what-if's speedup is the ratio of the p-norms before and
after (the model is asked for a change, not for the absolute time).

A what-if changes the per-SM share of the work (``k_sm``: more SMs used), the resident
warps per scheduler (``k_warps``), and the warp instructions per unit of work (``k_inst``:
warps with more lanes filled). Per-SM bounds scale with the per-SM work, the latency bound
with the per-SM work over the resident warps, never below one warp's own chain (the work a
warp does cannot be split unless a loop stepped by the launch's dimensions shares it out);
the shared units keep their time; the launch floor stays. A change that only moves the
bottleneck to a unit already near its peak buys little.

Work that exists: a grid-stride or block-stride loop (``sass.dataflow.launch_strided_loops``)
has iterations that more threads would take over (up to one iteration per warp); without
one, each thread's work is fixed by the launch, and a re-launch can only spread the same
threads over more SMs (smaller blocks).

Contract: :func:`launch_shape_of` is pure (``ctx``, ``sol`` in; a frozen :class:`LaunchShape`
out, or None without the launch metrics); :meth:`LaunchShape.what_if` is pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..sass.dataflow import launch_strided_loops, splittable_loops
from .context import KernelContext
from .sol import UNIT_METRICS, SpeedOfLight, grid_and_sms

#: warp states in which a ready warp waits for a shared resource, not for its own work:
#: fewer warps per scheduler (or less work per SM) shrink them
CONTENTION_REASONS = (
    "not_selected",
    "math_pipe_throttle",
    "mio_throttle",
    "lg_throttle",
    "tex_throttle",
    "dispatch_stall",
)
#: per-SM pipes (per active cycle, sol.units) and the units all SMs share
SM_PIPES = ("issue", "fma", "alu", "fp64", "xu", "lsu", "tensor")
SHARED_UNITS = ("dram", "lts")
#: what limits the blocks resident per SM, each with ncu's metric, in the order ties resolve
OCCUPANCY_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "block size": "launch__occupancy_limit_warps",
    "blocks per SM": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers",
}
#: work splits whose loop iterations more threads could take over
SPLIT_LOOPS = ("grid-stride", "block-stride", "loop-split")


@dataclass(frozen=True)
class WhatIf:
    """A launch the model was asked about and what it predicts."""

    speedup: float
    limited_by: str  # the bound that binds after the change
    active_sms: float
    warps_per_scheduler: float

    @property
    def saved_share(self) -> float:
        """The share of today's time the change saves: 1 - 1/speedup."""
        return 1.0 - 1.0 / self.speedup

    def to_dict(self) -> dict[str, float | str]:
        return {
            "speedup": round(self.speedup, 3),
            "limited_by": self.limited_by,
            "active_sms": round(self.active_sms, 1),
            "warps_per_scheduler": round(self.warps_per_scheduler, 2),
        }


@dataclass(frozen=True)
class LaunchShape:
    blocks: float
    threads_per_block: int
    warps_per_block: int
    lanes_per_warp: float
    sms: float
    active_sms: float  # SMs with work, on average over the kernel's time
    warps_per_scheduler: float  # achieved, per active cycle
    max_warps_per_scheduler: float  # the hardware's limit
    theoretical_warps_per_scheduler: float  # with today's limiters
    blocks_per_sm_limits: dict[str, float]
    work_split: str  # SPLIT_LOOPS | "per-thread" | "unknown" (no SASS)
    iterations_per_warp: float | None  # of the strided loop, where one exists
    bounds: dict[str, float] = field(default_factory=dict)  # share of T per bound (above)
    overlap_norm: float = 1.5  # how the bounds combine (thresholds: launch_overlap_norm)
    floor_share: float = 0.0  # launch floor / T
    schedulers_per_sm: int = 4  # the chip's (specs/arch)
    waves: float | None = None  # ncu's waves per SM (launch__waves_per_multiprocessor)
    unit_pcts: dict[str, float] = field(default_factory=dict)  # measured units, % of peak (sol.units)

    @property
    def max_warps_per_sm(self) -> float:
        return self.max_warps_per_scheduler * self.schedulers_per_sm

    @property
    def limiter(self) -> str | None:
        """The limit reached first (the first of a tie in OCCUPANCY_LIMITS' order)."""
        limits = self.blocks_per_sm_limits
        return min(limits, key=limits.__getitem__) if limits else None

    @property
    def binding(self) -> str:
        return max(self.bounds, key=self.bounds.__getitem__) if self.bounds else "latency"

    @property
    def warps(self) -> float:
        return self.blocks * self.warps_per_block

    def work_warps(self) -> float:
        """Busy warps the work could give: every warp today, times its strided loop's
        iterations where one shares the work out."""
        iters = self.iterations_per_warp if self.work_split in SPLIT_LOOPS else None
        return self.warps * max(1.0, iters or 1.0)

    def what_if(
        self,
        *,
        active_sms: float,
        warps_per_scheduler: float,
        k_inst: float = 1.0,
        blocks: float | None = None,
        k_l1: float = 1.0,
    ) -> WhatIf:
        """The time of a launch that uses ``active_sms`` SMs with ``warps_per_scheduler``
        resident warps each, issuing ``k_inst`` times today's warp instructions and moving
        ``k_l1`` times today's L1/shared traffic for the work, in ``blocks`` blocks (today's
        count when None)."""
        active_sms = max(1.0, min(active_sms, self.sms or active_sms))
        c_new = max(0.25, min(warps_per_scheduler, self.max_warps_per_scheduler))
        k_sm = self.active_sms / active_sms
        k_warps = c_new / max(self.warps_per_scheduler, 1e-9)
        b = self.bounds
        new = {
            "issue": b.get("issue", 0.0) * k_sm * k_inst,
            "l1": b.get("l1", 0.0) * k_sm * k_l1,
            "shared": b.get("shared", 0.0),
            "dispatch": b.get("dispatch", 0.0)
            * _blocks_per_sm(blocks or self.blocks, self.sms)
            / _blocks_per_sm(self.blocks, self.sms),
        }
        latency = b.get("latency", 0.0)
        # One warp's own chain is the floor unless a strided loop spreads its iterations.
        rounds = max(1.0, self.warps / max(1e-9, self.active_sms * self.schedulers_per_sm * self.warps_per_scheduler))
        splits = self.iterations_per_warp if self.work_split in SPLIT_LOOPS else None
        chain = latency / (rounds * max(1.0, splits or 1.0))
        new["latency"] = max(latency * k_sm * k_inst / k_warps, chain)
        time, limited_by = self._time_of(new)
        return WhatIf(max(1.0, 1.0 / time), limited_by, active_sms, c_new)

    def _time_of(self, new: dict[str, float]) -> tuple[float, str]:
        """(the time the bounds ``new`` give, as a share of today's, never below the launch
        floor; the bound that binds)."""
        time = max(
            _overlap(new, self.overlap_norm) / max(1e-9, _overlap(self.bounds, self.overlap_norm)), self.floor_share
        )
        if not time > 0:
            # No positive bound and no launch floor (metrics that are absent, zero or
            # negative in a damaged report): nothing to scale, so the change keeps today's time.
            return 1.0, "no bound measured"
        return time, "launch floor" if time == self.floor_share else max(new, key=new.__getitem__)

    def tail_speedup(self) -> float | None:
        """The same work spread evenly over the SMs instead of ``waves`` waves whose last one
        fills part of the GPU (a grid of whole waves, or a grid-stride loop). With F = ceil(W)
        waves of time T each, the blocks of the partial last wave (a fraction f of a wave) run
        alone: the part of T spent on units all SMs share (DRAM, L2 at utilisation u) shrinks
        to f of it, and with several resident blocks per SM the SM's own units are shared by
        fewer blocks too; the last wave takes T * max(f, 1 - u). Even work takes W * T: the
        speedup is (F - 1 + max(f, 1 - u)) / W. A memory-bound kernel's tail costs little.
        None without a wave count of at least one."""
        waves = self.waves
        if waves is None or not waves >= 1.0 or not self.sms:
            return None
        full = math.ceil(waves - 1e-9)
        last = waves - (full - 1)
        shared = [self.unit_pcts[u] for u in SHARED_UNITS if u in self.unit_pcts]
        if self.blocks / (waves * self.sms) > 1.5:
            shared += [v for u, v in self.unit_pcts.items() if u not in SHARED_UNITS]
        tail = max(last, 1.0 - min(100.0, max(shared or [0.0])) / 100.0)
        return (full - 1 + tail) / waves

    def whole_waves(self) -> WhatIf | None:
        """:meth:`tail_speedup` as a what-if, at most what the busiest unit allows."""
        speed = self.tail_speedup()
        if speed is None:
            return None
        busiest = max((v for v in self.unit_pcts.values() if v > 0), default=0.0)
        limited_by = "last wave"
        if busiest > 0 and 100.0 / busiest < speed:
            speed, limited_by = 100.0 / busiest, "busiest unit"
        return WhatIf(max(1.0, speed), limited_by, self.sms, self.warps_per_scheduler)

    def batched(self, launches: int) -> WhatIf:
        """``launches`` launches of this grid as one grid of ``launches`` x ``blocks`` blocks
        (the pieces independent): the SMs share out all the blocks, the resident warps grow
        with the blocks each SM gets, DRAM and L2 move every launch's bytes, and one launch
        floor is paid instead of one per launch. The speedup is over the sequence."""
        n = max(1, launches)
        active_now = max(1.0, min(self.sms, self.blocks))
        active_new = max(1.0, min(self.sms, n * self.blocks))
        k_sm = (n * self.blocks / active_new) / (self.blocks / active_now)
        c_new = min(self.theoretical_warps_per_scheduler, self.warps_per_scheduler * k_sm)
        k_warps = c_new / max(self.warps_per_scheduler, 1e-9)
        b = self.bounds
        new = {
            "issue": b.get("issue", 0.0) * k_sm,
            "l1": b.get("l1", 0.0) * k_sm,
            "shared": b.get("shared", 0.0) * n,
            "dispatch": b.get("dispatch", 0.0)
            * _blocks_per_sm(n * self.blocks, self.sms)
            / _blocks_per_sm(self.blocks, self.sms),
            "latency": b.get("latency", 0.0) * k_sm / max(k_warps, 1e-9),
        }
        time, limited_by = self._time_of(new)
        return WhatIf(max(1.0, n / time), limited_by, active_new, c_new)


def _blocks_per_sm(blocks: float, sms: float) -> float:
    return max(1.0, math.ceil(blocks / sms)) if sms > 0 else 1.0


def _overlap(bounds: dict[str, float], norm: float) -> float:
    """The time the bounds give together: their ``norm``-norm, between their sum (no
    overlap, 1) and their largest (perfect overlap, infinity)."""
    return float(sum(v**norm for v in bounds.values() if v > 0) ** (1.0 / norm)) if bounds else 1.0


def occupancy_limits(ctx: KernelContext) -> dict[str, float]:
    """Blocks per SM each limit allows (OCCUPANCY_LIMITS), the measured ones."""
    values = {name: ctx.kernel.m(metric) for name, metric in OCCUPANCY_LIMITS.items()}
    return {name: v for name, v in values.items() if v is not None}


def launch_shape_of(ctx: KernelContext, sol: SpeedOfLight | None) -> LaunchShape | None:
    """The model's inputs for one kernel; None without a grid, block or SM count."""
    kernel = ctx.kernel
    blocks, sms = grid_and_sms(ctx)
    tpb, wpb = kernel.threads_per_block, kernel.warps_per_block
    if not blocks or not sms or tpb is None or wpb is None:
        return None
    schedulers = int(ctx.arch.get("schedulers_per_sm", 4))
    max_warps = kernel.m("device__attribute_max_warps_per_multiprocessor", ctx.arch["max_warps_per_sm"])
    theo_pct = kernel.m("sm__maximum_warps_per_active_cycle_pct")
    theo = (theo_pct / 100.0 * max_warps if theo_pct is not None else max_warps) / schedulers
    measured_share = kernel.active_share
    active_frac = measured_share if measured_share is not None else min(1.0, blocks / sms)
    active_sms = max(1.0, min(sms, blocks))
    achieved = kernel.m("smsp__warps_active.avg.per_cycle_active")
    if achieved is None or achieved <= 0:
        achieved = min(theo, blocks * wpb / (active_sms * schedulers))
    limits = occupancy_limits(ctx)
    split, iters = _work_split(ctx, blocks * wpb)
    bounds = _bounds(ctx, active_frac, achieved)
    start_ns = ctx.arch.get("block_start_ns") or 0.0
    dur = kernel.duration_ns
    if start_ns > 0 and dur and dur > 0:
        bounds["dispatch"] = min(1.0, _blocks_per_sm(blocks, sms) * start_ns / dur)
    floor = sol.launch_floor_ns if sol is not None else math.nan
    waves = kernel.m("launch__waves_per_multiprocessor")
    floor_share = floor / dur if dur and not math.isnan(floor) and dur > 0 else 0.0
    return LaunchShape(
        blocks=blocks,
        threads_per_block=tpb,
        warps_per_block=wpb,
        lanes_per_warp=tpb / wpb,
        sms=sms,
        active_sms=active_sms,
        warps_per_scheduler=achieved,
        max_warps_per_scheduler=max_warps / schedulers,
        theoretical_warps_per_scheduler=theo,
        blocks_per_sm_limits=limits,
        work_split=split,
        iterations_per_warp=iters,
        bounds=bounds,
        overlap_norm=float(ctx.th["launch_overlap_norm"]),
        floor_share=min(1.0, floor_share),
        schedulers_per_sm=schedulers,
        waves=waves,
        unit_pcts={unit: pct for unit, pct in ctx.units.items() if pct is not None},
    )


def _bounds(ctx: KernelContext, active_frac: float, achieved: float) -> dict[str, float]:
    # The pipes' counters are per cycle an SM is active (sol.units scales them to the whole GPU).
    pipes = [ctx.kernel.m(UNIT_METRICS[u][1]) for u in SM_PIPES if u in UNIT_METRICS]
    measured = [p for p in pipes if p is not None]
    issue = max(measured) / 100.0 if measured else min(1.0, ctx.frac("selected") * achieved)
    l1 = ctx.units.get("l1tex")
    l1_share = l1 / 100.0 / max(active_frac, 1e-6) if l1 is not None else 0.0
    shared = [v for v in (ctx.units.get(u) for u in SHARED_UNITS) if v is not None]
    shared_share = max(shared, default=0.0) / ctx.th["saturation_pct"]
    latency = 1.0 - ctx.frac(*CONTENTION_REASONS) if ctx.total > 0 else 1.0
    bounds = {
        "issue": min(1.0, issue),
        "l1": min(1.0, l1_share),
        "shared": min(1.0, shared_share),
        "latency": min(1.0, max(0.0, latency)),
    }
    return bounds


def _work_split(ctx: KernelContext, warps: float) -> tuple[str, float | None]:
    """How the kernel's work is shared out, by its hottest loop whose iterations other threads
    could take: one stepped by the launch's dimensions (grid- or block-stride), else one whose
    iterations are independent but for counters and accumulators (``loop-split``: a per-thread
    sum more threads would share, combining after); its iterations per warp from the
    executed-instruction counts. Without such a loop each thread's work is fixed
    (``per-thread``); ``unknown`` without SASS."""
    cfg = ctx.cfg
    if cfg is None or not ctx.insts:
        return "unknown", None
    strided = launch_strided_loops(cfg)
    independent = splittable_loops(cfg)
    executed = ctx.executed()
    best: tuple[float, str, float | None] | None = None
    for loop in cfg.loops:
        kinds = strided.get(loop.header)
        if not kinds and loop.header not in independent:
            continue
        body = cfg.loop_instructions(loop)
        total = sum(v for v in (executed.get(cfg.insts[j].pc, math.nan) for j in body) if not math.isnan(v))
        head = executed.get(cfg.insts[cfg.blocks[loop.header].start].pc, math.nan)
        iters = head / warps if warps > 0 and not math.isnan(head) else None
        kind = "grid-stride" if kinds and "grid" in kinds else "block-stride" if kinds else "loop-split"
        if best is None or total > best[0]:
            best = (total, kind, iters)
    if best is None:
        return "per-thread", None
    return best[1], best[2]
