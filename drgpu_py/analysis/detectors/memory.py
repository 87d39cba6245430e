"""Memory findings: uncoalesced and data-addressed global access, shared-memory bank
conflicts, local memory, loop-invariant reloads, atomics, drain, LSU throttle, load latency,
and divergent constant lookups.

Contract: each detector is ``fn(ctx, passes) -> Detection | None`` (detectors/base.py),
pure, registered by ``@detector`` with the kernel-level metrics it reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from ...sass.cfg import CFG, Loop
from ...sass.isa import Instruction
from ...sass.dataflow import (
    data_addressed_loads,
    lane_values,
    load_chain_depth,
    loop_invariant,
    memory_operand,
    promoted_by_hoisting,
    registers_in,
    written_in_loop,
)
from ..context import KernelContext
from ..passes import Passes
from .base import (
    MAX_REMOVABLE,
    UNIT_METRICS,
    MEMORY_REASONS,
    Detection,
    cost_share,
    detector,
    eliminate,
    evidence_number,
    lsu_relief,
    merge_weights,
    not_measured,
    traffic_speedup,
    warps_launched,
    within_limit,
)


@detector(
    metrics=(
        *UNIT_METRICS,
        "derived__memory_l2_theoretical_sectors_global_excessive",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sector_hit_rate.pct",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "lts__t_sector_hit_rate.pct",
    )
)
def uncoalesced(ctx: KernelContext, passes: Passes) -> Detection | None:
    df, kernel = ctx.df, ctx.kernel
    scattered: list[int] = []
    if ctx.measured("l2_sectors_global"):
        sectors = ctx.total_of("l2_sectors_global")
        per_pc = df["l2_sectors_global_excessive"]
        # A load whose address is computed from loaded data (pointer chasing, a search's
        # probes) scatters by its data: re-indexing the threads cannot coalesce it, so its
        # excess sectors are not this finding's (memory-latency covers such chains).
        dependent = data_addressed_loads(ctx.cfg, [int(pc) for pc in per_pc.index[per_pc > 0]])
        if dependent:
            per_pc = per_pc.drop(index=[pc for pc in dependent if pc in per_pc.index])
        excess = float(per_pc.sum())
    else:
        # Without per-instruction sectors, the kernel's: both loads' and stores' sectors (one
        # of them alone would make the excess a larger share than it is).
        ld = kernel.m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        st_sectors = kernel.m("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
        excess = kernel.m("derived__memory_l2_theoretical_sectors_global_excessive", 0)
        if excess > 0 and (ld is None or st_sectors is None):
            return not_measured()
        sectors = (ld or 0.0) + (st_sectors or 0.0)
        per_pc = None
        # The kernel's excess counts the data-addressed loads' too, which the per-instruction
        # sectors would set apart: with such loads executed, how much of it a re-indexing
        # removes is not measured.
        executed = ctx.executed()
        counted = ctx.measured("inst_executed")
        ran = [i.pc for i in ctx.insts if i.is_global_load() and (not counted or (executed.get(i.pc) or 0.0) > 0)]
        scattered = sorted(data_addressed_loads(ctx.cfg, ran)) if ctx.cfg is not None and ran else []
    if sectors <= 0:
        return None
    waste = excess / sectors
    if waste < ctx.th["uncoalesced_excess"]:
        return None
    if scattered:
        return not_measured()
    # Excess sectors cost bandwidth where they are served: L1 when it hits, else L2, else DRAM.
    # An unmeasured hit rate is no miss: the waste is not assumed to pass through the cache.
    h1, h2 = kernel.m("l1tex__t_sector_hit_rate.pct"), kernel.m("lts__t_sector_hit_rate.pct")
    # Stores write through L1 to L2, and partial sectors reach DRAM: when stores carry most
    # of the excess, the L1 hit rate (of loads) says nothing about where the waste lands.
    stores = 0.0
    if per_pc is not None and excess > 0:
        st = [i.pc for i in ctx.insts if i.opcode in ("STG", "ST") and i.pc in per_pc.index]
        stores = float(per_pc[st].sum()) / excess if st else 0.0
    through = (h1 is not None and h1 < 50) or stores >= 0.5
    to_dram = through and ((h2 is not None and h2 < 50) or stores >= 0.5)
    relieves = ["l1tex"] + (["lts"] if through else []) + (["dram"] if to_dram else [])
    mem_util = max([v for v in (ctx.units[u] for u in relieves) if v is not None] or [0.0]) / 100.0
    # The stall time that excess transactions cost scales with how loaded the serving units are.
    memory_frac = ctx.frac(*MEMORY_REASONS)
    speed = eliminate(memory_frac * waste * min(1.0, mem_util))
    speed = max(speed, traffic_speedup(ctx, relieves, waste))
    weights = {}
    if per_pc is not None:
        bad = [int(pc) for pc in per_pc.index[per_pc > 0]]
        blamed = ctx.blamed_by_pc(bad, MEMORY_REASONS)
        tot_ex = float(per_pc[bad].sum()) or 1.0
        for pc in bad:
            # Blamed stall samples locate the costly loads; excess sectors break ties.
            weights[pc] = blamed.get(pc, 0.0) + float(per_pc[pc]) / tot_ex
    req = kernel.m("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    sec = kernel.m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    spr = sec / req if sec is not None and req is not None and req > 0 else None
    evidence: dict[str, Any] = {"excessive_sector_share": round(waste, 3), "sectors_per_request": evidence_number(spr)}
    # Every access at its ideal sectors is the most coalescing gives: the traffic falls from
    # the actual sectors to the ideal ones.
    speed = within_limit(
        speed,
        1.0 / (1.0 - min(waste, MAX_REMOVABLE)),
        f"{sectors:,.0f} actual / {max(sectors - excess, 0.0):,.0f} ideal global sectors: every access coalesced",
        evidence,
    )
    return Detection(
        stall_share=ctx.share(*MEMORY_REASONS) * waste,
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"excess_pct": 100 * waste, "sectors_per_request": spr if spr is not None else 0.0},
        relieves_override=relieves,
    )


# Instructions that reach shared memory only by their address (a generic LD/ST whose pointer
# the compiler could not prove shared) or by the copy they start (cp.async's LDGSTS writes
# shared memory): the per-instruction shared wavefronts say whether and how much.
_SHARED_BY_ADDRESS = frozenset({"LD", "ST", "LDGSTS"})
# Ops whose shared-memory conflicts the kernel's load/store conflict counters leave out: ncu
# counts LDGSTS conflicts apart (op_ldgsts), in no section of the full set.
_UNCOUNTED_SHARED = frozenset({"LDGSTS"})


def _natural_wavefronts(ins: Instruction) -> float:
    """Wavefronts a conflict-free warp access of this width takes (32 lanes x 4, 8 or 16
    bytes over 128 bytes a wavefront)."""
    return 4.0 if "128" in ins.modifiers else 2.0 if "64" in ins.modifiers else 1.0


def _shared_ways(ctx: KernelContext) -> dict[int, float]:
    """PC -> the per-instruction shared wavefronts per executed warp instruction (ncu's
    "L1 Conflicts Shared N-Way"), where measured."""
    df = ctx.df
    if df.empty or "shared_nway" not in df.columns:
        return {}
    return {int(pc): float(v) for pc, v in zip(df.index.tolist(), df["shared_nway"].tolist()) if v == v}


def _shared_by_address(ctx: KernelContext, nway: dict[int, float]) -> dict[int, Instruction]:
    """Generic and asynchronous-copy instructions the per-instruction shared wavefronts show
    touching shared memory (the kernel counters count a generic LD's conflicts as a load's)."""
    executed = ctx.executed()
    return {
        i.pc: i
        for i in ctx.insts
        if i.opcode in _SHARED_BY_ADDRESS and nway.get(i.pc, 0.0) > 0 and (executed.get(i.pc) or 0.0) > 0
    }


def _uncounted_conflicts(
    ctx: KernelContext, by_address: dict[int, Instruction], nway: dict[int, float]
) -> tuple[float, float]:
    """(conflict wavefronts, wavefronts) of the shared accesses the counters leave out, from
    the per-instruction wavefronts beyond the access width's conflict-free ones."""
    executed = ctx.executed()
    conflicts = wavefronts = 0.0
    for pc, ins in by_address.items():
        if ins.opcode not in _UNCOUNTED_SHARED:
            continue
        natural, ways = _natural_wavefronts(ins), nway[pc]
        count = float(executed.get(pc) or 0.0)
        conflicts += count * max(ways - natural, 0.0)
        wavefronts += count * max(ways, natural)
    return conflicts, wavefronts


def _conflict_cost(
    ctx: KernelContext,
    shared_pcs: list[int],
    by_address: dict[int, Instruction],
    ways_by_pc: dict[int, float],
    *,
    counted: bool,
) -> tuple[float, dict[int, float], dict[str, Any]]:
    """(the share of samples the conflicted shared accesses cost, their per-PC weights, the
    evidence of how they were found). ``counted``: the conflicts come from ncu's counters, so
    where no instruction's ways show one, the stall samples place them."""
    r_share, weights = cost_share(ctx, shared_pcs, ("mio_throttle", "short_scoreboard"), ("short_scoreboard",))
    evidence: dict[str, Any] = {}
    # The generic and cp.async accesses with more wavefronts than their width needs: that number.
    widths = {pc: _natural_wavefronts(ins) for pc, ins in by_address.items()}
    natural = {pc: width for pc, width in widths.items() if ways_by_pc[pc] > width}
    if natural:
        # Generic and cp.async accesses queue in the LSU's global path (lg_throttle) and their
        # results come back on the long scoreboard.
        extra_share, extra = cost_share(
            ctx,
            list(natural),
            ("mio_throttle", "lg_throttle", "short_scoreboard"),
            ("short_scoreboard", "long_scoreboard"),
        )
        r_share += extra_share
        weights = merge_weights(weights, extra)
        evidence["shared_by_address"] = sorted({by_address[pc].opcode for pc in natural})
    if ways_by_pc and weights:
        # Weight each shared instruction's cost by how conflicted it is (a generic or cp.async
        # access beyond its width's conflict-free wavefronts).
        conflicted = {pc: v * max(ways_by_pc.get(pc, 1.0) - natural.get(pc, 1.0), 0.0) for pc, v in weights.items()}
        if sum(conflicted.values()) > 0:
            weights = conflicted
        elif counted and sum(weights.values()) > 0:
            # The kernel's counters count conflict wavefronts the per-instruction conflict ways
            # do not show (they read no conflict on a strided tree reduction's LDS/STS): the
            # conflicts are at the shared instructions, ranked by the stalls they cost.
            evidence["located_by"] = "shared instructions' stall samples (per-instruction conflict ways read none)"
    return r_share, weights, evidence


@detector(
    metrics=(
        *UNIT_METRICS,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    )
)
def bank_conflict(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Bank conflicts from ncu's own conflict counters when the report has them (conflict
    wavefronts / all shared wavefronts, loads and stores apart); derived from the
    per-instruction conflict ways only when they are absent (and the evidence says so). Wide
    accesses (LDS.128) need several wavefronts without any conflict, so wavefronts per
    instruction alone are no evidence. cp.async's shared writes (LDGSTS), which the counters
    leave out, add the wavefronts their per-instruction ways show beyond their width's; generic
    LD/ST that the per-instruction wavefronts show reaching shared memory are shared accesses
    too (their stalls are the LSU queue's). Estimate: the conflict wavefronts' time goes
    (traffic or stall model), but the instructions issued during it stay and take their issue
    time."""
    kernel, df = ctx.kernel, ctx.df
    ways_by_pc = _shared_ways(ctx)
    by_address = _shared_by_address(ctx, ways_by_pc)
    shared_pcs = ctx.pcs_where(lambda i: i.is_shared())
    ops = ("ld", "st")
    counted = {op: kernel.m(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum") for op in ops}
    counted_wav = {op: kernel.m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum") for op in ops}
    conf = {op: v for op, v in counted.items() if v is not None}
    wav = {op: v for op, v in counted_wav.items() if v is not None}
    evidence: dict[str, Any] = {}
    if len(conf) == len(wav) == len(ops):
        async_conf, async_wav = _uncounted_conflicts(ctx, by_address, ways_by_pc)
        total = sum(wav.values()) + async_wav
        if total <= 0:
            return None
        excess = (sum(conf.values()) + async_conf) / total
        evidence = {
            "source": "ncu conflict counters",
            **{
                f"conflict_share_shared_{op}": evidence_number(conf[op] / wav[op]) if wav[op] > 0 else None
                for op in ops
            },
        }
        if async_wav > 0:
            evidence["conflict_share_shared_ldgsts"] = evidence_number(async_conf / async_wav)
    elif not df.empty and shared_pcs:
        # Each access against the wavefronts its width needs without a conflict (an LDS.128
        # takes 4): those beyond are the conflicts.
        ex = df.loc[shared_pcs, "inst_executed"]
        natural = pd.Series([_natural_wavefronts(ctx.by_pc[pc]) for pc in shared_pcs], index=ex.index)
        nway = df.loc[shared_pcs, "shared_nway"].clip(lower=natural)
        ideal, ways = float((ex * natural).sum()), float((ex * nway).sum())
        if ways <= 0 or ideal <= 0:
            return None
        excess = max(0.0, (ways - ideal) / ways)
        evidence = {"source": "derived from per-instruction conflict ways (the report has no conflict counters)"}
    else:
        return None
    if excess < ctx.th["bank_conflict_excess"]:
        return None
    r_share, weights, located = _conflict_cost(
        ctx, shared_pcs, by_address, ways_by_pc, counted=evidence.get("source") == "ncu conflict counters"
    )
    evidence.update(located)
    locations = ctx.locations(weights)
    if not locations:
        # No shared instruction carries the cost: nothing to locate or change.
        return None
    share = r_share if r_share > 0 else ctx.frac("mio_throttle", "short_scoreboard")
    nways = 1.0 / max(1e-9, 1.0 - excess)
    evidence.update(
        {"conflict_wavefront_share": round(excess, 3), "wavefronts_per_conflict_free_access": round(nways, 2)}
    )
    speed = max(eliminate(share * excess), traffic_speedup(ctx, ("l1tex", "lsu"), excess))
    # The time the conflict wavefronts take also saw instructions issued (the issue slots'
    # measured % of peak, spread evenly over the kernel's time; else the achieved over the
    # ideal IPC the counters give): removing that time does not remove those instructions,
    # which then take their issue time at the full rate.
    issue = (passes.sol.units.get("issue", math.nan) if passes.sol is not None else math.nan) / 100.0
    if math.isnan(issue) and passes.stall.how.endswith(".per_cycle_active"):
        issue = passes.stall.achieved_ipc / passes.stall.ideal_ipc
    if speed > 1.0 and not math.isnan(issue) and 0.0 < issue < 1.0:
        speed = 1.0 / (1.0 / speed + (1.0 - 1.0 / speed) * issue)
        evidence["issue_active_share"] = evidence_number(issue)
    # Every access at its conflict-free wavefronts is the most the change gives: the shared
    # traffic falls from the actual wavefronts to the ideal ones.
    speed = within_limit(
        speed,
        nways,
        f"actual / ideal shared-memory wavefronts ({nways:.2f}): every access conflict-free",
        evidence,
    )
    queue = ("lg_throttle",) if "shared_by_address" in located else ()
    return Detection(
        stall_share=ctx.share("mio_throttle", "short_scoreboard", *queue),
        speedup=speed,
        evidence=evidence,
        locations=locations,
        fmt={"wavefronts_per_request": nways, "excess_pct": 100 * excess},
    )


@detector(
    metrics=(
        *UNIT_METRICS,
        "derived__local_spilling_requests",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
        "smsp__inst_executed.sum",
        "smsp__sass_inst_executed_op_global_ld.sum",
        "smsp__sass_inst_executed_op_global_st.sum",
        "smsp__sass_inst_executed_op_local_ld.sum",
        "smsp__sass_inst_executed_op_local_st.sum",
    )
)
def local_memory(ctx: KernelContext, passes: Passes) -> Detection | None:
    kernel, df = ctx.kernel, ctx.df
    local = kernel.m("smsp__sass_inst_executed_op_local_ld.sum", 0) + kernel.m(
        "smsp__sass_inst_executed_op_local_st.sum", 0
    )
    pcs = ctx.pcs_where(lambda i: i.is_local())
    if local <= 0 and not df.empty and pcs:
        local = float(df.loc[pcs, "inst_executed"].sum())
    total = kernel.m("smsp__inst_executed.sum", 0) or ctx.executed_total()
    if total <= 0 or local / total < ctx.th["local_inst_share"]:
        return None
    removed_share, weights = cost_share(ctx, pcs, ("lg_throttle", "long_scoreboard"), ("long_scoreboard",))
    # A queue full of local accesses also throttles the other memory instructions: charge
    # those throttle samples in proportion to local memory's share of LSU instructions (not
    # measured without the global instruction counts: nothing charged).
    global_ld = kernel.m("smsp__sass_inst_executed_op_global_ld.sum")
    global_st = kernel.m("smsp__sass_inst_executed_op_global_st.sum")
    other_lg = ctx.frac("lg_throttle") - (
        sum(ctx.samples_at(pcs, ("lg_throttle",)).values()) / ctx.samples_total if ctx.samples_total else 0.0
    )
    if global_ld is not None and global_st is not None:
        removed_share += max(0.0, other_lg) * local / max(local + global_ld + global_st, 1.0)
    if removed_share <= 0 and global_ld is not None:
        removed_share = ctx.frac(*MEMORY_REASONS) * min(1.0, local / max(global_ld + local, 1.0))
    # Local memory's share of the L1 sectors: what the fix takes off the memory units (none
    # when the global sectors are not measured).
    sec = {
        sp: _sum_or_none(
            kernel.m(f"l1tex__t_sectors_pipe_lsu_mem_{sp}_op_ld.sum"),
            kernel.m(f"l1tex__t_sectors_pipe_lsu_mem_{sp}_op_st.sum"),
        )
        for sp in ("local", "global")
    }
    loc_sec, glob_sec = sec["local"], sec["global"]
    w_local = loc_sec / (loc_sec + glob_sec) if loc_sec is not None and glob_sec is not None and loc_sec > 0 else 0.0
    speed = max(eliminate(removed_share), traffic_speedup(ctx, ("l1tex", "lts", "dram"), w_local))
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=speed,
        partial_relief=lsu_relief(ctx, pcs) or None,
        evidence={
            "local_instruction_share": round(local / total, 4),
            "spilling_requests": evidence_number(kernel.m("derived__local_spilling_requests")),
        },
        locations=ctx.locations(weights),
        fmt={"local_pct": 100 * local / total},
    )


def _sum_or_none(*values: float | None) -> float | None:
    """The sum of measured values; None when any is not measured."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


@detector()
def loop_invariant_load(ctx: KernelContext, passes: Passes) -> Detection | None:
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
        addr_regs = {r for o in ins.operands if "[" in o for r in registers_in(o)} & ins.uses
        if (
            addr_regs
            and all(loop_invariant(cfg, idx, reg, loop, {}, 0) for reg in addr_regs)
            and not written_in_loop(cfg, ins, loop)
        ):
            invariant.append(ins.pc)
    if not invariant:
        return None
    removed_share, weights = cost_share(ctx, invariant, (), ("long_scoreboard", "short_scoreboard"))
    if removed_share < ctx.th["invariant_load_share"]:
        return None
    # Hoisted, the reloads leave the loop: besides the waits for their data, every sample at
    # them (their issue, their fixed-latency waits, the LSU queue) goes with them.
    r_own = cost_share(ctx, invariant, None, ("long_scoreboard", "short_scoreboard"))[0]
    # Once the reloads leave the loop, accesses to one fixed address per thread inside it
    # (x = *p ... *p = x every iteration) no longer meet a possibly aliasing load: the
    # compiler keeps the value in a register and stores it once after the loop (LICM's scalar
    # promotion; lcg_state and oscillator_params' fixed loops have no STG). Their own stalls
    # and their traffic go away with the reloads.
    promoted = promoted_by_hoisting(cfg, invariant)
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
    # Without per-instruction sectors that share is not measured, and none is taken off.
    partial = {"lts": 0.0, "l1tex": 0.0}
    if ctx.measured("l2_sectors_global"):
        mine = float(ctx.df.loc[[p for p in gone if p in ctx.df.index], "l2_sectors_global"].sum())
        share = mine / ctx.total_of("l2_sectors_global")
        partial = {"lts": share, "l1tex": share}
    partial = {**partial, **lsu_relief(ctx, gone)}
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=eliminate(max(removed_share, r_own) + r_prom),
        evidence={
            "invariant_loads_in_loops": len(invariant),
            "blamed_sample_share": round(removed_share, 3),
            "removed_sample_share": round(max(removed_share, r_own), 3),
            "promoted_accesses": len(promoted),
            "promoted_sample_share": round(r_prom, 3),
        },
        locations=ctx.locations(weights),
        fmt={"share_pct": 100 * removed_share},
        partial_relief=partial,
    )


def _atomic_addresses(ctx: KernelContext, pc: int) -> int:
    """Different addresses one warp's atomic at ``pc`` can target (its address registers'
    lane values, at most 32): a warp aggregation keeps one atomic per address."""
    ins, cfg = ctx.by_pc.get(pc), ctx.cfg
    idx = cfg.index_of_pc.get(pc) if cfg is not None else None
    if ins is None or cfg is None or idx is None:
        return 32
    addr = memory_operand(ins)
    regs = registers_in(addr) if addr else set()
    addresses = 1
    for reg in regs:
        addresses *= lane_values(cfg, idx, reg)
    return min(32, addresses)


@detector(
    metrics=(
        *UNIT_METRICS,
        "lts__t_sectors_srcunit_tex_op_atom.sum",
        "lts__t_sectors_srcunit_tex_op_read.sum",
        "lts__t_sectors_srcunit_tex_op_red.sum",
    )
)
def atomics(ctx: KernelContext, passes: Passes) -> Detection | None:
    pcs = ctx.pcs_where(lambda i: i.is_global_atomic())
    if not pcs:
        return None
    removed_share, weights = cost_share(ctx, pcs, None, ("long_scoreboard",))
    executed = ctx.df.loc[[p for p in pcs if p in ctx.df.index], "inst_executed"].sum() > 0
    ran_at = ctx.executed()
    # Outstanding atomics hold warps at EXIT (drain) and fill the LSU queue for other loads.
    drain = ctx.frac("drain") if executed else 0.0
    other_lg = max(
        0.0,
        ctx.frac("lg_throttle") - sum(ctx.samples_at(pcs, ("lg_throttle",)).values()) / max(ctx.samples_total, 1e-9),
    )
    # Loads queue behind the atomics in the memory system: their waits are charged in
    # proportion to the atomics' share of the L2 sectors requested by the SMs.
    kernel = ctx.kernel
    # The atomics' L2 sectors (reductions and returning atomics); None when either count is
    # not measured (the part measured alone would make them a smaller share than they are).
    red_sectors = kernel.m("lts__t_sectors_srcunit_tex_op_red.sum")
    atom_sectors = kernel.m("lts__t_sectors_srcunit_tex_op_atom.sum")
    red = _sum_or_none(red_sectors, atom_sectors)
    rd = kernel.m("lts__t_sectors_srcunit_tex_op_read.sum")
    blamed_ls = sum(ctx.blamed_by_pc(pcs, ("long_scoreboard",)).values()) / max(ctx.samples_total, 1e-9)
    loads_wait = max(0.0, ctx.frac("long_scoreboard") - blamed_ls) if executed else 0.0
    queued = loads_wait * red / (red + rd) if red is not None and rd is not None and red + rd > 0 else 0.0
    r_total = removed_share + drain + other_lg + queued
    # Reductions without a returned value (RED) that keep warps waiting while every throughput
    # unit idles (each measured): the memory waits are the serialization at the contended
    # addresses.
    units = [v for v in ctx.units.values() if v is not None]
    if (
        executed
        and units
        and len(units) == len(ctx.units)
        and max(units) < ctx.th["atomic_idle_pct"]
        and all(not ctx.by_pc[p].defs for p in pcs if p in ctx.by_pc)
    ):
        r_total = max(r_total, ctx.frac(*MEMORY_REASONS))
    # Reductions without a returned value hold no warp at the instruction: the warps wait at
    # EXIT for them to drain. Where the kernel writes global memory only through atomics, that
    # drain is theirs and counts toward the gate too (a 64-bin histogram: 42 % drain).
    stores = sum(float(ran_at.get(i.pc) or 0.0) for i in ctx.insts if i.opcode in ("STG", "ST"))
    gate = removed_share + (drain if stores <= 0 else 0.0)
    if gate < ctx.th["atomic_share"]:
        return None
    # A returning atomic (ATOM: a slot or ticket per element) gives every lane its own old
    # value, so aggregating within the warp (ballot/popc, then a shuffle of the base) still
    # sends one atomic per warp instruction, and L2 serializes those at the same addresses:
    # that stream stays (split_lists). An ATOM already issued by one lane per warp is
    # aggregated; the next level, a block scan behind a barrier, keeps one per block.
    # Reductions without a returned value (RED) can be accumulated privately across a loop
    # and leave next to nothing. Kept: those operations over today's L2 atomic sectors.
    ran = ctx.executed()
    warps_per_block = max(1.0, kernel.warps_per_block or 1)
    returning = 0.0
    threads = ctx.df["thread_inst_executed"] if ctx.measured("thread_inst_executed") else None
    for pc in pcs:
        warp_insts = float(ran.get(pc) or 0.0)
        if pc not in ctx.by_pc or not ctx.by_pc[pc].defs or warp_insts <= 0:
            continue
        lanes = float(threads[pc]) / warp_insts if threads is not None else math.nan
        # Aggregated within the warp, one atomic per warp instruction stays for each address
        # its lanes target (split_lists: a data bit picks one of two counters, two stay).
        returning += (
            warp_insts / warps_per_block if lanes == lanes and lanes <= 1.0 else warp_insts * _atomic_addresses(ctx, pc)
        )
    if returning <= 0:
        kept = 0.0
    elif red is not None:
        kept = min(1.0, returning / red) if red > 0 else 0.0
    else:
        # The atomics' L2 sectors not all measured: the share kept is taken at its most,
        # returning over the part measured (all of it when neither count is measured).
        known = (red_sectors or 0.0) + (atom_sectors or 0.0)
        kept = min(1.0, returning / known) if known > 0 else 1.0
    r_total *= 1.0 - kept
    types = _atomic_types(ctx, pcs)
    return Detection(
        stall_share=ctx.as_stall_share(r_total),
        speedup=eliminate(r_total),
        evidence={
            "atomic_sample_share": round(removed_share, 3),
            "kept_after_aggregation": round(kept, 4),
            "l2_red_sectors": evidence_number(kernel.m("lts__t_sectors_srcunit_tex_op_red.sum")),
            "l2_atom_sectors": evidence_number(kernel.m("lts__t_sectors_srcunit_tex_op_atom.sum")),
            "atomic_data_types": sorted(types),
        },
        locations=ctx.locations(weights),
        fmt={"share_pct": 100 * removed_share},
        variant="float" if types and types <= {"float"} else "mixed" if "float" in types else None,
    )


_FLOAT_TYPES = ("F32", "F64", "F16", "F16x2", "BF16", "BF16x2", "F32x2", "FTZ")


def _atomic_types(ctx: KernelContext, pcs: Iterable[int]) -> set[str]:
    """'float' / 'integer' for the executed global atomics at ``pcs``, from the SASS type
    modifier (RED.E.ADD.F32.FTZ.RN is a float add; RED.E.ADD, .S32, .64 are integer)."""
    executed = ctx.executed()
    out: set[str] = set()
    for pc in pcs:
        ins = ctx.by_pc.get(pc)
        if ins is None or not (executed.get(pc) or 0) > 0:
            continue
        out.add("float" if any(m in _FLOAT_TYPES for m in ins.modifiers) else "integer")
    return out


def _drain_variant(ctx: KernelContext) -> tuple[str | None, dict[str, Any]]:
    """What drains at EXIT: stores, or (no global store sectors) atomics and reductions."""
    kernel = ctx.kernel
    executed = ctx.executed()

    def ran(pred: Callable[[Instruction], bool]) -> float:
        return sum(float(executed.get(i.pc) or 0.0) for i in ctx.insts if pred(i))

    stores = kernel.m("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    store_insts = ran(lambda i: i.opcode in ("STG", "ST", "STL"))
    atomics = ran(lambda i: i.is_global_atomic())
    ev: dict[str, Any] = {
        "global_store_sectors": evidence_number(stores),
        "store_instructions": evidence_number(store_insts),
        "atomic_instructions": evidence_number(atomics),
    }
    no_stores = (stores == 0) if stores is not None else (store_insts == 0 and bool(ctx.insts))
    if no_stores and atomics > 0:
        return "atomics", ev
    if no_stores:
        return "other", ev
    return None, ev


@detector(metrics=("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",))
def drain(ctx: KernelContext, passes: Passes) -> Detection | None:
    stall_share = ctx.share("drain")
    if stall_share < ctx.th["drain_share"]:
        return None
    variant, ev = _drain_variant(ctx)
    return Detection(
        stall_share=stall_share,
        speedup=eliminate(ctx.frac("drain") * 0.5),
        evidence=ev,
        variant=variant,
        locations=ctx.line_samples("drain"),
        fmt={"share_pct": 100 * stall_share},
    )


@detector()
def lg_throttle(ctx: KernelContext, passes: Passes) -> Detection | None:
    pcs = ctx.pcs_where(lambda i: (i.is_global_load() or i.opcode in ("STG", "ST")) and not i.is_atomic())
    at = ctx.samples_at(pcs, ("lg_throttle",))
    tot = ctx.samples_total
    if tot <= 0:
        # The kernel-wide counters cannot tell the global loads' and stores' throttle from that
        # of local accesses and atomics (other findings'), or from throttle samples elsewhere.
        if ctx.share("lg_throttle") < ctx.th["lg_throttle_share"]:
            return None
        return not_measured()
    removed_share = sum(at.values()) / tot
    stall_share = ctx.as_stall_share(removed_share)
    if stall_share < ctx.th["lg_throttle_share"]:
        return None
    return Detection(
        stall_share=stall_share,
        speedup=eliminate(removed_share * 0.5),
        locations=ctx.locations(at),
        fmt={"share_pct": 100 * stall_share},
    )


def _loads_per_iteration(ctx: KernelContext, cfg: CFG, loop: Loop, chains_only: bool) -> float:
    """Global loads executed per back-edge taken to the loop's header, over the longest chain
    of them whose addresses come from the previous one's value (inf: not a chain when only
    chains qualify)."""
    body = cfg.loop_instructions(loop)
    executed = ctx.executed()

    def count(pick: Callable[[Instruction], bool]) -> float:
        return sum(float(executed.get(cfg.insts[j].pc) or 0.0) for j in body if pick(cfg.insts[j]))

    iters = count(
        lambda i: (
            i.is_branch()
            and i.target is not None
            and cfg.index_of_pc.get(i.target) is not None
            and cfg.block_of[cfg.index_of_pc[i.target]] == loop.header
        )
    )
    depth = load_chain_depth(cfg, body)
    if chains_only and depth <= 1:
        return math.inf
    return count(lambda i: i.is_global_load()) / iters / depth if iters > 0 else math.inf


def _loads_per_warp(ctx: KernelContext, cfg: CFG, chains_only: bool) -> float:
    """Loop-free code: the global loads a warp issues outside loops, over the longest chain of
    them whose addresses come from the previous one's value (one element per thread: a load or
    two, then the warp waits); inf when the memory system is busy (``chains_only``)."""
    straight = [j for j in range(len(cfg.insts)) if cfg.innermost_loop(j) is None]
    warps = warps_launched(ctx.kernel)
    if not warps or chains_only:
        # A chain of a hop or two per warp is hidden by the other resident warps once the
        # memory system is this busy (an index-then-value gather at 66% of DRAM peak): only a
        # loop's long chain keeps each warp to one load in flight whatever the bandwidth.
        return math.inf
    depth = load_chain_depth(cfg, straight)
    executed = ctx.executed()
    n = sum(float(executed.get(cfg.insts[j].pc) or 0.0) for j in straight if cfg.insts[j].is_global_load())
    return n / warps / depth


@detector(metrics=(*UNIT_METRICS,))
def memory_latency(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Warps wait on global loads while the memory system has headroom: too few loads in
    flight. The loads that carry the waits sit in a loop issuing one or two independent loads
    per iteration (a rolled loop, a dependent index-then-value pair, or a longer body whose
    loads each take their address from the previous one), or in loop-free code that issues one
    or two per warp before it waits (one element per thread, a gather through an index). With k independent loads in flight
    instead of one, (1 - 1/k) of the wait is hidden (k = 4: unroll by 4); the memory units'
    headroom bounds it. With DRAM or L2 at bound_pct or more, only chains qualify."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or not ctx.sampling or ctx.share("long_scoreboard") < ctx.th["latency_load_share"]:
        return None
    measured = [v for v in (ctx.units.get(u) for u in ("dram", "lts")) if v is not None]
    mem = max(measured, default=None)
    # At or above bound_pct the memory system is busy enough to be the limit, except for a
    # chain of dependent loads: each warp has one in flight whatever the bandwidth in use
    # (hop_chains: random sector loads keep L2 at 63%, four chains in lockstep gain 1.37x),
    # up to saturation; the unit bound then caps the gain.
    if mem is not None and mem >= ctx.th["saturation_pct"]:
        return None
    if mem is None or len(measured) < 2:
        # Whether DRAM or L2 is the limit (the headroom the finding rests on) is not measured.
        return not_measured()
    chains_only = mem >= ctx.th["bound_pct"]
    loads = ctx.pcs_where(lambda i: i.is_global_load() and not i.is_atomic())
    waits = merge_weights(ctx.blamed_by_pc(loads, ("long_scoreboard",)), ctx.samples_at(loads, ("long_scoreboard",)))
    per_pass: dict[int | None, float] = {}  # loop header (None: loop-free code) -> loads in flight
    hot: dict[int, float] = {}
    for pc, wait in waits.items():
        idx = cfg.index_of_pc.get(pc)
        if idx is None or wait <= 0:
            continue
        loop = cfg.innermost_loop(idx)
        key = None if loop is None else loop.header
        if key not in per_pass:
            per_pass[key] = (
                _loads_per_warp(ctx, cfg, chains_only)
                if loop is None
                else _loads_per_iteration(ctx, cfg, loop, chains_only)
            )
        if per_pass[key] <= ctx.th["latency_loads_per_iteration"]:
            hot[pc] = wait
    tot = ctx.samples_total
    removed_share = sum(hot.values()) / tot if tot > 0 else 0.0
    if removed_share < ctx.th["latency_load_share"] * 0.5:
        return None
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=eliminate(removed_share * 0.75),
        evidence={"load_wait_share": round(removed_share, 3), "memory_throughput_pct": round(mem, 1)},
        locations=ctx.locations(hot),
        fmt={"share_pct": 100 * removed_share, "mem_pct": mem},
    )
