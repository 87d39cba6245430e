"""The per-instruction table of a launch, indexed by PC, assembled from per-column PC->value maps.

Contract: ``instruction_frame`` gives every reader's launches the same table: rows joined by
PC, counters 0 where a PC has no value (not executed, not sampled, not collected), and every
column of ``profile.INSTRUCTION_COLUMNS`` and every ``stall_*`` column present.
``FrameParts`` carries the arguments across a process boundary (a reader without pandas);
``FrameParts.frame()`` is the same table. pandas and numpy load only when a table is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING

from ..profile import INSTRUCTION_COLUMNS
from ..specs import loader as data

if TYPE_CHECKING:  # numpy and pandas load where a table is made (instruction_frame)
    import pandas as pd

__all__ = ["FrameParts", "instruction_frame"]


def instruction_frame(
    pcs: list[int],
    columns: dict[str, dict[int, float]],
    sass: dict[int, str],
    lines: dict[int, tuple[str | None, int | None]],
    base: int | None,
) -> pd.DataFrame:
    """Build the per-instruction table. Every column is a PC->value map, so rows are joined
    by PC; PCs with no value get 0 for counters (not executed / not sampled)."""
    import numpy as np
    import pandas as pd

    pcs = sorted(set(pcs))
    index = pd.Index(pcs, name="pc", dtype="int64")
    base = pcs[0] if base is None and pcs else base
    # One constructor call for all columns (in this order): assigning them one by one cost
    # more than the rest of reading a launch.
    n = len(pcs)
    cols: dict = {
        "offset": _offsets(pcs, base),
        "sass": [sass.get(pc, "") for pc in pcs],
        **_line_columns(pcs, lines, index),
    }
    for name, values in columns.items():
        cols[name] = np.fromiter(map(values.get, pcs, repeat(0.0)), float, n)  # float() of each
    # Every counter column exists (0 = not executed, not sampled or not collected): the
    # detectors read them without checking, and a report may lack any of them.
    for col in [f"stall_{r}" for r in data.stall_reasons()] + list(INSTRUCTION_COLUMNS):
        cols.setdefault(col, 0.0)
    return pd.DataFrame(cols, index=index)


def _offsets(pcs: list[int], base: int | None):
    """Each PC's offset from the function's base (base is None only when there are no PCs)."""
    import numpy as np

    return np.fromiter((pc - base for pc in pcs), np.int64, len(pcs)) if pcs and base is not None else []


def _line_columns(pcs: list[int], lines: dict[int, tuple[str | None, int | None]], index) -> dict:
    """The file and line columns. Object dtype for the files: pandas would otherwise turn the
    None of a PC without a line into NaN (a float that is truthy and not a path)."""
    import pandas as pd

    at = [lines.get(pc, (None, None)) for pc in pcs]
    return {
        "file": pd.Series([t[0] for t in at], index=index, dtype=object),
        "line": pd.array([t[1] for t in at], dtype="Int64"),
    }


@dataclass
class FrameParts:
    """``instruction_frame``'s arguments for one launch, and the samples the reader moved
    (``profile.SAMPLES_MOVED``): a reader in a process without pandas returns these, and the
    process that analyzes builds the frame (``frame()``: the same table)."""

    pcs: list[int]
    columns: dict[str, dict[int, float]]
    sass: dict[int, str]
    lines: dict[int, tuple[str | None, int | None]]
    base: int | None
    moved: float = 0.0

    def frame(self) -> pd.DataFrame:
        return instruction_frame(self.pcs, self.columns, self.sass, self.lines, self.base)
