"""The model as JSON: the ``kernels[].model`` object and the hot loop's source lines.

Contract: ``to_dict(m, ctx=None, loops=3) -> dict`` is the JSON ``kernels[].model`` object
(docs/json-schema.md) of a :class:`KernelModel` (core.py); ``hot_loop_lines(ctx, lm)`` the
critical chain of a loop with its source lines. Both read the context's SASS rows only.
"""

from __future__ import annotations

import math
from typing import Any

from ..context import KernelContext
from .core import VERDICTS, KernelModel, LoopModel


def hot_loop_lines(ctx: KernelContext, lm: LoopModel, limit: int = 8) -> list[dict[str, Any]]:
    """The critical chain's instructions with their source lines (first ``limit``)."""
    rows = ctx._row_map()
    out = []
    for j in lm.chain[:limit]:
        ins = ctx.insts[j]
        f, ln, off, sass, *_ = rows.get(ins.pc, (None, None, 0, ins.text))
        item = {"pc_offset": int(off) if off == off else None, "sass": sass}
        if f is not None and ln is not None and ln == ln:
            item["file"], item["line"] = f, int(ln)
        out.append(item)
    return out


def to_dict(m: KernelModel, ctx: KernelContext | None = None, loops: int = 3) -> dict[str, Any]:
    """The JSON ``kernels[].model`` object (docs/json-schema.md)."""
    if not m.available:
        return {"available": False, "reason": m.reason}
    ctx = ctx or m._ctx

    def r(x: float | None, nd: int = 1) -> float | None:
        return None if x is None or x != x or math.isinf(x) else round(float(x), nd)

    out: dict[str, Any] = {
        "available": True,
        "bottleneck": m.bottleneck,
        "bottleneck_class": m.family,
        "counters_verdict": m.verdict,
        "agrees": (m.family == m.verdict) if m.verdict in VERDICTS else None,
        "predicted_cycles": r(m.predicted_cycles),
        "measured_cycles": r(m.measured_cycles),
        "error": r(m.gap(), 4),
        "terms": m.terms,
        "memory_source": m.memory_source,
        "instruction_efficiency": m.instruction_efficiency,
        "instruction_mix": m.mix,
        "warps_per_scheduler": r(m.warps_per_scheduler, 2),
        "warps_run_per_scheduler": r(m.warps_run_per_scheduler, 2),
        "global_load_latency": r(m.global_latency),
        "loops": [],
    }
    for lm in m.loops[:loops]:
        chain = hot_loop_lines(ctx, lm) if ctx is not None else []
        lines = sorted({(c["file"], c["line"]) for c in chain if "line" in c}, key=lambda x: (str(x[0]), x[1]))
        out["loops"].append(
            {
                "header_pc_offset": _offset(ctx, lm.header_pc),
                "depth": lm.depth,
                "instruction_share": r(lm.executed / m.inst_total, 4),
                "iterations": r(lm.iterations, 0),
                "instructions_per_iteration": r(lm.issue_per_iteration, 2),
                "instruction_mix": lm.mix,
                "useful_share": lm.useful_share,
                "critical_path_cycles": r(lm.critical_path_cycles, 2),
                "single_warp_cycles": r(lm.single_warp_cycles, 2),
                "critical_path_waits_on": "memory" if lm.chain_memory else "arithmetic",
                "critical_path": chain,
                "lines": [{"file": f, "line": ln} for f, ln in lines],
                "loop_invariant_instructions": len(lm.invariant),
            }
        )
    out["what_if"] = m.what_if
    return out


def _offset(ctx: KernelContext | None, pc: int) -> int | None:
    if ctx is None:
        return None
    row = ctx._row_map().get(pc)
    return int(row[2]) if row is not None and row[2] == row[2] else None
