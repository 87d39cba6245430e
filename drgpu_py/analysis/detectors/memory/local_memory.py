"""Finding ``local-memory``: register spills and local arrays that go through L1 and L2 as
local-memory loads and stores.

Contract: ``local_memory(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: local memory is per-thread global memory: each access takes the LSU path and
its latency, and a queue full of them throttles the other memory instructions.

Evidence: the local loads and stores executed (the kernel's counts, else the per-instruction
ones) over all instructions, at least ``local_inst_share``; the samples at them and the
long-scoreboard waits charged to them (``cost_share``), plus the other LSU-throttle samples
in proportion to local memory's share of the LSU instructions (nothing without the global
instruction counts); where nothing is charged that way, the memory stalls in proportion to
local over global and local loads.

Estimate: the larger of stall elimination and the traffic model over L1, L2 and DRAM for
local memory's share of the L1 sectors (none when the global sectors are not measured); the
LSU and SM relief in proportion to the local instructions (``lsu_relief``).

Metrics (declared): the throughput units, the local and global instruction counts and L1
sectors, all instructions executed and ``derived__local_spilling_requests`` (evidence).

Helpers: shared ``sum_or_none`` (common.py).
"""

from __future__ import annotations

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
    lsu_relief,
    traffic_speedup,
)
from .common import sum_or_none


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
        sp: sum_or_none(
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
