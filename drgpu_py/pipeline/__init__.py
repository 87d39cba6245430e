"""Glue between readers, analysis and renderers used by the CLI commands: read one or more
reports, select kernels, attach cubin information, analyze, and write the chosen format.

The fan-out over worker processes (``pipeline.parallel``, ``-j N``) lives here and only here;
kernel groups (launches of one kernel analyzed as one) are the analysis' own
(``analysis.groups``). The analysis package is imported when a report is analyzed, not with
this package: a command that only lists reports or parses options does not pay for it."""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import InputError, ToolNotFoundError, UsageError
from ..profile import KernelProfile, Profile
from ..readers import KernelSelector, open_report, select_kernels

if TYPE_CHECKING:
    from ..analysis import Analysis, AnalysisOptions

log = logging.getLogger(__name__)


def expand_reports(reports) -> list[Path]:
    """Each folder among ``reports`` replaced by the reports in it, in name order: its
    ``.ncu-rep`` files, or without any, its raw-page CSV exports (``*.raw.csv``); a report
    kept compressed (``R.ncu-rep.xz``, ``.gz``, ``.bz2``) counts when ``R.ncu-rep`` is not there."""
    out: list[Path] = []
    for r in reports:
        p = Path(r)
        try:
            is_dir = p.is_dir()
            if is_dir and not os.access(p, os.R_OK | os.X_OK):
                raise PermissionError(13, "permission denied", str(p))
            found = (_reports_in(p, ".ncu-rep") or _reports_in(p, ".raw.csv")) if is_dir else []
        except OSError as e:  # a name too long, a folder we may not search or list
            from ..io import path_error

            raise path_error(p, e) from e
        if not is_dir:
            out.append(p)
            continue
        if not found:
            raise InputError(
                f"{p} is a directory without reports (*.ncu-rep or *.raw.csv, or either compressed: .xz, .gz, .bz2)",
                hint="give report files, or a folder holding them",
            )
        out.extend(found)
    return out


def _reports_in(folder: Path, suffix: str) -> list[Path]:
    """The files of ``folder`` named ``*SUFFIX``, and the compressed ones whose plain twin is
    not there, in the order of their plain names."""
    from ..readers.compressed import READ

    found = {q.name: q for q in folder.glob("*" + suffix)}
    for _magic, ext, _cmd in READ.values():
        for q in folder.glob(f"*{suffix}{ext}"):
            found.setdefault(q.name.removesuffix(ext), q)
    return [found[name] for name in sorted(found)]


def analyze_reports(
    reports,
    *,
    kernel=None,
    source_csv=None,
    line_report=None,
    cubin=None,
    binary=None,
    thresholds=None,
    progress=None,
    read_progress=None,
    per_launch=False,
    jobs: int = 1,
    merge=None,
    sass=None,
    source_roots=(),
) -> Analysis:
    """``progress(done, total)``: after each kernel analyzed; ``read_progress``: after each
    launch read from a single .ncu-rep. Launches of one kernel are analyzed as one group
    (drgpu_py.analysis.groups) unless ``per_launch``. A folder stands for the reports in it
    (``expand_reports``). ``jobs``: worker processes reading several reports and analyzing
    kernel groups (same result). ``sass``: SASS listings being made from the code's cubins
    (``sass.cubin.SassSource``) for reading a single ``.ncu-rep``, or its read already started
    (``readers.StartedRead``): ``readers.open_report``'s argument.

    Several reports are merged (ranks of one program, drgpu_py.readers.merge) when ``merge`` is True,
    or when it is None and they share a kernel name; the two reports of a two-pass ``drgpu
    profile`` (``passes_pair``) are joined instead (drgpu_py.readers.passes) unless ``merge`` is given; reports with no kernel name in common
    are different programs: analyzed side by side (``format: "separate"``, a note says so).
    ``kernel``: a :class:`~drgpu_py.readers.KernelSelector` or its text. ``source_roots``:
    folders (``--source-root``) whose source files a cubin's line table may show, besides the
    reports' folders and the working folder (files elsewhere are not read; a note says so)."""
    from ..analysis import AnalysisOptions

    kernel = KernelSelector.of(kernel)  # ``--kernel`` text (the API's) is parsed once, here
    reports = expand_reports(reports)
    t0 = time.monotonic()
    if len(reports) > 1:
        profile = _several_reports(reports, jobs, merge, bool(source_csv or line_report))
    else:
        profile = open_report(
            reports[0],
            source_csv=source_csv,
            line_report=line_report,
            kernel=kernel,
            progress=read_progress,
            sass=sass,
            jobs=jobs,
        )
    profile = select_kernels(profile, kernel)
    if not per_launch:
        from ..analysis.groups import group_profile

        profile = group_profile(profile)
    options = AnalysisOptions(thresholds=thresholds) if thresholds else AnalysisOptions()
    if cubin or binary:
        roots = [*(Path(r).parent for r in reports), Path.cwd(), *(Path(r) for r in source_roots)]
        profile = _with_binary_control(profile, cubin, binary, roots)
    else:
        _note_missing_sass_tools(profile)
    t1 = time.monotonic()
    log.info("read %d kernel launches in %.2f s; analyzing", len(profile.kernels), t1 - t0)
    result = analyze_profile(profile, options, progress=progress, jobs=jobs)
    log.info("analyzed %d kernel groups in %.2f s", len(result.kernels), time.monotonic() - t1)
    return result


def _several_reports(reports: list[Path], jobs: int, merge, csv_companions: bool) -> Profile:
    """Several reports read (by ``jobs`` worker processes): merged as ranks of one program
    when ``merge`` is True, or None and they share a kernel name; else side by side.
    ``csv_companions``: --source-csv or --line-report was given, which apply to one report."""
    log.info("reading %d reports (%d worker processes)", len(reports), jobs if jobs > 1 else 0)
    if csv_companions:
        raise UsageError("--source-csv/--line-report apply to a single report")
    if jobs > 1:
        from .parallel import read_reports

        profiles = read_reports(reports, jobs)
    else:
        profiles = [open_report(r) for r in reports]
    if merge is None and passes_pair(reports):
        # STEM.pass1 and STEM.pass2 of one `drgpu profile --passes 2`: joined launch by launch,
        # never merged as ranks (which would sum the two runs' counters).
        from ..readers.passes import join_passes, outside_note

        return join_passes(profiles[0], profiles[1], outside_note(None))
    if merge is None:
        merge = _share_a_kernel(profiles)
    if not merge:
        return side_by_side(profiles)
    from ..readers.merge import merge_profiles  # optional feature module, imported when used

    return merge_profiles(profiles)


def passes_pair(reports: list[Path]) -> bool:
    """Whether ``reports`` are the two reports of one two-pass ``drgpu profile``, in order:
    ``STEM.pass1.ncu-rep`` then ``STEM.pass2.ncu-rep`` (either may be compressed)."""
    if len(reports) != 2:
        return False
    stems = [Path(r).name.split(".ncu-rep")[0] for r in reports]
    return stems[0].endswith(".pass1") and stems[1] == stems[0][: -len("1")] + "2"


def _note_missing_sass_tools(profile: Profile) -> None:
    """An install without NVIDIA's tools (macOS): say what that costs."""
    from ..sass.cubin import find_tool

    if find_tool("nvdisasm") is None:
        profile.notes.append(NO_SASS_TOOLS_NOTE)


def _with_binary_control(profile: Profile, cubin, binary, roots: list[Path]) -> Profile:
    """The profile with the control codes (and line table) of the code's cubins or binary."""
    from ..sass.binary import control_from_binary, with_control

    control, note = control_from_binary(profile, cubin=cubin, binary=binary, source_roots=roots)
    profile = with_control(profile, control)
    profile.notes.append(note)
    return profile


def analyze_read_profile(profile: Profile, *, thresholds=None) -> Analysis:
    """A profile already read (``drgpu profile --passes 2`` joins its two reports,
    readers.passes) analyzed as ``analyze_reports`` analyzes one report: launches of one kernel
    grouped, the missing SASS tools noted."""
    from ..analysis import AnalysisOptions
    from ..analysis.groups import group_profile

    profile = group_profile(profile)
    _note_missing_sass_tools(profile)
    options = AnalysisOptions(thresholds=thresholds) if thresholds else AnalysisOptions()
    return analyze_profile(profile, options)


def analyze_profile(profile: Profile, options: AnalysisOptions, progress=None, jobs: int = 1) -> Analysis:
    """``analysis.analyze`` of a profile, its kernel groups spread over up to ``jobs`` worker
    processes when there are several and enough work for them (drgpu_py.pipeline.parallel:
    ``analysis_workers``; the same result as 1)."""
    from ..analysis import Analysis, analyze

    if jobs > 1 and len(profile.kernels) > 1:
        from .parallel import analysis_workers, analyze_kernels

        workers = analysis_workers(profile.kernels, jobs)
        if workers > 1:
            return Analysis(profile=profile, kernels=analyze_kernels(profile, options, workers, True, progress))
    return analyze(profile, options, progress=progress)


def _share_a_kernel(profiles) -> bool:
    names = [{k.name for k in p.kernels} for p in profiles]
    return all(names[0] & other for other in names[1:])


NO_SASS_TOOLS_NOTE = (
    "nvdisasm is not installed: the SASS comes from the report, and --cubin/--binary (control codes, "
    "scoreboard barriers for slicing, inlined call sites) are unavailable; install nvidia-cuda-nvdisasm and "
    "nvidia-cuda-cuobjdump (Linux, Windows) or put the CUDA toolkit's bin on PATH"
)

SEPARATE_NOTE = (
    "reports of different programs (no kernel name in common): analyzed side by side, not merged; "
    "kernel ids are renumbered (use drgpu merge to merge them anyway)"
)


def side_by_side(profiles) -> Profile:
    """The kernels of several reports in one profile, unmerged, numbered in report order
    (ids repeat across reports); each kernel notes its report and original id."""
    kernels: list[KernelProfile] = []
    notes = [SEPARATE_NOTE]
    for p in profiles:
        for k in p.kernels:
            kernels.append(replace(k, id=len(kernels), notes=[*k.notes, f"from {p.path} (id {k.id} there)"]))
        notes.extend(n for n in p.notes if n not in notes)
    return Profile(path=" + ".join(p.path for p in profiles), format="separate", kernels=kernels, notes=notes)


def write_result(
    result: Analysis,
    *,
    fmt=None,
    output=None,
    force=False,
    fold=0.02,
    top=3,
    path_map=(),
    hide_below=1.02,
    show_all=False,
) -> None:
    """Render ``result`` in ``fmt`` (from ``output``'s extension when None) to ``output`` or
    standard output. ``path_map``: render.located.PathMapping entries for SARIF, gcc and CSV;
    ``hide_below``, ``show_all``: what text and HTML leave out (render/quiet.py, Worth)."""
    from ..render import RenderOptions, infer_format, render, render_to

    fmt = fmt or (infer_format(output) if output else "text")
    opts = RenderOptions(
        fold_share=fold, top_kernels=top, path_map=tuple(path_map), hide_below=hide_below, show_all=show_all
    )
    if output:
        try:
            render_to(result, fmt, output, force=force, options=opts)
        except ToolNotFoundError as e:
            if fmt not in ("svg", "png"):
                raise
            # Without Graphviz, leave the DOT source beside the requested file to lay out later.
            from ..render.dot import write_dot_fallback

            dot_path = write_dot_fallback(result, output, fmt, force=force, options=opts)
            raise ToolNotFoundError(
                f"{e.message}; wrote the graph source to {dot_path} instead",
                hint=f"install Graphviz, then: dot -T{fmt} {dot_path} -o {output}",
            ) from e
        return
    if fmt == "text" and sys.stdout is not None and sys.stdout.isatty():
        from rich.console import Console
        from ..render.text import render_console

        render_console(result, opts, Console())
        return
    out = render(result, fmt, opts)
    if isinstance(out, bytes):
        raise UsageError(f"format {fmt} is binary", hint="give an output file with -o")
    from ..io import write_stdout

    write_stdout(out)
