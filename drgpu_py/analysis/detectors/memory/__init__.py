"""Memory findings: uncoalesced global access (global_uncoalesced.py), shared-memory bank
conflicts (shared_bank_conflict.py), local memory (local_memory.py), loop-invariant reloads
(loop_invariant_load.py), data read again in a later pass (repeated_pass.py), atomics (atomic_contention.py), drain at exit (store_drain.py), LSU
throttle (lsu_throttle.py) and load latency (memory_latency.py).

Contract: importing the package registers its rule modules' detectors (detectors/base.py's
``REGISTRY``) in the order imported here; common.py holds what two or more of them share.
"""

from __future__ import annotations

# The rule modules in the order their detectors register (REGISTRY's order).
from . import global_uncoalesced
from . import shared_bank_conflict
from . import local_memory
from . import loop_invariant_load
from . import repeated_pass
from . import atomic_contention
from . import store_drain
from . import lsu_throttle
from . import memory_latency

__all__ = [
    "global_uncoalesced",
    "shared_bank_conflict",
    "local_memory",
    "loop_invariant_load",
    "repeated_pass",
    "atomic_contention",
    "store_drain",
    "lsu_throttle",
    "memory_latency",
]
