"""What two or more memory rules share: ``sum_or_none``, the sum of counters that are all
measured (local-memory's sectors, atomic-contention's L2 atomic sectors).

Contract: pure functions; no detector here.
"""

from __future__ import annotations


def sum_or_none(*values: float | None) -> float | None:
    """The sum of measured values; None when any is not measured."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)
