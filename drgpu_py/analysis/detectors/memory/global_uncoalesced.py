"""Finding ``global-uncoalesced``: global loads and stores whose lanes' addresses spread over
more sectors than the data needs.

Contract: ``uncoalesced(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: a warp's access is served in 32-byte sectors; strided or misaligned addresses
fetch sectors of which the warp uses part, and the excess costs bandwidth where it is served
(L1 on a hit, else L2, else DRAM) and memory stall time.

Evidence: the excess sectors over all global sectors, at least ``uncoalesced_excess``:
per instruction (``l2_sectors_global_excessive``) less the loads whose address comes from
loaded data (pointer chasing: memory-latency's, which no re-indexing coalesces); without
per-instruction sectors, the kernel's
``derived__memory_l2_theoretical_sectors_global_excessive`` over load and store sectors
(not measured when data-addressed loads ran, or when the load or store sectors are missing:
``not_measured()``). The L1 and L2 hit rates and
the stores' part of the excess say which units the waste passes through. Locations: the
memory stalls the blamer charges to the excess instructions, excess sectors breaking ties.

Estimate: the larger of the stall model (``eliminate`` of the memory stalls' share times the
waste times the serving units' utilisation) and the traffic model (``traffic_speedup`` of the
waste through those units), within ``removed_limit`` of the waste: every access at its ideal
sectors.

Metrics (declared): the throughput units (``UNIT_METRICS``), the global load and store
sectors and load requests, the derived excessive sectors and the L1 and L2 sector hit rates.

Helpers: none of its own.
"""

from __future__ import annotations

from typing import Any

from ....sass.dataflow import (
    data_addressed_loads,
)
from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    MEMORY_REASONS,
    Detection,
    detector,
    eliminate,
    evidence_number,
    not_measured,
    removed_limit,
    traffic_speedup,
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
        removed_limit(waste),
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
