"""Finding ``low-data-reuse``: too few FMAs per shared load, so the MIO path, not the math
pipe, sets the pace.

Contract: ``data_reuse(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

A shared-memory tiled GEMM that computes one output per thread issues two shared loads for
every FMA: the MIO queue fills (MIO throttle and short-scoreboard waits at those loads) while the
FMA pipe idles. Computing several outputs per thread from values held in registers (register
blocking; a warp tile for tensor cores) reuses each loaded value for several FMAs. The mechanism
is read from the SASS and the counters whatever the source's shape: in each loop, and in the
kernel as a whole where the compiler unrolled the loop away, the loads whose results an
FMA-class instruction of the same region uses, per FMA executed, and the time charged to those
loads.

The estimate asks the launch-shape model (launch_shape.py) for the same launch with the tile:
the region's loads fall to the target per FMA, and with them the L1/shared traffic they make
and the region's other non-FMA instructions (the loads' address arithmetic and the loop's
control, which a tile of outputs per thread shares out); the FMAs stay. The registers the tile
needs are not modeled (a kernel whose occupancy they cut gains less).

Gate: shared loads per shared store of at least ``reuse_reads_per_store`` (staged data read
many times), a region at more than ``reuse_loads_per_fma`` loads per FMA, and its loads' time
at least ``reuse_share`` of all samples. Limit (``within_limit``): the what-if itself, or
without the model ``removed_limit`` of the loads' share (every sample at them gone).

Metrics (declared): the throughput units (``UNIT_METRICS``, the launch-shape model's).

Helpers (this rule's own): ``_regions``, ``_feeding_loads`` and the opcode sets ``FMA_OPS``,
``SHARED_LOADS``, ``L1_OPS``, ``MIO_OPS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....sass.cfg import CFG
from ...context import KernelContext
from ...passes import Passes
from ..base import (
    UNIT_METRICS,
    Detection,
    cost_share,
    detector,
    eliminate,
    evidence_number,
    removed_limit,
    within_limit,
)


#: Instructions that do the multiply-adds a loaded value feeds (FP32, FP64, FP16 pairs, tensor).
FMA_OPS = frozenset({"FFMA", "FFMA2", "DFMA", "HFMA2", "HMMA", "DMMA", "IMMA"})


#: Shared-memory loads: data staged once (a tile) and read by many threads or iterations is
#: the data a thread could keep in registers instead. A global load streamed once has no reuse
#: to gain, however many FMAs it feeds.
SHARED_LOADS = frozenset({"LDS", "LDSM"})


#: Instructions that move data through L1/shared memory (the traffic the tile cuts a share of).
L1_OPS = ("LD", "ST", "ATOM", "RED")


#: Instructions that enter the MIO queue: when shared loads fill it, the MIO-throttle samples
#: fall on whichever of these comes next (an S2R, a global load, a store), not on the loads.
MIO_OPS = (*L1_OPS, "S2R", "SHFL", "MATCH", "VOTE.ANY")


def _regions(cfg: CFG) -> list[Sequence[int]]:
    """Instruction indices of each loop's body, then of the whole kernel (a loop the compiler
    unrolled completely leaves its loads and FMAs in straight-line code)."""
    return [cfg.loop_instructions(loop) for loop in cfg.loops] + [range(len(cfg.insts))]


def _feeding_loads(cfg: CFG, body: Sequence[int]) -> tuple[list[int], list[int]]:
    """(PCs of the region's shared loads whose result an FMA of the region reads, PCs of the
    region's FMAs): a loaded register counts when an FMA of the region uses it (approximated
    by any use in the region's instructions)."""
    insts = cfg.insts
    fmas = [j for j in body if insts[j].opcode in FMA_OPS]
    if not fmas:
        return [], []
    fma_uses: set[str] = set()
    for j in fmas:
        fma_uses |= insts[j].uses
    loads = [j for j in body if insts[j].opcode in SHARED_LOADS and insts[j].defs & fma_uses]
    return [insts[j].pc for j in loads], [insts[j].pc for j in fmas]


@detector(metrics=(*UNIT_METRICS,))
def data_reuse(ctx: KernelContext, passes: Passes) -> Detection | None:
    """The region (a loop, or the whole kernel) whose FMAs read loaded values at more than
    ``reuse_loads_per_fma`` loads per FMA with the most samples on those loads (their queue and
    the waits for their results), at least ``reuse_share`` of all. Estimate: the launch-shape
    model's what-if with the region blocked to ``reuse_target_loads_per_fma`` (module doc);
    without the model, removing 1 - target / current of the loads' time."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or not ctx.sampling:
        return None
    executed = ctx.executed()
    # Reuse exists where a staged value is read many times: shared loads per shared store over
    # the kernel (a tiled GEMM reads each staged value 16 times, a tree reduction once or twice).
    lds = ctx.executed_where(lambda i: i.opcode in SHARED_LOADS)
    sts = ctx.executed_where(lambda i: i.opcode in ("STS", "STSM", "LDGSTS"))
    if sts <= 0 or lds / sts < ctx.th["reuse_reads_per_store"]:
        return None
    mio_ops = ctx.executed_where(lambda i: i.opcode.startswith(MIO_OPS))
    best: tuple[float, float, Sequence[int], float, float] | None = None  # share, per FMA, body, FMAs, loads
    best_weights: dict[int, float] = {}
    for body in _regions(cfg):
        load_pcs, fma_pcs = _feeding_loads(cfg, body)
        fma = sum(float(executed.get(pc) or 0.0) for pc in fma_pcs)
        loads = sum(float(executed.get(pc) or 0.0) for pc in load_pcs)
        if fma <= 0 or loads <= 0:
            continue
        per_fma = loads / fma
        if per_fma < ctx.th["reuse_loads_per_fma"]:
            continue
        share, weights = cost_share(ctx, load_pcs, ("mio_throttle", "short_scoreboard"), ("short_scoreboard",))
        # The queue the loads fill throttles every MIO instruction: their part of the
        # MIO-throttle samples elsewhere is their part of the MIO instructions.
        at_loads = sum(ctx.samples_at(load_pcs, ("mio_throttle",)).values())
        elsewhere = (
            (ctx.reasons.get("mio_throttle", 0.0) - at_loads) / ctx.samples_total if ctx.samples_total > 0 else 0.0
        )
        share += max(0.0, elsewhere) * min(1.0, loads / mio_ops) if mio_ops > 0 else 0.0
        if best is None or share > best[0]:
            best, best_weights = (share, per_fma, body, fma, loads), weights
    if best is None or best[0] < ctx.th["reuse_share"]:
        return None
    share, per_fma, body, fma, loads = best
    target = ctx.th["reuse_target_loads_per_fma"]
    kept = min(1.0, target / per_fma)
    shape = passes.launch
    limit: tuple[float | None, str]
    if shape is None:
        speed = eliminate(share * (1.0 - kept))
        stall_share = ctx.as_stall_share(share)
        limit = (
            removed_limit(share),
            f"1 / (1 - {share:.3f}): every sample at the loads gone",
        )
    else:
        total = ctx.executed_total()
        region = sum(float(executed.get(cfg.insts[j].pc) or 0.0) for j in body)
        l1_ops = ctx.executed_where(lambda i: i.opcode.startswith(L1_OPS))
        k_inst = 1.0 - (region - fma) * (1.0 - kept) / total if total > 0 else 1.0
        k_l1 = 1.0 - min(1.0, loads / l1_ops) * (1.0 - kept) if l1_ops > 0 else 1.0
        what_if = shape.what_if(
            active_sms=shape.active_sms, warps_per_scheduler=shape.warps_per_scheduler, k_inst=k_inst, k_l1=k_l1
        )
        speed, stall_share = what_if.speedup, what_if.saved_share
        limit = (what_if.speedup, f"the launch-shape model's what-if: the loads cut to {target:g} per FMA")
    evidence: dict[str, Any] = {
        "loads_per_fma": evidence_number(per_fma),
        "load_sample_share": evidence_number(share),
        "target_loads_per_fma": target,
        "shared_reads_per_store": evidence_number(lds / sts),
    }
    speed = within_limit(speed, limit[0], limit[1], evidence)
    return Detection(
        stall_share=stall_share,
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(best_weights),
        fmt={"loads_per_fma": per_fma, "share_pct": 100 * share, "target": target},
        relieves_override=["sm", "l1tex", "shared"],
    )
