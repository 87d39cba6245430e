"""Constant-cache findings: ``constant-cache-divergence`` (constant_cache_divergence.py).

Contract: importing the package registers its rule modules' detectors (detectors/base.py's
``REGISTRY``) in the order imported here.
"""

from __future__ import annotations

# The rule modules in the order their detectors register (REGISTRY's order).
from . import constant_cache_divergence

__all__ = ["constant_cache_divergence"]
