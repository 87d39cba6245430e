"""Finding ``integer-division``: integer division and modulo by a divisor known only at run
time, executed where it costs (in a loop, in straight-line index decomposition, or the
64-bit division subroutine).

Contract: ``integer_division(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: an unsigned 32-bit division by a run-time value compiles to about 20 instructions
(I2F.RP, MUFU.RCP, F2I, the Newton step, IMAD.HI and two corrections); a 64-bit one calls a
slow subroutine. GPA's strength reduction computes the reciprocal (or magic number) once.

Evidence: every executed I2F.RP (the divisor's conversion for MUFU.RCP) seeds a sequence
(``_division_sequence``): a called subroutine with its calls and the calling line's argument
moves; inline in a loop, the integer, conversion and MUFU instructions of the seed's line in
its innermost loop (``_line_in_loop``); otherwise a fixed window of the seed's block
(``_division_window``), plus, in loop-free code whose reciprocal several quotients share, the
dependent steps from the reciprocal (``_division_slice``, ``_DIV_DEPTH`` steps). Whether the
divisor is loop-invariant comes from the dataflow. Cost: the samples the blame edges charge to
the sequence from inside it plus its consumers' short-scoreboard, wait and math-pipe waits
(``_sequence_cost``), its waits on a unit the whole kernel keeps busy (math-pipe throttle,
eligible but not selected) counted only up to its share of the executed instructions
(``_contention_capped``), and the sequence's share of the executed instructions; either must
reach ``division_share``.

Estimate: the cost is the samples' share, or the instructions' share when the kernel is
issue-bound (issue utilisation at least ``overhead_issue_pct``); the fix keeps
``division_kept`` of it (``division_kept_varying`` when the divisor changes every
iteration): ``eliminate(cost * (1 - kept))``, within ``removed_limit(cost)`` (every division
sequence gone). Locations: the seeds' lines, subroutine costs moved to their call sites.

Metrics (declared): none (SASS, per-instruction counts and samples, the speed of light's
issue unit).

Helpers (this rule's own): ``_division_window``, ``_sequence_cost``, ``_contention_capped``, ``_division_sequence``,
``_division_slice``, ``_line_in_loop``, ``_DIV_SEQUENCE``, ``_DIV_DEPTH``,
``_DIVISION_CLASSES``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from ....sass.cfg import CFG, Loop
from ....sass.dataflow import loop_invariant
from ...context import KernelContext, LineKey
from ...passes import Passes
from ..base import (
    Detection,
    at_call_sites,
    detector,
    eliminate,
    removed_limit,
    within_limit,
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


def _sequence_cost(ctx: KernelContext, pcs: Collection[int], blamed_reasons: Iterable[str]) -> dict[int, float]:
    """Like cost_share for a sequence of dependent instructions, per instruction: the samples the blamer charges
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
    return weights


#: waits for a unit the whole kernel keeps busy: charged to the instruction that waits, caused by
#: every instruction that uses the unit
_CONTENTION_REASONS = ("math_pipe_throttle", "not_selected", "dispatch_stall")


def _contention_capped(
    ctx: KernelContext, pcs: Collection[int], weights: dict[int, float], share_inst: float
) -> dict[int, float]:
    """The sequence's samples with its waits on a saturated unit (math-pipe throttle, eligible
    but not selected) counted only up to its share of the executed instructions: removing 3% of
    the instructions of a kernel whose ALU pipe runs at 96% frees 3% of that pipe, however many
    of the throttled samples land on those 3% (md5hash, HeCBench: 0.995x measured against 2.19x)."""
    tot = ctx.samples_total
    contended = dict(ctx.samples_at(pcs, _CONTENTION_REASONS))
    waited = sum(contended.values())
    if tot <= 0 or waited <= 0:
        return weights
    keep = min(1.0, share_inst * tot / waited)
    return {pc: max(0.0, w - (1.0 - keep) * contended.get(pc, 0.0)) for pc, w in weights.items()}


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
    sequence_weights = _contention_capped(
        ctx, pcs, _sequence_cost(ctx, pcs, ("short_scoreboard", "wait", "math_pipe_throttle")), share_inst
    )
    sampled = ctx.sampling and ctx.samples_total > 0
    removed_share = sum(sequence_weights.values()) / ctx.samples_total if sampled else share_inst
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
        removed_limit(cost),
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
