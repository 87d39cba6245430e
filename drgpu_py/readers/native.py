"""ncu_report's native log: kept out of the user's terminal, summed up in a note.

Contract: ``native_stderr_captured`` redirects file descriptor 2 (where native code logs)
into a buffer for the duration of a block, flushing Python's ``sys.stderr`` first so
nothing of drgpu's own is lost; without a real descriptor 2 it captures nothing.
``native_log_summary`` gives the one informative line of such a log.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator

__all__ = ["native_log_summary", "native_stderr_captured"]


@contextlib.contextmanager
def native_stderr_captured() -> Iterator[list[str]]:
    """Send what native code writes to file descriptor 2 into a buffer instead of the
    terminal; yields a list that holds the captured text (one string) on exit. Python's own
    ``sys.stderr`` is flushed first so nothing of ours is swallowed."""
    captured: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield captured  # no real fd 2 (embedded interpreter): nothing to capture
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            captured.append(tmp.read(1 << 16).decode("utf-8", errors="replace"))


def native_log_summary(text: str) -> str:
    """The informative line of a native log (absl/protobuf), without its prefix."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("WARNING: All log messages before absl"):
            continue
        m = re.match(r"^[EWIF]\d{4} [\d:.]+\s+\d+ [^\]]+\] (.*)$", line)
        return (m.group(1) if m else line)[:200]
    return ""
