"""Finding ``atomic-contention``: global atomics that serialize at contended addresses and hold
warps and the memory queues.

Contract: ``atomics(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: L2 serves atomics to one address one after another; outstanding atomics hold warps
at EXIT (drain), fill the LSU queue for other loads (LSU throttle), and other loads queue
behind them in the memory system.

Evidence: the stall samples at the global atomics and the long-scoreboard waits charged to
them (``cost_share``); the LSU-throttle samples elsewhere; where atomics executed, the drain
samples and the loads' other long-scoreboard waits in proportion to the atomics' share of the
L2 sectors the SMs request (reductions and atomics against reads; nothing when one is not
measured). Reductions that return nothing (RED), with every
throughput unit measured and idle below ``atomic_idle_pct``, make the memory waits theirs.
The gate (``atomic_share``) counts the atomics' waits and, where the kernel writes global
memory only through atomics, the drain.

Estimate: ``eliminate`` of that share times what warp aggregation removes: returning atomics
(ATOM) keep one per warp instruction per address their lanes can target
(``_atomic_addresses``; one per block where already one lane per warp), over the L2 atomic
sectors; reductions accumulate privately and leave next to nothing. Variant ``float`` or
``mixed`` from the SASS data type (``_atomic_types``).

Metrics (declared): the throughput units and the L2 sectors of reductions, atomics and reads
from the SMs (``lts__t_sectors_srcunit_tex_op_*``).

Helpers (this rule's own): ``_atomic_addresses``, ``_atomic_types``, ``_FLOAT_TYPES``;
shared ``sum_or_none`` (common.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ....sass.dataflow import (
    lane_values,
    memory_operand,
    registers_in,
)
from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    MEMORY_REASONS,
    Detection,
    cost_share,
    detector,
    eliminate,
    evidence_number,
)
from .common import sum_or_none


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
    red = sum_or_none(red_sectors, atom_sectors)
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
    stores = ctx.executed_where(lambda i: i.opcode in ("STG", "ST"))
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
