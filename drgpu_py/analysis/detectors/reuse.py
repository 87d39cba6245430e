"""Data reuse: too few FMAs per shared load, so the MIO path, not the math pipe, sets the pace.

Contract: each detector is ``fn(ctx, passes) -> Detection | None`` (detectors/base.py), pure,
registered by ``@detector`` with the kernel-level metrics it reads.

A shared-memory tiled GEMM that computes one output per thread issues two shared loads for
every FMA: the MIO queue fills (MIO throttle and short-scoreboard waits at those loads) while the
FMA pipe idles. Computing several outputs per thread from values held in registers (register
blocking; a warp tile for tensor cores) reuses each loaded value for several FMAs. The mechanism
is read from the SASS and the counters whatever the source's shape: in each loop, the loads whose
results an FMA-class instruction of the same loop uses, per FMA executed, and the time charged to
those loads.
"""

from __future__ import annotations

from ...sass.cfg import CFG, Loop
from ..context import KernelContext
from ..passes import Passes
from .base import UNIT_METRICS, Detection, cost_share, detector, eliminate, evidence_number

#: Instructions that do the multiply-adds a loaded value feeds (FP32, FP64, FP16 pairs, tensor).
FMA_OPS = frozenset({"FFMA", "FFMA2", "DFMA", "HFMA2", "HMMA", "DMMA", "IMMA"})
#: Shared-memory loads: data staged once (a tile) and read by many threads or iterations is
#: the data a thread could keep in registers instead. A global load streamed once has no reuse
#: to gain, however many FMAs it feeds.
SHARED_LOADS = frozenset({"LDS", "LDSM"})


def _feeding_loads(cfg: CFG, loop: Loop) -> tuple[list[int], list[int]]:
    """(PCs of the loop's shared loads whose result an FMA of the loop reads, PCs of the
    loop's FMAs): a loaded register counts when an FMA of the loop uses it before it is
    written again (approximated by any use in the loop's instructions after the load)."""
    body = cfg.loop_instructions(loop)
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
    """The hottest loop whose FMAs read loaded values at more than ``reuse_loads_per_fma`` loads
    per FMA, with ``reuse_share`` or more of the samples on those loads (their queue and the
    waits for their results). Estimate: register blocking to ``reuse_target_loads_per_fma``
    removes that share of the loads' time, 1 - target / current of it (the unit bounds of the
    ledger cap it at the FMA pipe)."""
    cfg, df = ctx.cfg, ctx.df
    if cfg is None or df.empty or not ctx.sampling or not cfg.loops:
        return None
    executed = ctx.executed()
    # Reuse exists where a staged value is read many times: shared loads per shared store over
    # the kernel (a tiled GEMM reads each staged value 16 times, a tree reduction once or twice).
    lds = sum(float(executed.get(i.pc) or 0.0) for i in ctx.insts if i.opcode in SHARED_LOADS)
    sts = sum(float(executed.get(i.pc) or 0.0) for i in ctx.insts if i.opcode in ("STS", "STSM", "LDGSTS"))
    if sts <= 0 or lds / sts < ctx.th["reuse_reads_per_store"]:
        return None
    best: tuple[float, float, list[int], float] | None = None  # (share, loads per FMA, load PCs, weights)
    best_weights: dict[int, float] = {}
    for loop in cfg.loops:
        load_pcs, fma_pcs = _feeding_loads(cfg, loop)
        fma = sum(float(executed.get(pc) or 0.0) for pc in fma_pcs)
        loads = sum(float(executed.get(pc) or 0.0) for pc in load_pcs)
        if fma <= 0 or loads <= 0:
            continue
        per_fma = loads / fma
        if per_fma < ctx.th["reuse_loads_per_fma"]:
            continue
        share, weights = cost_share(
            ctx,
            load_pcs,
            ("mio_throttle", "short_scoreboard"),
            ("short_scoreboard",),
        )
        if best is None or share > best[0]:
            best, best_weights = (share, per_fma, load_pcs, fma), weights
    if best is None or best[0] < ctx.th["reuse_share"]:
        return None
    share, per_fma, load_pcs, _ = best
    target = ctx.th["reuse_target_loads_per_fma"]
    removed = share * max(0.0, 1.0 - target / per_fma)
    return Detection(
        stall_share=min(1.0, share * ctx.total / max(ctx.stall_total, 1e-9)),
        speedup=eliminate(removed),
        evidence={
            "loads_per_fma": evidence_number(per_fma),
            "load_sample_share": evidence_number(share),
            "target_loads_per_fma": target,
            "shared_reads_per_store": evidence_number(lds / sts),
        },
        locations=ctx.locations(best_weights),
        fmt={"loads_per_fma": per_fma, "share_pct": 100 * share, "target": target},
        relieves_override=["lsu", "l1tex", "shared"],
    )
