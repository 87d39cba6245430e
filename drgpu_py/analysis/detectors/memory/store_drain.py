"""Finding ``store-drain``: warps held at EXIT until their memory writes drain.

Contract: ``drain(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: a warp that exits with stores (or atomics and reductions) still in flight waits for
them (the ``drain`` stall).

Evidence: the drain share of stall samples, at least ``drain_share``; what drains
(``_drain_variant``): stores, or, with no global store sectors, atomics (variant ``atomics``)
or something else (``other``). Locations: the lines of the drain samples.

Estimate: half of the drain samples' share of all time removed (``eliminate``).

Metrics (declared): ``l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum`` (the variant).

Helpers (this rule's own): ``_drain_variant``.
"""

from __future__ import annotations

from typing import Any

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    Detection,
    detector,
    eliminate,
    evidence_number,
)


def _drain_variant(ctx: KernelContext) -> tuple[str | None, dict[str, Any]]:
    """What drains at EXIT: stores, or (no global store sectors) atomics and reductions."""
    kernel = ctx.kernel
    stores = kernel.m("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    store_insts = ctx.executed_where(lambda i: i.opcode in ("STG", "ST", "STL"))
    atomics = ctx.executed_where(lambda i: i.is_global_atomic())
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
