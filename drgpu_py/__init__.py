"""drgpu: a top-down GPU performance advisor built on NVIDIA Nsight Compute.

Public entry points: :func:`drgpu_py.analyze` (report path(s) -> :class:`Analysis`, what the
CLI's ``analyze`` runs; docs/api.md), :class:`drgpu_py.Analysis` (what it returns, and
``Analysis.load`` for a saved JSON; it lives in :mod:`drgpu_py.analysis`),
:func:`drgpu_py.readers.open_report` (report -> :class:`Profile`),
:func:`drgpu_py.analysis.analyze` (profile -> :class:`Analysis`), and the renderers in
:mod:`drgpu_py.render`. The CLI (:mod:`drgpu_py.cli`) is a thin layer over these.

``Analysis`` is loaded on first use (PEP 562): importing the package (every ``drgpu``
command does) does not import the analysis modules, numpy and pandas with it.
"""

from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from .analysis import Analysis

__all__ = ["__version__", "analyze", "Analysis"]


def __getattr__(name: str) -> object:
    if name != "Analysis":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .analysis import Analysis

    globals()["Analysis"] = Analysis
    return Analysis


def analyze(
    reports,
    *,
    kernel=None,
    per_launch=False,
    thresholds=None,
    source_csv=None,
    line_report=None,
    cubin=None,
    binary=None,
    source_roots=(),
):
    """Analyze one report (a path) or several of one program (a list: merged as ranks).

    Returns an :class:`drgpu_py.analysis.Analysis`: ``.summary()`` (kernel groups by GPU
    time, findings with the time they would save), ``.priorities()``, ``.kernels`` (per
    group: ``.tree``, ``.findings``, ``.sol``), pandas frames (``kernels_frame()``,
    ``findings_frame()``, ``locations_frame()``, ...: docs/api.md), ``to_dict()`` (the JSON
    document). ``thresholds``: a dict
    of overrides (``drgpu thresholds`` lists the keys). Launches of one kernel are analyzed as
    one group unless ``per_launch``. ``source_roots``: folders whose source files a cubin's
    line table may show, besides the reports' folders and the working folder.
    """
    from pathlib import Path

    from .specs import loader as data
    from .pipeline import analyze_reports

    paths = [reports] if isinstance(reports, (str, Path)) else list(reports)
    if not paths:
        from .errors import UsageError

        raise UsageError("no report given: analyze needs a report path or a list of them")
    th = data.thresholds(thresholds) if thresholds else None
    return analyze_reports(
        paths,
        kernel=kernel,
        source_csv=source_csv,
        line_report=line_report,
        cubin=cubin,
        binary=binary,
        thresholds=th,
        per_launch=per_launch,
        source_roots=source_roots,
    )
