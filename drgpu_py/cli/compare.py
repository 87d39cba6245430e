"""Commands that work across reports: ``list`` (one row per kernel launch), ``diff`` (a
baseline against a new report) and ``merge`` (reports of one program from several GPUs or
ranks). Registered on the app by :mod:`drgpu_py.cli`; bodies run inside ``run_guarded`` so
typed errors become one-line messages and exit codes. The work is done in
:mod:`drgpu_py.pipeline.compare` and :mod:`drgpu_py.readers.merge`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from .options import (
    AnalysisFormat,
    DiffFormat,
    Fold,
    HideBelow,
    ShowAll,
    Force,
    Jobs,
    ListFormat,
    Quiet,
    Verbose,
    SortKey,
    Thresholds,
    ThresholdsFile,
    analysis_format,
    check_kernel,
    data,
    load_numpy_one_blas_thread,
    parse_threshold_args,
    progress_printer,
    refuse_output_over_inputs,
    run_guarded,
    standard_output_dash,
    text_width,
    wrote,
)
from ..errors import CheckFailedError, NoKernelsError, UsageError


def _thresholds(threshold, thresholds_file):
    return data.thresholds(parse_threshold_args(threshold), thresholds_file) if (threshold or thresholds_file) else None


def _emit(text: str, output: Optional[Path], force: bool) -> None:
    if output:
        from ..io import atomic_write

        atomic_write(output, text, force=force)
    else:
        from ..io import write_stdout

        write_stdout(text)


def list_cmd(
    reports: List[Path] = typer.Argument(
        ..., readable=False, help="Reports (.ncu-rep, raw CSV) or drgpu analysis JSON files."
    ),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel launch id, id range a:b, or name regex."),
    sort: Optional[SortKey] = typer.Option(
        None, "--sort", "-s", help="duration (longest first), stall (highest first) or name."
    ),
    top: Optional[int] = typer.Option(None, "--top", "-n", min=1, help="Show only the first N rows (after sorting)."),
    fmt: Optional[ListFormat] = typer.Option(
        None, "--format", "-f", help="Output format (default: from -o's .json/.csv, else text)."
    ),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        readable=False,
        callback=standard_output_dash,
        help="Write to this file instead of standard output (-: standard output).",
    ),
    force: Force = False,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """One row per kernel launch: duration, grid and block, read without analyzing (stall cycles, bound and top finding from analysis JSON files)."""

    def body():
        load_numpy_one_blas_thread()
        from ..pipeline.compare import sort_rows

        f = fmt or {".json": "json", ".csv": "csv"}.get(output.suffix.lower() if output else "", "text")
        refuse_output_over_inputs(output, list(reports))
        rows, unmatched = _launch_rows(reports, kernel, quiet)
        rows = sort_rows(rows, sort, top)
        if not rows:
            raise _no_rows_error(kernel, reports, unmatched)
        _emit_list(rows, f, output, force)
        wrote(output, quiet)

    run_guarded(body)


def _launch_rows(reports: list[Path], kernel: str | None, quiet: bool) -> tuple[list[dict], list]:
    """The rows of every report's launches the --kernel selector picks, and the reports it
    picks nothing of (with why), which list no row."""
    from ..pipeline.compare import launch_rows

    selector = check_kernel(kernel)
    progress = progress_printer("reading reports", quiet)
    checking = progress_printer("checking saved kernels", quiet)
    rows = []
    unmatched: list[tuple[Path, NoKernelsError]] = []
    for i, r in enumerate(reports):
        try:
            rows.extend(launch_rows(r, kernel=selector, progress=checking))
        except NoKernelsError as e:
            if not kernel:
                raise
            unmatched.append((r, e))
        if progress:
            progress(i + 1, len(reports))
    return rows, unmatched


def _no_rows_error(kernel: str | None, reports: list[Path], unmatched: list) -> NoKernelsError:
    if not kernel:
        return NoKernelsError("no kernel launches in the reports")
    return NoKernelsError(
        f"--kernel {kernel!r} matched no kernel in any report",
        # What each report holds (its library kernels apart), as a single report's error says.
        hint="; ".join(f"{Path(r).name}: {e.hint}" if len(reports) > 1 else str(e.hint) for r, e in unmatched if e.hint)
        or None,
    )


def _emit_list(rows: list[dict], f: str, output: Path | None, force: bool) -> None:
    """The rows as JSON or CSV, as a table on a terminal, else as plain text."""
    from ..render.list_ import render_list_console, render_list_csv, render_list_json, render_list_text

    if f == "json":
        _emit(render_list_json(rows), output, force)
    elif f == "csv":
        _emit(render_list_csv(rows), output, force)
    elif output is None and sys.stdout is not None and sys.stdout.isatty():
        from rich.console import Console

        render_list_console(rows, Console(width=text_width()))
    else:
        _emit(render_list_text(rows, width=text_width()), output, force)


def diff(
    base: Path = typer.Argument(..., readable=False, help="Baseline: a report or a drgpu analysis JSON."),
    new: Path = typer.Argument(..., readable=False, help="New report (or analysis JSON) to compare with the baseline."),
    kernel: Optional[str] = typer.Option(
        None, "--kernel", "-k", help="Compare only launches matching this id, a:b range or name regex (both sides)."
    ),
    pair: Optional[List[str]] = typer.Option(
        None, "--pair", help="Match kernels with different names: BASE_REGEX=NEW_REGEX (repeatable)."
    ),
    fmt: Optional[DiffFormat] = typer.Option(
        None, "--format", "-f", help="Output format (default: from -o's .txt/.json/.html, else text)."
    ),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        readable=False,
        callback=standard_output_dash,
        help="Output file (format inferred from .txt/.json/.html); - for standard output.",
    ),
    force: Force = False,
    threshold: Thresholds = None,
    thresholds_file: ThresholdsFile = None,
    fail_on_regression: bool = typer.Option(
        False,
        "--fail-on-regression",
        help="Exit 9 after writing the output when a matched kernel got slower, a high or medium finding is new, or a finding's severity rose; exit 15 when no kernel matched, so nothing was compared (for CI).",
    ),
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Compare a baseline with a new report: measured speedup, stall and memory shares, occupancy, resolved/persisting/new findings."""

    def body():
        load_numpy_one_blas_thread()
        from ..pipeline.compare import diff as diff_fn
        from ..pipeline.compare import load, nothing_compared, regressions
        from ..render.diff import diff_format_for, render_diff

        f = fmt or (diff_format_for(output) if output else "text")
        refuse_output_over_inputs(output, [base, new, thresholds_file])
        th = _thresholds(threshold, thresholds_file)
        selector = check_kernel(kernel)
        checking = progress_printer("checking saved kernels", quiet)  # on a terminal only
        d = diff_fn(
            load(base, kernel=selector, thresholds=th, progress=checking),
            load(new, kernel=selector, thresholds=th, progress=checking),
            pairs=pair,
        )
        _emit(render_diff(d, f), output, force)
        wrote(output, quiet)
        if fail_on_regression:
            unchecked = nothing_compared(d)
            if unchecked is not None:
                raise unchecked
            found = regressions(d)
            if found:
                raise CheckFailedError(
                    f"{len(found)} regression(s): " + "; ".join(found[:3]) + ("; ..." if len(found) > 3 else "")
                )

    run_guarded(body)


def merge(
    reports: List[Path] = typer.Argument(
        ...,
        readable=False,
        help="Reports of the same program from several GPUs or ranks (two or more), or folders of them.",
    ),
    kernel: Optional[str] = typer.Option(
        None, "--kernel", "-k", help="Kernel launch id, id range a:b, or name regex (after merging)."
    ),
    fmt: Optional[AnalysisFormat] = typer.Option(
        None, "--format", "-f", help="Output format (default: from -o's extension, else json)."
    ),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        readable=False,
        callback=standard_output_dash,
        help="Output file, e.g. merged.json; - for standard output.",
    ),
    force: Force = False,
    threshold: Thresholds = None,
    thresholds_file: ThresholdsFile = None,
    fold: Fold = 0.02,
    hide_below: HideBelow = 1.02,
    show_all: ShowAll = False,
    jobs: Jobs = 0,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Merge reports of one program from several GPUs/ranks (per-PC samples summed by function offset) and analyze the result."""

    def body():
        load_numpy_one_blas_thread()
        from ..pipeline import analyze_reports, expand_reports, write_result
        from ..pipeline.parallel import default_jobs

        out_fmt = analysis_format(fmt or (None if output else "json"), output)
        selector = check_kernel(kernel)
        th = data.thresholds(parse_threshold_args(threshold), thresholds_file)
        paths = expand_reports(reports)
        if len(paths) < 2:
            raise UsageError("merge needs at least two reports", hint="use drgpu analyze for a single report")
        refuse_output_over_inputs(output, [*reports, *paths, thresholds_file])

        result = analyze_reports(
            paths,
            kernel=selector,
            thresholds=th,
            progress=progress_printer("analyzing kernels", quiet),
            jobs=jobs or default_jobs(),
            merge=True,
        )
        write_result(
            result, fmt=out_fmt, output=output, force=force, fold=fold, hide_below=hide_below, show_all=show_all
        )
        wrote(output, quiet)

    run_guarded(body)
