"""Finding ``warp-divergence``: lanes of a warp that issue no work, switched off by a divergent
branch or by a guard predicate the thread index decides.

Contract: ``divergence(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: a warp issues each instruction once for all its lanes; lanes on the other side of
a divergent branch, or whose thread-dependent guard (``if (tid < s)`` compiled to
``@!P1 ...``) is false, do nothing in that issue slot. Lanes the launch never filled are
partial-warps', not divergence: the active lanes are judged against the launch's lanes per
warp (``launch_lanes``).

Evidence: the kernel's active threads per executed instruction
(``smsp__thread_inst_executed_per_inst_executed.ratio``, else the per-instruction thread and
warp counts), less the lanes thread-dependent guards switched off where the report counts
predicated-on threads (``_working_lanes``); below ``divergence_threads`` it fires. With
per-instruction samples, each instruction's samples times its idle-lane share (more than 1 %
of all samples). Locations: the divergent branches when counted, else the instructions that
waste the most.

Estimate: without per-instruction samples, ``eliminate`` of half the idle-lane share; with
them, ``eliminate`` of the wasted samples' share, applied to the SMs' active time only
(``_active_only``: ``1 / (a / s + 1 - a)`` for the active share a). Limit
(``within_limit``): 32 / active lanes, every lane busy.

Metrics (declared): ``smsp__thread_inst_executed_per_inst_executed.ratio``,
``smsp__sass_branch_targets_threads_divergent.sum`` (evidence), ``sm__cycles_active.avg`` and
``sm__cycles_elapsed.avg`` (the active share), ``launch__waves_per_multiprocessor`` (one wave).

Trip-count imbalance in one wave: where every warp of the launch is resident at once
(``launch__waves_per_multiprocessor`` <= 1), lanes idle because a loop's exit diverges (the
lanes that finished wait for the warp's last lane) delay no other warp, and no regrouping of
threads shortens the longest thread's chain of dependent work. At the instructions of such a
loop, only the samples that hold or contend for issue slots (``_ISSUE_REASONS``) are counted as
wasted; the waits stay (rainflow, public round 2: 0.37 waves, 87 % long scoreboard, regrouping
by trip count measured 0.83x against 1.84x estimated).

Helpers (this rule's own): ``_working_lanes``, ``_active_only``, ``_imbalanced_loop_pcs``,
``_exit_branches``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ....sass.cfg import Loop
from ....sass.dataflow import thread_predicated
from ...context import KernelContext
from ...passes import Passes
from ..base import (
    Detection,
    detector,
    eliminate,
    evidence_number,
    launch_lanes,
    positive_weights,
    within_limit,
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


#: warp states that hold an issue slot or wait for one: fewer, fuller warp instructions shrink
#: them even where no warp waits for another's slot
_ISSUE_REASONS = ("selected", "not_selected", "dispatch_stall", "math_pipe_throttle")
#: a loop's exit diverges when at least this share of its exit branches' executions split the warp
_DIVERGENT_EXIT_SHARE = 0.01


def _one_wave(ctx: KernelContext) -> bool:
    """Every warp of the launch is resident at once (measured; not measured is not one wave)."""
    waves = ctx.kernel.m("launch__waves_per_multiprocessor")
    return waves is not None and waves <= 1.0


def _imbalanced_loop_pcs(ctx: KernelContext) -> set[int]:
    """The instructions of loops whose exit branches diverge (lanes leave the loop at different
    trip counts); empty without a CFG or per-instruction divergent-branch counts."""
    cfg = ctx.cfg
    if cfg is None or "divergent_branches" not in ctx.df or not ctx.measured("divergent_branches"):
        return set()
    found: set[int] = set()
    for loop in cfg.loops:
        split, executed = _exit_branches(ctx, loop)
        if executed > 0 and split / executed >= _DIVERGENT_EXIT_SHARE:
            found.update(cfg.insts[i].pc for i in cfg.loop_instructions(loop))
    return found


def _exit_branches(ctx: KernelContext, loop: Loop) -> tuple[float, float]:
    """The divergent branch targets and the executions of ``loop``'s exit and back-edge
    branches (each block's last instruction, where the block leaves the loop or returns to
    its header)."""
    cfg, rows = ctx.cfg, ctx.row_of()
    assert cfg is not None
    divergent = ctx.df["divergent_branches"].to_numpy(dtype=float)
    issued = ctx.df["inst_executed"].to_numpy(dtype=float)
    split = executed = 0.0
    for b in loop.blocks:
        block = cfg.blocks[b]
        row = rows.get(cfg.insts[block.end - 1].pc)
        if row is not None and any(s not in loop.blocks or s == loop.header for s in block.succs):
            split += float(divergent[row])
            executed += float(issued[row])
    return split, executed


def _wasted_samples(ctx: KernelContext, working: pd.Series, lanes: float) -> pd.Series:
    """Each instruction's samples times its idle-lane share; in a one-wave launch, at the
    instructions of loops with a diverging exit, only the issue-slot samples (the module's
    "Trip-count imbalance in one wave")."""
    df = ctx.df
    cols = [c for c in df.columns if c.startswith("stall_")]
    samples = df[cols].sum(axis=1)
    if _one_wave(ctx):
        imbalanced = [pc for pc in _imbalanced_loop_pcs(ctx) if pc in ctx.row_of()]
        issue = [f"stall_{r}" for r in _ISSUE_REASONS if f"stall_{r}" in df]
        if imbalanced:
            samples = samples.copy()
            samples.loc[imbalanced] = df.loc[imbalanced, issue].sum(axis=1)
    return samples * (1.0 - working.clip(upper=lanes) / lanes)


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


@detector(
    metrics=(
        "launch__waves_per_multiprocessor",
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
    wasted = _wasted_samples(ctx, working, lanes)
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
