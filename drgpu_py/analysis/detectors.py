"""Detectors: one function per finding in ``specs/findings.yaml``.

Contract: ``detector(ctx) -> Detection | None``, pure. A detector decides whether its
problem is present (using ``ctx.th`` thresholds), measures how much of the kernel's time it
concerns, and points at source lines. Speedups follow GPA's models and are computed here
from measured quantities only:

* stall elimination: removing a fraction r of all warp time gives 1/(1-r);
* latency hiding: as above, bounded by total/issuing time;
* occupancy: 1/(1 - L(1 - W/W')) for latency share L and warps W -> W', bounded by issue
  slots and the busiest unit;
* traffic: cutting a fraction w of a saturated unit's traffic gives up to 1/(1-w);
* launch: filling idle SMs, bounded by the busiest unit.
"""

from __future__ import annotations

import functools
import math
import re
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import rounded
from .context import KernelContext
from .model import _access_bytes
from .sol import grid_and_sms as _grid
from .tree import location_text as loc_text

if TYPE_CHECKING:
    from ..sass.cfg import CFG

# At most this share of a kernel's time is removable by one change: the rest (launch, the
# first and last memory round trips, bookkeeping) stays. Tighter limits come from the
# physical bounds (analysis/bounds.py).
MAX_REMOVABLE = 0.99
LATENCY_REASONS = ("long_scoreboard", "short_scoreboard", "wait", "lg_throttle", "mio_throttle", "tex_throttle")
MEMORY_REASONS = ("long_scoreboard", "lg_throttle", "tex_throttle", "drain")


@dataclass
class Detection:
    stall_share: float  # share of stall cycles this finding concerns (0..1)
    speedup: float  # estimated whole-kernel speedup (>= 1)
    evidence: dict = field(default_factory=dict)
    locations: list[dict] = field(default_factory=list)
    fmt: dict = field(default_factory=dict)
    relieves_override: list[str] | None = None
    partial_relief: dict[str, float] | None = None  # unit -> share of its traffic the fix removes (when measured)
    variant: str | None = None  # findings.yaml advice_when key the evidence supports


def _positive(per_pc) -> dict[int, float]:
    """PC -> value of a per-instruction column's entries above zero."""
    pos = per_pc[per_pc > 0]
    return {int(pc): float(v) for pc, v in zip(pos.index, pos)}


def eliminate(r: float) -> float:
    r = min(max(r, 0.0), MAX_REMOVABLE)
    return 1.0 / (1.0 - r)


def _queue_charge(ctx: KernelContext, pcs, reason: str) -> float:
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


def _lsu_relief(ctx: KernelContext, pcs) -> dict[str, float]:
    """The share of the kernel's memory instructions that ``pcs`` execute: a fix that
    removes them also unloads the SM's load/store and MIO pipelines by that share (the
    busiest SM sub-unit is often that pipeline in memory-bound code)."""
    executed = ctx.executed()
    mem = sum(float(executed.get(i.pc) or 0.0) for i in ctx.insts if i.is_memory())
    mine = sum(float(executed.get(pc) or 0.0) for pc in pcs)
    if mem <= 0 or mine <= 0:
        return {}
    w = min(1.0, mine / mem)
    return {"sm": w, "lsu": w}


def _traffic(ctx: KernelContext, units, w: float) -> float:
    """Traffic model: a fix that removes a fraction ``w`` of the requests through ``units``
    shortens the time those units are busy by that fraction. The part of the kernel's time
    those units account for is their utilisation relative to saturation (``saturation_pct``:
    the share of peak a unit reaches when it is the bottleneck), so the speedup is
    1 / (1 - w * min(1, u / saturation)), bounded by the busiest unit the fix leaves alone."""
    vals = [ctx.units.get(u, math.nan) for u in units]
    vals = [v for v in vals if not math.isnan(v)]
    top, top_val = ctx.top_unit()
    # Only where these units limit the kernel: below bound_pct, or behind another unit, the
    # kernel waits on latency, not on their throughput, and the stall model applies.
    if not vals or w <= 0 or max(vals) < ctx.th["bound_pct"] or max(vals) < top_val:
        return 1.0
    busy = min(1.0, max(vals) / ctx.th["saturation_pct"])
    return _bounded_by_units(ctx, 1.0 / (1.0 - min(w, MAX_REMOVABLE) * busy), exclude=tuple(units))


def _bounded_by_units(ctx: KernelContext, s: float, exclude=()) -> float:
    vals = [v for u, v in ctx.units.items() if u not in exclude and not math.isnan(v) and v > 0]
    return min(s, 100.0 / max(vals)) if vals else s


def _merge(*maps: dict[int, float]) -> dict[int, float]:
    out: dict[int, float] = {}
    for m in maps:
        for k, v in m.items():
            out[k] = out.get(k, 0.0) + v
    return out


def _cost_share(ctx: KernelContext, pcs, own_reasons=None, blamed_reasons=None) -> tuple[float, dict[int, float]]:
    """Samples at the instructions (throttles, their own stalls) plus samples the blamer
    charges to them, as a fraction of all samples; and the per-PC weights for locations."""
    at = ctx.samples_at(pcs, own_reasons)
    blamed = ctx.blamed_by_pc(pcs, blamed_reasons)
    w = _merge(at, blamed)
    tot = ctx.samples_total
    return (sum(w.values()) / tot if tot > 0 else 0.0), w


# ---- memory -------------------------------------------------------------------------------
def uncoalesced(ctx: KernelContext) -> Detection | None:
    df, k = ctx.df, ctx.kernel
    if not df.empty and ctx.total_of("l2_sectors_global") > 0:
        sectors = ctx.total_of("l2_sectors_global")
        per_pc = df["l2_sectors_global_excessive"]
        # A load whose address is computed from loaded data (pointer chasing, a search's
        # probes) scatters by its data: re-indexing the threads cannot coalesce it, so its
        # excess sectors are not this finding's (memory-latency covers such chains).
        dependent = _data_addressed(ctx, [int(pc) for pc in per_pc.index[per_pc > 0]])
        if dependent:
            per_pc = per_pc.drop(index=[pc for pc in dependent if pc in per_pc.index])
        excess = float(per_pc.sum())
    else:
        sectors = k.m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0) + k.m(
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0
        )
        excess = k.m("derived__memory_l2_theoretical_sectors_global_excessive", 0)
        per_pc = None
    if sectors <= 0:
        return None
    waste = excess / sectors
    if waste < ctx.th["uncoalesced_excess"]:
        return None
    # Excess sectors cost bandwidth where they are served: L1 when it hits, else L2, else DRAM.
    h1, h2 = k.m("l1tex__t_sector_hit_rate.pct", 0.0), k.m("lts__t_sector_hit_rate.pct", 0.0)
    # Stores write through L1 to L2, and partial sectors reach DRAM: when stores carry most
    # of the excess, the L1 hit rate (of loads) says nothing about where the waste lands.
    stores = 0.0
    if per_pc is not None and excess > 0:
        st = [i.pc for i in ctx.insts if i.opcode in ("STG", "ST") and i.pc in per_pc.index]
        stores = float(per_pc[st].sum()) / excess if st else 0.0
    through = h1 < 50 or stores >= 0.5
    relieves = ["l1tex"] + (["lts"] if through else []) + (["dram"] if through and (h2 < 50 or stores >= 0.5) else [])
    mem_util = max([ctx.units[u] for u in relieves if not math.isnan(ctx.units[u])] or [0.0]) / 100.0
    # The stall time that excess transactions cost scales with how loaded the serving units are.
    m = ctx.frac(*MEMORY_REASONS)
    speed = eliminate(m * waste * min(1.0, mem_util))
    speed = max(speed, _traffic(ctx, relieves, waste))
    weights = {}
    if per_pc is not None:
        bad = [int(pc) for pc in per_pc.index[per_pc > 0]]
        blamed = ctx.blamed_by_pc(bad, MEMORY_REASONS)
        tot_ex = float(per_pc[bad].sum()) or 1.0
        for pc in bad:
            # Blamed stall samples locate the costly loads; excess sectors break ties.
            weights[pc] = blamed.get(pc, 0.0) + float(per_pc[pc]) / tot_ex
    req = k.m("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    sec = k.m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    spr = sec / req if req and not math.isnan(req) and req > 0 else math.nan
    return Detection(
        stall_share=ctx.share(*MEMORY_REASONS) * waste,
        speedup=speed,
        evidence={"excessive_sector_share": round(waste, 3), "sectors_per_request": _r(spr)},
        locations=ctx.locations(weights),
        fmt={"excess_pct": 100 * waste, "sectors_per_request": spr if not math.isnan(spr) else 0.0},
        relieves_override=relieves,
    )


_LOADS = ("LDG", "LD", "LDS", "LDL", "ATOM", "ATOMG", "ATOMS", "LDGSTS", "TLD", "TEX")


def _data_addressed(ctx: KernelContext, pcs) -> list[int]:
    """Global loads among ``pcs`` whose address registers take their value, through any
    chain of arithmetic, selects or compares, from a memory load (not from thread and block
    indices and kernel parameters)."""
    from ..sass.slicing import _reaching_defs

    cfg = ctx.cfg
    if cfg is None:
        return []

    def from_memory(idx: int, regs: set) -> bool:
        # Walk the definitions back (a worklist: chains in long straight-line code are deep).
        todo, seen = [(idx, r) for r in regs], set()
        while todo:
            at, reg = todo.pop()
            for j, _ in _reaching_defs(cfg, at, reg, 10_000):
                if j in seen:
                    continue
                seen.add(j)
                d = cfg.insts[j]
                if d.opcode in _LOADS:
                    return True
                todo.extend((j, u) for u in d.uses)
        return False

    out = []
    for pc in pcs:
        idx = cfg.index_of_pc.get(pc)
        if idx is None:
            continue
        ins = cfg.insts[idx]
        if not ins.is_global_load() or ins.is_atomic():
            continue
        regs = {r for o in ins.operands if "[" in o for r in _regs_in(o)} & ins.uses
        if regs and from_memory(idx, regs):
            out.append(pc)
    return out


def bank_conflict(ctx: KernelContext) -> Detection | None:
    """Bank conflicts from ncu's own conflict counters when the report has them (conflict
    wavefronts / all shared wavefronts, loads and stores apart); derived from the
    per-instruction conflict ways only when they are absent (and the evidence says so). Wide
    accesses (LDS.128) need several wavefronts without any conflict, so wavefronts per
    instruction alone are no evidence. Estimate: the conflict wavefronts' time goes (traffic
    or stall model), but the instructions issued during it stay and take their issue time."""
    k, df = ctx.kernel, ctx.df
    shared_pcs = ctx.pcs_where(lambda i: i.is_shared())
    ops = ("ld", "st")
    conf = {op: k.m(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum") for op in ops}
    wav = {op: k.m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum") for op in ops}
    evidence: dict = {}
    if not any(math.isnan(v) for v in (*conf.values(), *wav.values())):
        total = sum(wav.values())
        if total <= 0:
            return None
        excess = sum(conf.values()) / total
        evidence = {
            "source": "ncu conflict counters",
            **{f"conflict_share_shared_{op}": _r(conf[op] / wav[op]) if wav[op] > 0 else None for op in ops},
        }
    elif not df.empty and shared_pcs:
        ex = df.loc[shared_pcs, "inst_executed"]
        nway = df.loc[shared_pcs, "shared_nway"].clip(lower=1)
        ins, ways = float(ex.sum()), float((ex * nway).sum())
        if ways <= 0 or ins <= 0:
            return None
        excess = max(0.0, (ways - ins) / ways)
        evidence = {"source": "derived from per-instruction conflict ways (the report has no conflict counters)"}
    else:
        return None
    if excess < ctx.th["bank_conflict_excess"]:
        return None
    r_share, w = _cost_share(ctx, shared_pcs, ("mio_throttle", "short_scoreboard"), ("short_scoreboard",))
    if not df.empty and shared_pcs:
        nway = df.loc[shared_pcs, "shared_nway"]
        # Weight each shared instruction's cost by how conflicted it is.
        w = {pc: v * max(float(nway.get(pc, 1.0)) - 1.0, 0.0) for pc, v in w.items()} or w
    locations = ctx.locations(w)
    if not locations and not df.empty and shared_pcs and df.loc[shared_pcs, "shared_nway"].notna().any():
        # The per-instruction conflict ways show no conflicted shared access: the counters'
        # conflict wavefronts are at no instruction of the code, and no line can be changed.
        return None
    share = r_share if r_share > 0 else ctx.frac("mio_throttle", "short_scoreboard")
    nways = 1.0 / max(1e-9, 1.0 - excess)
    evidence.update(
        {"conflict_wavefront_share": round(excess, 3), "wavefronts_per_conflict_free_access": round(nways, 2)}
    )
    speed = max(eliminate(share * excess), _traffic(ctx, ("l1tex", "lsu"), excess))
    # The time the conflict wavefronts take also saw instructions issued (the issue slots'
    # measured % of peak, spread evenly over the kernel's time): removing that time does not
    # remove those instructions, which then take their issue time at the full rate.
    issue = (ctx.sol.units.get("issue", math.nan) if ctx.sol is not None else math.nan) / 100.0
    if speed > 1.0 and not math.isnan(issue) and 0.0 < issue < 1.0:
        speed = 1.0 / (1.0 / speed + (1.0 - 1.0 / speed) * issue)
        evidence["issue_active_share"] = _r(issue)
    return Detection(
        stall_share=ctx.share("mio_throttle", "short_scoreboard"),
        speedup=speed,
        evidence=evidence,
        locations=locations,
        fmt={"wavefronts_per_request": nways, "excess_pct": 100 * excess},
    )


def local_memory(ctx: KernelContext) -> Detection | None:
    k, df = ctx.kernel, ctx.df
    local = k.m("smsp__sass_inst_executed_op_local_ld.sum", 0) + k.m("smsp__sass_inst_executed_op_local_st.sum", 0)
    pcs = ctx.pcs_where(lambda i: i.is_local())
    if local <= 0 and not df.empty and pcs:
        local = float(df.loc[pcs, "inst_executed"].sum())
    total = k.m("smsp__inst_executed.sum", 0) or ctx.executed_total()
    if total <= 0 or local / total < ctx.th["local_inst_share"]:
        return None
    r, w = _cost_share(ctx, pcs, ("lg_throttle", "long_scoreboard"), ("long_scoreboard",))
    # A queue full of local accesses also throttles the other memory instructions: charge
    # those throttle samples in proportion to local memory's share of LSU instructions.
    glob = k.m("smsp__sass_inst_executed_op_global_ld.sum", 0) + k.m("smsp__sass_inst_executed_op_global_st.sum", 0)
    other_lg = ctx.frac("lg_throttle") - (
        sum(ctx.samples_at(pcs, ("lg_throttle",)).values()) / ctx.samples_total if ctx.samples_total else 0.0
    )
    r += max(0.0, other_lg) * local / max(local + glob, 1.0)
    if r <= 0:
        r = ctx.frac(*MEMORY_REASONS) * min(
            1.0, local / max(k.m("smsp__sass_inst_executed_op_global_ld.sum", 0) + local, 1.0)
        )
    # Local memory's share of the L1 sectors: what the fix takes off the memory units.
    sec = {
        sp: k.m(f"l1tex__t_sectors_pipe_lsu_mem_{sp}_op_ld.sum", 0.0)
        + k.m(f"l1tex__t_sectors_pipe_lsu_mem_{sp}_op_st.sum", 0.0)
        for sp in ("local", "global")
    }
    w_local = sec["local"] / (sec["local"] + sec["global"]) if sec["local"] > 0 else 0.0
    speed = max(eliminate(r), _traffic(ctx, ("l1tex", "lts", "dram"), w_local))
    return Detection(
        stall_share=min(1.0, r * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=speed,
        partial_relief=_lsu_relief(ctx, pcs) or None,
        evidence={
            "local_instruction_share": round(local / total, 4),
            "spilling_requests": _r(k.m("derived__local_spilling_requests")),
        },
        locations=ctx.locations(w),
        fmt={"local_pct": 100 * local / total},
    )


def loop_invariant_load(ctx: KernelContext) -> Detection | None:
    cfg = ctx.cfg
    if cfg is None or not cfg.loops or ctx.blame is None:
        return None
    invariant: list[int] = []
    for idx, ins in enumerate(cfg.insts):
        if not (ins.is_global_load() or ins.opcode == "LDC") or ins.is_atomic():
            continue
        loop = cfg.innermost_loop(idx)
        if loop is None or ins.opcode == "LDC" and not ins.is_const_indexed():
            continue
        addr_regs = {r for o in ins.operands if "[" in o for r in _regs_in(o)} & ins.uses
        if (
            addr_regs
            and all(_invariant(cfg, idx, reg, loop, {}, 0) for reg in addr_regs)
            and not _written_in_loop(cfg, ins, loop)
        ):
            invariant.append(ins.pc)
    if not invariant:
        return None
    r, w = _cost_share(ctx, invariant, (), ("long_scoreboard", "short_scoreboard"))
    if r < ctx.th["invariant_load_share"]:
        return None
    # Hoisted, the reloads leave the loop: besides the waits for their data, every sample at
    # them (their issue, their fixed-latency waits, the LSU queue) goes with them.
    r_own = _cost_share(ctx, invariant, None, ("long_scoreboard", "short_scoreboard"))[0]
    # Once the reloads leave the loop, accesses to one fixed address per thread inside it
    # (x = *p ... *p = x every iteration) no longer meet a possibly aliasing load: the
    # compiler keeps the value in a register and stores it once after the loop (LICM's scalar
    # promotion; lcg_state and oscillator_params' fixed loops have no STG). Their own stalls
    # and their traffic go away with the reloads.
    promoted = _promoted_by_hoisting(cfg, invariant)
    gone = invariant + promoted
    r_prom = (
        (
            sum(ctx.samples_at(promoted, MEMORY_REASONS).values())
            + sum(ctx.blamed_by_pc(promoted, ("long_scoreboard",)).values())
        )
        / ctx.samples_total
        if promoted and ctx.samples_total > 0
        else 0.0
    )
    # The reloads' share of the L2 sectors the SMs request: what hoisting takes off L1 and L2
    # (the rest of the traffic, e.g. the loop's stores to varying addresses, stays and bounds the gain).
    partial = None
    if "l2_sectors_global" in ctx.df and ctx.total_of("l2_sectors_global") > 0:
        mine = float(ctx.df.loc[[p for p in gone if p in ctx.df.index], "l2_sectors_global"].sum())
        share = mine / ctx.total_of("l2_sectors_global")
        partial = {"lts": share, "l1tex": share}
    partial = {**(partial or {}), **_lsu_relief(ctx, gone)}
    return Detection(
        stall_share=min(1.0, r * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=eliminate(max(r, r_own) + r_prom),
        evidence={
            "invariant_loads_in_loops": len(invariant),
            "blamed_sample_share": round(r, 3),
            "removed_sample_share": round(max(r, r_own), 3),
            "promoted_accesses": len(promoted),
            "promoted_sample_share": round(r_prom, 3),
        },
        locations=ctx.locations(w),
        fmt={"share_pct": 100 * r},
        partial_relief=partial,
    )


def _promoted_by_hoisting(cfg, invariant: list[int]) -> list[int]:
    """Stores (and the loads of the same address) at one loop-invariant address in the loops
    that hold the invariant reloads, where every other global access of the loop is one of
    those reloads: with the reloads hoisted, nothing in the loop can alias the stored value,
    so it lives in a register. A store or load to a varying address, an atomic, a barrier or a
    fence in the loop keeps every access in memory."""
    out: list[int] = []
    loops = {}
    for pc in invariant:
        idx = cfg.index_of_pc.get(pc)
        loop = cfg.innermost_loop(idx) if idx is not None else None
        if loop is not None:
            loops[loop.header] = loop
    inv = set(invariant)
    for loop in loops.values():
        body = cfg.loop_instructions(loop)
        if any(cfg.insts[j].opcode in ("BAR", "MEMBAR", "FENCE") or cfg.insts[j].is_atomic() for j in body):
            continue
        stores = [j for j in body if cfg.insts[j].opcode in ("STG", "ST")]
        if not stores:
            continue
        fixed_addr = {}
        for j in stores:
            ins = cfg.insts[j]
            regs = {r for o in ins.operands if "[" in o for r in _regs_in(o)}
            if not regs or not all(_invariant(cfg, j, reg, loop, {}, 0) for reg in regs):
                break
            fixed_addr[j] = _address(ins)
        else:
            # One address for the whole body: the source loop stores to one location. Several
            # fixed addresses are a varying source address spread over an unrolled body
            # (reload_rate's s % 8 slots), and the compiler keeps those stores.
            addrs = set(fixed_addr.values())
            loads = [j for j in body if cfg.insts[j].is_global_load() and cfg.insts[j].pc not in inv]
            if len(addrs) == 1 and all(_address(cfg.insts[j]) in addrs for j in loads):
                out += [cfg.insts[j].pc for j in stores + loads]
    return out


_STORES = ("STG", "ST", "ATOM", "ATOMG", "RED", "REDG")


def _address(ins) -> str | None:
    """The memory operand of a load or store without its descriptor ('[R2.64+0x10]')."""
    for o in ins.operands:
        if "[" in o:
            return re.sub(r"^desc\[[^\]]*\]", "", o.strip())
    return None


def _written_in_loop(cfg, load, loop) -> bool:
    """A store or atomic in the loop to the very address the load reads (same registers and
    offset): the value changes between iterations, so the load is not invariant and must not
    be hoisted. Also any global store in a loop that synchronizes the block (BAR): threads
    exchange data through memory there (a neighbour's store between barriers changes what
    this thread reads at another offset), which registers cannot prove absent."""
    addr = _address(load)
    if addr is None:
        return False
    body = [cfg.insts[j] for j in cfg.loop_instructions(loop)]
    if any(i.opcode == "BAR" for i in body) and any(i.opcode in _STORES for i in body):
        return True
    return any(i.opcode in _STORES and _address(i) == addr for i in body)


def _regs_in(operand: str) -> set[str]:
    out = set()
    for kind, num, suffix in re.findall(r"\b(U?R)(\d+)(\.64)?\b", operand):
        n = int(num)
        out.update({f"{kind}{n}", f"{kind}{n + 1}"} if suffix else {f"{kind}{n}"})
    return out


_VARYING = (
    "S2R",
    "S2UR",
    "CS2R",
    "LDG",
    "LD",
    "LDL",
    "LDS",
    "ATOM",
    "ATOMG",
    "ATOMS",
    "SHFL",
    "TLD",
    "TEX",
    "VOTE",
    "MATCH",
)


def _invariant(cfg, idx: int, reg: str, loop, memo: dict, depth: int) -> bool:
    """Is ``reg`` as read by instruction ``idx`` the same in every iteration of ``loop``?
    True when every reaching definition lies outside the loop, or is itself computed inside
    the loop only from invariant values (e.g. a kernel parameter reloaded with LDC)."""
    from ..sass.slicing import _reaching_defs

    if depth > 8:
        return False
    defs = _reaching_defs(cfg, idx, reg, 10_000)
    if not defs:
        return True
    for j, _ in defs:
        if cfg.block_of[j] not in loop.blocks:
            continue
        if j in memo:
            if not memo[j]:
                return False
            continue
        d = cfg.insts[j]
        memo[j] = False  # a cycle through the loop's back edge means it varies
        if d.opcode in _VARYING or (d.opcode == "LDC" and d.is_const_indexed()):
            return False
        ok = all(_invariant(cfg, j, u, loop, memo, depth + 1) for u in d.uses)
        memo[j] = ok
        if not ok:
            return False
    return True


_PASS_VALUES = ("IADD3", "IADD", "IMAD", "LEA", "SHF", "SHL", "SHR", "MOV")  # one value in, one value out per lane


def _lane_values(cfg, idx: int, reg: str, depth: int = 0) -> int:
    """At most how many different values ``reg`` holds across a warp's lanes as instruction
    ``idx`` reads it: 1 if it cannot vary; 2^b where the varying part passes through an AND
    with a b-bit immediate mask (LOP3.LUT ... 0xc0, a & b) and then only through adds, shifts
    and moves with warp-uniform operands; else 32."""
    from ..sass.slicing import _reaching_defs

    if not thread_varying(cfg, idx, reg):
        return 1
    defs = _reaching_defs(cfg, idx, reg, 10_000)
    if depth > 8 or len(defs) != 1:
        return 32
    j = defs[0][0]
    d = cfg.insts[j]
    if d.opcode == "LOP3" and len(d.operands) >= 5 and d.operands[-2].strip() == "0xc0":
        masks = [o for o in d.operands[1:4] if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", o.strip())]
        if masks:
            return min(32, 2 ** bin(int(masks[0], 0)).count("1"))
    if d.opcode in _PASS_VALUES:
        n = 1
        for u in d.uses:
            if not u.startswith("P"):
                n *= _lane_values(cfg, j, u, depth + 1)
        return min(32, n)
    return 32


def _atomic_addresses(ctx: KernelContext, pc: int) -> int:
    """Different addresses one warp's atomic at ``pc`` can target (its address registers'
    lane values, at most 32): a warp aggregation keeps one atomic per address."""
    ins = ctx.by_pc.get(pc)
    idx = ctx.cfg.index_of_pc.get(pc) if ctx.cfg is not None else None
    if ins is None or idx is None:
        return 32
    addr = _address(ins)
    regs = _regs_in(addr) if addr else set()
    n = 1
    for r in regs:
        n *= _lane_values(ctx.cfg, idx, r)
    return min(32, n)


def atomics(ctx: KernelContext) -> Detection | None:
    pcs = ctx.pcs_where(lambda i: i.is_global_atomic())
    if not pcs:
        return None
    r, w = _cost_share(ctx, pcs, None, ("long_scoreboard",))
    executed = ctx.df.loc[[p for p in pcs if p in ctx.df.index], "inst_executed"].sum() > 0
    # Outstanding atomics hold warps at EXIT (drain) and fill the LSU queue for other loads.
    drain = ctx.frac("drain") if executed else 0.0
    other_lg = max(
        0.0,
        ctx.frac("lg_throttle") - sum(ctx.samples_at(pcs, ("lg_throttle",)).values()) / max(ctx.samples_total, 1e-9),
    )
    # Loads queue behind the atomics in the memory system: their waits are charged in
    # proportion to the atomics' share of the L2 sectors requested by the SMs.
    k = ctx.kernel
    red = k.m("lts__t_sectors_srcunit_tex_op_red.sum", 0.0) + k.m("lts__t_sectors_srcunit_tex_op_atom.sum", 0.0)
    rd = k.m("lts__t_sectors_srcunit_tex_op_read.sum", 0.0)
    blamed_ls = sum(ctx.blamed_by_pc(pcs, ("long_scoreboard",)).values()) / max(ctx.samples_total, 1e-9)
    loads_wait = max(0.0, ctx.frac("long_scoreboard") - blamed_ls) if executed else 0.0
    r_total = r + drain + other_lg + (loads_wait * red / (red + rd) if red + rd > 0 else 0.0)
    # Reductions without a returned value (RED) that keep warps waiting while every throughput
    # unit idles: the memory waits are the serialization at the contended addresses.
    units = [v for v in ctx.units.values() if not math.isnan(v)]
    if (
        executed
        and units
        and max(units) < ctx.th["atomic_idle_pct"]
        and all(not ctx.by_pc[p].defs for p in pcs if p in ctx.by_pc)
    ):
        r_total = max(r_total, ctx.frac(*MEMORY_REASONS))
    if r < ctx.th["atomic_share"]:
        return None
    # A returning atomic (ATOM: a slot or ticket per element) gives every lane its own old
    # value, so aggregating within the warp (ballot/popc, then a shuffle of the base) still
    # sends one atomic per warp instruction, and L2 serializes those at the same addresses:
    # that stream stays (split_lists). An ATOM already issued by one lane per warp is
    # aggregated; the next level, a block scan behind a barrier, keeps one per block.
    # Reductions without a returned value (RED) can be accumulated privately across a loop
    # and leave next to nothing. Kept: those operations over today's L2 atomic sectors.
    ran = ctx.executed()
    warps_per_block = max(1.0, math.ceil(max(1, k.block[0] * k.block[1] * k.block[2]) / 32))
    returning = 0.0
    threads = ctx.df["thread_inst_executed"] if "thread_inst_executed" in ctx.df else None
    for p in pcs:
        n = float(ran.get(p) or 0.0)
        if p not in ctx.by_pc or not ctx.by_pc[p].defs or n <= 0:
            continue
        lanes = float(threads[p]) / n if threads is not None else math.nan
        # Aggregated within the warp, one atomic per warp instruction stays for each address
        # its lanes target (split_lists: a data bit picks one of two counters, two stay).
        returning += n / warps_per_block if lanes == lanes and lanes <= 1.0 else n * _atomic_addresses(ctx, p)
    kept = min(1.0, returning / red) if returning > 0 and red > 0 else 0.0
    r_total *= 1.0 - kept
    types = _atomic_types(ctx, pcs)
    return Detection(
        stall_share=min(1.0, r_total * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=eliminate(r_total),
        evidence={
            "atomic_sample_share": round(r, 3),
            "kept_after_aggregation": round(kept, 4),
            "l2_red_sectors": _r(k.m("lts__t_sectors_srcunit_tex_op_red.sum")),
            "l2_atom_sectors": _r(k.m("lts__t_sectors_srcunit_tex_op_atom.sum")),
            "atomic_data_types": sorted(types),
        },
        locations=ctx.locations(w),
        fmt={"share_pct": 100 * r},
        variant="float" if types and types <= {"float"} else "mixed" if "float" in types else None,
    )


_FLOAT_TYPES = ("F32", "F64", "F16", "F16x2", "BF16", "BF16x2", "F32x2", "FTZ")


def _atomic_types(ctx: KernelContext, pcs) -> set[str]:
    """'float' / 'integer' for the executed global atomics at ``pcs``, from the SASS type
    modifier (RED.E.ADD.F32.FTZ.RN is a float add; RED.E.ADD, .S32, .64 are integer)."""
    executed = ctx.executed()
    out = set()
    for pc in pcs:
        ins = ctx.by_pc.get(pc)
        if ins is None or not (executed.get(pc) or 0) > 0:
            continue
        out.add("float" if any(m in _FLOAT_TYPES for m in ins.modifiers) else "integer")
    return out


def _drain_variant(ctx: KernelContext) -> tuple[str | None, dict]:
    """What drains at EXIT: stores, or (no global store sectors) atomics and reductions."""
    k = ctx.kernel
    executed = ctx.executed()
    ran = lambda pred: sum(float(executed.get(i.pc) or 0.0) for i in ctx.insts if pred(i))  # noqa: E731
    stores = k.m("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    store_insts = ran(lambda i: i.opcode in ("STG", "ST", "STL"))
    atomics = ran(lambda i: i.is_global_atomic())
    ev = {"global_store_sectors": _r(stores), "store_instructions": _r(store_insts), "atomic_instructions": _r(atomics)}
    no_stores = (stores == 0) if not math.isnan(stores) else (store_insts == 0 and bool(ctx.insts))
    if no_stores and atomics > 0:
        return "atomics", ev
    if no_stores:
        return "other", ev
    return None, ev


def drain(ctx: KernelContext) -> Detection | None:
    s = ctx.share("drain")
    if s < ctx.th["drain_share"]:
        return None
    variant, ev = _drain_variant(ctx)
    return Detection(
        stall_share=s,
        speedup=eliminate(ctx.frac("drain") * 0.5),
        evidence=ev,
        variant=variant,
        locations=ctx.line_samples("drain"),
        fmt={"share_pct": 100 * s},
    )


def lg_throttle(ctx: KernelContext) -> Detection | None:
    pcs = ctx.pcs_where(lambda i: (i.is_global_load() or i.opcode in ("STG", "ST")) and not i.is_atomic())
    at = ctx.samples_at(pcs, ("lg_throttle",))
    tot = ctx.samples_total
    if tot <= 0:
        s = ctx.share("lg_throttle")
        r = ctx.frac("lg_throttle")
    else:
        r = sum(at.values()) / tot
        s = r * ctx.total / max(ctx.stall_total, 1e-9)
    if s < ctx.th["lg_throttle_share"]:
        return None
    return Detection(stall_share=s, speedup=eliminate(r * 0.5), locations=ctx.locations(at), fmt={"share_pct": 100 * s})


# ---- synchronization ------------------------------------------------------------------
def _blamed_locations(ctx: KernelContext, reason: str) -> list[dict]:
    """Lines of the instructions the blamer charges (the barrier/fence itself), falling
    back to where the samples were observed."""
    w = ctx.blamed_by_pc([i.pc for i in ctx.insts], (reason,))
    return ctx.locations(w) if w else ctx.line_samples(reason)


# Special registers that differ between the warps (or lanes) of one block; the block and
# grid indices (SR_CTAID, SR_NCTAID) are the same for every warp of a block.
_THREAD_INDEX = ("SR_TID", "SR_LANEID", "SR_WARPID", "SR_LTMASK", "SR_LEMASK", "SR_GTMASK", "SR_GEMASK")


def _thread_tainted_branches(cfg, through_memory: bool = True) -> list[int]:
    """Indices of conditional branches whose predicate depends on the thread or warp index:
    a forward data-flow over the CFG from the S2R reads of those registers, through every
    instruction that uses a dependent register (with ``through_memory``, loads and shuffles
    included: a value read at a thread-dependent address, such as a segment bound indexed by
    the warp, differs too)."""
    insts, blocks = cfg.insts, cfg.blocks
    entry: list[set[str] | None] = [None] * len(blocks)
    entry[0] = set()
    work = [0]
    branches: set[int] = set()
    while work:
        b = work.pop()
        live = set(entry[b] or ())
        for j in range(blocks[b].start, blocks[b].end):
            ins = insts[j]
            src = ins.opcode in ("S2R", "CS2R") and any(o.startswith(_THREAD_INDEX) for o in ins.operands[1:])
            dep = src or (bool(ins.uses & live) and (through_memory or (not ins.is_memory() and ins.opcode != "SHFL")))
            if ins.opcode in ("BRA", "BREAK") and ins.guard not in (None, "PT") and dep:
                branches.add(j)
            if dep:
                live |= ins.defs
            elif ins.guard in (None, "PT"):
                live -= ins.defs  # a thread-independent value replaces it on every path
        for s in blocks[b].succs:
            old = entry[s]
            new = live if old is None else old | live
            if old is None or new != old:
                entry[s] = set(new)
                work.append(s)
    return sorted(branches)


def _postdominators(cfg) -> list[set[int]]:
    """Post-dominator sets of the CFG's blocks (blocks without successors are exits)."""
    blocks = cfg.blocks
    n = len(blocks)
    exits = [b.id for b in blocks if not b.succs]
    pdom = [set(range(n)) for _ in blocks]
    for e in exits:
        pdom[e] = {e}
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            if not b.succs:
                continue
            new = set.intersection(*(pdom[s] for s in b.succs)) | {b.id}
            if new != pdom[b.id]:
                pdom[b.id] = new
                changed = True
    return pdom


def _thread_dependent_blocks(cfg) -> dict[int, int]:
    """Block id -> index of the thread-dependent branch that decides whether (or how many
    times) a warp runs it: the blocks between such a branch and the point every path from it
    reaches (its post-dominator). A loop whose exit depends on the thread index runs a
    different number of times in different warps; an if on it runs in some warps only."""
    pdom = _postdominators(cfg)
    out: dict[int, int] = {}
    for j in _thread_tainted_branches(cfg):
        b = cfg.block_of[j]
        stop = pdom[b] - {b}
        seen, stack = set(), list(cfg.blocks[b].succs)
        while stack:
            x = stack.pop()
            if x in seen or x in stop:
                continue
            seen.add(x)
            stack.extend(cfg.blocks[x].succs)
        for x in seen:
            out.setdefault(x, j)
    return out


def _index_bound_branches(cfg) -> set[int]:
    """Conditional branches whose predicate the thread index decides through arithmetic
    alone: the taint of ``_thread_tainted_branches`` without loads (a value read from memory,
    even at a thread-dependent address, is data, not the index)."""
    return set(_thread_tainted_branches(cfg, through_memory=False))


def _triangular_loops(ctx: KernelContext) -> dict[int, float]:
    """Loops whose trip count grows with the thread index (thread t runs about t steps: a
    running sum or prefix that each thread recomputes from the start): block id -> the
    lanes' spread of trip counts within a warp, in loop iterations. Two signs, both needed:
    the loop's exit branch is decided by the thread index through arithmetic alone (SASS),
    and the lanes of a warp leave the loop more than one iteration apart (the counters: the
    lane-iterations a body block misses against the lanes that enter the loop). A loop that
    strides by the block size (``for (i = tid; i < n; i += blockDim.x)``) also exits on an
    index-derived value, but its lanes differ by at most one iteration."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or "thread_inst_executed" not in df:
        return {}
    exits = _index_bound_branches(cfg)
    executed = ctx.executed()
    threads = dict(zip(df.index.tolist(), df["thread_inst_executed"].tolist()))
    out: dict[int, float] = {}
    for loop in cfg.loops:
        idx = cfg.loop_instructions(loop)
        if not any(
            j in exits and any(s not in loop.blocks or s == loop.header for s in cfg.blocks[cfg.block_of[j]].succs)
            for j in idx
        ):
            continue
        # Lanes entering the loop: the thread instructions of its first instruction from
        # outside (a predecessor block's last instruction).
        preds = [b.id for b in cfg.blocks if loop.header in b.succs and b.id not in loop.blocks]
        lanes_in = sum(float(threads.get(cfg.insts[cfg.blocks[b].end - 1].pc) or 0.0) for b in preds)
        if lanes_in <= 0:
            continue
        for b in loop.blocks:
            pc = cfg.insts[cfg.blocks[b].start].pc
            n, t = float(executed.get(pc) or 0.0), float(threads.get(pc) or 0.0)
            if n <= 0 or math.isnan(t):
                continue
            spread = (32.0 * n - t) / lanes_in
            if spread > 1.0:
                out[b] = max(out.get(b, 0.0), spread)
    return out


def _warp_cycles_per_sample(ctx: KernelContext) -> float:
    """Warp-cycles one PC sample stands for: resident warps x active cycles x SMs over the
    kernel's samples (NaN when a counter is missing)."""
    k = ctx.kernel
    _, sms = _grid(ctx)
    warps = k.m("sm__warps_active.avg.per_cycle_active")
    cycles = k.m("sm__cycles_active.avg")
    total = ctx.samples_total
    if not sms or total <= 0 or any(math.isnan(v) or v <= 0 for v in (warps, cycles)):
        return math.nan
    return warps * cycles * sms / total


def _barrier_regions(ctx: KernelContext) -> list[dict]:
    """Per barrier (program order): the waits at it (barrier samples from it to the next
    barrier: a waiting warp is sampled at an instruction shortly after the BAR), the
    thread-dependent work since the previous barrier, and how long a warp's interval
    between the two lasts on average (cycles: the region's samples, waits included, in
    warp-cycles per crossing of the barrier)."""
    cfg = ctx.cfg
    if cfg is None or not ctx.sampling or ctx.df.empty:
        return []
    # BAR.ARV only arrives; every other BAR form waits for the block.
    bars = [j for j, i in enumerate(cfg.insts) if i.opcode == "BAR" and "ARV" not in i.modifiers]
    if not bars:
        return []
    dependent = _thread_dependent_blocks(cfg)
    pcs = [i.pc for i in cfg.insts]
    every = ctx.samples_at(pcs)
    waits = ctx.samples_at(pcs, ("barrier",))
    busy = {pc: every.get(pc, 0.0) - waits.get(pc, 0.0) for pc in pcs}
    executed = ctx.executed()
    per_sample = _warp_cycles_per_sample(ctx)
    out = []
    for n, b in enumerate(bars):
        before = range(bars[n - 1] if n else 0, b)
        after = range(b, bars[n + 1] if n + 1 < len(bars) else len(pcs))
        wait = sum(waits.get(pcs[j], 0.0) for j in after)
        region = wait + sum(busy[pcs[j]] for j in before)
        work = {pcs[j]: busy[pcs[j]] for j in before if cfg.block_of[j] in dependent and busy[pcs[j]] > 0}
        crossings = float(executed.get(pcs[b]) or 0.0)
        interval = region * per_sample / crossings if crossings > 0 else math.nan
        out.append(
            {
                "barrier": b,
                "wait": wait,
                "region": region,
                "work": work,
                "interval_cycles": interval,
                "waits_at": [pcs[j] for j in after],
            }
        )
    return out


def barrier(ctx: KernelContext) -> Detection | None:
    """Warps wait at a barrier for work before it that only some warps run, or run longer:
    code under a branch whose guard or trip count depends on the thread or warp index (from
    the SASS). Only the waits at such barriers count, and only where the interval between
    barriers outlasts a few memory round trips: waits in shorter intervals are the latency of
    the slowest warp's access (a transpose, a block that syncs after one load per segment),
    which no rebalancing removes.

    Estimate: the waits go (each warp keeps its share of the work, 1 - 1/warps of the waits
    removed), with two readings of the unbalanced work. A triangular loop (trip count growing
    with the thread index) also loses its repeated steps beyond the first warp's share, and
    with them their load on the issue slots and shared memory. Work that already runs on
    full warps, spread over idle warps, issues the same instructions from more warps: latency
    hiding, at most latency_hiding_max."""
    s = ctx.share("barrier")
    if s < ctx.th["barrier_share"]:
        return None
    regions = _barrier_regions(ctx)
    specialized = ctx.traits is not None and ctx.traits.warp_specialized
    min_cycles = ctx.th["barrier_interval_latencies"] * float((ctx.arch.get("latency") or {}).get("dram", 600))
    unbalanced = [r for r in regions if r["work"] and not (r["interval_cycles"] < min_cycles)]
    if regions and not specialized:
        s = sum(r["wait"] for r in unbalanced) / max(ctx.stall_total, 1e-9)
        if s < ctx.th["barrier_share"]:
            return None
    k = ctx.kernel
    warps = max(1, math.ceil((k.block[0] or 1) * (k.block[1] or 1) * (k.block[2] or 1) / 32))
    frac = s * ctx.stall_total / ctx.total if ctx.total > 0 else 0.0
    r = frac * (1.0 - 1.0 / warps if warps > 1 else 0.5)
    evidence: dict[str, Any] = {"barrier_stall_share": round(s, 3), "warps_per_block": warps}
    relieves, partial, cap = None, None, math.inf
    work_pcs = {pc for reg in unbalanced for pc in reg["work"]}
    tri = _triangular_loops(ctx) if unbalanced and warps > 1 else {}
    cfg = ctx.cfg
    tri_pcs = {i.pc for j, i in enumerate(ctx.insts) if cfg is not None and cfg.block_of[j] in tri and i.pc in work_pcs}
    if tri_pcs and ctx.total > 0:
        # A triangular loop repeats in every thread the steps the threads before it took;
        # sharing the partial results (a scan) leaves each warp about the first warp's
        # share: with trip counts growing linearly over the block's W warps, 2 / (W + 1) of
        # the mean. The waits go, and so do the loop's other instructions, which unloads
        # the issue slots and the units they use (partial relief, measured per instruction).
        keep = 2.0 / (warps + 1)
        loop = sum(reg["work"].get(pc, 0.0) for reg in unbalanced for pc in tri_pcs)
        r = (frac * ctx.total + loop * (1.0 - keep)) / ctx.total
        executed = ctx.executed()
        ins_all = ctx.executed_total()
        mem_all = sum(float(executed.get(i.pc) or 0.0) for i in ctx.insts if i.is_memory())
        ins_loop = sum(float(executed.get(pc) or 0.0) for pc in tri_pcs)
        mem_loop = sum(float(executed.get(pc) or 0.0) for pc in tri_pcs if ctx.by_pc[pc].is_memory())
        w_ins = (1.0 - keep) * ins_loop / ins_all if ins_all > 0 else 0.0
        w_mem = (1.0 - keep) * mem_loop / mem_all if mem_all > 0 else 0.0
        relieves = ["sm", "shared"]
        partial = {u: w_ins for u in ("sm", "issue", "fma", "alu", "fp64", "xu")}
        partial.update({"lsu": w_mem, "l1tex": w_mem})
        evidence["triangular_loop_share"] = _r(loop / ctx.total)
        evidence["triangular_lane_spread"] = _r(max(tri.values()), 2)
    elif unbalanced and work_pcs:
        # Work that runs on (nearly) full warps, spread over the block's other warps, issues
        # the same instructions from more warps at once: a latency-hiding change, credited
        # at most latency_hiding_max. Work in one or a few lanes (a thread-0 loop) also
        # fills the idle lanes, which is more than hiding latency.
        threads = ctx.df["thread_inst_executed"] if "thread_inst_executed" in ctx.df else None
        executed = ctx.executed()
        n = sum(float(executed.get(pc) or 0.0) for pc in work_pcs)
        if threads is not None and n > 0:
            lanes = sum(float(threads.get(pc, 0.0) or 0.0) for pc in work_pcs) / n
            evidence["unbalanced_work_lanes"] = _r(lanes, 1)
            if lanes >= ctx.th["barrier_full_warp_lanes"]:
                cap = ctx.th["latency_hiding_max"]
    locations = _blamed_locations(ctx, "barrier")
    work_text = ""
    if unbalanced:
        # The barriers named are those the unbalanced work precedes.
        pcs = [pc for reg in unbalanced for pc in reg["waits_at"]]
        blamed = ctx.blamed_by_pc(pcs, ("barrier",)) or ctx.samples_at(pcs, ("barrier",))
        locations = ctx.locations(blamed) or locations
        work: dict[int, float] = {}
        for reg in unbalanced:
            work.update(reg["work"])
        lines = [
            dict(loc, role="work before the barrier that depends on the thread index") for loc in ctx.locations(work, 3)
        ]
        evidence["unbalanced_work"] = [loc_text(loc) for loc in lines]
        evidence["barrier_interval_cycles"] = [_r(reg["interval_cycles"], 0) for reg in unbalanced]
        locations = locations[:1] + lines + locations[1:]
        if lines:
            work_text = (
                " The work before it whose trip count or guard depends on the thread index is at "
                + ", ".join(evidence["unbalanced_work"])
                + "."
            )
    return Detection(
        stall_share=min(1.0, s),
        speedup=min(eliminate(r), max(1.0, cap)),
        evidence=evidence,
        locations=locations,
        fmt={"share_pct": 100 * min(1.0, s), "unbalanced_work": work_text},
        relieves_override=relieves,
        partial_relief=partial,
    )


def membar(ctx: KernelContext) -> Detection | None:
    """Fences executed more than once per warp. A fence inside a loop also delays the loop's
    next loads until memory has drained: their long-scoreboard waits are charged to the fence
    (when DRAM is not busy, so the waits are not bandwidth), since they show up at the loads,
    not on the fence line."""
    k, df = ctx.kernel, ctx.df
    pcs = ctx.pcs_where(lambda i: i.opcode in ("MEMBAR", "FENCE"))
    warps = _warps_launched(k)
    per_warp = float(df.loc[pcs, "inst_executed"].sum()) / warps if pcs and warps else math.nan
    if not math.isnan(per_warp) and per_warp <= 1.5:
        return None  # one fence per warp is the minimum a publish pattern needs
    r_fence = ctx.frac("membar")
    charged: dict[int, float] = {}
    cfg = ctx.cfg
    dram = ctx.units.get("dram", math.nan)
    if cfg is not None and pcs and ctx.sampling and (math.isnan(dram) or dram < ctx.th["fence_dram_pct"]):
        # A load waits for a fence when one precedes it (straight-line or unrolled code) or
        # shares its loop (the next iteration's load follows this iteration's fence). Each
        # load's waits go to the nearest fence before it (else the loop's last fence).
        fence_idx = sorted(cfg.index_of_pc[pc] for pc in pcs if pc in cfg.index_of_pc)
        owner: dict[int, int] = {}
        for j, ins in enumerate(cfg.insts):
            if not ins.is_global_load() or ins.is_atomic():
                continue
            before = [f for f in fence_idx if f < j]
            loop = cfg.innermost_loop(j)
            in_loop = [f for f in fence_idx if loop is not None and cfg.block_of[f] in loop.blocks]
            f = before[-1] if before else (in_loop[-1] if in_loop else None)
            if f is not None:
                owner[ins.pc] = cfg.insts[f].pc
        if owner:
            waits = _merge(
                ctx.samples_at(list(owner), ("long_scoreboard",)), ctx.blamed_by_pc(list(owner), ("long_scoreboard",))
            )
            for load, w in waits.items():
                charged[owner[load]] = charged.get(owner[load], 0.0) + w
    r = r_fence + (sum(charged.values()) / ctx.samples_total if ctx.samples_total > 0 else 0.0)
    s = r * ctx.total / max(ctx.stall_total, 1e-9)
    if s < ctx.th["membar_share"]:
        return None
    factor = 1.0 - 1.0 / per_warp if not math.isnan(per_warp) else 0.5
    # A device-scope fence waits about as long as the stores before it take to reach L2; the
    # stores still go there without the fence, and other warps must cover that time, so only
    # part of the wait goes away (fence_gpu_kept). A system-scope fence waits far longer than
    # the stores themselves (sysfence_loop): its wait goes away.
    if not any("SYS" in ctx.by_pc[p].modifiers for p in pcs if p in ctx.by_pc):
        factor *= 1.0 - ctx.th["fence_gpu_kept"]
    blamed = ctx.blamed_by_pc([i.pc for i in ctx.insts], ("membar",))
    locs = ctx.locations(_merge(blamed, charged)) if (blamed or charged) else ctx.line_samples("membar")
    return Detection(
        stall_share=min(1.0, s),
        speedup=eliminate(r * factor),
        evidence={
            "membar_stall_share": round(ctx.share("membar"), 3),
            "fences_per_warp": _r(per_warp),
            "load_wait_share_charged_to_fences": round(r - r_fence, 3),
        },
        locations=locs,
        fmt={"share_pct": 100 * min(1.0, s)},
    )


def instruction_overhead(ctx: KernelContext) -> Detection | None:
    """An issue-bound kernel whose hot loop is small and rolled: most issued instructions
    are loop control and index arithmetic around a little math or memory work (the assembly
    model's instruction efficiency). Unrolling removes the per-iteration control and folds
    index math into constant offsets; for an issue-bound loop time follows the count."""
    cfg, df, sol = ctx.cfg, ctx.df, ctx.sol
    if cfg is None or df.empty or sol is None or not cfg.loops:
        return None
    issue = sol.units.get("issue", math.nan)
    if math.isnan(issue) or issue < ctx.th["overhead_issue_pct"]:
        return None
    executed = ctx.executed()
    total = sum(v for v in executed.values() if v == v)
    if total <= 0:
        return None
    cls = dict(zip((i.pc for i in ctx.insts), ctx.classes))
    best: tuple[list[int], float, dict[int, float]] | None = None
    for loop in cfg.loops:
        idxs = cfg.loop_instructions(loop)
        inner = [j for j in idxs if cfg.innermost_loop(j) is loop]
        ex = {cfg.insts[j].pc: float(executed.get(cfg.insts[j].pc) or 0.0) for j in inner}
        body = sum(ex.values())
        if best is None or body > best[1]:
            best = (inner, body, ex)
    if best is None:  # cfg.loops is not empty
        return None
    inner, body, ex = best
    if body < 0.5 * total:
        return None
    useful_cls = ("fp32", "fp64", "fp16", "tensor", "sfu", "memory")
    useful = sum(v for pc, v in ex.items() if cls.get(pc) in useful_cls)
    control = sum(v for pc, v in ex.items() if cls.get(pc) == "control")
    integer = sum(v for pc, v in ex.items() if cls.get(pc) == "int")
    branches = sum(v for pc, v in ex.items() if ctx.by_pc[pc].is_branch())
    if body <= 0 or branches <= 0:
        return None
    overhead = 1.0 - useful / body
    per_iter = useful / branches
    if overhead < ctx.th["overhead_share"] or per_iter > ctx.th["overhead_useful_per_iteration"]:
        return None
    # The performance model's what-if: unrolled by k with k accumulators, loop control,
    # induction steps and index arithmetic once per k iterations, loop-invariant work and
    # range checks hoisted. Without a model: the compare-and-branch of each iteration and
    # about half of the integer index arithmetic (folded into constant offsets) go.
    change = _model_change(ctx, ("unroll",), hoist=True)
    if change is not None:
        speed, model_ev = change
    else:
        removed = (control + 0.5 * integer) / total
        speed, model_ev = eliminate(removed * issue / 100.0), {}
    weights = {pc: v for pc, v in ex.items() if cls.get(pc) in ("int", "control")}
    return Detection(
        stall_share=overhead,
        speedup=speed,
        evidence={
            "issue_utilisation_pct": round(issue, 1),
            "hot_loop_instruction_share": round(body / total, 3),
            "useful_instruction_share": round(useful / body, 3),
            "useful_instructions_per_iteration": round(per_iter, 2),
            **model_ev,
        },
        locations=ctx.locations(weights),
        fmt={"useful_pct": 100 * useful / body, "per_iter": per_iter, "issue_pct": issue},
        relieves_override=["sm"],
    )


# ---- instruction# ---- instruction ------------------------------------------------------------------------
def fp64_conversion(ctx: KernelContext) -> Detection | None:
    df = ctx.df
    if df.empty:
        return None
    pcs = ctx.pcs_where(lambda i: i.is_fp64() or i.is_f2f64())
    conv = ctx.pcs_where(lambda i: i.is_f2f64())
    total = ctx.executed_total()
    if not pcs or total <= 0 or float(df.loc[conv, "inst_executed"].sum()) <= 0:
        return None
    share = float(df.loc[pcs, "inst_executed"].sum()) / total
    if share < ctx.th["fp64_inst_share"]:
        return None
    r, w = _cost_share(ctx, pcs, None, ("short_scoreboard", "wait"))
    r = min(r, 1.0)
    # The float version issues an instruction of its own in place of each double one: the
    # samples where the warp was ready but the scheduler issued another warp (not_selected,
    # the issue slots' contention) stay; the pipe, latency and conversion waits go.
    kept = ("selected", "not_selected")
    r_gone, _ = _cost_share(ctx, pcs, tuple(x for x in ctx.reasons if x not in kept), ("short_scoreboard", "wait"))
    r_gone = min(r_gone, 1.0)
    return Detection(
        stall_share=min(1.0, r * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=eliminate(r_gone * 0.9),
        evidence={"fp64_and_conversion_instruction_share": round(share, 4), "removed_sample_share": round(r_gone, 3)},
        locations=ctx.locations(w),
        fmt={"fp64_pct": 100 * share},
    )


def _division_window(cfg, seed: int, line_of) -> list[int]:
    """Indices of the integer-division sequence that starts at ``seed`` (the I2F.RP that
    converts the divisor for MUFU.RCP): the seed's basic block from the seed on, up to
    ``_DIV_SEQUENCE`` instructions, kept to the seed's source line when lines are known."""
    blk = cfg.block_of[seed]
    line = line_of(cfg.insts[seed].pc)
    out = []
    for j in range(seed, min(len(cfg.insts), seed + _DIV_SEQUENCE)):
        if cfg.block_of[j] != blk:
            break
        if line is None or line_of(cfg.insts[j].pc) in (None, line):
            out.append(j)
    return out


def _sequence_cost(ctx: KernelContext, pcs, blamed_reasons) -> tuple[float, dict[int, float]]:
    """Like _cost_share for a sequence of dependent instructions: the samples at them (every
    reason but 'selected') plus the waits the blamer charges to them at instructions outside
    the sequence; a wait inside it is already counted where it was observed."""
    inside = set(pcs)
    w = dict(ctx.samples_at(pcs, None))
    if ctx.blame is not None:
        wanted = set(blamed_reasons)
        for consumer, producer, reason, samples, *_ in ctx.blame.rows:
            if producer in inside and consumer not in inside and reason in wanted and samples == samples:
                w[producer] = w.get(producer, 0.0) + float(samples)
    tot = ctx.samples_total
    return (sum(w.values()) / tot if tot > 0 else 0.0), w


_DIVISION_CLASSES = ("int", "conversion", "sfu")


def _division_sequence(ctx: KernelContext, seed: int) -> tuple[set[int], bool]:
    """PCs of the integer-division code that the I2F.RP at index ``seed`` belongs to, and
    whether its divisor is the same in every iteration of the loop that redoes it. In a
    called subroutine (a 64-bit division): every instruction of the subroutine, the calls to
    it and the argument moves on the calling line, since the fix removes the call. Inline in
    a loop: the integer, conversion and MUFU instructions of the seed's source line in the
    seed's innermost loop, the quotient's corrections and sign fixes included (a line
    dividing twice keeps both divisions in the loop even when the compiler hoisted one
    reciprocal); the line's loads, stores, branches and floating-point math are other work.
    Without a loop or lines: the fixed window."""
    cfg, line_of = ctx.cfg, ctx.line_of
    assert cfg is not None, "a seed is an instruction of the kernel's SASS"
    ins = cfg.insts[seed]
    divisor = [r for r in ins.uses if not r.startswith("P")]
    sites = ctx.call_sites()
    if ins.pc in sites:
        body = {p for p, site in sites.items() if site == sites[ins.pc]}
        calls = [j for j, i in enumerate(cfg.insts) if i.opcode == "CALL" and i.target in body]
        out = body | {cfg.insts[j].pc for j in calls}
        invariant = True
        for j in calls:
            loop = cfg.innermost_loop(j)
            if loop is None:
                continue
            out |= _line_in_loop(ctx, cfg, j, loop)
            # The divisor as the call passes it: the subroutine reads it unchanged.
            invariant &= all(_invariant(cfg, j, r, loop, {}, 0) for r in divisor)
        return out, invariant
    loop, line = cfg.innermost_loop(seed), line_of(ins.pc)
    invariant = loop is None or all(_invariant(cfg, seed, r, loop, {}, 0) for r in divisor)
    if loop is None or line is None:
        return {cfg.insts[k].pc for k in _division_window(cfg, seed, line_of)}, invariant
    return _line_in_loop(ctx, cfg, seed, loop), invariant


def _line_in_loop(ctx: KernelContext, cfg: CFG, idx: int, loop) -> set[int]:
    """Integer, conversion and MUFU instructions of ``idx``'s source line in ``loop`` (its
    innermost loop): the code the compiler emits for the division on that line."""
    line_of = ctx.line_of
    line = line_of(cfg.insts[idx].pc)
    if line is None:
        return {cfg.insts[idx].pc}
    return {
        cfg.insts[j].pc
        for j in cfg.loop_instructions(loop)
        if cfg.innermost_loop(j) is loop and line_of(cfg.insts[j].pc) == line and ctx.classes[j] in _DIVISION_CLASSES
    }


# An unsigned 32-bit division by a value known only at run time compiles to about 20
# instructions (I2F.RP, MUFU.RCP, F2I, the Newton step, IMAD.HI and two corrections); what
# the fix keeps is a share of the sequence (thresholds division_kept, division_kept_varying).
_DIV_SEQUENCE = 20


def integer_division(ctx: KernelContext) -> Detection | None:
    """GPA's strength reduction for integer division and modulo by a run-time divisor inside
    a loop: the reciprocal setup (I2F.RP, MUFU.RCP, F2I) is redone every iteration, or a
    64-bit division calls the slow subroutine. Cost: the samples on the sequence and those
    its consumers wait for, or its share of the instructions of an issue-bound kernel; the
    fix keeps part of it (less when the divisor is loop-invariant)."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or not cfg.loops:
        return None
    line_of = ctx.line_of
    executed = ctx.executed()
    seq: set[int] = set()
    seeds = []
    varying = False
    warps = _warps_launched(ctx.kernel)
    for j, ins in enumerate(cfg.insts):
        if ins.opcode != "I2F" or "RP" not in ins.modifiers:
            continue
        ex = float(executed.get(ins.pc) or 0.0)
        # Inside a loop, or in a division subroutine (64-bit) called repeatedly from one.
        if not ex > 0 or (cfg.innermost_loop(j) is None and not (warps and ex / warps > 1.5)):
            continue
        seeds.append(ins.pc)
        got, invariant = _division_sequence(ctx, j)
        seq.update(got)
        varying |= not invariant
    if not seeds:
        return None
    pcs = sorted(seq)
    total = ctx.executed_total()
    share_inst = sum(float(executed.get(pc) or 0.0) for pc in pcs) / total if total > 0 else 0.0
    r, w = _sequence_cost(ctx, pcs, ("short_scoreboard", "wait", "math_pipe_throttle"))
    if not ctx.sampling or ctx.samples_total <= 0:
        r = share_inst
    if max(r, share_inst) < ctx.th["division_share"]:
        return None
    # The removed instructions' issue slots and the waits on their results both go: time
    # follows the stall samples on the sequence, or, when the kernel is issue-bound, its share
    # of the issued instructions. A loop-invariant divisor's reciprocal leaves the loop and
    # only the multiply-high and its correction stay; a divisor that changes every iteration
    # needs a precomputed reciprocal per divisor, loaded and applied in the loop.
    issue = ctx.sol.units.get("issue", math.nan) if ctx.sol is not None else math.nan
    gone = 1.0 - ctx.th["division_kept_varying" if varying else "division_kept"]
    issue_bound = issue == issue and issue >= ctx.th["overhead_issue_pct"]
    speed = eliminate(max(r, share_inst if issue_bound else 0.0) * gone)
    seed_lines = {line_of(pc) for pc in seeds} - {None}
    weights = _at_call_sites({pc: v for pc, v in w.items() if line_of(pc) in seed_lines} or w, ctx.call_sites())
    return Detection(
        stall_share=min(1.0, r * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=speed,
        evidence={
            "divisions_in_loops": len(seeds),
            "division_instruction_share": round(share_inst, 3),
            "sample_share": round(r, 3),
            "divisor_varies_in_loop": varying,
        },
        locations=ctx.locations(weights),
        fmt={"share_pct": 100 * r, "inst_pct": 100 * share_inst},
        relieves_override=["sm"],
    )


def _model_change(ctx: KernelContext, changes, hoist: bool) -> tuple[float, dict] | None:
    """The best of the performance model's what-ifs ``changes`` (analysis/model.py) for the
    kernel as measured (model.measured_speedup), with its evidence; None without a model or
    when no change applies (the caller's own estimate stands)."""
    from .model import measured_speedup, what_if

    m = getattr(ctx, "model", None)
    if m is None or not m.available:
        return None
    k = int(ctx.th["model_unroll_k"])
    best = None
    for change in changes:
        got = what_if(m, change, k=k, hoist=hoist) if change == "unroll" else what_if(m, change)
        if got is not None:
            s = measured_speedup(m, got)
            if best is None or s > best[0]:
                best = (s, got)
    if best is None:
        return None
    s, got = best
    return s, {
        "model_change": got["description"],
        "model_predicted_cycles": round(m.predicted_cycles, 1),
        "model_predicted_cycles_after": got["predicted_cycles"],
        "model_bottleneck_after": got["bottleneck_after"],
    }


def low_ilp(ctx: KernelContext) -> Detection | None:
    s = ctx.share("wait")
    if ctx.frac("wait") < ctx.th["low_ilp_share"]:
        return None
    elig = ctx.kernel.m("smsp__warps_eligible.avg.per_cycle_active")
    if not math.isnan(elig) and elig >= ctx.th["low_ilp_eligible"]:
        return None
    # The performance model's what-ifs: the hot loop unrolled by k with k independent
    # accumulators, or more resident warps; the better one. Without a model: the wait stalls
    # removed, at most up to one instruction per cycle.
    change = _model_change(ctx, ("unroll", "warps"), hoist=False)
    if change is not None:
        speed, model_ev = change
    else:
        speed, model_ev = eliminate(ctx.frac("wait")), {}
        sel = ctx.frac("selected")
        if sel > 0:
            speed = min(speed, 1.0 / sel)
    w = ctx.blamed_by_pc([i.pc for i in ctx.insts], ("wait",)) or {}
    return Detection(
        stall_share=s,
        speedup=speed,
        evidence={"wait_stall_share": round(s, 3), "eligible_warps_per_scheduler": _r(elig), **model_ev},
        locations=ctx.locations(w) or ctx.line_samples("wait"),
        fmt={"share_pct": 100 * s, "eligible": 0.0 if math.isnan(elig) else elig},
    )


_TRANSCENDENTAL = ("SIN", "COS", "EX2", "LG2", "TANH")
_MATH_MUFU = _TRANSCENDENTAL + ("RCP", "RSQ", "SQRT", "RCP64H", "RSQ64H")


def _math_mufus(ctx: KernelContext) -> set[int]:
    """PCs of MUFUs that do floating-point math: transcendentals, reciprocals and roots of
    precise division, sqrt and pow. A MUFU.RCP whose operand an I2F.RP defines is the setup
    of an integer division (integer-division), not math."""
    from ..sass.slicing import _reaching_defs

    out = set()
    cfg = ctx.cfg
    # Precise division and square root call a slow-path subroutine from their line; the
    # fast forms (rsqrtf, __fdividef) are a lone MUFU and are not slow math.
    call_lines = {ctx.line_of(i.pc) for i in ctx.insts if i.opcode == "CALL"} - {None}
    in_subroutine = ctx.call_sites()
    for i in ctx.insts:
        if not (i.is_mufu() and i.modifiers and i.modifiers[0] in _MATH_MUFU):
            continue
        if i.modifiers[0] not in _TRANSCENDENTAL and ctx.line_of(i.pc) not in call_lines and i.pc not in in_subroutine:
            continue
        idx = cfg.index_of_pc.get(i.pc) if cfg is not None else None
        if cfg is not None and idx is not None:
            if _fast_intrinsic(cfg, idx):
                continue
            if i.modifiers[0] == "RCP" and any(
                cfg.insts[j].opcode == "I2F" and "RP" in cfg.insts[j].modifiers
                for r in i.uses
                for j, _ in _reaching_defs(cfg, idx, r, 10_000)
            ):
                continue
        out.add(i.pc)
    return out


# The SFU takes sine and cosine arguments in revolutions and exponentials in base 2: the
# intrinsics __sinf/__cosf and __expf/__exp10f scale their argument by one multiply (by 1/2pi,
# log2(e) or log2(10)) straight into the MUFU, where the precise functions reduce the
# argument first (a polynomial or an FFMA chain defines the MUFU's operand).
_FAST_SCALE = {"SIN": (0.159154936,), "COS": (0.159154936,), "EX2": (1.44269502, 3.32192802)}


def _fast_intrinsic(cfg, idx: int) -> bool:
    """Is the MUFU at ``idx`` a fast intrinsic (__sinf, __cosf, __expf, __exp10f, __logf)? Its operand
    is defined by a multiply by the SFU's scale constant, through at most the denormal guard
    of __expf (a predicated multiply by 0.5 of the same register)."""
    from ..sass.slicing import _reaching_defs

    ins = cfg.insts[idx]
    if ins.modifiers[:1] == ("LG2",):
        return _scaled_after(cfg, idx)
    scales = _FAST_SCALE.get(ins.modifiers[0] if ins.modifiers else "")
    if not scales or len(ins.operands) < 2:
        return False
    reg = ins.operands[1].lstrip("-|").rstrip("|")
    seen: set[int] = set()
    todo = [j for j, _ in _reaching_defs(cfg, idx, reg, 10_000)]
    if not todo:
        return False
    while todo:
        j = todo.pop()
        if j in seen:
            continue
        seen.add(j)
        d = cfg.insts[j]
        if d.opcode != "FMUL" or len(d.operands) < 3:
            return False
        const = _float_operand(d.operands[2])
        if const is not None and any(abs(abs(const) - c) <= 1e-6 * c for c in scales):
            continue
        if d.guard is not None and const == 0.5 and d.operands[1] == reg:
            todo.extend(k for k, _ in _reaching_defs(cfg, j, reg, 10_000))
            continue
        return False
    return True


def _scaled_after(cfg, idx: int) -> bool:
    """__logf/__log10f/__log2f: the MUFU.LG2's result goes straight into a multiply by ln(2)
    or log10(2) (through at most the denormal guard's predicated add of -24), or is the
    result itself; the precise logf evaluates a polynomial instead of using the SFU."""
    ins = cfg.insts[idx]
    if not ins.operands:
        return False
    reg = ins.operands[0]
    block = cfg.blocks[cfg.block_of[idx]]
    for j in range(idx + 1, block.end):
        d = cfg.insts[j]
        if reg not in d.uses:
            continue
        if d.guard is not None and d.opcode == "FADD" and d.operands[:2] == [reg, reg]:
            continue
        const = _float_operand(d.operands[2]) if d.opcode == "FMUL" and len(d.operands) >= 3 else None
        return const is not None and any(abs(abs(const) - c) <= 1e-6 * c for c in (0.693147181, 0.301029996))
    return False


def _float_operand(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _at_call_sites(weights: dict[int, float], sites: dict[int, int]) -> dict[int, float]:
    out: dict[int, float] = {}
    for pc, v in weights.items():
        out[sites.get(pc, pc)] = out.get(sites.get(pc, pc), 0.0) + v
    return out


def _subroutines_at_call_sites(ctx: KernelContext, df):
    """The per-instruction table with the lines of called subroutines replaced by the line
    of their call site (KernelContext.call_sites), so that their cost lands on the call."""
    sites = ctx.call_sites()
    if not sites or "line" not in df:
        return df
    lines = df["line"].copy()
    hit = lines.index.isin(list(sites))
    at = {pc: ctx.line_of(site) for pc, site in sites.items()}
    lines[hit] = [line[1] if (line := at[pc]) else None for pc in lines.index[hit]]
    return df.assign(line=lines)


# Bit patterns of the small integers 2..16 as a float32 and as the high word of a float64:
# how a literal exponent reaches a called pow in a register (IMAD.MOV.U32 R5, RZ, RZ, 0x40000000).
_SMALL_INTEGER_BITS = {
    **{struct.unpack("<I", struct.pack("<f", float(n)))[0]: n for n in range(2, 17)},
    **{struct.unpack("<Q", struct.pack("<d", float(n)))[0] >> 32: n for n in range(2, 17)},
}


def _literal_integer_exponent(ctx: KernelContext, lines) -> int | None:
    """The small integer a slow line passes to a called math subroutine as a literal (pow(d,
    2.0) sets the exponent's register to 2.0's bits before the CALL), or None. GPA's strength
    reduction: an integer power is a few multiplications."""
    sites = ctx.call_sites()
    calls = {ctx.line_of(i.pc) for i in ctx.insts if i.opcode == "CALL"} - {None}
    for i in ctx.insts:
        if i.pc in sites or ctx.line_of(i.pc) not in calls or ctx.line_of(i.pc) not in lines:
            continue
        if not (i.opcode in ("MOV", "UMOV") or (i.opcode == "IMAD" and "MOV" in i.modifiers)) or not i.operands:
            continue
        try:
            bits = int(i.operands[-1].strip(), 16) if i.operands[-1].strip().startswith("0x") else None
        except ValueError:
            bits = None
        if bits in _SMALL_INTEGER_BITS:
            return _SMALL_INTEGER_BITS[bits]
    return None


def slow_math(ctx: KernelContext) -> Detection | None:
    df = ctx.df
    if df.empty or not ctx.sampling:
        return None
    mufu = _math_mufus(ctx)
    if not mufu:
        return None
    df = _subroutines_at_call_sites(ctx, df)
    lined = df["line"].notna().to_numpy()
    d = df[lined] if lined.any() else df.assign(line=0)
    # Per source line (file, line; in groupby's order), summed with arrays over the rows:
    # executed instructions, those on transcendental MUFUs, and stall samples (all reasons).
    gid = d.groupby(["file", "line"], dropna=False).ngroup().to_numpy()
    n = int(gid.max()) + 1 if len(gid) else 0
    pcs = d.index.to_numpy()
    ex = np.nan_to_num(d["inst_executed"].to_numpy(dtype=float))
    is_mufu = np.isin(pcs, np.fromiter(mufu, dtype=pcs.dtype, count=len(mufu)))
    _, _, arr, _ = ctx.stall_matrix()
    row_sums = np.nansum(arr, axis=1) if arr.shape[1] else np.zeros(len(arr))
    samples_of = row_sums[lined] if lined.any() else row_sums
    mu_by = np.bincount(gid, weights=np.where(is_mufu, ex, 0.0), minlength=n)
    ex_by = np.bincount(gid, weights=ex, minlength=n)
    samples_by = np.bincount(gid, weights=samples_of, minlength=n)
    rows = []
    for j in np.flatnonzero(mu_by > 0).tolist():
        ratio = float(ex_by[j]) / float(mu_by[j])
        if ratio >= ctx.th["slow_math_ratio"]:
            rows.append((j, ratio, float(samples_by[j])))
    if not rows:
        return None
    tot = ctx.samples_total
    samples = sum(r[2] for r in rows)
    frac = samples / tot if tot else 0.0
    if frac < ctx.th["slow_math_share"]:
        return None
    ratio = max(r[1] for r in rows)
    # The slow lines' executed instructions: each one the fix removes frees its issue slot and
    # the dependent waits on it, which the samples of a long dependent sequence (a called pow)
    # undercount against the few instructions left around it. The fix keeps about 3
    # instructions per MUFU.
    ex_total = float(ex.sum())
    inst = sum(float(ex_by[row[0]]) for row in rows) / ex_total if ex_total > 0 else 0.0
    r = max(frac, inst) * max(0.0, 1.0 - 3.0 / ratio)
    # Weights line by line, each line's PCs in table order (as a loop over the groups gave).
    at = np.flatnonzero(np.isin(gid, [row[0] for row in rows]))
    at = at[np.argsort(gid[at], kind="stable")]
    w = _at_call_sites(dict(zip(pcs[at].tolist(), samples_of[at].tolist())), ctx.call_sites())
    # Fast intrinsics run on the same special-function unit: the MUFUs stay, so the XU pipe
    # keeps at least today's load and bounds the gain (partial relief 0).
    lines = set()
    if "line" in d:
        keys = d[["file", "line"]].to_numpy()
        lines = {(f, ln) for f, ln in keys[np.isin(gid, [row[0] for row in rows])].tolist()}
    exponent = _literal_integer_exponent(ctx, lines)
    evidence = {"instructions_per_mufu": round(ratio, 1), "slow_line_instruction_share": round(inst, 3)}
    if exponent is not None:
        evidence["literal_integer_exponent"] = exponent
    return Detection(
        stall_share=frac,
        speedup=eliminate(r),
        evidence=evidence,
        locations=ctx.locations(w),
        fmt={"ratio": ratio, "exponent": exponent or 0},
        partial_relief={"xu": 0.0},
        variant="integer_power" if exponent is not None else None,
    )


def launch_lanes(k) -> float:
    """Average lanes per warp the launch configuration fills (32 unless the block size is
    not a multiple of 32: a 16-thread block's one warp has 16)."""
    bs = k.block[0] * k.block[1] * k.block[2]
    if not bs or bs <= 0:
        return 32.0
    return bs / math.ceil(bs / 32)


def divergence(ctx: KernelContext) -> Detection | None:
    k, df = ctx.kernel, ctx.df
    thr = k.m("smsp__thread_inst_executed_per_inst_executed.ratio")
    if math.isnan(thr) and not df.empty and ctx.total_of("inst_executed") > 0:
        thr = ctx.total_of("thread_inst_executed") / ctx.total_of("inst_executed")
    # Lanes the launch never filled are partial-warps, not divergence: judge the rest.
    lanes = launch_lanes(k)
    if not math.isnan(thr):
        thr = thr * 32.0 / lanes
    if math.isnan(thr) or thr >= ctx.th["divergence_threads"]:
        return None
    if df.empty or not ctx.sampling:
        r = 1.0 - thr / 32.0
        return Detection(
            stall_share=r,
            speedup=eliminate(r * 0.5),
            evidence={"avg_active_threads": round(thr, 1)},
            fmt={"threads": thr},
        )
    cols = [c for c in df.columns if c.startswith("stall_")]
    per = (df["thread_inst_executed"] / df["inst_executed"].where(df["inst_executed"] > 0)).fillna(lanes)
    wasted = df[cols].sum(axis=1) * (1.0 - per.clip(upper=lanes) / lanes)
    r = float(wasted.sum()) / max(ctx.samples_total, 1e-9)
    if r <= 0.01:
        return None
    # Locate the branch that splits the warp: divergent branches if counted, else the
    # instructions that run with a partial warp, weighted by the time they waste.
    w = _positive(df["divergent_branches"]) if "divergent_branches" in df else {}
    if not w:
        w = _positive(wasted)
    evidence = {
        "avg_active_threads": round(thr, 1),
        "divergent_branch_targets": _r(k.m("smsp__sass_branch_targets_threads_divergent.sum")),
    }
    return Detection(
        stall_share=r,
        speedup=_active_only(ctx, eliminate(r), evidence),
        evidence=evidence,
        locations=ctx.locations(w),
        fmt={"threads": thr},
    )


def _active_only(ctx: KernelContext, s: float, evidence: dict) -> float:
    """A change inside the warps (fewer masked lanes) shortens the time the SMs are active;
    the elapsed cycles in which an SM has no warp (the launch ramp, the last blocks'
    tail: sm__cycles_active below sm__cycles_elapsed) stay: 1 / (a / s + 1 - a) for the
    active share a."""
    act, ela = ctx.kernel.m("sm__cycles_active.avg"), ctx.kernel.m("sm__cycles_elapsed.avg")
    if s <= 1.0 or any(math.isnan(v) or v <= 0 for v in (act, ela)) or act >= ela:
        return s
    a = act / ela
    evidence["sm_active_share"] = _r(a)
    return 1.0 / (a / s + 1.0 - a)


_LANE_SOURCES = ("SR_TID", "SR_LANEID", "SR_LANEMASK")
_PER_THREAD = ("LDG", "LD", "LDS", "LDL", "LDSM", "ATOM", "ATOMG", "ATOMS", "SHFL", "TLD", "TEX", "LDGSTS", "MATCH")


def thread_varying(cfg, idx: int, reg: str, memo: dict | None = None, depth: int = 0) -> bool:
    """Can ``reg``, as instruction ``idx`` reads it, differ between the lanes of a warp? Yes
    when it derives from the thread or lane index or from per-thread loaded data; no for
    uniform registers, kernel parameters, constants and loop counters built from them."""
    from ..sass.slicing import _reaching_defs

    if reg.startswith("U") or reg in ("RZ", "URZ"):
        return False  # the uniform datapath holds one value per warp
    memo = {} if memo is None else memo
    if depth > 16:
        return True  # too deep to tell: assume it varies
    for j, _ in _reaching_defs(cfg, idx, reg, 10_000):
        if j in memo:
            if memo[j]:
                return True
            continue
        memo[j] = False  # a cycle (a loop counter) adds nothing new
        d = cfg.insts[j]
        varying = (
            (d.opcode in ("S2R", "CS2R") and any(src in d.text for src in _LANE_SOURCES))
            or d.opcode in _PER_THREAD
            or any(thread_varying(cfg, j, u, memo, depth + 1) for u in d.uses if not u.startswith("P"))
        )
        memo[j] = varying
        if varying:
            return True
    return False


def _divergent_constant_load(cfg, ins) -> bool:
    m = re.search(r"c\[[^\]]*\]\[([^\]]*)\]", ins.text)
    idx = cfg.index_of_pc.get(ins.pc) if cfg is not None else None
    if not m or idx is None:
        return True
    return any(thread_varying(cfg, idx, r) for r in _regs_in(m.group(1)))


@functools.lru_cache(maxsize=64)
def expected_max_load(balls: int, bins: int) -> float:
    """Expected count in the fullest of ``bins`` when ``balls`` fall into them independently
    and uniformly: sum over m of P(max > m), with P(max <= m) = balls! / bins^balls times the
    coefficient of x^balls in (sum_{j<=m} x^j / j!)^bins."""
    if balls <= 0 or bins <= 0:
        return 0.0
    total = 0.0
    for m in range(balls):
        term = [1.0 / math.factorial(j) if j <= m else 0.0 for j in range(balls + 1)]
        poly = [1.0] + [0.0] * balls
        for _ in range(bins):
            poly = [sum(poly[i] * term[n - i] for i in range(n + 1)) for n in range(balls + 1)]
        total += 1.0 - poly[balls] * math.factorial(balls) / bins**balls
    return total


def _table_lookup_wavefronts(access_bytes: int, banks: int, values: int = 32) -> float:
    """Shared-memory wavefronts one warp's lookup needs once a divergent constant table lives
    in shared memory (the fix the finding advises): a wavefront serves one word per bank, so
    32 lanes reading data-selected entries take as many as their fullest bank holds. Wider
    accesses go in phases of banks*4/bytes lanes, each spread over that many bank groups.
    An index that takes fewer ``values`` than there are bank groups (a masked index into a
    small contiguous table; _lane_values counts up to 32) puts each entry in its own bank:
    one wavefront a phase."""
    phases = max(1, access_bytes // 4)
    lanes = max(1, 32 // phases)
    bins = min(lanes, max(1, banks // phases))
    if values < bins:
        return float(phases)
    return phases * expected_max_load(lanes, bins)


def _constant_lookup_bound(ctx: KernelContext, pcs) -> tuple[float, float]:
    """The fix moves the lookups, it does not remove them: the replacement still serves every
    warp lookup through L1's data stage (one wavefront per cycle per SM). With the lookups
    spread over the SMs, the kernel cannot get shorter than that work: elapsed cycles over the
    lookups' wavefronts per SM. Returns (bound, wavefronts per lookup); (inf, 0) if unknown."""
    executed = ctx.executed()
    sms = ctx.kernel.sm_count or ctx.kernel.m("device__attribute_multiprocessor_count", math.nan)
    elapsed = ctx.kernel.m("sm__cycles_elapsed.avg", math.nan)
    banks = int(ctx.arch.get("shared_banks", 32))
    lookups = wavefronts = 0.0
    for pc in pcs:
        n = float(executed.get(pc) or 0.0)
        ins = ctx.by_pc[pc]
        m = re.search(r"c\[[^\]]*\]\[([^\]]*)\]", ins.text)
        idx = ctx.cfg.index_of_pc.get(pc) if ctx.cfg is not None else None
        values = math.prod(_lane_values(ctx.cfg, idx, r) for r in _regs_in(m.group(1))) if m and idx is not None else 32
        lookups += n
        wavefronts += n * _table_lookup_wavefronts(_access_bytes(ins), banks, values)
    if lookups <= 0 or not sms or math.isnan(sms) or math.isnan(elapsed) or elapsed <= 0:
        return math.inf, 0.0
    return max(1.0, elapsed / (wavefronts / sms)), wavefronts / lookups


def constant_divergence(ctx: KernelContext) -> Detection | None:
    # Register-indexed constant loads serialize only when the index differs across lanes.
    pcs = ctx.pcs_where(lambda i: i.is_const_indexed() and _divergent_constant_load(ctx.cfg, i))
    if not pcs:
        return None
    r, w = _cost_share(ctx, pcs, None, ("short_scoreboard", "long_scoreboard", "wait"))
    r += _queue_charge(ctx, pcs, "mio_throttle") + ctx.frac("imc_miss") * 0.5
    if r < ctx.th["constant_share"]:
        return None
    # The rest of the kernel and the moved lookups overlap: the estimate is the smaller of
    # removing the lookups' stalls and the time the lookups' shared-memory wavefronts take.
    bound, per_lookup = _constant_lookup_bound(ctx, pcs)
    evidence = {"indexed_constant_loads": len(pcs), "sample_share": round(r, 3)}
    if per_lookup > 0:
        evidence |= {"replacement_wavefronts_per_lookup": round(per_lookup, 2), "lookup_bound": round(bound, 2)}
    return Detection(
        stall_share=min(1.0, r * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=min(eliminate(r), bound),
        evidence=evidence,
        locations=ctx.locations(w),
        fmt={"share_pct": 100 * r},
    )


def icache(ctx: KernelContext) -> Detection | None:
    s = ctx.share("no_instruction")
    if s < ctx.th["icache_share"]:
        return None
    return Detection(
        stall_share=s,
        speedup=eliminate(ctx.frac("no_instruction") * 0.5),
        locations=ctx.line_samples("no_instruction"),
        fmt={"share_pct": 100 * s},
    )


def pipe_contention(ctx: KernelContext) -> Detection | None:
    s = ctx.share("math_pipe_throttle")
    if s < ctx.th["pipe_throttle_share"]:
        return None
    k = ctx.kernel
    pipes = {
        p: k.m(f"sm__inst_executed_pipe_{p}.avg.pct_of_peak_sustained_active") for p in ("fma", "alu", "fp64", "xu")
    }
    pipes = {p: v for p, v in pipes.items() if not math.isnan(v)}
    pipe = max(pipes, key=pipes.__getitem__) if pipes else "math"
    return Detection(
        stall_share=s,
        speedup=eliminate(ctx.frac("math_pipe_throttle") * 0.5),
        evidence={f"pipe_{p}_pct": round(v, 1) for p, v in pipes.items()},
        locations=ctx.line_samples("math_pipe_throttle"),
        fmt={"share_pct": 100 * s, "pipe": pipe.upper()},
    )


# ---- occupancy and launch -----------------------------------------------------------------
LIMITERS = {
    "registers": (
        "launch__occupancy_limit_registers",
        "Use fewer registers per thread (__launch_bounds__, -maxrregcount, fewer live values).",
    ),
    "shared memory": (
        "launch__occupancy_limit_shared_mem",
        "Use less shared memory per block (smaller tiles, or only what the kernel touches).",
    ),
    "block size": ("launch__occupancy_limit_warps", "Change the block size so more blocks fit per SM."),
    "blocks per SM": (
        "launch__occupancy_limit_blocks",
        "Use larger blocks: the SM's limit on resident blocks is reached first.",
    ),
    "barriers": ("launch__occupancy_limit_barriers", "Use fewer named barriers per block."),
}


def occupancy_limiter(ctx: KernelContext) -> tuple[str | None, dict[str, float]]:
    k = ctx.kernel
    lim = {name: k.m(metric) for name, (metric, _) in LIMITERS.items()}
    lim = {n: v for n, v in lim.items() if not math.isnan(v)}
    if not lim:
        return None, {}
    return min(lim, key=lim.__getitem__), lim


def _limiter_advice(ctx: KernelContext, limiter: str, w_new: float) -> str:
    """The limiter's advice; for registers, with what the change costs: the register count
    per thread that fits the target warps, against today's (a cap below what the code needs
    spills, and spills in hot code can cost more than the extra warps gain; the estimate
    assumes none)."""
    text = LIMITERS[limiter][1]
    regs = ctx.kernel.m("launch__registers_per_thread")
    per_sm = ctx.kernel.m("device__attribute_max_registers_per_multiprocessor", ctx.arch.get("registers_per_sm", 65536))
    if limiter != "registers" or math.isnan(regs) or w_new <= 0:
        return text
    cap = int(per_sm / (w_new * 32) // 8 * 8)
    return (
        f"{text} {int(w_new)} warps per SM fit at most {cap} registers per thread (now {int(regs)}): "
        f"check the spills a cap causes (-Xptxas -v); the estimate assumes none."
    )


def occupancy(ctx: KernelContext) -> Detection | None:
    k = ctx.kernel
    theo = k.m("sm__maximum_warps_per_active_cycle_pct")
    if math.isnan(theo) or theo >= ctx.th["occupancy_pct"]:
        return None
    L = ctx.share(*LATENCY_REASONS)
    if L < ctx.th["latency_share"]:
        return None
    limiter, lim = occupancy_limiter(ctx)
    if limiter is None:
        return None
    wpb = max(1, math.ceil(max(1, k.block[0] * k.block[1] * k.block[2]) / 32))
    max_warps = k.m("device__attribute_max_warps_per_multiprocessor", ctx.arch["max_warps_per_sm"])
    others = [v for n, v in lim.items() if n != limiter]
    new_blocks = min(others) if others else lim[limiter]
    w_cur = theo / 100.0 * max_warps
    w_new = min(max_warps, new_blocks * wpb)
    if w_new <= w_cur:
        return None
    speed = 1.0 / max(1.0 - MAX_REMOVABLE, 1.0 - ctx.frac(*LATENCY_REASONS) * (1.0 - w_cur / w_new))
    issue = k.m("smsp__issue_active.avg.pct_of_peak_sustained_active")
    if not math.isnan(issue) and issue > 0:
        speed = min(speed, 100.0 / issue)
    speed = _bounded_by_units(ctx, speed)
    achieved = k.m("sm__warps_active.avg.pct_of_peak_sustained_active")
    return Detection(
        stall_share=L,
        speedup=max(speed, 1.0),
        evidence={
            "theoretical_occupancy_pct": round(theo, 1),
            "achieved_occupancy_pct": _r(achieved),
            "limiter": limiter,
            "blocks_per_sm_limits": {n: int(v) for n, v in lim.items()},
            "warps_per_sm_if_relieved": int(w_new),
        },
        locations=ctx.line_samples("long_scoreboard", 3),
        fmt={"limiter": limiter, "theoretical": theo, "limiter_advice": _limiter_advice(ctx, limiter, w_new)},
    )


def grid_too_small(ctx: KernelContext) -> Detection | None:
    blocks, sms = _grid(ctx)
    if not sms or not blocks or blocks <= ctx.th["serial_blocks"]:
        return None
    fill = blocks / sms
    if fill >= ctx.th["grid_fill"]:
        return None
    idle = 1.0 - fill
    # GPA's block increase: more blocks fill the idle SMs, and each SM also gets up to its
    # theoretical occupancy of warps instead of one block's, which hides latency (occupancy
    # model, at most latency_hiding_max).
    k = ctx.kernel
    wpb = max(1, math.ceil(max(1, k.block[0] * k.block[1] * k.block[2]) / 32))
    theo = k.m("sm__maximum_warps_per_active_cycle_pct")
    max_warps = k.m("device__attribute_max_warps_per_multiprocessor", ctx.arch["max_warps_per_sm"])
    w_new = theo / 100.0 * max_warps if not math.isnan(theo) else float(wpb)
    hide = 1.0
    if w_new > wpb:
        hide = 1.0 / max(1.0 - MAX_REMOVABLE, 1.0 - ctx.frac(*LATENCY_REASONS) * (1.0 - wpb / w_new))
        hide = min(hide, ctx.th["latency_hiding_max"])
    speed = _bounded_by_units(ctx, hide / max(fill, 1.0 / sms))
    return Detection(
        stall_share=idle,
        speedup=max(speed, 1.0),
        evidence={
            "blocks": int(blocks),
            "sms": int(sms),
            "blocks_per_sm": round(fill, 3),
            "warps_per_sm_after": round(max(w_new, wpb), 1),
        },
        locations=[],
        fmt={"blocks": int(blocks), "sms": int(sms), "fill": fill, "idle_pct": 100 * idle},
    )


def serial_kernel(ctx: KernelContext) -> Detection | None:
    """A grid of one block (or ``serial_blocks``): whether the work could be split is not
    visible in the counters, so no SMs/blocks estimate. What batching the launches surely
    removes is about one launch floor of GPU time per launch."""
    blocks, sms = _grid(ctx)
    if not sms or not blocks or blocks > ctx.th["serial_blocks"] or blocks >= sms:
        return None
    dur = ctx.kernel.duration_ns
    floor = ctx.sol.launch_floor_ns if ctx.sol is not None else math.nan
    if not dur or math.isnan(dur) or math.isnan(floor):
        return None
    speed = dur / max(dur - floor, floor)
    idle = 1.0 - blocks / sms
    return Detection(
        stall_share=idle,
        speedup=max(speed, 1.0),
        evidence={"blocks": int(blocks), "sms": int(sms), "launch_floor_ns": round(floor, 1)},
        fmt={
            "blocks": int(blocks),
            "sms": int(sms),
            "idle_pct": 100 * idle,
            "floor_us": floor / 1000,
            "dur_us": dur / 1000,
        },
    )


def partial_warps(ctx: KernelContext) -> Detection | None:
    """Blocks whose size is not a multiple of 32 leave lanes of every last warp empty: each
    instruction issues for a whole warp and does part of its work, and the SM's block limit
    caps the resident warps. GPA's thread increase: filling the warps does the same work in
    lanes/32 of the issue slots, bounded like every estimate by the busiest other unit."""
    k = ctx.kernel
    bs = k.block[0] * k.block[1] * k.block[2]
    if not bs or bs % 32 == 0:
        return None
    lanes = launch_lanes(k)
    eff = lanes / 32.0
    if eff > ctx.th["partial_warp_fill"]:
        return None
    return Detection(
        stall_share=1.0 - eff,
        speedup=1.0 / eff,
        evidence={"block_size": int(bs), "lanes_per_warp": round(lanes, 2)},
        locations=[],
        fmt={"block": int(bs), "lanes": lanes, "fill_pct": 100 * eff},
        relieves_override=["sm", "l1tex"],
    )


def _load_chain_depth(cfg, body: list[int]) -> int:
    """The longest chain of global loads in one pass over ``body`` where each load's address
    is computed from the previous one's value (pointer chasing, a binary search's probes):
    those loads are in flight one at a time however many the body holds."""
    depth: dict[str, int] = {}
    deepest = 1
    for j in body:
        ins = cfg.insts[j]
        d = max((depth.get(r, 0) for r in ins.uses), default=0)
        if ins.is_global_load() and not ins.is_atomic():
            d += 1
            deepest = max(deepest, d)
        for r in ins.defs:
            depth[r] = d
    return deepest


def memory_latency(ctx: KernelContext) -> Detection | None:
    """Warps wait on global loads while the memory system has headroom: too few loads in
    flight. The loads that carry the waits sit in a loop issuing one or two independent loads
    per iteration (a rolled loop, a dependent index-then-value pair, or a longer body whose
    loads each take their address from the previous one). With k independent loads in flight
    instead of one, (1 - 1/k) of the wait is hidden (k = 4: unroll by 4); the memory units'
    headroom bounds it. With DRAM or L2 at bound_pct or more, only chains qualify."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or not ctx.sampling or ctx.share("long_scoreboard") < ctx.th["latency_load_share"]:
        return None
    mem = max(
        [ctx.units.get(u, math.nan) for u in ("dram", "lts") if not math.isnan(ctx.units.get(u, math.nan))]
        or [math.nan]
    )
    # At or above bound_pct the memory system is busy enough to be the limit, except for a
    # chain of dependent loads: each warp has one in flight whatever the bandwidth in use
    # (hop_chains: random sector loads keep L2 at 63%, four chains in lockstep gain 1.37x),
    # up to saturation; the unit bound then caps the gain.
    if math.isnan(mem) or mem >= ctx.th["saturation_pct"]:
        return None
    chains_only = mem >= ctx.th["bound_pct"]
    loads = ctx.pcs_where(lambda i: i.is_global_load() and not i.is_atomic())
    waits = _merge(ctx.blamed_by_pc(loads, ("long_scoreboard",)), ctx.samples_at(loads, ("long_scoreboard",)))
    executed = ctx.executed()

    def loads_per_iteration(loop) -> float:
        """Global loads executed per back-edge taken to the loop's header."""
        body = cfg.loop_instructions(loop)
        count = lambda pick: sum(float(executed.get(cfg.insts[j].pc) or 0.0) for j in body if pick(cfg.insts[j]))  # noqa: E731
        iters = count(
            lambda i: (
                i.is_branch()
                and i.target is not None
                and cfg.index_of_pc.get(i.target) is not None
                and cfg.block_of[cfg.index_of_pc[i.target]] == loop.header
            )
        )
        depth = _load_chain_depth(cfg, body)
        if chains_only and depth <= 1:
            return math.inf
        return count(lambda i: i.is_global_load()) / iters / depth if iters > 0 else math.inf

    per_loop: dict[int, float] = {}
    hot: dict[int, float] = {}
    for pc, w in waits.items():
        idx = cfg.index_of_pc.get(pc)
        loop = cfg.innermost_loop(idx) if idx is not None else None
        if loop is None or w <= 0:
            continue
        if loop.header not in per_loop:
            per_loop[loop.header] = loads_per_iteration(loop)
        if per_loop[loop.header] <= ctx.th["latency_loads_per_iteration"]:
            hot[pc] = w
    tot = ctx.samples_total
    r = sum(hot.values()) / tot if tot > 0 else 0.0
    if r < ctx.th["latency_load_share"] * 0.5:
        return None
    return Detection(
        stall_share=min(1.0, r * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=eliminate(r * 0.75),
        evidence={"load_wait_share": round(r, 3), "memory_throughput_pct": round(mem, 1)},
        locations=ctx.locations(hot),
        fmt={"share_pct": 100 * r, "mem_pct": mem},
    )


SHARED_UNITS = ("dram", "lts")  # shared by all SMs: a partial wave gets more of them per block


def tail_effect(ctx: KernelContext) -> Detection | None:
    """A last wave that fills part of the GPU. Wave model: with W waves (ncu's
    ``launch__waves_per_multiprocessor``), F = ceil(W) of them take a wave's time T, except
    that the blocks of the partial last wave (a fraction f of a wave) run alone: the part of
    T spent waiting on units all SMs share (DRAM, L2: utilisation u) shrinks to f of it, and
    with several resident blocks per SM the SM's own units are shared by fewer blocks too. The
    last wave takes T * max(f, s), s = 1 - u, the part that does not shrink. Evenly spread
    work takes W * T, so the speedup is (F - 1 + max(f, s)) / W. A memory-bound kernel's tail
    costs little (s small): evening it out gains little, as measured."""
    k = ctx.kernel
    waves = k.m("launch__waves_per_multiprocessor")
    if math.isnan(waves) or waves < 1.0 or waves >= ctx.th["tail_waves"]:
        return None
    full = math.ceil(waves - 1e-9)
    last = waves - (full - 1)
    blocks, sms = _grid(ctx)
    per_sm = k.m("launch__occupancy_limit_blocks")
    resident = blocks / (waves * sms) if blocks and sms and waves > 0 else (per_sm if per_sm == per_sm else 1.0)
    units = {u: v for u, v in ctx.units.items() if not math.isnan(v)}
    shared = [units[u] for u in SHARED_UNITS if u in units]
    if resident > 1.5:
        shared += [v for u, v in units.items() if u not in SHARED_UNITS]
    s = 1.0 - min(100.0, max(shared or [0.0])) / 100.0
    tail = max(last, s)
    loss = (tail - last) / (full - 1 + tail)  # time the last wave runs with idle SMs
    if loss < ctx.th["tail_loss"]:
        return None
    speed = _bounded_by_units(ctx, (full - 1 + tail) / waves)
    return Detection(
        stall_share=loss,
        speedup=max(speed, 1.0),
        evidence={
            "waves_per_sm": round(waves, 2),
            "last_wave_fill": round(last, 3),
            "last_wave_time_share": round(tail, 3),
            "resident_blocks_per_sm": round(resident, 2),
        },
        fmt={"waves": waves, "last_wave_pct": 100 * last},
    )


def _warps_launched(k) -> float:
    threads = k.grid[0] * k.grid[1] * k.grid[2] * k.block[0] * k.block[1] * k.block[2]
    return threads / 32.0 if threads else 0.0


def _r(x, nd=3):
    return rounded(x, nd)


# ---- several ranks -------------------------------------------------------------------
def rank_imbalance(ctx: KernelContext) -> Detection | None:
    """Only merged profiles (drgpu_py.readers.merge) carry the duration spread across ranks. If the
    ranks wait for each other after the kernel, the slowest sets the pace; balanced, every
    rank would take the mean time: speedup max/mean."""
    k = ctx.kernel
    spread = k.m("drgpu__rank_duration_spread")
    if math.isnan(spread) or spread < ctx.th["rank_imbalance"]:
        return None
    hi, mean = k.m("drgpu__rank_duration_max"), k.m("drgpu__rank_duration_mean")
    if math.isnan(hi) or math.isnan(mean) or mean <= 0 or hi <= 0:
        return None
    slow, fast = k.strings.get("drgpu__rank_slowest", "?"), k.strings.get("drgpu__rank_fastest", "?")
    return Detection(
        stall_share=1.0 - mean / hi,
        speedup=hi / mean,
        evidence={
            "duration_spread": round(spread, 3),
            "slowest_rank": slow,
            "fastest_rank": fast,
            "durations": k.strings.get("drgpu__rank_durations", ""),
        },
        fmt={
            "spread_pct": 100 * spread,
            "ranks": int(k.m("drgpu__rank_count", 0)),
            "slowest": slow,
            "fastest": fast,
            "max_us": hi / 1000,
            "min_us": k.m("drgpu__rank_duration_min", 0) / 1000,
        },
    )


REGISTRY = {
    f.__name__: f
    for f in (
        uncoalesced,
        bank_conflict,
        local_memory,
        loop_invariant_load,
        atomics,
        drain,
        lg_throttle,
        barrier,
        membar,
        fp64_conversion,
        low_ilp,
        slow_math,
        divergence,
        constant_divergence,
        icache,
        pipe_contention,
        occupancy,
        grid_too_small,
        serial_kernel,
        tail_effect,
        instruction_overhead,
        partial_warps,
        memory_latency,
        integer_division,
        rank_imbalance,
    )
}
