"""Synchronization findings: warps waiting at barriers for unbalanced work
(barrier_imbalance.py) and fences executed in loops (memory_barrier.py).

Contract: importing the package registers its rule modules' detectors (detectors/base.py's
``REGISTRY``) in the order imported here.
"""

from __future__ import annotations

# The rule modules in the order their detectors register (REGISTRY's order).
from . import barrier_imbalance
from . import memory_barrier

__all__ = ["barrier_imbalance", "memory_barrier"]
