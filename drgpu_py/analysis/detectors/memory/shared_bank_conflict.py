"""Finding ``shared-bank-conflict``: shared-memory accesses whose lanes hit the same bank at
different addresses and are served in several wavefronts.

Contract: ``bank_conflict(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: shared memory serves one word per bank per wavefront; n lanes on one bank take n
wavefronts. Wide accesses (LDS.128) need several wavefronts without any conflict, so
wavefronts per instruction alone are no evidence.

Evidence: ncu's conflict counters when the report has them (conflict wavefronts over shared
wavefronts, loads and stores apart), with cp.async's shared writes (LDGSTS), which the
counters leave out, added from the per-instruction wavefronts beyond their width's
(``_uncounted_conflicts``); else derived from the per-instruction conflict ways against each
access width's conflict-free wavefronts (the evidence says which). Generic LD/ST that the
per-instruction wavefronts show reaching shared memory count as shared accesses
(``_shared_by_address``). At least ``bank_conflict_excess``. Cost and locations
(``_conflict_cost``): samples at the shared instructions (MIO throttle, short scoreboard) and
the waits charged to them, weighted by how conflicted each is.

Estimate: the larger of the stall model and the traffic model (L1, LSU) for the conflict
wavefronts' share; the instructions issued during that time stay and take their issue time
(the issue utilisation scales the gain); within the limit of actual over conflict-free
wavefronts.

Metrics (declared): the throughput units (``UNIT_METRICS``) and ncu's shared load and store
bank conflicts and wavefronts.

Helpers (this rule's own): ``_natural_wavefronts``, ``_shared_ways``, ``_shared_by_address``,
``_uncounted_conflicts``, ``_conflict_cost``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ....sass.isa import Instruction
from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    Detection,
    cost_share,
    detector,
    eliminate,
    evidence_number,
    merge_weights,
    traffic_speedup,
    within_limit,
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
