"""Instruction findings: loop overhead, FP64 and conversions, integer division, low ILP,
slow math, divergence, the instruction cache and math-pipe contention.

Contract: each detector is ``fn(ctx, passes) -> Detection | None`` (detectors/base.py),
pure, registered by ``@detector`` with the kernel-level metrics it reads.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Collection, Iterable
from typing import Any

import numpy as np
import pandas as pd

from ...sass.cfg import CFG, Loop
from ...sass.isa import Instruction
from ...sass.dataflow import fast_intrinsic, loop_invariant, thread_predicated
from ...sass.slicing import reaching_defs
from ..context import KernelContext, LineKey
from ..passes import Passes
from ..perfmodel import USEFUL_CLASSES, KernelModel, measured_speedup, what_if
from .base import (
    MAX_REMOVABLE,
    Detection,
    at_call_sites,
    cost_share,
    detector,
    eliminate,
    evidence_number,
    launch_lanes,
    not_measured,
    positive_weights,
    within_limit,
)


@detector()
def instruction_overhead(ctx: KernelContext, passes: Passes) -> Detection | None:
    """An issue-bound kernel whose hot loop is small and rolled: most issued instructions
    are loop control and index arithmetic around a little math or memory work (the assembly
    model's instruction efficiency). Unrolling removes the per-iteration control and folds
    index math into constant offsets; for an issue-bound loop time follows the count."""
    cfg, df, sol = ctx.cfg, ctx.df, passes.sol
    if cfg is None or df.empty or sol is None or not cfg.loops:
        return None
    issue = sol.units.get("issue")
    if issue is None or issue < ctx.th["overhead_issue_pct"]:
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
    useful = sum(v for pc, v in ex.items() if cls.get(pc) in USEFUL_CLASSES)
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
    change = _model_change(ctx, passes.perf, ("unroll",), hoist=True)
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


def _removed_limit(share: float) -> float:
    """1 / (1 - share): the speedup if all of a share of the time (or of an issue-bound
    kernel's instructions) went, a share of at most MAX_REMOVABLE (no change removes all)."""
    return 1.0 / (1.0 - min(max(0.0, share), MAX_REMOVABLE))


@detector()
def fp64_conversion(ctx: KernelContext, passes: Passes) -> Detection | None:
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
    removed_share, weights = cost_share(ctx, pcs, None, ("short_scoreboard", "wait"))
    removed_share = min(removed_share, 1.0)
    # The float version issues an instruction of its own in place of each double one: the
    # samples where the warp was ready but the scheduler issued another warp (not_selected,
    # the issue slots' contention) stay; the pipe, latency and conversion waits go.
    kept = ("selected", "not_selected")
    r_gone, _ = cost_share(ctx, pcs, tuple(x for x in ctx.reasons if x not in kept), ("short_scoreboard", "wait"))
    r_gone = min(r_gone, 1.0)
    evidence: dict[str, Any] = {
        "fp64_and_conversion_instruction_share": round(share, 4),
        "removed_sample_share": round(r_gone, 3),
    }
    # All of the time those samples stand for gone is the most the change gives.
    speed = within_limit(
        eliminate(r_gone * 0.9),
        _removed_limit(r_gone),
        f"1 / (1 - {r_gone:.3f}): every sample the float version removes gone",
        evidence,
    )
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"fp64_pct": 100 * share},
    )


def _division_window(cfg: CFG, seed: int, line_of: Callable[[int], LineKey | None]) -> list[int]:
    """Indices of the integer-division sequence that starts at ``seed`` (the I2F.RP that
    converts the divisor for MUFU.RCP): the seed's basic block from the seed on, up to
    ``_DIV_SEQUENCE`` instructions, kept to the seed's source line when lines are known."""
    blk = cfg.block_of[seed]
    line = line_of(cfg.insts[seed].pc)
    out = []
    for index in range(seed, min(len(cfg.insts), seed + _DIV_SEQUENCE)):
        if cfg.block_of[index] != blk:
            break
        if line is None or line_of(cfg.insts[index].pc) in (None, line):
            out.append(index)
    return out


def _sequence_cost(
    ctx: KernelContext, pcs: Collection[int], blamed_reasons: Iterable[str]
) -> tuple[float, dict[int, float]]:
    """Like cost_share for a sequence of dependent instructions: the samples the blamer charges
    to them (every reason but 'selected') from inside the sequence, plus the waits of
    ``blamed_reasons`` it charges to them from instructions outside; a sample at the sequence
    that waits for an instruction outside it (a load of the dividend) is not the sequence's."""
    inside = set(pcs)
    if ctx.blame is None:
        weights = dict(ctx.samples_at(pcs, None))
    else:
        # The blame edges split every stall sample by the instruction it waits for: a sample at
        # the sequence waiting for a load outside it (the value being divided) is the load's.
        weights = {}
        wanted = set(blamed_reasons)
        for consumer, producer, reason, samples, *_ in ctx.blame.rows:
            if producer in inside and samples == samples and (consumer in inside or reason in wanted):
                weights[producer] = weights.get(producer, 0.0) + float(samples)
    tot = ctx.samples_total
    return (sum(weights.values()) / tot if tot > 0 else 0.0), weights


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
        for index in calls:
            loop = cfg.innermost_loop(index)
            if loop is None:
                continue
            out |= _line_in_loop(ctx, cfg, index, loop)
            # The divisor as the call passes it: the subroutine reads it unchanged.
            invariant &= all(loop_invariant(cfg, index, r, loop, {}, 0) for r in divisor)
        return out, invariant
    loop, line = cfg.innermost_loop(seed), line_of(ins.pc)
    invariant = loop is None or all(loop_invariant(cfg, seed, r, loop, {}, 0) for r in divisor)
    if loop is None or line is None:
        window = _division_window(cfg, seed, line_of)
        pcs = {cfg.insts[k].pc for k in window}
        # The window holds the reciprocal's refinement and, unless the reciprocal is shared,
        # the quotient's multiply-high: with fewer than two, the quotients are elsewhere.
        shared = sum(1 for k in window if cfg.insts[k].opcode == "IMAD" and "HI" in cfg.insts[k].modifiers) < 2
        return pcs | (_division_slice(ctx, seed) if loop is None and shared else set()), invariant
    return _line_in_loop(ctx, cfg, seed, loop), invariant


def _division_slice(ctx: KernelContext, seed: int) -> set[int]:
    """PCs of the loop-free code that the reciprocal set up at ``seed`` feeds: the integer,
    conversion and MUFU instructions within ``_DIV_DEPTH`` dependent steps of the I2F.RP or of
    a quotient's multiply-high by the reciprocal, in program order after it. ptxas computes one reciprocal for a divisor that several unrolled
    or straight-line divisions share (k / blk for 8 keys): each quotient's multiply-high and
    corrections then sit lines and blocks away from the seed, where a window does not reach."""
    cfg = ctx.cfg
    assert cfg is not None, "a seed is an instruction of the kernel's SASS"
    depth = {reg: 0 for reg in cfg.insts[seed].defs}
    out = {cfg.insts[seed].pc}
    for j in range(seed + 1, len(cfg.insts)):
        ins = cfg.insts[j]
        if ins.opcode == "EXIT" or cfg.innermost_loop(j) is not None:
            break
        steps = [depth[r] for r in ins.uses if r in depth]
        if steps and ctx.classes[j] in _DIVISION_CLASSES and min(steps) < _DIV_DEPTH:
            out.add(ins.pc)
            # A multiply-high by the reciprocal starts a quotient: its corrections follow it.
            quotient = ins.opcode == "IMAD" and "HI" in ins.modifiers
            for reg in ins.defs:
                depth[reg] = 0 if quotient else min(steps) + 1
        else:
            for reg in ins.defs:
                depth.pop(reg, None)
    return out


def _line_in_loop(ctx: KernelContext, cfg: CFG, idx: int, loop: Loop) -> set[int]:
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
#: dependent steps counted from the I2F.RP, and again from each quotient's multiply-high by
#: the reciprocal (its remainder, compare and correction): set to 4 on ho4_sparse_mask_mod,
#: ho4_window_partition_div and ho2_ring_fir_mod (docs/calibration.md); deeper steps are
#: mostly the program's own use of the quotient
_DIV_DEPTH = 4


@detector()
def integer_division(ctx: KernelContext, passes: Passes) -> Detection | None:
    """GPA's strength reduction for integer division and modulo by a run-time divisor, wherever
    it executes: in a loop the reciprocal setup (I2F.RP, MUFU.RCP, F2I) is redone every
    iteration; in straight-line or fully unrolled code (an N-D index decomposition) every
    thread runs one sequence per division; a 64-bit division calls the slow subroutine. The
    executed sequences are what cost, whatever the code's shape. Cost: the samples on the
    sequence and those its consumers wait for, or its share of the instructions of an
    issue-bound kernel; the fix keeps part of it (less when the divisor is the same for every
    iteration or thread: a reciprocal or magic number computed once)."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty:
        return None
    line_of = ctx.line_of
    executed = ctx.executed()
    seq: set[int] = set()
    seeds = []
    varying = False
    for index, ins in enumerate(cfg.insts):
        if ins.opcode != "I2F" or "RP" not in ins.modifiers:
            continue
        if not float(executed.get(ins.pc) or 0.0) > 0:
            continue
        seeds.append(ins.pc)
        got, invariant = _division_sequence(ctx, index)
        seq.update(got)
        varying |= not invariant
    if not seeds:
        return None
    pcs = sorted(seq)
    total = ctx.executed_total()
    share_inst = sum(float(executed.get(pc) or 0.0) for pc in pcs) / total if total > 0 else 0.0
    removed_share, sequence_weights = _sequence_cost(ctx, pcs, ("short_scoreboard", "wait", "math_pipe_throttle"))
    if not ctx.sampling or ctx.samples_total <= 0:
        removed_share = share_inst
    if max(removed_share, share_inst) < ctx.th["division_share"]:
        return None
    # The removed instructions' issue slots and the waits on their results both go: time
    # follows the stall samples on the sequence, or, when the kernel is issue-bound, its share
    # of the issued instructions. A loop-invariant divisor's reciprocal leaves the loop and
    # only the multiply-high and its correction stay; a divisor that changes every iteration
    # needs a precomputed reciprocal per divisor, loaded and applied in the loop.
    issue = passes.sol.units.get("issue") if passes.sol is not None else None
    gone = 1.0 - ctx.th["division_kept_varying" if varying else "division_kept"]
    issue_bound = issue is not None and issue >= ctx.th["overhead_issue_pct"]
    cost = max(removed_share, share_inst if issue_bound else 0.0)
    seed_lines = {line_of(pc) for pc in seeds} - {None}
    weights = at_call_sites(
        {pc: v for pc, v in sequence_weights.items() if line_of(pc) in seed_lines} or sequence_weights, ctx.call_sites()
    )
    evidence: dict[str, Any] = {
        "division_sequences": len(seeds),
        "divisions_in_loops": sum(1 for pc in seeds if cfg.innermost_loop(cfg.index_of_pc[pc]) is not None),
        "division_instruction_share": round(share_inst, 3),
        "sample_share": round(removed_share, 3),
        "divisor_varies_in_loop": varying,
    }
    # The whole sequence gone (its samples, or its share of an issue-bound kernel's
    # instructions) is the most the change gives.
    speed = within_limit(
        eliminate(cost * gone),
        _removed_limit(cost),
        f"1 / (1 - {cost:.3f}): every division sequence's {'instructions' if cost > removed_share else 'samples'} gone",
        evidence,
    )
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"share_pct": 100 * removed_share, "inst_pct": 100 * share_inst},
        relieves_override=["sm"],
    )


def _model_change(
    ctx: KernelContext, model: KernelModel | None, changes: Iterable[str], hoist: bool
) -> tuple[float, dict[str, Any]] | None:
    """The best of the performance model's what-ifs ``changes`` (analysis/perfmodel.py) for
    the kernel as measured (perfmodel.measured_speedup), with its evidence; None without a model or
    when no change applies (the caller's own estimate stands)."""
    if model is None or not model.available:
        return None
    unroll_k = int(ctx.th["model_unroll_k"])
    best = None
    for change in changes:
        got = what_if(model, change, k=unroll_k, hoist=hoist) if change == "unroll" else what_if(model, change)
        if got is not None:
            speedup = measured_speedup(model, got)
            if best is None or speedup > best[0]:
                best = (speedup, got)
    if best is None:
        return None
    speedup, got = best
    return speedup, {
        "model_change": got["description"],
        "model_predicted_cycles": round(model.predicted_cycles, 1),
        "model_predicted_cycles_after": got["predicted_cycles"],
        "model_bottleneck_after": got["bottleneck_after"],
    }


@detector(metrics=("smsp__warps_eligible.avg.per_cycle_active",))
def low_ilp(ctx: KernelContext, passes: Passes) -> Detection | None:
    stall_share = ctx.share("wait")
    if ctx.frac("wait") < ctx.th["low_ilp_share"]:
        return None
    elig = ctx.kernel.m("smsp__warps_eligible.avg.per_cycle_active")
    if elig is None:
        # Whether other warps were ready to hide the waits is not measured.
        return not_measured()
    if elig >= ctx.th["low_ilp_eligible"]:
        return None
    # The performance model's what-ifs: the hot loop unrolled by k with k independent
    # accumulators, or more resident warps; the better one. Without a model: the wait stalls
    # removed, at most up to one instruction per cycle.
    change = _model_change(ctx, passes.perf, ("unroll", "warps"), hoist=False)
    if change is not None:
        speed, model_ev = change
    elif not ctx.df.empty and not ctx.measured("inst_executed"):
        # With the SASS, the estimate is the model's what-if, which needs the executed counts;
        # every wait gone (the fallback below) is the most the change could give, no estimate.
        return not_measured()
    else:
        speed, model_ev = eliminate(ctx.frac("wait")), {}
        sel = ctx.frac("selected")
        if sel > 0:
            speed = min(speed, 1.0 / sel)
    weights = ctx.blamed_by_pc([i.pc for i in ctx.insts], ("wait",)) or {}
    return Detection(
        stall_share=stall_share,
        speedup=speed,
        evidence={
            "wait_stall_share": round(stall_share, 3),
            "eligible_warps_per_scheduler": evidence_number(elig),
            **model_ev,
        },
        locations=ctx.locations(weights) or ctx.line_samples("wait"),
        fmt={"share_pct": 100 * stall_share, "eligible": elig},
    )


_TRANSCENDENTAL = ("SIN", "COS", "EX2", "LG2", "TANH")


_MATH_MUFU = _TRANSCENDENTAL + ("RCP", "RSQ", "SQRT", "RCP64H", "RSQ64H")
#: a double's reciprocal and root seeds: no intrinsic or --use_fast_math makes a double division
#: or square root faster, so lines whose only MUFUs are these are slow math only where the
#: routine is a pow with a literal integer exponent (multiplications replace it)
_FP64_SEEDS = ("RCP64H", "RSQ64H")
#: log2(e) as nvdisasm prints a float immediate (1.4426950216293334961)
_LOG2_E = "1.44269502"
#: ln(2) as a float immediate and as a double's high word (0x3fe62e42fefa39ef)
_LN2 = ("0.693147", "-0.693147", "0x3fe62e42")


def _immediate_lines(
    ctx: KernelContext, prefixes: tuple[str, ...], opcodes: Collection[str] | None = None
) -> set[LineKey | None]:
    """Source lines of the instructions (those of ``opcodes``; all when None) with a source
    operand that starts with one of ``prefixes`` (a constant as nvdisasm prints it, hex in
    lower case)."""
    return {
        ctx.line_of(i.pc)
        for i in ctx.insts
        if (opcodes is None or i.opcode in opcodes)
        and any(op.strip().lower().startswith(prefixes) for op in i.operands[1:])
    }


def _math_mufus(ctx: KernelContext) -> set[int]:
    """PCs of MUFUs that do floating-point math: transcendentals, reciprocals and roots of
    precise division, sqrt and pow. A MUFU.RCP whose operand an I2F.RP defines is the setup
    of an integer division (integer-division), not math."""
    out = set()
    cfg = ctx.cfg
    # Precise division and square root call a slow-path subroutine from their line; the
    # fast forms (rsqrtf, __fdividef) are a lone MUFU and are not slow math.
    call_lines = {ctx.line_of(i.pc) for i in ctx.insts if i.opcode == "CALL"} - {None}
    # An inlined accurate logarithm (powf, logf without a call): its reciprocal feeds a
    # polynomial scaled by log2(e) and ln(2), immediates no division or square root uses (a fast
    # __expf scales by log2(e) alone).
    scales = ("FFMA", "FMUL")
    call_lines |= (_immediate_lines(ctx, (_LOG2_E,), scales) & _immediate_lines(ctx, _LN2, scales)) - {None}
    in_subroutine = ctx.call_sites()
    for ins in ctx.insts:
        if not (ins.is_mufu() and ins.modifiers and ins.modifiers[0] in _MATH_MUFU):
            continue
        if (
            ins.modifiers[0] not in _TRANSCENDENTAL
            and ctx.line_of(ins.pc) not in call_lines
            and ins.pc not in in_subroutine
        ):
            continue
        idx = cfg.index_of_pc.get(ins.pc) if cfg is not None else None
        if cfg is not None and idx is not None:
            if fast_intrinsic(cfg, idx):
                continue
            if ins.modifiers[0] == "RCP" and any(
                cfg.insts[j].opcode == "I2F" and "RP" in cfg.insts[j].modifiers
                for r in ins.uses
                for j, _ in reaching_defs(cfg, idx, r, 10_000)
            ):
                continue
        out.add(ins.pc)
    return out


def _subroutines_at_call_sites(ctx: KernelContext, df: pd.DataFrame) -> pd.DataFrame:
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


def _literal_integer_exponent(ctx: KernelContext, lines: Collection[LineKey]) -> int | None:
    """The small integer a slow line passes to a called math subroutine as a literal, or None.
    GPA's strength reduction: an integer power is a few multiplications. Two forms: the literal
    set in the exponent's register before the CALL (pow(d, 2.0) with the exponent's bits,
    IMAD.MOV.U32 R5, RZ, RZ, 0x40000000), or, where nvcc specialises the routine for the
    constant, the exponent as an immediate that multiplies log(x) inside the routine
    (DMUL R22, R16, 2), called from a slow line."""
    sites = ctx.call_sites()
    # A power is exp2(y * log2(x)): its routine carries ln(2) (a float immediate, or a double's
    # high word moved into a register, often hoisted off the line) or a MUFU.LG2 on the line;
    # a division or square root by a literal (dt / 6.0) does not, and its literal is no exponent.
    if not _immediate_lines(ctx, _LN2) and not any(
        i.is_mufu() and i.modifiers[:1] == ("LG2",) and ctx.line_of(i.pc) in lines for i in ctx.insts
    ):
        return None
    calls = {ctx.line_of(i.pc) for i in ctx.insts if i.opcode == "CALL"} - {None}
    for ins in ctx.insts:
        if ins.pc in sites or ctx.line_of(ins.pc) not in calls or ctx.line_of(ins.pc) not in lines:
            continue
        if not (ins.opcode in ("MOV", "UMOV") or (ins.opcode == "IMAD" and "MOV" in ins.modifiers)) or not ins.operands:
            continue
        try:
            bits = int(ins.operands[-1].strip(), 16) if ins.operands[-1].strip().startswith("0x") else None
        except ValueError:
            bits = None
        if bits in _SMALL_INTEGER_BITS:
            return _SMALL_INTEGER_BITS[bits]
    for ins in ctx.insts:
        site = sites.get(ins.pc)
        if site is None or ins.opcode not in _PRODUCTS or ctx.line_of(site) not in lines:
            continue
        literal = _integer_immediate(ins)
        if literal is not None:
            return literal
    # Inlined (powf without a call): the routine's exact product y * log2(x) on the slow line
    # itself, hi = l * y then lo = fma(l, y, -hi), the exponent an immediate of both.
    products = [ins for ins in ctx.insts if ins.pc not in sites and ctx.line_of(ins.pc) in lines]
    for ins in products:
        if ins.opcode != "FMUL" or len(ins.operands) < 3:
            continue
        literal = _integer_immediate(ins)
        dest, factor = ins.operands[0].strip(), ins.operands[1].strip()
        if literal is not None and any(
            other.opcode == "FFMA"
            and len(other.operands) == 4
            and other.operands[1].strip() == factor
            and _integer_immediate(other) == literal
            and other.operands[3].strip() == f"-{dest}"
            for other in products
        ):
            return literal
    return None


_PRODUCTS = ("DMUL", "DFMA", "FMUL", "FFMA")


def _integer_immediate(ins: Instruction) -> int | None:
    """A small integer (2..16, either sign) among a multiply's source operands, written as an
    immediate."""
    for op in ins.operands[1:]:
        text = op.strip()
        if text.lstrip("-").isdigit() and 2 <= abs(int(text)) <= 16:
            return int(text)
    return None


@detector()
def slow_math(ctx: KernelContext, passes: Passes) -> Detection | None:
    df = ctx.df
    if df.empty or not ctx.sampling:
        return None
    mufu = _math_mufus(ctx)
    if not mufu:
        return None
    df = _subroutines_at_call_sites(ctx, df)
    lined = df["line"].notna().to_numpy()
    table = df[lined] if lined.any() else df.assign(line=0)
    # Per source line (file, line; in groupby's order), summed with arrays over the rows:
    # executed instructions, those on transcendental MUFUs, and stall samples (all reasons).
    gid = table.groupby(["file", "line"], dropna=False).ngroup().to_numpy()
    n_lines = int(gid.max()) + 1 if len(gid) else 0
    pcs = table.index.to_numpy()
    ex = np.nan_to_num(table["inst_executed"].to_numpy(dtype=float))
    is_mufu = np.isin(pcs, np.fromiter(mufu, dtype=pcs.dtype, count=len(mufu)))
    _, _, arr, _ = ctx.stall_matrix()
    row_sums = np.nansum(arr, axis=1) if arr.shape[1] else np.zeros(len(arr))
    samples_of = row_sums[lined] if lined.any() else row_sums
    mu_by = np.bincount(gid, weights=np.where(is_mufu, ex, 0.0), minlength=n_lines)
    ex_by = np.bincount(gid, weights=ex, minlength=n_lines)
    samples_by = np.bincount(gid, weights=samples_of, minlength=n_lines)
    rows = []
    for line_group in np.flatnonzero(mu_by > 0).tolist():
        ratio = float(ex_by[line_group]) / float(mu_by[line_group])
        if ratio >= ctx.th["slow_math_ratio"]:
            rows.append((line_group, ratio, float(samples_by[line_group])))
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
    removed_share = max(frac, inst) * max(0.0, 1.0 - 3.0 / ratio)
    # Weights line by line, each line's PCs in table order (as a loop over the groups gave).
    at = np.flatnonzero(np.isin(gid, [row[0] for row in rows]))
    at = at[np.argsort(gid[at], kind="stable")]
    weights = at_call_sites(dict(zip(pcs[at].tolist(), samples_of[at].tolist())), ctx.call_sites())
    # Fast intrinsics run on the same special-function unit: the MUFUs stay, so the XU pipe
    # keeps at least today's load and bounds the gain (partial relief 0).
    lines: set[LineKey] = set()
    if "line" in table:
        keys = table[["file", "line"]].to_numpy()
        lines = {(f, ln) for f, ln in keys[np.isin(gid, [row[0] for row in rows])].tolist()}
    exponent = _literal_integer_exponent(ctx, lines)
    if exponent is None and _only_fp64_seeds(ctx, pcs[is_mufu & np.isin(gid, [row[0] for row in rows])]):
        return None  # double division or sqrt: double-precision work (fp64-conversion's)
    evidence = {"instructions_per_mufu": round(ratio, 1), "slow_line_instruction_share": round(inst, 3)}
    xu_relief = 0.0
    if exponent is not None:
        evidence["literal_integer_exponent"] = exponent
        # Multiplications replace the whole routine: its logarithm's MUFUs (all but EX2, which
        # an exp on the same line may also use) leave the XU pipe.
        all_mufu = sum(float(ex[k]) for k in np.flatnonzero(is_mufu))
        logs = sum(
            float(ex[k])
            for k in np.flatnonzero(is_mufu & np.isin(gid, [row[0] for row in rows]))
            if ctx.by_pc[int(pcs[k])].modifiers[:1] != ("EX2",)
        )
        xu_relief = logs / all_mufu if all_mufu > 0 else 0.0
        # What the multiplications keep per routine (one logarithm MUFU each): |n| - 1 of them,
        # and a division (about 8 instructions) for a negative power; line by line, since a
        # slow line beside the pow (a square root) keeps its own routine's share.
        keep = max(3.0, abs(exponent) - 1.0 + (8.0 if exponent < 0 else 0.0))
        gone = sum(float(ex_by[row[0]]) * max(0.0, 1.0 - keep / row[1]) for row in rows) / ex_total
        removed_share = max(frac * gone / inst if inst > 0 else 0.0, gone)
    # The slow lines' whole time (their samples, or their instructions) gone is the most the
    # change gives.
    return Detection(
        stall_share=frac,
        speedup=within_limit(
            eliminate(removed_share),
            _removed_limit(max(frac, inst)),
            f"1 / (1 - {max(frac, inst):.3f}): the slow lines' every {'instruction' if inst > frac else 'sample'} gone",
            evidence,
        ),
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"ratio": ratio, "exponent": exponent or 0},
        partial_relief={"xu": xu_relief},
        variant="integer_power" if exponent is not None else None,
    )


def _only_fp64_seeds(ctx: KernelContext, mufu_pcs: Iterable[int]) -> bool:
    """The slow lines' MUFUs are all a double's reciprocal or root seeds."""
    ops = {ctx.by_pc[int(pc)].modifiers[:1] for pc in mufu_pcs}
    return bool(ops) and all(op and op[0] in _FP64_SEEDS for op in ops)


@detector(
    metrics=(
        "sm__cycles_active.avg",
        "sm__cycles_elapsed.avg",
        "smsp__sass_branch_targets_threads_divergent.sum",
        "smsp__thread_inst_executed_per_inst_executed.ratio",
    )
)
def divergence(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Lanes of a warp that issue no work: switched off by a divergent branch, or by a guard
    predicate the thread index decides (``if (tid < s)`` compiled to ``@!P1 LDS/FADD/STS``:
    every warp issues the instruction, with the lanes whose guard is false doing nothing).
    Cost: each instruction's samples times its idle-lane share; lanes the launch never filled
    are partial-warps, not divergence."""
    kernel, df = ctx.kernel, ctx.df
    thr = kernel.m("smsp__thread_inst_executed_per_inst_executed.ratio")
    # Per-instruction active lanes only where the report counts both warp and thread
    # instructions (a column the report lacks reads 0: not measured, never 0 lanes).
    per_instruction = ctx.measured("inst_executed") and ctx.measured("thread_inst_executed")
    if thr is None and per_instruction:
        thr = ctx.total_of("thread_inst_executed") / ctx.total_of("inst_executed")
    lanes = launch_lanes(kernel)
    working, predicated_off = _working_lanes(ctx, lanes) if per_instruction else (None, 0.0)
    if predicated_off > 0 and thr is not None:
        # Lanes a thread-dependent guard switched off are idle as a divergent branch's are.
        thr -= predicated_off / ctx.total_of("inst_executed")
    # Lanes the launch never filled are partial-warps, not divergence: judge the rest.
    if thr is not None:
        thr = thr * 32.0 / lanes
    if thr is None or thr >= ctx.th["divergence_threads"]:
        return None
    # Every lane busy is the most the change can give: the same work in thr/32 of the warp
    # instructions.
    limit = 32.0 / thr if thr > 0 else None
    what = f"32 / {thr:.1f} active lanes per executed instruction: every lane busy"
    if df.empty or not ctx.sampling or working is None:
        wasted_share = 1.0 - thr / 32.0
        evidence: dict[str, Any] = {"avg_active_threads": round(thr, 1)}
        return Detection(
            stall_share=wasted_share,
            speedup=within_limit(eliminate(wasted_share * 0.5), limit, what, evidence),
            evidence=evidence,
            fmt={"threads": thr},
        )
    cols = [c for c in df.columns if c.startswith("stall_")]
    wasted = df[cols].sum(axis=1) * (1.0 - working.clip(upper=lanes) / lanes)
    wasted_share = float(wasted.sum()) / max(ctx.samples_total, 1e-9)
    if wasted_share <= 0.01:
        return None
    # Locate the branch that splits the warp: divergent branches if counted, else the
    # instructions that run with a partial warp, weighted by the time they waste.
    weights = positive_weights(df["divergent_branches"]) if "divergent_branches" in df and not predicated_off else {}
    if not weights:
        weights = positive_weights(wasted)
    evidence = {
        "avg_active_threads": round(thr, 1),
        "divergent_branch_targets": evidence_number(kernel.m("smsp__sass_branch_targets_threads_divergent.sum")),
    }
    if predicated_off > 0 and ctx.total_of("inst_executed") > 0:
        evidence["predicated_off_lane_share"] = evidence_number(predicated_off / (32.0 * ctx.total_of("inst_executed")))
    speed = within_limit(_active_only(ctx, eliminate(wasted_share), evidence), limit, what, evidence)
    return Detection(
        stall_share=wasted_share,
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"threads": thr},
    )


def _working_lanes(ctx: KernelContext, lanes: float) -> tuple[pd.Series | None, float]:
    """Per instruction, the lanes that do its work (active lanes; for an instruction whose
    guard predicate the thread index decides through arithmetic, only those whose guard is
    true, where the report counts them), and the lane-instructions such guards switched off in
    all. A guard computed from loaded data (the rarely true fix-up steps of __expf/__logf's
    range reduction) is the compiler's choice of predication over a branch, not lanes that
    wait for other lanes of their warp."""
    df = ctx.df
    if df.empty:
        return None, 0.0
    per = (df["thread_inst_executed"] / df["inst_executed"].where(df["inst_executed"] > 0)).fillna(lanes)
    cfg = ctx.cfg
    if cfg is None or "thread_inst_executed_pred_on" not in df or not ctx.total_of("thread_inst_executed_pred_on") > 0:
        return per, 0.0
    guarded = [cfg.insts[j].pc for j in thread_predicated(cfg, through_memory=False)]
    guarded = [pc for pc in guarded if pc in ctx.row_of()]
    if not guarded:
        return per, 0.0
    on, active = df.loc[guarded, "thread_inst_executed_pred_on"], df.loc[guarded, "thread_inst_executed"]
    off = (active - on).clip(lower=0.0)
    executed = df.loc[guarded, "inst_executed"].where(df.loc[guarded, "inst_executed"] > 0)
    per = per.copy()
    per.loc[guarded] = (per.loc[guarded] - (off / executed).fillna(0.0)).clip(lower=0.0)
    return per, float(off.sum())


def _active_only(ctx: KernelContext, speedup: float, evidence: dict[str, Any]) -> float:
    """A change inside the warps (fewer masked lanes) shortens the time the SMs are active;
    the elapsed cycles in which an SM has no warp (the launch ramp, the last blocks'
    tail: sm__cycles_active below sm__cycles_elapsed) stay: 1 / (a / s + 1 - a) for the
    active share a."""
    share = ctx.kernel.active_share
    if speedup <= 1.0 or share is None or share >= 1.0:
        return speedup
    evidence["sm_active_share"] = evidence_number(share)
    return 1.0 / (share / speedup + 1.0 - share)


@detector()
def icache(ctx: KernelContext, passes: Passes) -> Detection | None:
    stall_share = ctx.share("no_instruction")
    if stall_share < ctx.th["icache_share"]:
        return None
    return Detection(
        stall_share=stall_share,
        speedup=eliminate(ctx.frac("no_instruction") * 0.5),
        locations=ctx.line_samples("no_instruction"),
        fmt={"share_pct": 100 * stall_share},
    )
