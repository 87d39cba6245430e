"""CSV renderer: one row per finding and location (``drgpu_py.analysis.frames.findings_frame``), for
spreadsheets and scripts. Output with ``-o findings.csv`` or ``--format csv``. Every text cell
goes through ``drgpu_py.io.csv_cell`` (a kernel name like ``=cmd|...`` is no formula)."""

from __future__ import annotations

from ..analysis.frames import findings_frame
from ..io import csv_cell
from . import register


@register("csv", (".csv",))
def render_csv(analysis, options) -> str:
    frame = findings_frame(analysis)
    for col in frame.columns:
        if frame[col].dtype.kind not in "biufc":  # text (and mixed) columns; numbers stay numbers
            frame[col] = frame[col].map(csv_cell)
    return frame.to_csv(index=False)
