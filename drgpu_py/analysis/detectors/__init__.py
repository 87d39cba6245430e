"""Detectors: one rule module per finding of ``specs/findings.yaml``, at
``detectors/<family>/<finding>.py`` (the finding id with ``_`` for ``-``), each registering
one function by ``@detector`` (base.py) with the metrics it reads.

Contract: ``REGISTRY`` maps a detector's name to its :class:`~.base.Detector` once this
package is imported; ``detector.run(ctx, passes) -> Detection | None`` is pure:
it reads the kernel's facts and what the passes before it computed (analysis/passes.py). A detector decides
whether its problem is present (``ctx.th`` thresholds), measures how much of the kernel's
time it concerns, and points at source lines. The families (constant, instruction, launch,
memory, pipes, reuse, sync) are imported in that order and each imports its rule modules in a
fixed order: that is ``REGISTRY``'s order (``evaluate`` runs the detectors in the catalogue's
order). Helpers two rules of a family share live in its ``common.py``; those of several
families in base.py. docs/architecture.md has the recipe for adding one.
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
