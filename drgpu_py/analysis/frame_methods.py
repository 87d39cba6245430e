"""The pandas frames an analysis offers, as methods shared by a live analysis (``Analysis``) and
one read back from JSON (``SavedAnalysis``).

Contract: a class mixing ``FrameMethods`` in provides what ``frames.py`` reads of it (its
``frame_input()``); each method hands the instance to the module function of the same name.
``frames`` (and pandas) are imported on first use, so importing an analysis costs neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


class FrameMethods:
    def kernels_frame(self) -> pd.DataFrame:
        """One row per kernel (group), by total GPU time; key ``kernel_id``."""
        from .frames import kernels_frame

        return kernels_frame(self)  # type: ignore[arg-type]

    def findings_frame(self) -> pd.DataFrame:
        """One row per finding; key ``(kernel_id, id)``."""
        from .frames import findings_frame

        return findings_frame(self)  # type: ignore[arg-type]

    def locations_frame(self) -> pd.DataFrame:
        """One row per location of a finding; joins findings_frame on ``(kernel_id, id)``."""
        from .frames import locations_frame

        return locations_frame(self)  # type: ignore[arg-type]

    def stalls_frame(self) -> pd.DataFrame:
        """One row per stall reason of a kernel; key ``(kernel_id, reason)``."""
        from .frames import stalls_frame

        return stalls_frame(self)  # type: ignore[arg-type]

    def stall_lines_frame(self) -> pd.DataFrame:
        """The source lines the tree shows under each stall reason; joins stalls_frame on
        ``(kernel_id, reason)``."""
        from .frames import stall_lines_frame

        return stall_lines_frame(self)  # type: ignore[arg-type]

    def source_frame(self) -> pd.DataFrame:
        """One row per source line of each kernel: instructions, samples, samples per stall
        reason (needs the report: on an analysis read back from JSON, a UsageError)."""
        from .frames import source_frame

        return source_frame(self)  # type: ignore[arg-type]

    def metrics_frame(self) -> pd.DataFrame:
        """One row per raw metric of each kernel; key ``(kernel_id, metric)`` (needs the
        report: on an analysis read back from JSON, a UsageError)."""
        from .frames import metrics_frame

        return metrics_frame(self)  # type: ignore[arg-type]
