"""Math-pipe findings: ``pipe-contention`` (pipe_contention.py).

Contract: importing the package registers its rule modules' detectors (detectors/base.py's
``REGISTRY``) in the order imported here.
"""

from __future__ import annotations

# The rule modules in the order their detectors register (REGISTRY's order).
from . import pipe_contention

__all__ = ["pipe_contention"]
