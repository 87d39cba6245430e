"""Static SASS performance model: what the code could achieve, from its instructions.

Contract: ``kernel_model(ctx, sol) -> KernelModel`` is a pure function of a
:class:`KernelContext` (its SASS, CFG, per-PC executed counts, a few counters: occupancy,
cycles, hit rates, bytes) and its speed of light (sol.py). A kernel without SASS (or without executed
counts) gets a model with ``available = False`` and a ``reason``. Latencies and pipe rates
are ``specs/arch/*.yaml`` ``latency`` and ``pipe_rate``. ``what_if(model, change, **params)``
re-evaluates the same model with a changed hot loop or occupancy.

Method (per-loop single-warp simulation, kernel terms, bottleneck), what it leaves out and
how to read the gap to the measured cycles: docs/model.md.

Modules, each importing only those above it: sim.py (issue pipes, latencies, the single-warp
simulation and its critical chain), core.py (LoopModel, KernelModel, the kernel terms and
bottleneck), whatif.py (loop-body roles, the unroll / hoist / warps what-ifs), build.py
(kernel_model and the counters it reads), output.py (the JSON ``kernels[].model`` object).
This package re-exports their public names.
"""

from __future__ import annotations

from .build import USEFUL_CLASSES, access_bytes, constant_stream_misses, counters_verdict, kernel_model
from .core import VERDICTS, KernelModel, LoopModel, combined, evaluate_terms, executed_count, family_of
from .output import hot_loop_lines, to_dict
from .sim import Sim, latency_of, pipe_of, simulate
from .whatif import (
    default_what_ifs,
    loop_control,
    loop_invariant,
    measured_speedup,
    unroll_roles,
    what_if,
)

__all__ = [
    "USEFUL_CLASSES",
    "VERDICTS",
    "KernelModel",
    "LoopModel",
    "Sim",
    "access_bytes",
    "combined",
    "constant_stream_misses",
    "counters_verdict",
    "default_what_ifs",
    "evaluate_terms",
    "executed_count",
    "family_of",
    "hot_loop_lines",
    "kernel_model",
    "latency_of",
    "loop_control",
    "loop_invariant",
    "measured_speedup",
    "pipe_of",
    "simulate",
    "to_dict",
    "unroll_roles",
    "what_if",
]
