"""Instruction findings: loop overhead (instruction_overhead.py), FP64 and conversions
(fp64_conversion.py), integer division (integer_division.py), low ILP (low_ilp.py), slow math
(slow_math.py), warp divergence (warp_divergence.py) and the instruction cache
(instruction_cache.py).

Contract: importing the package registers its rule modules' detectors (detectors/base.py's
``REGISTRY``) in the order imported here; common.py holds what two or more of them share.
"""

from __future__ import annotations

# The rule modules in the order their detectors register (REGISTRY's order).
from . import instruction_overhead
from . import fp64_conversion
from . import integer_division
from . import low_ilp
from . import slow_math
from . import warp_divergence
from . import instruction_cache

__all__ = [
    "instruction_overhead",
    "fp64_conversion",
    "integer_division",
    "low_ilp",
    "slow_math",
    "warp_divergence",
    "instruction_cache",
]
