"""Commands ``drgpu profile`` (run an application under ncu with drgpu's metric set, keep
the report, analyze it) and ``drgpu metrics`` (list the metric sets and what each metric is
for). The work is in :mod:`drgpu_py.profile`; this module parses options, shows progress and
the summary, and maps outcomes to exit codes (docs/profile.md lists them).

Nothing is thrown away: the report(s), ncu's full console output (``STEM.ncu.log``) and the
analysis files stay in the output folder whatever happens, and a failing application or a
Ctrl-C still leaves what was profiled analyzed or at least kept.
"""
from __future__ import annotations

import os
import shlex
import signal
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from .cli import app, data, lazy_module, parse_threshold_args, run_guarded
from .errors import (DataFileError, DrgpuError, InterruptedError_, MetricUnavailableError, OutputError,
                     ToolNotFoundError)

# Loaded when a command first uses them, not when ``drgpu`` starts (``drgpu --help`` and
# ``drgpu analyze`` never need the profiler or rich's tables).
prof = lazy_module("drgpu_py.profile")
_console = lazy_module("rich.console")
if TYPE_CHECKING:
    from rich.console import Console
_table = lazy_module("rich.table")
_markup = lazy_module("rich.markup")


def escape(text: str) -> str:
    return _markup.escape(text)


# ---------------------------------------------------------------------------------------
# Progress display
# ---------------------------------------------------------------------------------------
ECHO_LIMIT = 50   # lines of ncu's errors/warnings and the application's output shown live


class ProgressView:
    """Shows ncu's progress: on a terminal a live line (kernel, replay progress, pass n of
    m once the pass count is known from an earlier launch), elsewhere ncu's own lines."""

    def __init__(self, console: Console, quiet: bool):
        self.console = console
        self.quiet = quiet
        self.live = console.is_terminal and not quiet
        self.progress = None
        self.task = None
        self.passes: int | None = None
        self.done = 0
        self.echoed = 0     # ncu's errors, warnings and application lines shown so far

    def __enter__(self):
        if self.live:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn
            self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                     TextColumn("{task.percentage:>3.0f}%"), TextColumn("{task.fields[passes]}"),
                                     console=self.console, transient=True)
            self.progress.__enter__()
            self.task = self.progress.add_task("starting the application under ncu", total=100, passes="")
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def _pass_text(self, pct: int | None) -> str:
        if self.passes and pct is not None:
            return f"pass ~{max(1, round(pct / 100 * self.passes))} of {self.passes}"
        return ""

    def _echo_allowed(self) -> bool:
        """A flood of ncu or application lines stays in the log, not on the terminal."""
        self.echoed += 1
        if self.echoed == ECHO_LIMIT + 1:
            self.console.print(f"... more than {ECHO_LIMIT} lines of ncu and application output: the rest is in ncu's log only",
                               markup=False, highlight=False)
        return self.echoed <= ECHO_LIMIT

    def __call__(self, ev: prof.Event) -> None:
        if self.quiet:
            return
        if ev.kind in ("error", "warning", "output") and not self._echo_allowed():
            return
        if not self.live:
            if ev.kind in ("kernel_done", "connected", "disconnected", "output"):
                self.console.print(ev.text, markup=False, highlight=False)
            elif ev.kind in ("error", "warning"):
                self.console.print(f"ncu {ev.kind}: {ev.text}", markup=False, highlight=False)
            return
        p, t = self.progress, self.task
        if ev.kind == "kernel":
            idx = f" ({ev.index[0]}/{ev.index[1]})" if ev.index else ""
            p.update(t, description=f"profiling {escape(ev.kernel or '?')} launch {ev.launch}{idx}", completed=0,
                     passes=self._pass_text(0))
        elif ev.kind == "progress":
            p.update(t, completed=ev.pct or 0, passes=self._pass_text(ev.pct))
        elif ev.kind == "kernel_done":
            self.done += 1
            if ev.passes:
                self.passes = ev.passes
            p.update(t, completed=100, passes="")
            self.console.print(f"[green]✓[/green] {escape(ev.kernel or '?')} launch {ev.launch}: "
                               f"{ev.passes if ev.passes is not None else '?'} passes")
        elif ev.kind == "connected":
            p.update(t, description=f"application started (process {ev.pid})")
        elif ev.kind == "error":
            self.console.print(f"[red]ncu error:[/red] {escape(ev.text)}")
        elif ev.kind == "warning":
            self.console.print(f"[yellow]ncu warning:[/yellow] {escape(ev.text)}")
        elif ev.kind == "output":
            self.console.print(ev.text, markup=False, highlight=False)


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------
def _choose_set(metric_set: str | None, gpu: prof.GpuInfo | None) -> tuple[prof.MetricSet, list[str]]:
    notes: list[str] = []
    if metric_set:
        return prof.load_metric_set(metric_set), notes
    if gpu is None:
        notes.append("GPU not detected (nvidia-smi unavailable): using the portable base metric set; give --metric-set CHIP to choose")
        return prof.load_metric_set("base"), notes
    if gpu.chip is None or gpu.chip not in prof.available_sets():
        notes.append(f"no metric set for {gpu.name} (compute capability {gpu.compute_capability}): using the portable base set")
        return prof.load_metric_set("base"), notes
    return prof.load_metric_set(gpu.chip), notes


def _preflight(ms: prof.MetricSet, chip: str | None, user_metrics: list[str], skip: bool) -> None:
    """Catch misspelt user metrics before a long profiling run: ncu itself accepts any name."""
    names = list(user_metrics)
    if not ms.shipped:
        names += [m for g in ms.groups.values() for m in g.metrics]   # a user-written set file
    if skip or not names or not chip:
        return
    try:
        cat = prof.load_catalogue(chip)
    except DataFileError:
        return
    bad = [(m, p) for m in dict.fromkeys(names) if (p := prof.metric_problem(m, cat))]
    if bad:
        raise MetricUnavailableError(
            "not collectable on " + chip + ": " + "; ".join(f"{m} ({p})" for m, p in bad),
            hint="names follow ncu --query-metrics --chips " + chip + " (ncu 2025.3.1 catalogue); pass --skip-metric-check if your ncu knows them")


def _write_outputs(analysis, folder: Path, stem: str, force: bool) -> list[Path]:
    from .render import missing_optional
    try:
        from .render.bundle import write_all  # all formats into one folder
    except ImportError as e:
        if not missing_optional(e):
            raise
        write_all = None
    if write_all is not None:
        res = write_all(analysis, folder, stem, force)
        if res:
            return [Path(p) for p in (res.values() if isinstance(res, dict) else res)]
        return sorted(p for p in folder.glob(stem + ".*") if not p.name.endswith((".ncu-rep", ".ncu.log")))
    from .render import render_to
    return [render_to(analysis, "json", folder / f"{stem}.json", force=force),
            render_to(analysis, "text", folder / f"{stem}.txt", force=force)]


def _check_outputs_free(req: prof.ProfileRequest, log_path: Path) -> None:
    """Before ncu runs: without --force, none of the files this run writes may exist yet
    (the report, its log, every analysis format and the run record, rank names included)."""
    if req.force:
        return
    import glob
    from .render.bundle import FORMATS
    base = req.report_glob()[:-len(".ncu-rep")]
    exts = [".ncu-rep", ".ncu.log", ".profile.json"] + [ext for _, ext in FORMATS]
    taken = sorted({Path(p) for ext in exts for p in glob.glob(base + ext)} | ({log_path} if log_path.exists() else set()))
    if taken:
        raise OutputError(f"{taken[0]} exists" + (f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""),
                          hint="use --force to overwrite, or another --output-dir/--name")


def _list_kernels(ncu: str, req: prof.ProfileRequest, console: Console, quiet: bool) -> None:
    """A cheap run (one timing metric, one pass per launch, no filter) that lists the kernels."""
    with tempfile.TemporaryDirectory(prefix="drgpu-list-") as tmp:
        lreq = prof.ProfileRequest(app=req.app, output_dir=Path(tmp), stem="list", launch_count=req.launch_count,
                                   target_processes=req.target_processes, replay_mode=None, import_source=False,
                                   extra_ncu_args=req.extra_ncu_args, force=True)
        argv = prof.build_ncu_argv(ncu, lreq, prof.Selection([], ["gpu__time_duration.sum"], [], []))
        req.output_dir.mkdir(parents=True, exist_ok=True)
        log = req.output_dir / f"{req.stem}.list-kernels.log"
        with ProgressView(_console.Console(stderr=True), quiet) as view:
            res = prof.run_ncu(argv, log, on_event=view)
    if res.permission_denied:
        raise prof.classify(res, lreq, [])
    counts: dict[str, int] = {}
    for k in res.kernels:
        counts[k.name] = counts.get(k.name, 0) + 1
    t = _table.Table("kernel (ncu's name)", "launches", title=f"kernels launched by {os.path.basename(req.app[0])}")
    for name, n in counts.items():
        t.add_row(escape(name), str(n))
    console.print(t if counts else "no kernel was launched")
    console.print(f"[dim]ncu's output: {escape(str(log))}; use --kernel REGEX to pick launches[/dim]")


# ---------------------------------------------------------------------------------------
# drgpu profile
# ---------------------------------------------------------------------------------------
@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def profile(  # noqa: C901 - the command's body moves into the library with the cli package
    app_argv: Optional[List[str]] = typer.Argument(None, metavar="-- APP [ARGS...]", help="The application and its arguments, after --."),
    output_dir: Optional[Path] = typer.Option(None, "--output-dir", "-d", readable=False, help="Folder for the report, ncu's log and the analysis (default: ./drgpu-APP)."),
    name: Optional[str] = typer.Option(None, "--name", help="File name stem (default: the application's name)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing report and outputs."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Profile only kernels whose name matches this regex (ncu -k regex:...)."),
    kernel_name_base: Optional[str] = typer.Option(None, "--kernel-name-base", help="Name --kernel matches: function (default), demangled or mangled."),
    launch_skip: Optional[int] = typer.Option(None, "--launch-skip", "-s", help="Skip this many matching launches first (ncu -s)."),
    launch_count: Optional[int] = typer.Option(None, "--launch-count", "-c", help="Profile at most this many launches (ncu -c)."),
    replay_mode: Optional[str] = typer.Option(None, "--replay-mode", help="kernel (ncu's default), application, range or app-range."),
    clock_control: Optional[str] = typer.Option(None, "--clock-control", help="base (ncu's default: lock to base clocks) or none."),
    target_processes: Optional[str] = typer.Option(None, "--target-processes", help="all (ncu's default: child processes too) or application-only."),
    rank_var: str = typer.Option("auto", "--rank-var", help="One report per MPI rank: the rank's environment variable (auto: the first of OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID set here; none: off)."),
    metric_set: Optional[str] = typer.Option(None, "--metric-set", help="Metric set: a chip (tu102, ga100, ga102, ad102, gh100, gb100, gb202), base, or a YAML file. Default: detected."),
    with_groups: Optional[List[str]] = typer.Option(None, "--with", help="Also collect an optional group of the set (stall_counters, context); repeatable."),
    add_section: Optional[List[str]] = typer.Option(None, "--add-section", help="Also collect this ncu section; repeatable."),
    add_metrics: Optional[List[str]] = typer.Option(None, "--add-metrics", help="Also collect these metrics (comma-separated); repeatable."),
    skip_metric_check: bool = typer.Option(False, "--skip-metric-check", help="Do not check added metric names against ncu's catalogue first."),
    strict_metrics: bool = typer.Option(False, "--strict-metrics", help="Exit 14 when a requested metric is missing from the report (default: a warning)."),
    no_import_source: bool = typer.Option(False, "--no-import-source", help="Do not embed the CUDA source files in the report."),
    nvtx_include: Optional[List[str]] = typer.Option(None, "--nvtx-include", help="Profile only kernels inside this NVTX range (ncu --nvtx-include syntax, e.g. 'step/' or 'train@step'); repeatable."),
    nvtx_exclude: Optional[List[str]] = typer.Option(None, "--nvtx-exclude", help="Skip kernels inside this NVTX range (ncu --nvtx-exclude); repeatable."),
    from_start: bool = typer.Option(True, "--from-start/--no-from-start", help="--no-from-start: profile only between cudaProfilerStart and cudaProfilerStop (torch.cuda.profiler.start/stop)."),
    ncu: Optional[str] = typer.Option(None, "--ncu", help="The ncu to run (default: $NCU, else ncu on PATH)."),
    ncu_arg: Optional[List[str]] = typer.Option(None, "--ncu-arg", help="Pass one extra argument to ncu, verbatim; repeatable."),
    threshold: Optional[List[str]] = typer.Option(None, "--threshold", "-t", help="Override an analysis threshold: KEY=VALUE."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Stop ncu (and the application) after this many seconds; what it profiled is kept (exit 10)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the ncu command and exit."),
    list_kernels: bool = typer.Option(False, "--list-kernels", help="Run the application once cheaply and list the kernels it launches."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
) -> None:
    """Profile an application with ncu and drgpu's metric set, keep the report, analyze it.

    Example: drgpu profile -k 'gemm' -c 3 -- ./app --size 4096
    """
    def body():  # noqa: C901 - moves into the library with the cli package
        console = _console.Console()
        status = _console.Console(stderr=True)
        if not app_argv:
            raise prof.UsageError("no application given", hint="drgpu profile [OPTIONS] -- APP [ARGS...]")
        app_cmd = prof.resolve_app(list(app_argv))
        stem = name or prof.default_stem(app_cmd)
        rv = prof.pick_rank_var(rank_var)
        if rv and not os.environ.get(rv, "").strip():
            # ncu resolves %q{VAR} in its own environment and stops when VAR is unset.
            raise prof.UsageError(f"--rank-var {rv}: {rv} is not set in drgpu's environment",
                                  hint="ncu names each rank's report from its own environment, so run one drgpu per rank "
                                       "under the MPI launcher: mpirun -np N drgpu profile [OPTIONS] -- APP")
        folder = Path(output_dir) if output_dir else Path.cwd() / f"drgpu-{stem}"
        extra = list(ncu_arg or [])
        req = prof.ProfileRequest(app=app_cmd, output_dir=folder.resolve() if folder.exists() else folder.absolute(),
                                  stem=stem, kernel=kernel, kernel_name_base=kernel_name_base,
                                  launch_skip=launch_skip, launch_count=launch_count, replay_mode=replay_mode,
                                  clock_control=clock_control, target_processes=target_processes, rank_var=rv,
                                  import_source=not no_import_source, nvtx_include=list(nvtx_include or []),
                                  nvtx_exclude=list(nvtx_exclude or []), profile_from_start=from_start,
                                  extra_ncu_args=extra, force=force)
        req.validate()
        if timeout is not None and not (timeout > 0 and timeout < float("inf")):
            raise prof.UsageError(f"--timeout is a number of seconds above 0, got {timeout:g}")
        try:
            ncu_path = prof.find_ncu(ncu)
        except ToolNotFoundError:
            if not dry_run:
                raise
            ncu_path = ncu or os.environ.get("NCU") or "ncu"
        if list_kernels:
            _list_kernels(ncu_path, req, console, quiet)
            return 0
        gpu = prof.detect_gpu() if not metric_set else None
        ms, notes = _choose_set(metric_set, gpu)
        user_metrics = [m.strip() for chunk in (add_metrics or []) for m in chunk.split(",") if m.strip()]
        sel = ms.selection(with_groups or [], add_section or [], user_metrics)
        _preflight(ms, ms.chip or (gpu.chip if gpu else None), user_metrics, skip_metric_check)
        notes += sel.notes
        argv = prof.build_ncu_argv(ncu_path, req, sel)
        if dry_run:
            console.print(shlex.join(argv), markup=False, highlight=False, soft_wrap=True)
            return 0
        own_rank = os.environ.get(rv, "").strip() if rv else ""
        log_stem = stem + (f".rank{own_rank}" if own_rank else "")
        log_path = req.output_dir / f"{log_stem}.ncu.log"
        _check_outputs_free(req, log_path)
        try:
            req.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot create {req.output_dir}: {e.strerror}") from e
        if not quiet:
            status.print(f"[bold]drgpu profile[/bold]: metric set [cyan]{ms.name}[/cyan] "
                         f"({len(sel.sections)} sections, {len(sel.metrics)} metrics), output in {escape(str(req.output_dir))}")
            for n in notes:
                status.print(f"[yellow]note:[/yellow] {escape(n)}")
        started = time.time()
        # The analysis' imports and template compile while ncu profiles (drgpu_py.warmup).
        from .warmup import Warmup
        warm = Warmup(binary=app_cmd[0]).start()
        with ProgressView(status, quiet) as view:
            result = prof.run_ncu(argv, log_path, on_event=view, timeout_s=timeout)
        if not result.interrupted:
            warm.join()  # before any report is read: reading forks, which wants one thread
        reports = prof.found_reports(result, req, started)
        kept = ", ".join(str(p) for p in reports) or "no report (nothing was profiled yet)"
        if result.interrupted and not result.timed_out:
            # Ctrl-C (SIGTERM, SIGHUP) means "stop now": keep everything, analyze nothing, say how to go on.
            signum = result.signum or signal.SIGINT
            _record(req.output_dir / f"{log_stem}.profile.json", argv, ms, sel, result, reports, {}, notes, 128 + signum)
            by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
            raise InterruptedError_(f"ncu stopped{by}; kept {kept} and ncu's output {log_path}",
                                    hint="analyze a kept report with: drgpu analyze REPORT" if reports else None,
                                    signum=signum)
        if result.timed_out:
            _record(req.output_dir / f"{log_stem}.profile.json", argv, ms, sel, result, reports, {}, notes,
                    prof.ProfilerError.exit_code)
            raise prof.ProfilerError(f"ncu did not finish within --timeout {timeout:g} s and was stopped; kept {kept}",
                                     hint=f"ncu's output: {log_path}; analyze a kept report with: drgpu analyze REPORT")
        error = prof.classify(result, req, reports)
        strict_error = None
        th = data.thresholds(parse_threshold_args(threshold))
        rows, written, failures = [], [], []
        missing_by_report: dict[str, dict] = {}
        for rep in reports:
            try:
                rows_r, files, missing = _analyze_one(rep, sel, result, notes, th, warm.sass)
            except DrgpuError as e:
                failures.append(f"{rep.name}: {e}")
                continue
            except KeyboardInterrupt as e:
                signum = getattr(e, "signum", signal.SIGINT)
                _record(req.output_dir / f"{log_stem}.profile.json", argv, ms, sel, result, reports, missing_by_report,
                        notes, 128 + signum)
                raise InterruptedError_(f"stopped while analyzing; profiling had finished: kept {', '.join(map(str, reports))} "
                                        f"and ncu's output {log_path}", hint="analyze a kept report with: drgpu analyze REPORT",
                                        signum=signum) from None
            rows += rows_r
            written += files
            missing_by_report[str(rep)] = missing
            if missing:
                msg = prof.describe_missing(missing)
                status.print(f"[yellow]warning:[/yellow] {escape(rep.name)}: {escape(msg)}")
                if strict_metrics and strict_error is None:
                    strict_error = prof.metric_unavailable_error(missing, rep)
        _summary(console, rows, result, reports, written, failures, log_path, quiet)
        final = next((e for e in (error, (prof.ProfilerError("") if failures else None), strict_error) if e is not None), None)
        _record(req.output_dir / f"{log_stem}.profile.json", argv, ms, sel, result, reports, missing_by_report,
                notes, final.exit_code if final is not None else 0)
        if error is not None:
            raise error
        if failures:
            raise prof.ProfilerError("a report could not be analyzed: " + "; ".join(failures),
                                     hint=f"ncu's output: {log_path}")
        if strict_error is not None:
            raise strict_error
        return 0
    run_guarded(body)


def _analyze_one(rep: Path, sel: prof.Selection, result: prof.RunResult, notes: list[str], th, sass=None):
    """Analyze one report: check the requested metrics, write the outputs beside it (their
    names were checked free before profiling, or --force was given)."""
    from .pipeline import analyze_reports
    try:
        missing = prof.unavailable_metrics(rep, sel.expected)
    except ToolNotFoundError:
        missing = {}
    said = set(result.ncu_unavailable_metrics) & set(sel.metrics)
    if said:
        missing.setdefault("(ncu's warning)", []).extend(sorted(said))
    analysis = analyze_reports([rep], thresholds=th, sass=sass)
    # A note every kernel already carries (the reader derives the optional groups' notes
    # from the report itself) is not repeated for the whole report.
    on_all = set.intersection(*(set(ka.kernel.notes) for ka in analysis.kernels)) if analysis.kernels else set()
    analysis.profile.notes.extend(n for n in notes if n not in on_all)
    if missing:
        analysis.profile.notes.append(prof.describe_missing(missing))
    stem = rep.name[:-len(".ncu-rep")] if rep.name.endswith(".ncu-rep") else rep.stem
    files = _write_outputs(analysis, rep.parent, stem, True)
    passes = {k.passes for k in result.kernels if k.passes is not None}
    rows = []
    from .pipeline.groups import launches
    from .model import short_name
    for ka in analysis.kernels:
        k = ka.kernel
        top = ka.findings[0] if ka.findings else None
        sol = ka.context.sol if ka.context is not None else None
        rows.append({"report": stem, "kernel": short_name(k.name, 36), "id": k.id, "launches": launches(k),
                     "duration_us": k.duration_ns / 1000 if k.duration_ns == k.duration_ns else None,
                     "bound": ka.bound, "grade": sol.grade if sol and sol.grade else "-", "top": top.id if top else "-",
                     "speedup": getattr(top, "estimated_speedup", None) if top else None,
                     "passes": "/".join(str(p) for p in sorted(passes)) or "?"})
    return rows, files, missing


def _record(path: Path, argv, ms, sel, result: prof.RunResult, reports, missing, notes, exit_code: int) -> None:
    """A machine-readable record of the run beside the report (what was asked, what ncu did)."""
    import json
    from . import __version__
    from .io import atomic_write
    doc = {"tool": "drgpu profile", "version": __version__, "ncu_argv": argv, "metric_set": ms.name,
           "groups": sel.groups, "sections": sel.sections, "metrics": sel.metrics,
           "ncu_wall_s": round(result.wall_s, 3), "ncu_exit_code": result.returncode,
           "app_exit_code": result.app_exit_code, "interrupted": result.interrupted,
           "signal": signal.Signals(result.signum).name if result.signum else None, "timed_out": result.timed_out,
           "kernels": [{"name": k.name, "launch": k.launch, "passes": k.passes} for k in result.kernels],
           "reports": [str(p) for p in reports], "missing_metrics": missing, "ncu_errors": result.errors,
           "ncu_warnings": result.warnings, "ncu_messages_dropped": result.dropped_messages,
           "notes": notes, "exit_code": exit_code}
    try:
        atomic_write(path, json.dumps(doc, indent=2) + "\n", force=True)
    except DrgpuError:
        pass  # the record is a convenience; never let it hide the run's own outcome


def _summary(console: Console, rows, result: prof.RunResult, reports, written, failures, log_path: Path, quiet: bool) -> None:
    if rows:
        n = sum(r["launches"] for r in rows)
        passes = {r["passes"] for r in rows}
        title = (f"drgpu profile: {n} kernel launch{'es' if n != 1 else ''} ({len(rows)} kernel{'s' if len(rows) != 1 else ''}) "
                 f"in {len(reports)} report{'s' if len(reports) != 1 else ''} ({result.wall_s:.1f} s under ncu"
                 + (f", {next(iter(passes))} replay passes per launch)" if len(passes) == 1 and "?" not in passes else ")"))
        # At 80 columns ten boxed columns left five characters per cell ("scal…", "glob…"):
        # columns that say the same on every row move to the title, numbers and labels never
        # wrap, and the kernel name and finding id fold instead of being cut.
        cols = [("report", {"overflow": "fold", "min_width": 8})] if len({r["report"] for r in rows}) > 1 else []
        cols += [("kernel", {"overflow": "fold", "min_width": 12, "ratio": 2}), ("id", {"no_wrap": True}),
                 ("launches", {"no_wrap": True}), ("mean µs", {"no_wrap": True}), ("bound", {"no_wrap": True}),
                 ("grade", {"no_wrap": True}), ("top finding", {"overflow": "fold", "min_width": 10, "ratio": 1}),
                 ("speedup", {"no_wrap": True})]
        if len(passes) > 1:
            cols.append(("passes", {"no_wrap": True}))
        t = _table.Table(title=title, box=None, padding=(0, 1), collapse_padding=True, pad_edge=False, header_style="bold underline")
        for name, kw in cols:
            t.add_column(name, **kw)
        for r in rows:
            sp = r["speedup"]
            cells = {"report": escape(r["report"]), "kernel": escape(r["kernel"]), "id": str(r["id"]), "launches": str(r["launches"]),
                     "mean µs": f"{r['duration_us']:.1f}" if r["duration_us"] is not None else "n/a", "bound": r["bound"],
                     "grade": r["grade"], "top finding": r["top"], "speedup": f"{sp:.2f}x" if isinstance(sp, (int, float)) else "-",
                     "passes": r["passes"]}
            t.add_row(*(cells[name] for name, _ in cols))
        console.print(t)
    for f in failures:
        console.print(f"[red]not analyzed:[/red] {escape(f)}")
    if not quiet:
        files = [*reports, *written, log_path]
        console.print("[dim]kept: " + ", ".join(escape(str(p)) for p in files) + "[/dim]")


# ---------------------------------------------------------------------------------------
# drgpu metrics
# ---------------------------------------------------------------------------------------
@app.command("metrics")
def metrics_cmd(
    metric_set: Optional[str] = typer.Argument(None, help="A set (base, a chip name, a compute capability or a YAML file); default: the detected GPU's."),
    with_groups: Optional[List[str]] = typer.Option(None, "--with", help="Include an optional group in the ncu command shown."),
) -> None:
    """List drgpu's metric sets and what each metric is for."""
    def body():
        console = _console.Console()
        t = _table.Table("set", "chip family", "compute capability", "sections", "metrics", "optional groups", title="drgpu metric sets")
        for n in prof.available_sets():
            s = prof.load_metric_set(n)
            sel = s.selection()
            t.add_row(n, s.family or ("portable" if n == "base" else ""), ", ".join(s.compute_capability) or "any",
                      str(len(sel.sections)), str(len(sel.metrics)), ", ".join(s.group_names(optional=True)))
        console.print(t)
        chosen = metric_set
        if not chosen:
            gpu = prof.detect_gpu()
            chosen = gpu.chip if gpu and gpu.chip in prof.available_sets() else "base"
            console.print(f"detected GPU: {escape(gpu.name)} (cc {gpu.compute_capability})" if gpu else "no GPU detected")
        ms = prof.load_metric_set(chosen)
        d = _table.Table("group", "how", "name", "what drgpu uses it for", title=f"set {ms.name}: {ms.description}", show_lines=False)
        for g, spec in ms.groups.items():
            label = g + (" (optional)" if spec.optional else "")
            d.add_row(f"[bold]{label}[/bold]", "", "", escape(spec.why))
            for s in spec.sections:
                d.add_row("", "section", s, "")
            for m, why in spec.metrics.items():
                d.add_row("", "metric", m, escape(why))
            for m, why in spec.provides.items():
                d.add_row("", "from section", m, escape(why))
        console.print(d)
        sel = ms.selection(with_groups or [])
        console.print("ncu arguments: " + shlex.join(sel.ncu_args()), markup=False, highlight=False, soft_wrap=True)
    run_guarded(body)
