"""Reading many long-lived objects without cyclic garbage collection walking them again.

Contract: ``gc_paused()`` disables the cyclic collector for a block and restores the
collector's previous state after it, whatever the block raised.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection meanwhile: reading an export or a saved analysis makes
    millions of objects that all live on (a 1,000-launch source page, ~150,000 row lists; a
    20,000-kernel analysis, 2,000,000 tree nodes), and each collection would walk them all
    again (a sixth to a half of the reading time). Collected as usual after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
