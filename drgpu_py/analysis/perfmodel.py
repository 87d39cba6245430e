"""Static SASS performance model: what the code could achieve, from its instructions.

Contract: ``kernel_model(ctx, sol) -> KernelModel`` is a pure function of a
:class:`KernelContext` (its SASS, CFG, per-PC executed counts, a few counters: occupancy,
cycles, hit rates, bytes) and its speed of light (sol.py). A kernel without SASS (or without executed
counts) gets a model with ``available = False`` and a ``reason``. Latencies and pipe rates
are ``specs/arch/*.yaml`` ``latency`` and ``pipe_rate``. ``what_if(model, change, **p)``
re-evaluates the same model with a changed hot loop or occupancy.

Method (per-loop single-warp simulation, kernel terms, bottleneck), what it leaves out and
how to read the gap to the measured cycles: docs/model.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from ..profile import ControlCode
from ..sass.control import sets_barriers, waits_on
from ..sass.isa import Instruction
from .context import KernelContext
from .sol import SpeedOfLight, grid_and_sms, sass_flops

USEFUL_CLASSES = ("fp32", "fp64", "fp16", "tensor", "sfu", "memory")
VERDICTS = ("ilp", "latency", "compute", "memory", "launch")
_SIM_ITERATIONS = 12
_FMA_OPS = {
    "FFMA",
    "FADD",
    "FMUL",
    "IMAD",
    "IMUL",
    "HFMA2",
    "HADD2",
    "HMUL2",
    "IDP",
    "FFMA2",
    "FADD2",
    "FMUL2",
    "FSWZADD",
    "IMAD_WIDE",
}
_ALU_OPS = {
    "IADD3",
    "LOP3",
    "ISETP",
    "FSETP",
    "SHF",
    "LEA",
    "SEL",
    "FSEL",
    "FMNMX",
    "IMNMX",
    "PRMT",
    "MOV",
    "PLOP3",
    "P2R",
    "R2P",
    "VIADD",
    "VIMNMX",
    "BMSK",
    "ISCADD",
    "IABS",
    "FSET",
    "LOP",
    "IADD",
    "SHL",
    "SHR",
    "HSETP2",
    "HMNMX2",
    "FCHK",
    "VOTE",
    "CS2R",
}
_XU_OPS = {"MUFU", "F2F", "F2I", "I2F", "I2I", "F2FP", "I2FP", "F2IP", "FRND", "POPC", "FLO", "BREV"}
_TENSOR_OPS = {"HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "QGMMA", "IGMMA", "BGMMA"}


def pipe_of(ins: Instruction, f2f64_pipe: str = "fp64") -> str | None:
    """The issue pipe an instruction occupies (None: uniform datapath, branch unit, other).
    ``f2f64_pipe``: where the chip issues conversions to and from FP64 (specs/arch
    ``f2f64_pipe``). LDC is on the address divergence unit, not the load/store pipe (ncu's
    pipeline docs: the ADU serves constant loads), and has no rate here."""
    op = ins.opcode
    if op in _TENSOR_OPS:
        return "tensor"
    if ins.is_f2f64() and not ins.is_fp64():
        return f2f64_pipe
    if ins.is_fp64():
        return "fp64"
    if op == "LDC":
        return "adu"
    if op in _XU_OPS:
        return "xu"
    if ins.is_memory() or op in ("SHFL", "MATCH", "LDSM", "STSM"):
        return "lsu"
    if op in _FMA_OPS:
        return "fma"
    if op in _ALU_OPS:
        return "alu"
    return None


def latency_of(ins: Instruction, lat: dict, global_latency: float) -> float:
    """Cycles from an instruction's issue until its results can be read."""
    op = ins.opcode
    if ins.is_global_load() or op in ("ATOM", "ATOMG"):
        return global_latency
    if ins.is_local():
        return float(lat.get("l1", 33))
    if ins.is_shared() or op in ("LDC", "SHFL", "S2R", "S2UR", "LDSM", "MATCH", "REDUX"):
        return float(lat.get("shared", 23))
    if ins.is_mufu():
        return float(lat.get("mufu", 20))
    if ins.is_fp64() or ins.is_f2f64():
        return float(lat.get("fp64", 8))
    if op in _XU_OPS:
        return float(lat.get("conversion", lat.get("mufu", 20)))
    if op in _TENSOR_OPS:
        return float(lat.get("tensor", 32))
    if op.startswith(("F", "H")):
        return float(lat.get("fp32", 4))
    return float(lat.get("alu", lat.get("fp32", 4)))


def _memory_latency(ins: Instruction) -> bool:
    return ins.is_global_load() or ins.is_local() or ins.opcode in ("ATOM", "ATOMG")


# ---- single-warp simulation ---------------------------------------------------------------


@dataclass
class Sim:
    cycles: float  # cycles per iteration (steady state)
    chain: list[int]  # instruction indices on the critical chain, in order
    chain_memory: bool  # the chain waits on a memory-latency producer


def simulate(
    insts: list[Instruction],
    body: list[int],
    lat: dict,
    global_latency: float,
    issue_gap: float = 1.0,
    control: dict[int, ControlCode] | None = None,
    loop: bool = True,
    branch: float | None = None,
    blocking: dict[int, float] | None = None,
) -> Sim:
    """In-order issue of ``body`` (instruction indices) for a few iterations; per-iteration
    cycles in the steady state (the second half of the iterations) and the critical chain
    of the last iteration: from its last instruction back through the producers that held
    each instruction (an instruction held by issue order only continues at its predecessor).
    ``blocking``: cycles an instruction holds the warp after it issues (an immediate-constant
    cache miss: nothing issues until the line arrives), by instruction index."""
    if not body:
        return Sim(0.0, [], False)
    iters = _SIM_ITERATIONS if loop else 1
    branch = float(lat.get("branch", 0)) if branch is None else branch
    ready: dict[str, tuple[float, int]] = {}  # register/predicate/barrier -> (cycle, producer)
    t = -issue_gap
    marks = []
    last_held: list[tuple[int, int | None]] = []  # (index, producer that held it) in the last iteration
    for _ in range(iters):
        marks.append(t)
        last_held = []
        for pos, j in enumerate(body):
            ins = insts[j]
            at, held = t + issue_gap, None
            # Sorted: of producers ready at the same cycle the first key holds the
            # instruction, and a set's order of strings changes with the hash seed of each
            # process (the critical chain, hence the JSON, would change from run to run).
            keys = sorted(ins.uses)
            cw = control.get(ins.pc) if control else None
            if cw:
                keys += [f"B{b}" for b in waits_on(cw)]
            for key in keys:
                got = ready.get(key)
                if got is not None and got[0] > at:
                    at, held = got
            t = max(at, t + issue_gap)
            if blocking and j in blocking:
                t += blocking[j]
            done = t + latency_of(ins, lat, global_latency)
            for r in ins.defs:
                ready[r] = (done, j)
            if cw:
                wb, rb = cw.get("write_barrier"), cw.get("read_barrier")
                for b in sets_barriers(cw):
                    # A read barrier frees the source registers soon after issue.
                    ready[f"B{b}"] = (done if b == wb else t + float(lat.get("alu", 4)) if b == rb else done, j)
            last_held.append((j, held))
            if loop and ins.is_branch() and pos == len(body) - 1:
                t += branch
    marks.append(t)
    half = iters // 2
    cycles = (marks[-1] - marks[half]) / (iters - half) if loop else marks[-1] + issue_gap
    chain, chain_memory = _critical_chain(insts, last_held, blocking)
    # A warp held on constant misses for most of each iteration waits on memory, whichever
    # producer the last instruction's chain ends at.
    waited = sum(blocking.get(j, 0.0) for j in body) if blocking and loop else 0.0
    chain_memory = chain_memory or 2.0 * waited >= cycles > 0
    return Sim(max(0.0, cycles), list(dict.fromkeys(chain)), chain_memory)


def _critical_chain(
    insts: list[Instruction], last_held: list[tuple[int, int | None]], blocking: dict[int, float] | None
) -> tuple[list[int], bool]:
    """The critical chain of the last simulated iteration (see simulate) and whether it waits
    on a memory-latency producer (or one that held the warp on a constant miss)."""
    held_of = dict(last_held)
    order = [j for j, _ in last_held]
    chain, chain_memory = [], False
    pos = len(order) - 1
    seen = set()
    while pos >= 0 and order[pos] not in seen:
        j = order[pos]
        seen.add(j)
        p = held_of.get(j)
        if p is not None:
            chain.append(p)
            chain_memory = (
                chain_memory or _memory_latency(insts[p]) or insts[p].is_shared() or bool(blocking and p in blocking)
            )
            if p not in order:
                break
            nxt = order.index(p)
            if nxt >= pos:  # loop-carried: the producer is in the previous iteration
                break
            pos = nxt
        else:
            pos -= 1
    chain.reverse()
    return chain, chain_memory


# ---- the model ----------------------------------------------------------------------------


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
    instruction_efficiency: dict = field(default_factory=dict)
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
    what_if: list[dict] = field(default_factory=list)
    _ctx: KernelContext | None = field(default=None, repr=False, compare=False)

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


def counters_verdict(ctx: KernelContext, sol: SpeedOfLight | None) -> str | None:
    """The counters' own answer: launch for a kernel shorter than ``launch_bound_us``; the
    speed-of-light limiter when it reaches ``bound_pct``
    (memory units and the LSU pipe -> memory, the others -> compute), else the top stall
    reason (wait -> ilp; scoreboards and memory throttles -> latency)."""
    dur = ctx.kernel.duration_ns
    if dur == dur and dur and dur < ctx.th["launch_bound_us"] * 1000.0:
        return "launch"
    if sol is not None and sol.limiter is not None and sol.limiter_pct >= ctx.th["bound_pct"]:
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


def _count(executed: dict, pc: int) -> float:
    v = executed.get(pc)
    return float(v) if v is not None and v == v else 0.0


def _global_latency(ctx: KernelContext, lat: dict) -> float:
    """Expected global-load latency from the measured L1 and L2 hit rates (DRAM when unknown)."""
    k = ctx.kernel
    h1 = k.m("l1tex__t_sector_hit_rate.pct")
    h2 = k.m("lts__t_sector_hit_rate.pct")
    h1 = 0.0 if math.isnan(h1) else min(max(h1 / 100.0, 0.0), 1.0)
    h2 = 0.0 if math.isnan(h2) else min(max(h2 / 100.0, 0.0), 1.0)
    l1, l2, dram = (float(lat.get(x, d)) for x, d in (("l1", 33), ("l2", 200), ("dram", 500)))
    return h1 * l1 + (1.0 - h1) * (h2 * l2 + (1.0 - h2) * dram)


def _loop_control(insts: list[Instruction], body: list[int]) -> list[int]:
    """The back edge's branch and the integer instructions that only feed its predicate
    (compare, counter increment): what unrolling by k removes k - 1 times of k."""
    if not body or not insts[body[-1]].is_branch():
        return []
    out = [body[-1]]
    need = set(insts[body[-1]].uses)
    for j in reversed(body[:-1]):
        ins = insts[j]
        if ins.defs & need and ins.opcode in ("ISETP", "IADD3", "VIADD", "UISETP", "UIADD3", "IADD"):
            # Only when every use of its result in the body is loop control.
            users = [u for u in body if insts[u].uses & ins.defs and u not in out and u != j]
            if all(insts[u].opcode in ("ISETP", "IADD3", "VIADD", "UISETP", "UIADD3", "IADD") for u in users):
                out.append(j)
                need |= ins.uses
    return sorted(out)


def _invariant(insts: list[Instruction], body: list[int]) -> list[int]:
    """Instructions whose operands are all defined outside the loop (or by other invariant
    instructions): hoistable. Stores, branches, synchronization, atomics and loads from
    memory the loop writes are not."""
    defined: dict[str, list[int]] = {}
    for j in body:
        for r in insts[j].defs:
            defined.setdefault(r, []).append(j)
    stores = any(insts[j].opcode in ("STG", "ST", "STS", "STL", "RED", "REDG", "ATOM", "ATOMG", "ATOMS") for j in body)
    inv: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if j in inv or ins.is_branch() or ins.is_sync() or ins.is_atomic() or not ins.defs:
                continue
            if ins.opcode in ("STG", "ST", "STS", "STL", "S2R", "CS2R", "SHFL", "VOTE", "MATCH"):
                continue
            if ins.is_memory() and (stores or ins.opcode == "LDS"):
                continue
            if any(len(defined.get(r, [])) > 1 for r in ins.defs):
                continue
            if all(all(p in inv for p in defined.get(r, [])) for r in ins.uses):
                inv.add(j)
                changed = True
    return sorted(inv)


_CONST_REF = re.compile(r"c\[(0x[0-9a-fA-F]+)\]\[(U?R\d+)\s*(?:\+\s*(-?0x[0-9a-fA-F]+|-?\d+))?\]")


def _steps(insts: list[Instruction], body: list[int]) -> dict[str, int]:
    """Registers the loop steps by a constant each iteration (r = r + imm, its only write in
    the body): register -> bytes per iteration."""
    writes: dict[str, int] = {}
    for j in body:
        for r in insts[j].defs:
            writes[r] = writes.get(r, 0) + 1
    out: dict[str, int] = {}
    for j in body:
        ins = insts[j]
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
    insts: list[Instruction], body: list[int], trips: float, cache: dict, miss: float
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
    seen: set[tuple] = set()
    for j in body:
        for bank, reg, off in _CONST_REF.findall(insts[j].text):
            s = abs(steps.get(reg, 0))
            if not s or s * trips <= size:
                continue
            key = (bank, reg, (int(off, 0) if off else 0) // int(line))
            if key in seen:
                continue
            seen.add(key)
            out[j] = out.get(j, 0.0) + miss * min(1.0, s / line)
    return out


def _entries(ctx: KernelContext, lp, executed: dict) -> float:
    """Times a loop is entered: executions of the last instruction of each block outside the
    loop that leads to its header (0 when unknown)."""
    cfg, insts = ctx.cfg, ctx.insts
    if cfg is None:
        return 0.0
    return sum(
        (
            _count(executed, insts[cfg.blocks[b].end - 1].pc)
            for b in cfg.blocks[lp.header].preds
            if b not in lp.blocks and cfg.blocks[b].end > cfg.blocks[b].start
        ),
        0.0,
    )


def kernel_model(ctx: KernelContext, sol: SpeedOfLight | None) -> KernelModel:
    k, cfg = ctx.kernel, ctx.cfg
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
    cache = dict(arch.get("constant_cache") or {})
    g_lat = _global_latency(ctx, lat)
    insts, cls = ctx.insts, ctx.classes
    m = KernelModel(
        available=True,
        global_latency=g_lat,
        pipe_rate=rates,
        inst_total=total,
        _ctx=ctx,
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
    for ins, c in zip(insts, cls):
        n = _count(executed, ins.pc)
        if n <= 0:
            continue
        by_cls[c] = by_cls.get(c, 0.0) + n
        p = pipe_of(ins, m.f2f64_pipe)
        if p is not None:
            pipes[p] = pipes.get(p, 0.0) + n
        if ins.is_memory() and ins.opcode not in ("LDC", "ULDC"):
            tn = threads.get(ins.pc)
            lanes = float(tn) if tn is not None and tn == tn else 32.0 * n
            bytes_ += lanes * access_bytes(ins)
    flops = sum(v for v in sass_flops(ctx).values())
    m.mix = {c: round(v / total, 4) for c, v in sorted(by_cls.items(), key=lambda kv: -kv[1])}
    useful = sum(v for c, v in by_cls.items() if c in USEFUL_CLASSES)
    m.instruction_efficiency = {
        "useful_share": round(useful / total, 4),
        "flops_per_instruction": round(flops / total, 3),
        "bytes_per_instruction": round(bytes_ / total, 3),
    }
    m.pipe_counts = pipes
    # Loops: each instruction belongs to its innermost loop.
    in_loop: set[int] = set()
    for lp in cfg.loops:
        idxs = [j for j in cfg.loop_instructions(lp) if cfg.innermost_loop(j) is lp]
        in_loop.update(cfg.loop_instructions(lp))
        head = cfg.blocks[lp.header].start
        iters = _count(executed, insts[head].pc) or max((_count(executed, insts[j].pc) for j in idxs), default=0.0)
        if iters <= 0 or not idxs:
            continue
        body = [j for j in idxs if _count(executed, insts[j].pc) >= 0.5 * iters]
        ex = sum(_count(executed, insts[j].pc) for j in idxs)
        lmix: dict[str, float] = {}
        for j in idxs:
            lmix[cls[j]] = lmix.get(cls[j], 0.0) + _count(executed, insts[j].pc)
        entries = _entries(ctx, lp, executed)
        misses = constant_stream_misses(
            insts, body, iters / entries if entries > 0 else iters, cache, float(lat.get("constant_miss", 0))
        )
        dep = simulate(insts, body, lat, g_lat, issue_gap=0.0, control=ctx.control, branch=0.0, blocking=misses)
        one = simulate(insts, body, lat, g_lat, issue_gap=1.0, control=ctx.control, blocking=misses)
        m.loops.append(
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
                control_pcs=[insts[j].pc for j in _loop_control(insts, body)],
                invariant=_invariant(insts, body),
                constant_misses=misses,
            )
        )
    m.loops.sort(key=lambda lm: -lm.executed)
    # Straight-line code: once per warp.
    entry = _count(executed, insts[0].pc)
    m.warps_launched = _warps_launched(ctx, entry)
    straight = [j for j in range(len(insts)) if j not in in_loop and _count(executed, insts[j].pc) >= 0.5 * entry > 0]
    s = simulate(insts, straight, lat, g_lat, issue_gap=1.0, control=ctx.control, loop=False)
    m.straight_cycles = s.cycles
    # Occupancy and the busiest scheduler's share of the warps.
    blocks, sms = _grid(ctx)
    wpb = max(1.0, math.ceil(k.block[0] * k.block[1] * k.block[2] / 32.0)) if all(k.block) else 1.0
    per_sm = math.ceil(blocks / sms) if blocks and sms else 1.0
    m.warps_run_per_scheduler = max(1.0, math.ceil(per_sm * wpb / float(arch.get("schedulers_per_sm", 4))))
    w = k.m("smsp__warps_active.avg.per_cycle_active")
    m.max_warps_per_scheduler = float(arch.get("max_warps_per_sm", 64)) / float(arch.get("schedulers_per_sm", 4))
    m.warps_per_scheduler = (
        min(w, m.warps_run_per_scheduler)
        if w == w and w > 0
        else min(m.warps_run_per_scheduler, m.max_warps_per_scheduler)
    )
    # Memory: DRAM bytes at peak bandwidth, or the L1/L2 units' measured work at their peak.
    m.measured_cycles = _measured_cycles(ctx, sol)
    m.memory_cycles, m.memory_source = _memory_cycles(sol, m.measured_cycles)
    m.tensor_cycles = _tensor_cycles(ctx, sol, blocks, sms)
    if sol is not None and sol.launch_floor_ns == sol.launch_floor_ns and sol.sm_clock_hz == sol.sm_clock_hz:
        m.launch_cycles = sol.launch_floor_ns * 1e-9 * sol.sm_clock_hz
    m.verdict = counters_verdict(ctx, sol)
    _evaluate(m)
    m.what_if = default_what_ifs(m)
    return m


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
    for w, b in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if w in mods:
            return b
    return 4


def _grid(ctx: KernelContext) -> tuple[float, float]:
    return grid_and_sms(ctx)


def _warps_launched(ctx: KernelContext, entry: float) -> float:
    k = ctx.kernel
    blocks, _ = _grid(ctx)
    threads = k.block[0] * k.block[1] * k.block[2] if all(k.block) else 0
    if blocks and threads:
        return blocks * math.ceil(threads / 32.0)
    return entry


def _measured_cycles(ctx: KernelContext, sol: SpeedOfLight | None) -> float:
    k = ctx.kernel
    v = k.m("sm__cycles_elapsed.avg")
    if v == v and v > 0:
        return v
    clock = sol.sm_clock_hz if sol is not None else math.nan
    d = k.duration_ns
    return d * 1e-9 * clock if d and d == d and clock == clock else math.nan


def _memory_cycles(sol: SpeedOfLight | None, measured: float) -> tuple[float, str]:
    best, src = 0.0, "none"
    if sol is not None and sol.dram_bytes == sol.dram_bytes and sol.peak_bytes_per_s > 0 and sol.sm_clock_hz > 0:
        best, src = sol.dram_bytes / sol.peak_bytes_per_s * sol.sm_clock_hz, "dram bytes / peak bandwidth"
    if sol is not None and measured == measured:
        for u in ("lts", "l1tex"):
            v = sol.units.get(u)
            if v is not None and v == v and v / 100.0 * measured > best:
                best, src = v / 100.0 * measured, f"{sol.labels.get(u, u)} measured work at its peak"
    return best, src


def _evaluate(
    m: KernelModel,
    loops: list[LoopModel] | None = None,
    warps: float | None = None,
    inst_total: float | None = None,
    pipe_counts: dict | None = None,
) -> tuple[float, str, dict]:
    """Terms, predicted cycles and bottleneck; stored on ``m`` when called without overrides."""
    store = loops is None and warps is None and inst_total is None and pipe_counts is None
    loops = m.loops if loops is None else loops
    w = m.warps_per_scheduler if warps is None else warps
    inst_total = m.inst_total if inst_total is None else inst_total
    pipe_counts = m.pipe_counts if pipe_counts is None else pipe_counts
    launched = m.warps_launched if m.warps_launched and m.warps_launched == m.warps_launched else 1.0
    run = m.warps_run_per_scheduler
    # Per-warp time: straight-line code plus each loop's iterations at its single-warp rate.
    per_warp = m.straight_cycles + sum(lm.iterations / launched * lm.single_warp_cycles for lm in loops)
    terms = {"latency": per_warp * run / max(1.0, min(w, run)), "issue": inst_total / launched * run}
    for p, n in pipe_counts.items():
        r = m.pipe_rate.get(p)
        if r:
            terms[f"pipe:{p}"] = n / launched * run / r
    terms["memory"] = m.memory_cycles
    if m.tensor_cycles > 0:
        terms["pipe:tensor"] = m.tensor_cycles
    if m.launch_cycles > 0:
        terms["launch"] = m.launch_cycles
    name = max(terms, key=terms.__getitem__)
    pred = max(terms[name], combined(terms, m.overlap_norm))
    if name == "latency":
        hot = loops[0] if loops else None
        name = "latency" if hot is None or hot.chain_memory else "ilp"
    if store:
        m.terms = {t: round(v, 1) for t, v in terms.items()}
        m.predicted_cycles, m.bottleneck = pred, name
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
    return hi * ((lat / hi) ** norm + (side / hi) ** norm) ** (1.0 / norm)


# Opcodes that add (an induction variable's step, a carry into its high half), that are affine
# in their register operands (index arithmetic: adds, shifts and multiplies by constants,
# moves), and that compare integers.
_ADD_OPS = {"IADD3", "VIADD", "IADD", "UIADD3", "ISCADD"}
_AFFINE_OPS = _ADD_OPS | {"IMAD", "LEA", "SHL", "MOV", "UMOV", "ULEA", "UIMAD"}
_COMPARE_OPS = {"ISETP", "UISETP"}


def _address_regs(ins: Instruction) -> set[str]:
    """Registers a memory instruction uses in its address (inside brackets; R4.64 is R4:R5)."""
    out: set[str] = set()
    for part in re.findall(r"\[([^\]]*)\]", ins.text):
        for r, wide in re.findall(r"\b(U?R\d+)(\.64)?\b", part):
            out.add(r)
            if wide:
                base = "UR" if r.startswith("UR") else "R"
                out.add(f"{base}{int(r[len(base) :]) + 1}")
    return out


def unroll_roles(insts: list[Instruction], body: list[int], invariant: list[int]) -> dict[int, str]:  # noqa: C901 - one fixed-point pass per role, each reading the roles before it
    """What each instruction of a loop body becomes when the loop is unrolled by k:

    * ``control``: the back edge's branch and the compare and counter that feed it (once per k);
    * ``induction``: an induction variable's step, r = r + (loop-invariant), with the carry into
      a 64-bit high half (once per k: the copies use r + c*step, folded into the consumers);
    * ``index``: arithmetic affine in induction variables whose results only feed addresses,
      range checks, loop control or other such arithmetic (once per k: a copy's offset is the
      address's immediate, or the compare's bound minus c, computed before the loop);
    * ``guard``: a compare of such an index against a loop-invariant bound, used only as a
      predicate or by other guards (a range check: per copy when unrolled; decided once
      before the loop when hoisted, as loop versioning does);
    * ``invariant``: loop-invariant (hoistable, _invariant);
    * ``work``: everything else (per copy)."""
    inv = set(invariant)
    pos = {j: i for i, j in enumerate(body)}
    n = len(body)

    def reaching(j: int, r: str) -> int | None:
        """The body instruction whose value of r instruction j reads (itself for a value
        carried around the loop), None when r comes from outside the loop."""
        for step in range(1, n + 1):
            q = body[(pos[j] - step) % n]
            if r in insts[q].defs:
                return q
        return None

    def outside(j: int, r: str, ok: set[int]) -> bool:
        q = reaching(j, r)
        return q is None or q in inv or q in ok

    def users(j: int) -> list[int]:
        return [u for u in body if any(reaching(u, r) == j for r in insts[u].uses & insts[j].defs)]

    ctl = set(_loop_control(insts, body))
    roles: dict[int, str] = {j: "invariant" for j in inv}
    roles.update({j: "control" for j in ctl})
    induction: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if (
                j in roles
                and roles[j] != "control"
                or j in induction
                or ins.guard
                or ins.opcode not in _ADD_OPS | {"IMAD"}
            ):
                continue
            if ins.opcode == "IMAD" and not set(ins.modifiers) & {"X", "IADD"}:
                continue  # a multiply-add of itself is a recurrence (x = a*x + c), not a step
            regs = [r for r in ins.defs if not r.startswith(("P", "UP"))]
            if len(regs) != 1 or reaching(j, regs[0]) != j:
                continue
            if all(outside(j, u, induction) for u in ins.uses - {regs[0]}):
                induction.add(j)
                changed = True
    for j in induction:
        roles.setdefault(j, "induction")
    # Index arithmetic: affine in induction variables (and invariants).
    base = set(induction) | ctl
    index: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if j in roles or j in index or ins.guard or ins.opcode not in _AFFINE_OPS or not ins.defs:
                continue
            inside = [u for u in ins.uses if not outside(j, u, set())]
            if not inside or not all(outside(j, u, base | index) for u in ins.uses):
                continue
            if ins.opcode == "IMAD" and len(inside) > 1 and not set(ins.modifiers) & {"X", "IADD"}:
                continue  # a product of two indices is not affine
            index.add(j)
            changed = True
    guards: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if j in roles or j in guards or j in index or ins.opcode not in _COMPARE_OPS:
                continue
            if all(outside(j, u, base | index | guards) for u in ins.uses):
                guards.add(j)
                changed = True

    # A guard's predicate only guards instructions or feeds other guards; an index only
    # feeds addresses, guards, control or other (folded) indices.
    def predicate_only(j: int, u: int) -> bool:
        guard = (insts[u].guard or "").lstrip("!")
        return not (insts[j].defs & insts[u].uses) - {guard}

    guards = {j for j in guards if all(u in guards or predicate_only(j, u) for u in users(j))}
    folded = set(index)
    changed = True
    while changed:
        changed = False
        for j in list(folded):
            for u in users(j):
                d = insts[j].defs & insts[u].uses
                if u in folded or u in guards or u in ctl or u in induction:
                    continue
                if insts[u].is_memory() and not (d - _address_regs(insts[u])):
                    continue
                folded.discard(j)
                changed = True
                break
    for j in body:
        roles.setdefault(j, "index" if j in folded else "guard" if j in guards else "work")
    return roles


def _kept(role: str, k: int, hoist: bool) -> float:
    """Copies of an instruction per original iteration after unrolling by k (and hoisting)."""
    if role in ("control", "induction", "index"):
        return 1.0 / k
    if role in ("guard", "invariant"):
        return 0.0 if hoist else 1.0
    return 1.0


def _transformed(
    m: KernelModel, ctx: KernelContext, lm: LoopModel, k: int, hoist: bool
) -> tuple[LoopModel, dict[int, float]]:
    """The loop unrolled by k with k independent chains (registers renamed per copy, copies
    interleaved as the compiler's scheduler does), loop control, induction steps and index
    arithmetic once per k iterations; with ``hoist``, loop-invariant instructions and range
    checks leave the loop. Cycles and instructions per original iteration, and the share of
    each instruction's executions the change removes (by PC). ``ctx``: the model's context."""
    insts = ctx.insts
    roles = unroll_roles(insts, lm.body, lm.invariant)
    executed = ctx.executed()
    copies: list[Instruction] = []
    blocking: dict[int, float] = {}

    # Copies interleaved, as the compiler's scheduler interleaves independent chains; what
    # runs once per k iterations is in the last copy only.
    def ren(regs, c):
        return {f"{r}~{c}" if not r.startswith(("UR", "UP")) else r for r in regs}

    for j in lm.body:
        kept = _kept(roles[j], k, hoist)
        if kept <= 0:
            continue
        n = k if kept >= 1.0 else 1
        for c in range(k - n, k):
            ins = insts[j]
            if j in lm.constant_misses:
                # each copy reads its own iteration's constants: the misses stay per iteration
                blocking[len(copies)] = lm.constant_misses[j]
            copies.append(replace(ins, defs=ren(ins.defs, c), uses=ren(ins.uses, c)))
    # The back-edge branch must be last for the redirect cost.
    order = [i for i in range(len(copies)) if not copies[i].is_branch()] + [
        i for i in range(len(copies)) if copies[i].is_branch()
    ]
    lat = dict(ctx.arch.get("latency") or {})
    one = simulate(copies, order, lat, m.global_latency, issue_gap=1.0, control=None, blocking=blocking)
    dep = simulate(copies, order, lat, m.global_latency, issue_gap=0.0, control=None, branch=0.0, blocking=blocking)
    removed = {insts[j].pc: 1.0 - _kept(roles[j], k, hoist) for j in lm.body if _kept(roles[j], k, hoist) < 1.0}
    gone = sum(_count(executed, pc) * f for pc, f in removed.items())
    per_iter = max(1.0, lm.issue_per_iteration - gone / lm.iterations) if lm.iterations > 0 else lm.issue_per_iteration
    return replace(
        lm, single_warp_cycles=one.cycles / k, critical_path_cycles=dep.cycles / k, issue_per_iteration=per_iter
    ), removed


def what_if(m: KernelModel, change: str, **p) -> dict | None:
    """Predicted cycles after a change: ``unroll`` (k: independent accumulators; loop control,
    induction steps and index arithmetic once per k iterations; ``hoist=True`` also hoists),
    ``hoist`` (the hot loop's loop-invariant instructions and range checks leave it),
    ``warps`` (w: resident warps per scheduler). None when the change does not apply."""
    if not m.available or not m.predicted_cycles > 0:
        return None
    hot = m.hot
    loops, warps, inst_total, pipes = list(m.loops), None, m.inst_total, dict(m.pipe_counts)
    ctx = m._ctx
    if ctx is None:  # an available model keeps its context
        return None
    hoist = change == "hoist" or bool(p.get("hoist"))
    if change in ("unroll", "hoist"):
        if hot is None:
            return None
        k = int(p.get("k", 4)) if change == "unroll" else 1
        new, removed_pcs = _transformed(m, ctx, hot, k, hoist)
        if change == "hoist":
            if not removed_pcs:
                return None
            label = f"hoist {len(removed_pcs)} loop-invariant instruction(s) and range check(s) out of the hot loop"
        else:
            label = f"unroll the hot loop by {k} with {k} independent accumulators" + (
                ", loop-invariant work and range checks hoisted"
                if hoist and any(f >= 1.0 for f in removed_pcs.values())
                else ""
            )
        executed = ctx.executed()
        for pc, frac in removed_pcs.items():
            n = _count(executed, pc) * frac
            inst_total -= n
            pp = pipe_of(ctx.by_pc[pc], m.f2f64_pipe)
            if pp in pipes:
                pipes[pp] -= n
        loops[0] = new
    elif change == "warps":
        # A scheduler cannot hold more warps than the launch gives it.
        cap = min(m.max_warps_per_scheduler, m.warps_run_per_scheduler)
        warps = min(cap, float(p.get("w", 2 * m.warps_per_scheduler)))
        if not warps > m.warps_per_scheduler + 0.5:
            return None
        label = f"{warps:g} resident warps per scheduler instead of {m.warps_per_scheduler:.2f}"
    else:
        raise ValueError(f"unknown what-if change {change!r}")
    pred, name, _ = _evaluate(m, loops=loops, warps=warps, inst_total=inst_total, pipe_counts=pipes)
    if not pred > 0:
        return None
    return {
        "change": change,
        "description": label,
        "predicted_cycles": round(pred, 1),
        "speedup": round(max(1.0, m.predicted_cycles / pred), 3),
        "bottleneck_after": name,
        **({"k": int(p.get("k", 4))} if change == "unroll" else {}),
        **({"warps_per_scheduler": warps} if change == "warps" else {}),
    }


def measured_speedup(m: KernelModel, change: dict | None) -> float:
    """A what-if's speedup of the measured kernel. Where the counters confirm the model's
    bottleneck class, the measured cycles the model does not explain are that same limit
    running below its ideal rate and shrink with it: the ratio of the predictions. Where the
    counters name another cause (or none), the model leaves that cause out and its time stays:
    the cycles the model says the change saves come off the measured cycles."""
    if change is None or not m.available or not m.predicted_cycles > 0 or not change["predicted_cycles"] > 0:
        return 1.0
    ratio = m.predicted_cycles / change["predicted_cycles"]
    meas = m.measured_cycles
    if m.family == m.verdict or not (meas == meas and meas >= m.predicted_cycles):
        return max(1.0, ratio)
    return max(1.0, meas / (meas - (m.predicted_cycles - change["predicted_cycles"])))


def default_what_ifs(m: KernelModel) -> list[dict]:
    out = []
    for change, params in (("unroll", {"k": 4}), ("hoist", {}), ("warps", {})):
        got = what_if(m, change, **params)
        if got is not None:
            out.append(got)
    return out


def hot_loop_lines(ctx: KernelContext, lm: LoopModel, limit: int = 8) -> list[dict]:
    """The critical chain's instructions with their source lines (first ``limit``)."""
    rows = ctx._row_map()
    out = []
    for j in lm.chain[:limit]:
        ins = ctx.insts[j]
        f, ln, off, sass, *_ = rows.get(ins.pc, (None, None, 0, ins.text))
        item = {"pc_offset": int(off) if off == off else None, "sass": sass}
        if f is not None and ln is not None and ln == ln:
            item["file"], item["line"] = f, int(ln)
        out.append(item)
    return out


def to_dict(m: KernelModel, ctx: KernelContext | None = None, loops: int = 3) -> dict:
    """The JSON ``kernels[].model`` object (docs/json-schema.md)."""
    if not m.available:
        return {"available": False, "reason": m.reason}
    ctx = ctx or m._ctx

    def r(x, nd=1):
        return None if x is None or x != x or math.isinf(x) else round(float(x), nd)

    out = {
        "available": True,
        "bottleneck": m.bottleneck,
        "bottleneck_class": m.family,
        "counters_verdict": m.verdict,
        "agrees": (m.family == m.verdict) if m.verdict in VERDICTS else None,
        "predicted_cycles": r(m.predicted_cycles),
        "measured_cycles": r(m.measured_cycles),
        "error": r(m.gap(), 4),
        "terms": m.terms,
        "memory_source": m.memory_source,
        "instruction_efficiency": m.instruction_efficiency,
        "instruction_mix": m.mix,
        "warps_per_scheduler": r(m.warps_per_scheduler, 2),
        "warps_run_per_scheduler": r(m.warps_run_per_scheduler, 2),
        "global_load_latency": r(m.global_latency),
        "loops": [],
    }
    for lm in m.loops[:loops]:
        chain = hot_loop_lines(ctx, lm) if ctx is not None else []
        lines = sorted({(c["file"], c["line"]) for c in chain if "line" in c}, key=lambda x: (str(x[0]), x[1]))
        out["loops"].append(
            {
                "header_pc_offset": _offset(ctx, lm.header_pc),
                "depth": lm.depth,
                "instruction_share": r(lm.executed / m.inst_total, 4),
                "iterations": r(lm.iterations, 0),
                "instructions_per_iteration": r(lm.issue_per_iteration, 2),
                "instruction_mix": lm.mix,
                "useful_share": lm.useful_share,
                "critical_path_cycles": r(lm.critical_path_cycles, 2),
                "single_warp_cycles": r(lm.single_warp_cycles, 2),
                "critical_path_waits_on": "memory" if lm.chain_memory else "arithmetic",
                "critical_path": chain,
                "lines": [{"file": f, "line": ln} for f, ln in lines],
                "loop_invariant_instructions": len(lm.invariant),
            }
        )
    out["what_if"] = m.what_if
    return out


def _offset(ctx: KernelContext | None, pc: int):
    if ctx is None:
        return None
    row = ctx._row_map().get(pc)
    return int(row[2]) if row is not None and row[2] == row[2] else None
