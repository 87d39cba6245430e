"""Commands ``drgpu analyze`` (an existing report, several of one program, or a folder of
them: summary, stall trees, ranked findings) and ``drgpu thresholds`` (the analysis
thresholds and what they mean). The work is in :mod:`drgpu_py.pipeline`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .options import (
    AnalysisFormat,
    FailOn,
    Fold,
    HideBelow,
    ShowAll,
    Force,
    Jobs,
    Quiet,
    Verbose,
    Thresholds,
    ThresholdsFile,
    analysis_format,
    check_fail_on,
    check_kernel,
    data,
    load_numpy_one_blas_thread,
    parse_threshold_args,
    SlowWork,
    progress_printer,
    refuse_output_over_inputs,
    run_guarded,
    standard_output_dash,
    stdout_console,
    wrote,
)

# Path options and arguments pass readable=False: typer's own check prints a usage block (exit 2)
# for an unreadable path, where drgpu's readers say "permission denied" with exit 3.


def analyze(
    reports: List[Path] = typer.Argument(
        ...,
        readable=False,
        help="An .ncu-rep, a raw-page CSV export (ncu -i R --csv --page raw --print-units base), several (merged as ranks), or a folder of them.",
    ),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel launch id, id range a:b, or name regex."),
    fmt: Optional[AnalysisFormat] = typer.Option(
        None, "--format", "-f", help="Output format (default: from -o's extension, else text)."
    ),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        readable=False,
        callback=standard_output_dash,
        help="Output file (format inferred from its extension); - for standard output.",
    ),
    force: Force = False,
    source_csv: Optional[Path] = typer.Option(
        None, "--source-csv", readable=False, help="Source-page CSV export (default: X.source.csv beside X.raw.csv)."
    ),
    line_report: Optional[Path] = typer.Option(
        None,
        "--line-report",
        readable=False,
        help="An .ncu-rep whose line table gives a CSV's source lines (default: X.ncu-rep beside X.raw.csv).",
    ),
    cubin: Optional[Path] = typer.Option(
        None,
        "--cubin",
        readable=False,
        help="Cubin of the profiled code: control codes and line table for SASS slicing.",
    ),
    binary: Optional[Path] = typer.Option(
        None,
        "--binary",
        readable=False,
        help="Executable or library holding the profiled kernels (cubins are extracted).",
    ),
    source_root: Optional[List[Path]] = typer.Option(
        None,
        "--source-root",
        readable=False,
        help="A folder of the program's sources: the cubin's line table may show files under it (besides the report's folder and the working folder), and SARIF, gcc and CSV output name files under it relative to it; repeatable.",
    ),
    path_map: Optional[List[str]] = typer.Option(
        None,
        "--path-map",
        metavar="FROM=TO",
        help="SARIF, gcc and CSV output: a source path under the folder FROM (as the report names it) is written under TO instead (TO empty or relative: a relative path); repeatable.",
    ),
    threshold: Thresholds = None,
    thresholds_file: ThresholdsFile = None,
    fold: Fold = 0.02,
    hide_below: HideBelow = 1.02,
    show_all: ShowAll = False,
    per_launch: bool = typer.Option(
        False, "--per-launch", help="Analyze every launch on its own (default: launches of one kernel as one group)."
    ),
    top: int = typer.Option(
        3, "--top", min=0, help="Terminal: trees of the N kernels with the most GPU time after the summary (0: all)."
    ),
    jobs: Jobs = 0,
    merge: bool = typer.Option(
        False,
        "--merge",
        help="Several reports: merge them as ranks of one program even when they share no kernel name.",
    ),
    fail_on: Optional[FailOn] = typer.Option(
        None,
        "--fail-on",
        help="Exit 9 after writing the output when a finding has this severity or a higher one (for CI).",
    ),
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Analyze an existing Nsight Compute report (or CSV export), several reports of one program (merged as ranks), or a folder of them: summary, stall trees and ranked findings."""

    def body():
        # Every option is checked before a report is read (ranges and choices by their types,
        # while the command line is parsed): a mistake costs no analysis.
        out_fmt = analysis_format(fmt, output)
        selector = check_kernel(kernel)
        refuse_output_over_inputs(output, [*reports, source_csv, line_report, cubin, binary, thresholds_file])
        if output is not None:
            from ..io import check_writable

            check_writable(output, force)  # an output that cannot be written is refused before the analysis
        th = data.thresholds(parse_threshold_args(threshold), thresholds_file)
        from ..render.located import parse_path_map, source_root as root_mapping

        mappings = (*map(root_mapping, source_root or []), *map(parse_path_map, path_map or []))
        from ..pipeline.parallel import default_jobs

        workers = jobs or default_jobs()
        slow = SlowWork("drgpu: analyzing", quiet)
        read_progress = progress_printer("reading kernels", quiet, before=slow.stop)
        # The report is read, and nvdisasm lists its code, while the analysis modules load.
        from ..readers import prefetch

        sass = prefetch(reports, selector, workers, read_progress, companions=bool(source_csv or line_report))
        try:
            load_numpy_one_blas_thread()
            from ..pipeline import SEPARATE_NOTE, analyze_reports, write_result

            with slow:
                result = analyze_reports(
                    reports,
                    kernel=selector,
                    source_csv=source_csv,
                    line_report=line_report,
                    cubin=cubin,
                    binary=binary,
                    thresholds=th,
                    progress=progress_printer("analyzing kernels", quiet, before=slow.stop),
                    read_progress=read_progress,
                    per_launch=per_launch,
                    jobs=workers,
                    merge=True if merge else None,
                    sass=sass,
                    source_roots=list(source_root or []),
                )
        finally:
            close = getattr(sass, "close", None)  # a started read nobody took (an error on the way)
            if close is not None:
                close()
        if result.profile.format == "separate":
            typer.echo(f"drgpu: warning: {SEPARATE_NOTE}", err=True)
        write_result(
            result,
            fmt=out_fmt,
            output=output,
            force=force,
            fold=fold,
            top=top,
            path_map=mappings,
            hide_below=hide_below,
            show_all=show_all,
        )
        wrote(output, quiet)
        check_fail_on(fail_on, [f.severity for ka in result.kernels for f in ka.findings])

    run_guarded(body)


def thresholds_cmd() -> None:
    """List the analysis thresholds, their defaults and what they mean."""

    def body():
        from rich.table import Table

        console = stdout_console()
        t = Table("key", "default", "meaning")
        for k, spec in data.threshold_docs().items():
            t.add_row(k, f"{spec['default']:g}", spec["doc"])
        console.print(t)

    run_guarded(body)
