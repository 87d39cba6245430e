"""The analysis of each report a ``drgpu profile`` session's ncu wrote, and the record of the
run (:mod:`drgpu_py.ncu.session` runs the session).

Contract: ``analyze_one(report, selection, result, notes, thresholds)`` checks the requested
metrics, analyzes the report and writes every output format beside it (names checked free
before profiling, or --force), returning the summary rows, the files and the missing
metrics; ``read_first_pass`` and ``analyze_passes`` do the same for the two reports of a
two-pass profile, joined into one (readers.passes), the outputs named after the session's
stem; ``record`` writes ``STEM.profile.json`` and never hides the run's own outcome.
Nothing here prints or runs ncu.
"""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path

from ..errors import DrgpuError, ToolNotFoundError
from ..specs import metric_sets as msets
from . import outcome
from .run import RunResult

_SIGNALS = {int(s) for s in signal.Signals}


def write_outputs(analysis, folder: Path, stem: str, force: bool) -> list[Path]:
    from ..render import missing_optional

    try:
        from ..render.bundle import write_all  # all formats into one folder
    except ImportError as e:
        if not missing_optional(e):
            raise
        from ..render import render_to

        return [
            render_to(analysis, "json", folder / f"{stem}.json", force=force),
            render_to(analysis, "text", folder / f"{stem}.txt", force=force),
        ]
    res = write_all(analysis, folder, stem, force)
    if res:
        return [Path(p) for p in (res.values() if isinstance(res, dict) else res)]
    return sorted(p for p in folder.glob(stem + ".*") if not p.name.endswith((".ncu-rep", ".ncu.log")))


def analyze_one(rep: Path, sel: msets.Selection, result: RunResult, notes: list[str], th, sass=None):
    """Analyze one report: check the requested metrics, write the outputs beside it (their
    names were checked free before profiling, or --force was given)."""
    from ..io import require_input_file
    from ..pipeline import analyze_reports

    # ncu may leave a FIFO, device or socket at the report's name: never opened (it would block).
    require_input_file(rep, "a report")
    missing = _missing_metrics(rep, sel, result)
    analysis = analyze_reports([rep], thresholds=th, sass=sass)
    _add_session_notes(analysis, notes, missing)
    stem = rep.name[: -len(".ncu-rep")] if rep.name.endswith(".ncu-rep") else rep.stem
    files = write_outputs(analysis, rep.parent, stem, True)
    return [_summary_row(ka, stem, _passes_text(result)) for ka in analysis.kernels], files, missing


def read_first_pass(rep: Path, sass=None):
    """The first report of a two-pass profile, read whole (its durations pick the second run's
    kernels; the joined profile takes its per-instruction data)."""
    from ..io import require_input_file
    from ..readers import open_report

    require_input_file(rep, "a report")
    return open_report(rep, sass=sass)


def analyze_passes(first, second, th, *, outside_note: str, out: tuple[Path, str], focus_keys: set[str]):
    """Analyze a two-pass profile: ``first`` (rep, profile, selection, result) and ``second``
    (rep, selection, result) joined launch by launch (readers.passes), each report checked for
    the metrics its own run asked for; the outputs written as ``out`` (folder, stem). Returns
    the summary rows, the files and the missing metrics."""
    from ..io import require_input_file
    from ..pipeline import analyze_read_profile
    from ..readers import open_report
    from ..readers.passes import join_passes

    rep1, profile1, sel1, res1 = first
    rep2, sel2, res2 = second
    require_input_file(rep2, "a report")
    missing = {**_missing_metrics(rep1, sel1, res1), **_missing_metrics(rep2, sel2, res2)}
    joined = join_passes(profile1, open_report(rep2), outside_note, focus_keys)
    analysis = analyze_read_profile(joined, thresholds=th)
    if missing:
        analysis.profile.notes.append(outcome.describe_missing(missing))
    files = write_outputs(analysis, out[0], out[1], True)
    p1, p2 = _passes_text(res1), _passes_text(res2)
    rows = [
        _summary_row(ka, out[1], f"{p1}+{p2}" if ka.kernel.function_key in focus_keys else p1)
        for ka in analysis.kernels
    ]
    return rows, files, missing


def _passes_text(result: RunResult) -> str:
    """The replay passes ncu's log gave the run's launches ('16', '9/16', '?' unknown)."""
    return "/".join(str(p) for p in sorted({k.passes for k in result.kernels if k.passes is not None})) or "?"


def _add_session_notes(analysis, notes: list[str], missing: dict) -> None:
    """The session's notes on the report, and what it lacks. A note every kernel already
    carries (the reader derives the optional groups' notes from the report itself) is not
    repeated for the whole report."""
    on_all = set.intersection(*(set(ka.kernel.notes) for ka in analysis.kernels)) if analysis.kernels else set()
    analysis.profile.notes.extend(n for n in notes if n not in on_all)
    if missing:
        analysis.profile.notes.append(outcome.describe_missing(missing))


def _missing_metrics(rep: Path, sel: msets.Selection, result: RunResult) -> dict:
    """The requested metrics the report lacks, and those ncu said it could not collect."""
    try:
        missing = outcome.unavailable_metrics(rep, sel.expected)
    except ToolNotFoundError:
        missing = {}
    said = set(result.ncu_unavailable_metrics) & set(sel.metrics)
    if said:
        missing.setdefault("(ncu's warning)", []).extend(sorted(said))
    return missing


def _summary_row(ka, stem: str, passes: str) -> dict:
    """A kernel's row of the summary ``drgpu profile`` prints."""
    from ..profile import short_name

    k = ka.kernel
    top = ka.findings[0] if ka.findings else None
    sol = ka.sol
    return {
        "report": stem,
        "kernel": short_name(k.name, 36),
        "id": k.id,
        "launches": k.launch_count,
        "duration_us": k.duration_ns / 1000 if k.duration_ns is not None else None,
        "bound": ka.bound,
        "grade": sol.grade if sol and sol.grade else "-",
        "top": top.id if top else "-",
        "speedup": getattr(top, "estimated_speedup", None) if top else None,
        "passes": passes,
    }


def record(
    path: Path, argv, ms, sel, result: RunResult, reports, missing, notes, exit_code: int, passes: dict | None = None
) -> None:
    """A machine-readable record of the run beside the report (what was asked, what ncu did);
    ``passes``: how the profile was taken in one or two runs, and what each kernel got
    (``Session.passes_record``)."""
    import json
    from ..version import __version__
    from ..io import atomic_write

    doc = {
        "tool": "drgpu profile",
        "version": __version__,
        "ncu_argv": argv,
        "metric_set": ms.name,
        "groups": sel.groups,
        "sections": sel.sections,
        "metrics": sel.metrics,
        "ncu_wall_s": round(result.wall_s, 3),
        "ncu_exit_code": result.returncode,
        "app_exit_code": result.app_exit_code,
        "interrupted": result.interrupted,
        "signal": signal.Signals(result.signum).name if result.signum else None,
        "timed_out": result.timed_out,
        "ncu_signal": signal.Signals(-result.returncode).name
        if result.returncode is not None and result.returncode < 0 and -result.returncode in _SIGNALS
        else None,
        "kernels": [{"name": k.name, "launch": k.launch, "passes": k.passes} for k in result.kernels],
        "reports": [str(p) for p in reports],
        "missing_metrics": missing,
        "ncu_errors": result.errors,
        "ncu_warnings": result.warnings,
        "ncu_messages_dropped": result.dropped_messages,
        "notes": notes,
        "exit_code": exit_code,
    }
    if passes is not None:
        doc["passes"] = passes
    # The record is a convenience; never let it hide the run's own outcome.
    with contextlib.suppress(DrgpuError):
        atomic_write(path, json.dumps(doc, indent=2) + "\n", force=True)
