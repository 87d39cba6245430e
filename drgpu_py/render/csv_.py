"""CSV renderer: one row per finding and location, for spreadsheets and scripts: the findings
frame joined to the locations frame on ``(kernel_id, id)`` (``drgpu_py.analysis.frames``; a
finding without a location is one row with empty file and line). Output with
``-o findings.csv`` or ``--format csv``. The ``file`` column names source files as the report
does, or as ``--source-root``/``--path-map`` rewrite them (``RenderOptions.path_map``,
render/located.py: the same paths as SARIF and gcc). Every text cell goes through
``drgpu_py.io.csv_cell`` (a kernel name like ``=cmd|...`` is no formula)."""

from __future__ import annotations

from ..analysis.frames import findings_frame, locations_frame
from ..io import csv_cell
from . import register
from .located import PathMapping, map_path

#: The CSV's columns, in order: the finding's, its location's, then its advice.
COLUMNS = [
    "kernel",
    "kernel_id",
    "launches",
    "id",
    "severity",
    "estimated_speedup",
    "time_saved_ns",
    "title",
    "file",
    "line",
    "share",
    "sass",
    "advice",
]


def _mapped(path, mappings: tuple[PathMapping, ...]):
    """A ``file`` cell as the path mappings name it; an empty cell (no source file) stays empty."""
    return map_path(path, mappings)[0] if isinstance(path, str) and path else path


@register("csv", (".csv",))
def render_csv(analysis, options) -> str:
    findings = findings_frame(analysis)
    findings["severity"] = findings["severity"].astype("string")  # the category's text, not its code
    frame = findings.merge(locations_frame(analysis), on=["kernel_id", "id"], how="left", validate="one_to_many")
    frame = frame[COLUMNS]
    mappings = tuple(options.path_map)
    if mappings:
        frame["file"] = frame["file"].map(lambda path: _mapped(path, mappings)).astype(frame["file"].dtype)
    for col in frame.columns:
        if frame[col].dtype.kind not in "biufc":  # text (and mixed) columns; numbers stay numbers
            frame[col] = frame[col].map(csv_cell)
    return frame.to_csv(index=False)
