"""CSV renderer: one row per finding and location (``drgpu_py.analysis.frames.findings_frame``), for
spreadsheets and scripts. Output with ``-o findings.csv`` or ``--format csv``."""

from __future__ import annotations

from ..analysis.frames import findings_frame
from . import register


@register("csv", (".csv",))
def render_csv(analysis, options) -> str:
    return findings_frame(analysis).to_csv(index=False)
