"""Data-reuse findings: ``low-data-reuse`` (low_data_reuse.py).

Contract: importing the package registers its rule modules' detectors (detectors/base.py's
``REGISTRY``) in the order imported here.
"""

from __future__ import annotations

# The rule modules in the order their detectors register (REGISTRY's order).
from . import low_data_reuse

__all__ = ["low_data_reuse"]
