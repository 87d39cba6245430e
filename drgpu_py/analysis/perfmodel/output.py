"""The model as JSON: the ``kernels[].model`` object and the hot loop's source lines.

Contract: ``to_dict(model, ctx=None, loops=3) -> dict`` is the JSON ``kernels[].model`` object
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
    rows = ctx.row_map()
    out = []
    for idx in lm.chain[:limit]:
        ins = ctx.insts[idx]
        file, ln, off, sass, *_ = rows.get(ins.pc, (None, None, 0, ins.text))
        item = {"pc_offset": int(off) if off == off else None, "sass": sass}
        if file is not None and ln is not None and ln == ln:
            item["file"], item["line"] = file, int(ln)
        out.append(item)
    return out


def to_dict(model: KernelModel, ctx: KernelContext | None = None, loops: int = 3) -> dict[str, Any]:
    """The JSON ``kernels[].model`` object (docs/json-schema.md)."""
    if not model.available:
        return {"available": False, "reason": model.reason}
    ctx = ctx or model.ctx

    def finite(value: float | None, nd: int = 1) -> float | None:
        return None if value is None or value != value or math.isinf(value) else round(float(value), nd)

    out: dict[str, Any] = {
        "available": True,
        "bottleneck": model.bottleneck,
        "bottleneck_class": model.family,
        "counters_verdict": model.verdict,
        "agrees": (model.family == model.verdict) if model.verdict in VERDICTS else None,
        "predicted_cycles": finite(model.predicted_cycles),
        "measured_cycles": finite(model.measured_cycles),
        "error": finite(model.gap(), 4),
        "terms": model.terms,
        "memory_source": model.memory_source,
        "instruction_efficiency": model.instruction_efficiency,
        "instruction_mix": model.mix,
        "warps_per_scheduler": finite(model.warps_per_scheduler, 2),
        "warps_run_per_scheduler": finite(model.warps_run_per_scheduler, 2),
        "global_load_latency": finite(model.global_latency),
        "loops": [],
    }
    for lm in model.loops[:loops]:
        chain = hot_loop_lines(ctx, lm) if ctx is not None else []
        lines = sorted({(c["file"], c["line"]) for c in chain if "line" in c}, key=lambda x: (str(x[0]), x[1]))
        out["loops"].append(
            {
                "header_pc_offset": _offset(ctx, lm.header_pc),
                "depth": lm.depth,
                "instruction_share": finite(lm.executed / model.inst_total, 4),
                "iterations": finite(lm.iterations, 0),
                "instructions_per_iteration": finite(lm.issue_per_iteration, 2),
                "instruction_mix": lm.mix,
                "useful_share": lm.useful_share,
                "critical_path_cycles": finite(lm.critical_path_cycles, 2),
                "single_warp_cycles": finite(lm.single_warp_cycles, 2),
                "critical_path_waits_on": "memory" if lm.chain_memory else "arithmetic",
                "critical_path": chain,
                "lines": [{"file": f, "line": ln} for f, ln in lines],
                "loop_invariant_instructions": len(lm.invariant),
            }
        )
    out["what_if"] = model.what_if
    return out


def _offset(ctx: KernelContext | None, pc: int) -> int | None:
    if ctx is None:
        return None
    row = ctx.row_map().get(pc)
    return int(row[2]) if row is not None and row[2] == row[2] else None
