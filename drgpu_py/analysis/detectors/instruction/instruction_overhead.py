"""Finding ``instruction-overhead``: an issue-bound kernel whose hot loop is small and rolled,
so most issued instructions are loop control and index arithmetic.

Contract: ``instruction_overhead(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: each iteration of a rolled loop issues its compare-and-branch, induction steps and
index arithmetic around a little math or memory work (the assembly model's instruction
efficiency); when the issue slots are the limit, time follows the instruction count, and
unrolling removes the per-iteration control and folds index math into constant offsets.

Evidence: the issue unit's utilisation from the speed of light (at least
``overhead_issue_pct``); the loop whose innermost instructions execute the most (at least half
of all executed instructions); in it, the share of useful instructions (perfmodel's
``USEFUL_CLASSES``) below ``1 - overhead_share`` and the useful instructions per executed
branch at most ``overhead_useful_per_iteration``. Locations: the loop's integer and control
instructions.

Estimate: the performance model's unrolling what-if (``model_change``: ``model_unroll_k``
iterations per pass, loop-invariant work hoisted); without a model, the iterations'
control instructions and half of the integer ones removed, scaled by the issue utilisation
(``eliminate``). No limit of its own here: the physical bounds ``evaluate`` applies to every
finding (analysis/bounds.py) follow.

Metrics (declared): none (the issue utilisation comes from the speed of light, the counts
per instruction).

Helpers: ``model_change`` (common.py, shared with low-ilp); none of its own.
"""

from __future__ import annotations

from ...context import KernelContext
from ...passes import Passes
from ...perfmodel import USEFUL_CLASSES
from ..base import (
    Detection,
    detector,
    eliminate,
)
from .common import model_change


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
    change = model_change(ctx, passes.perf, ("unroll",), hoist=True)
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
