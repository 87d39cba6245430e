"""Launch findings: occupancy (occupancy_limited.py), a grid too small for the GPU
(grid_too_small.py), serial kernels (serial_kernel.py), partial warps (partial_warps.py),
blocks too small (block_too_small.py), the tail of the last wave (tail_effect.py), and
imbalance between ranks (rank_imbalance.py).

Contract: importing the package registers its rule modules' detectors (detectors/base.py's
``REGISTRY``) in the order imported here; common.py holds what two or more of them share.
"""

from __future__ import annotations

# The rule modules in the order their detectors register (REGISTRY's order).
from . import occupancy_limited
from . import grid_too_small
from . import serial_kernel
from . import partial_warps
from . import block_too_small
from . import tail_effect
from . import rank_imbalance

__all__ = [
    "occupancy_limited",
    "grid_too_small",
    "serial_kernel",
    "partial_warps",
    "block_too_small",
    "tail_effect",
    "rank_imbalance",
]
