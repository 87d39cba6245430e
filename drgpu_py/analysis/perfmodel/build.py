"""Building the model of one kernel from its context and speed of light.

Contract: ``kernel_model(ctx, sol) -> KernelModel`` is a pure function of a
:class:`KernelContext` (SASS, CFG, per-PC executed counts, occupancy, cycles, hit rates,
bytes) and its :class:`SpeedOfLight`: the instruction mix, each loop simulated (sim.py;
within the ``model_budget_instructions`` threshold, the loops with the most executed
instructions first, and a ``KernelModel.notes`` entry when loops are left out), the kernel
terms and bottleneck (core.py) and the default what-ifs (whatif.py). Its parts are public
where others read them: ``counters_verdict(ctx, sol)`` (the counters' own verdict),
``constant_stream_misses`` (immediate-constant-cache misses of a loop walking constant
memory), ``access_bytes(ins)`` (bytes per lane of a memory instruction).
"""

from __future__ import annotations

import math
import re

from ...sass.cfg import Loop
from ...specs.records import ConstantCache
from ...sass.isa import Instruction
from ..budget import budget_note
from ..context import KernelContext
from ..sol import SpeedOfLight, grid_and_sms, sass_flops
from .core import KernelModel, LoopModel, evaluate_terms, executed_count
from .sim import pipe_of, simulate
from .whatif import default_what_ifs, loop_control, loop_invariant


USEFUL_CLASSES = ("fp32", "fp64", "fp16", "tensor", "sfu", "memory")


def counters_verdict(ctx: KernelContext, sol: SpeedOfLight | None) -> str | None:
    """The counters' own answer: launch for a kernel shorter than ``launch_bound_us``; the
    speed-of-light limiter when it reaches ``bound_pct``
    (memory units and the LSU pipe -> memory, the others -> compute), else the top stall
    reason (wait -> ilp; scoreboards and memory throttles -> latency)."""
    dur = ctx.kernel.duration_ns
    if dur and dur < ctx.th["launch_bound_us"] * 1000.0:
        return "launch"
    if (
        sol is not None
        and sol.limiter is not None
        and sol.limiter_pct is not None
        and sol.limiter_pct >= ctx.th["bound_pct"]
    ):
        return "memory" if sol.limiter in ("dram", "lts", "l1tex", "lsu") else "compute"
    stalls = {r: v for r, v in ctx.reasons.items() if r != "selected" and v > 0}
    if not stalls:
        return None
    top = max(stalls, key=stalls.__getitem__)
    if top == "wait":
        return "ilp"
    if top in ("long_scoreboard", "short_scoreboard", "lg_throttle", "tex_throttle", "drain", "imc_miss"):
        return "latency"
    if top in ("math_pipe_throttle", "mio_throttle", "dispatch_stall", "not_selected"):
        return "compute"
    return top


def _global_latency(ctx: KernelContext, lat: dict[str, float]) -> float:
    """Expected global-load latency from the measured L1 and L2 hit rates. A hit rate the
    report lacks is taken as all hits, the shortest latency: a what-if that hides or removes
    load latency (unroll, hoist, more warps) gains nothing from a latency the report does not
    measure, where misses would make the same change look stronger."""
    kernel = ctx.kernel
    hit1 = kernel.m("l1tex__t_sector_hit_rate.pct")
    hit2 = kernel.m("lts__t_sector_hit_rate.pct")
    h1 = 1.0 if hit1 is None else min(max(hit1 / 100.0, 0.0), 1.0)
    h2 = 1.0 if hit2 is None else min(max(hit2 / 100.0, 0.0), 1.0)
    l1, l2, dram = (float(lat.get(x, d)) for x, d in (("l1", 33), ("l2", 200), ("dram", 500)))
    return h1 * l1 + (1.0 - h1) * (h2 * l2 + (1.0 - h2) * dram)


_CONST_REF = re.compile(r"c\[(0x[0-9a-fA-F]+)\]\[(U?R\d+)\s*(?:\+\s*(-?0x[0-9a-fA-F]+|-?\d+))?\]")


def _steps(insts: list[Instruction], body: list[int]) -> dict[str, int]:
    """Registers the loop steps by a constant each iteration (r = r + imm, its only write in
    the body): register -> bytes per iteration."""
    writes: dict[str, int] = {}
    for idx in body:
        for reg in insts[idx].defs:
            writes[reg] = writes.get(reg, 0) + 1
    out: dict[str, int] = {}
    for idx in body:
        ins = insts[idx]
        regs = [r for r in ins.defs if not r.startswith(("P", "UP"))]
        if (
            ins.opcode not in ("IADD3", "VIADD", "IADD", "UIADD3")
            or ins.guard
            or len(regs) != 1
            or regs[0] not in ins.uses
            or writes[regs[0]] != 1
        ):
            continue
        imms = [o for o in ins.operands[1:] if re.fullmatch(r"-?0x[0-9a-fA-F]+|-?\d+", o)]
        others = [o for o in ins.operands[1:] if o not in imms and o != regs[0] and o not in ("RZ", "URZ")]
        if imms and not others:
            out[regs[0]] = sum(int(v, 0) for v in imms)
    return out


def constant_stream_misses(
    insts: list[Instruction], body: list[int], trips: float, cache: ConstantCache, miss: float
) -> dict[int, float]:
    """Immediate-constant-cache misses of a loop that walks constant memory: constant operands
    c[bank][r + imm] whose register r steps by s bytes per iteration. When the bytes one pass
    of the loop reads (|s| x ``trips``, its iterations per entry) exceed the cache
    (``cache['bytes']``), every line comes back from the next level on each pass: the first
    reference to each line in an iteration misses, ``miss`` cycles, once per line of the
    |s| bytes the iteration advances (a stride below a line misses every line/|s|
    iterations). Instruction index -> miss cycles per iteration; empty when the pass fits."""
    line = float(cache.get("line_bytes") or 0)
    size = float(cache.get("bytes") or 0)
    if not (line > 0 and size > 0 and miss > 0 and trips > 0):
        return {}
    steps = _steps(insts, body)
    out: dict[int, float] = {}
    seen: set[tuple[str, str, int]] = set()
    for idx in body:
        for bank, reg, off in _CONST_REF.findall(insts[idx].text):
            stride = abs(steps.get(reg, 0))
            if not stride or stride * trips <= size:
                continue
            key = (bank, reg, (int(off, 0) if off else 0) // int(line))
            if key in seen:
                continue
            seen.add(key)
            out[idx] = out.get(idx, 0.0) + miss * min(1.0, stride / line)
    return out


def _entries(ctx: KernelContext, lp: Loop, executed: dict[int, float]) -> float:
    """Times a loop is entered: executions of the last instruction of each block outside the
    loop that leads to its header (0 when unknown)."""
    cfg, insts = ctx.cfg, ctx.insts
    if cfg is None:
        return 0.0
    return sum(
        (
            executed_count(executed, insts[cfg.blocks[b].end - 1].pc)
            for b in cfg.blocks[lp.header].preds
            if b not in lp.blocks and cfg.blocks[b].end > cfg.blocks[b].start
        ),
        0.0,
    )


def _within_budget(
    loops: list[tuple[Loop, list[int], float, float]], budget: int
) -> tuple[list[tuple[Loop, list[int], float, float]], int, float]:
    """The loops (loop, its own instructions, iterations, executed) to simulate: all when their
    instructions fit the budget, else those with the most executed instructions while they
    fit (the first always), in their listing order (as an unbounded run orders them); with
    the count of loops left out and their share of the loops' executed instructions."""
    if sum(len(idxs) for _, idxs, _, _ in loops) <= budget:
        return loops, 0, 0.0
    order = sorted(range(len(loops)), key=lambda i: -loops[i][3])
    kept: set[int] = set()
    used = 0
    for i in order:
        size = len(loops[i][1])
        if kept and used + size > budget:
            continue
        kept.add(i)
        used += size
    total = sum(ex for _, _, _, ex in loops)
    left = sum(loops[i][3] for i in range(len(loops)) if i not in kept)
    return [loops[i] for i in sorted(kept)], len(loops) - len(kept), (left / total if total > 0 else 0.0)


def kernel_model(ctx: KernelContext, sol: SpeedOfLight | None) -> KernelModel:  # noqa: PLR0915 - the model's terms gathered in one place, in the order docs/model.md gives them
    kernel, cfg = ctx.kernel, ctx.cfg
    if cfg is None or not ctx.insts:
        return KernelModel(
            available=False, reason="no SASS in the report for this kernel (collect the SourceCounters section)"
        )
    executed = ctx.executed()
    total = sum(v for v in executed.values() if v == v)
    if not total > 0:
        return KernelModel(
            available=False, reason="no executed-instruction counts for the SASS (SourceCounters' inst_executed)"
        )
    arch = ctx.arch
    lat = dict(arch.get("latency") or {})
    rates = {p: float(v) for p, v in (arch.get("pipe_rate") or {}).items() if v}
    # No constant cache in the arch data: a size of 0, for which no loop misses.
    cache = arch.get("constant_cache") or ConstantCache(bytes=0, line_bytes=0)
    g_lat = _global_latency(ctx, lat)
    insts, cls = ctx.insts, ctx.classes
    model = KernelModel(
        available=True,
        global_latency=g_lat,
        pipe_rate=rates,
        inst_total=total,
        ctx=ctx,
        f2f64_pipe=str(arch.get("f2f64_pipe", "fp64")),
        overlap_norm=float(arch.get("latency_issue_norm") or math.inf),
    )
    # Instruction mix and efficiency, whole kernel.
    by_cls: dict[str, float] = {}
    pipes: dict[str, float] = {}
    bytes_ = 0.0
    threads = (
        dict(zip(ctx.df.index.tolist(), ctx.df["thread_inst_executed"].tolist()))
        if "thread_inst_executed" in ctx.df
        else {}
    )
    for ins, ins_class in zip(insts, cls):
        count = executed_count(executed, ins.pc)
        if count <= 0:
            continue
        by_cls[ins_class] = by_cls.get(ins_class, 0.0) + count
        pipe = pipe_of(ins, model.f2f64_pipe)
        if pipe is not None:
            pipes[pipe] = pipes.get(pipe, 0.0) + count
        if ins.is_memory() and ins.opcode not in ("LDC", "ULDC"):
            tn = threads.get(ins.pc)
            lanes = float(tn) if tn is not None and tn == tn else 32.0 * count
            bytes_ += lanes * access_bytes(ins)
    flops = sum(v for v in sass_flops(ctx).values())
    model.mix = {c: round(v / total, 4) for c, v in sorted(by_cls.items(), key=lambda kv: -kv[1])}
    useful = sum(v for c, v in by_cls.items() if c in USEFUL_CLASSES)
    model.instruction_efficiency = {
        "useful_share": round(useful / total, 4),
        "flops_per_instruction": round(flops / total, 3),
        "bytes_per_instruction": round(bytes_ / total, 3),
    }
    model.pipe_counts = pipes
    # Loops: each instruction belongs to its innermost loop. The simulation is the costly
    # part; within the budget every loop is simulated, past it those that hold the most
    # executed instructions (see _within_budget).
    in_loop: set[int] = set()
    loops: list[tuple[Loop, list[int], float, float]] = []
    for lp in cfg.loops:
        idxs = [j for j in cfg.loop_instructions(lp) if cfg.innermost_loop(j) is lp]
        in_loop.update(cfg.loop_instructions(lp))
        head = cfg.blocks[lp.header].start
        iters = executed_count(executed, insts[head].pc) or max(
            (executed_count(executed, insts[j].pc) for j in idxs), default=0.0
        )
        if iters <= 0 or not idxs:
            continue
        ex = sum(executed_count(executed, insts[j].pc) for j in idxs)
        loops.append((lp, idxs, iters, ex))
    budget = int(ctx.th["model_budget_instructions"])
    loops, left, left_share = _within_budget(loops, budget)
    if left:
        model.notes.append(budget_note("model", budget, left, left_share))
    for lp, idxs, iters, ex in loops:
        head = cfg.blocks[lp.header].start
        body = [j for j in idxs if executed_count(executed, insts[j].pc) >= 0.5 * iters]
        lmix: dict[str, float] = {}
        for idx in idxs:
            lmix[cls[idx]] = lmix.get(cls[idx], 0.0) + executed_count(executed, insts[idx].pc)
        entries = _entries(ctx, lp, executed)
        misses = constant_stream_misses(
            insts, body, iters / entries if entries > 0 else iters, cache, float(lat.get("constant_miss", 0))
        )
        dep = simulate(insts, body, lat, g_lat, issue_gap=0.0, control=ctx.control, branch=0.0, blocking=misses)
        one = simulate(insts, body, lat, g_lat, issue_gap=1.0, control=ctx.control, blocking=misses)
        model.loops.append(
            LoopModel(
                header_pc=insts[head].pc,
                depth=lp.depth,
                body=body,
                iterations=iters,
                executed=ex,
                mix={c: round(v / ex, 4) for c, v in sorted(lmix.items(), key=lambda kv: -kv[1])} if ex > 0 else {},
                useful_share=round(sum(v for c, v in lmix.items() if c in USEFUL_CLASSES) / ex, 4) if ex > 0 else 0.0,
                issue_per_iteration=ex / iters,
                critical_path_cycles=dep.cycles,
                single_warp_cycles=one.cycles,
                chain=one.chain or dep.chain,
                chain_memory=one.chain_memory,
                control_pcs=[insts[j].pc for j in loop_control(insts, body)],
                invariant=loop_invariant(insts, body),
                constant_misses=misses,
            )
        )
    model.loops.sort(key=lambda lm: -lm.executed)
    # Straight-line code: once per warp.
    entry = executed_count(executed, insts[0].pc)
    model.warps_launched = _warps_launched(ctx, entry)
    straight = [
        j for j in range(len(insts)) if j not in in_loop and executed_count(executed, insts[j].pc) >= 0.5 * entry > 0
    ]
    straight_sim = simulate(insts, straight, lat, g_lat, issue_gap=1.0, control=ctx.control, loop=False)
    model.straight_cycles = straight_sim.cycles
    # Occupancy and the busiest scheduler's share of the warps.
    blocks, sms = _grid(ctx)
    wpb = max(1.0, kernel.warps_per_block or 1)
    per_sm_share = blocks / sms if blocks and sms else 1.0
    # A damaged report's grid or SM count can make the share infinite or NaN: one block then.
    per_sm = math.ceil(per_sm_share) if math.isfinite(per_sm_share) else 1.0
    model.warps_run_per_scheduler = max(1.0, math.ceil(per_sm * wpb / float(arch.get("schedulers_per_sm", 4))))
    warps_active = kernel.m("smsp__warps_active.avg.per_cycle_active")
    model.max_warps_per_scheduler = float(arch.get("max_warps_per_sm", 64)) / float(arch.get("schedulers_per_sm", 4))
    model.warps_per_scheduler = (
        min(warps_active, model.warps_run_per_scheduler)
        if warps_active is not None and warps_active > 0
        else min(model.warps_run_per_scheduler, model.max_warps_per_scheduler)
    )
    # Memory: DRAM bytes at peak bandwidth, or the L1/L2 units' measured work at their peak.
    model.measured_cycles = _measured_cycles(ctx, sol)
    model.memory_cycles, model.memory_source = _memory_cycles(sol, model.measured_cycles)
    model.tensor_cycles = _tensor_cycles(ctx, sol, blocks, sms)
    if sol is not None and sol.launch_floor_ns == sol.launch_floor_ns and sol.sm_clock_hz is not None:
        model.launch_cycles = sol.launch_floor_ns * 1e-9 * sol.sm_clock_hz
    model.verdict = counters_verdict(ctx, sol)
    evaluate_terms(model)
    model.what_if = default_what_ifs(model)
    return model


def _tensor_cycles(ctx: KernelContext, sol: SpeedOfLight | None, blocks: float, sms: float) -> float:
    """Tensor FLOPs (from the SASS) over the dense per-SM-cycle peak of each operand type,
    spread over the SMs that have a block."""
    if sol is None:
        return 0.0
    peaks = ctx.arch.get("peak_flops_per_sm_cycle") or {}
    active = min(blocks, sms) if blocks and sms else sms or 0.0
    if not active:
        return 0.0
    return sum(
        v / float(peaks[p]) / active for p, v in sol.flops.items() if p.startswith("tensor_") and v > 0 and peaks.get(p)
    )


def access_bytes(ins: Instruction) -> int:
    mods = set(ins.modifiers)
    for width, size in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if width in mods:
            return size
    return 4


def _grid(ctx: KernelContext) -> tuple[float, float]:
    return grid_and_sms(ctx)


def _warps_launched(ctx: KernelContext, entry: float) -> float:
    kernel = ctx.kernel
    blocks, _ = _grid(ctx)
    warps = kernel.warps_per_block
    if blocks and warps:
        return blocks * warps
    return entry


def _measured_cycles(ctx: KernelContext, sol: SpeedOfLight | None) -> float:
    kernel = ctx.kernel
    elapsed = kernel.m("sm__cycles_elapsed.avg")
    if elapsed is not None and elapsed > 0:
        return elapsed
    clock = sol.sm_clock_hz if sol is not None else None
    duration = kernel.duration_ns
    return duration * 1e-9 * clock if duration and clock is not None else math.nan


def _memory_cycles(sol: SpeedOfLight | None, measured: float) -> tuple[float, str]:
    best, src = 0.0, "none"
    if (
        sol is not None
        and sol.dram_bytes is not None
        and sol.peak_bytes_per_s is not None
        and sol.peak_bytes_per_s > 0
        and sol.sm_clock_hz is not None
        and sol.sm_clock_hz > 0
    ):
        best, src = sol.dram_bytes / sol.peak_bytes_per_s * sol.sm_clock_hz, "dram bytes / peak bandwidth"
    if sol is not None and measured == measured:
        for unit in ("lts", "l1tex"):
            unit_pct = sol.units.get(unit)
            if unit_pct is not None and unit_pct == unit_pct and unit_pct / 100.0 * measured > best:
                best, src = unit_pct / 100.0 * measured, f"{sol.labels.get(unit, unit)} measured work at its peak"
    return best, src
