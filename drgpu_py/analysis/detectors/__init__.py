"""Detectors: one function per finding in ``specs/findings.yaml``, by family (memory, sync,
instruction, launch, reuse), registered by ``@detector`` (base.py) with the metrics each reads.

Contract: ``REGISTRY`` maps a detector's name to its :class:`~.base.Detector` once this
package is imported; ``detector.run(ctx, passes) -> Detection | None`` is pure:
it reads the kernel's facts and what the passes before it computed (analysis/passes.py). A detector decides
whether its problem is present (``ctx.th`` thresholds), measures how much of the kernel's
time it concerns, and points at source lines. docs/architecture.md has the recipe for
adding one.
"""

from __future__ import annotations

from . import constant, instruction, launch, memory, pipes, reuse, sync
from .base import MAX_REMOVABLE, REGISTRY, Detection, Detector

__all__ = [
    "MAX_REMOVABLE",
    "REGISTRY",
    "Detection",
    "Detector",
    "constant",
    "instruction",
    "launch",
    "memory",
    "pipes",
    "reuse",
    "sync",
]
