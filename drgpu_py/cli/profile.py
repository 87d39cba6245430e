"""Commands ``drgpu profile`` (run an application under ncu with drgpu's metric set, keep
the report, analyze it) and ``drgpu metrics`` (list the metric sets and what each metric is
for). The work is in :mod:`drgpu_py.ncu.session` and :mod:`drgpu_py.specs.metric_sets`; this
module parses options, shows ncu's progress and the closing summary, and leaves the exit
code to the session's typed errors (docs/profile.md lists them).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, List, Literal, Optional

import typer

from .options import Quiet, Thresholds, Verbose, data, lazy_module, parse_threshold_args, run_guarded, stdout_console

# Loaded when a command first uses them, not when ``drgpu`` starts (``drgpu --help`` and
# ``drgpu analyze`` never need the profiler or rich's tables).
session = lazy_module("drgpu_py.ncu.session")
msets = lazy_module("drgpu_py.specs.metric_sets")
_console = lazy_module("rich.console")
if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table

    from ..ncu.console import Event
    from ..ncu.run import RunResult
_table = lazy_module("rich.table")
_markup = lazy_module("rich.markup")


def escape(text: str) -> str:
    """Text from ncu, the application or a report for rich: markup escaped, control and
    bidi characters shown as escapes (the same helper as the analysis' text output)."""
    return _markup.escape(visible(text))


def visible(text: str) -> str:
    """A relayed line as plain text: ESC, other controls and bidi overrides as escapes."""
    from ..io import visible as _visible

    return _visible(text)


# ---------------------------------------------------------------------------------------
# Progress display
# ---------------------------------------------------------------------------------------
ECHO_LIMIT = 50  # lines of ncu's errors/warnings and the application's output shown live


class ProgressView:
    """Shows ncu's progress: on a terminal a live line (kernel, replay progress, pass n of
    m once the pass count is known from an earlier launch), elsewhere ncu's own lines."""

    def __init__(self, console: Console, quiet: bool):
        self.console = console
        self.quiet = quiet
        self.live = console.is_terminal and not quiet
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.passes: int | None = None
        self.done = 0
        self.echoed = 0  # ncu's errors, warnings and application lines shown so far

    def __enter__(self):
        if self.live:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>3.0f}%"),
                TextColumn("{task.fields[passes]}"),
                console=self.console,
                transient=True,
            )
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
            self.console.print(
                f"... more than {ECHO_LIMIT} lines of ncu and application output: the rest is in ncu's log only",
                markup=False,
                highlight=False,
            )
        return self.echoed <= ECHO_LIMIT

    def __call__(self, ev: Event) -> None:
        if self.quiet:
            return
        if ev.kind in ("error", "warning", "output") and not self._echo_allowed():
            return
        # Every relayed line may come from the application (it shares ncu's console) or name a
        # kernel: shown with its control characters as escapes, never driving the terminal.
        if not self.live:
            self._print_plain(ev)
        elif self.progress is not None and self.task is not None:  # live only between __enter__ and __exit__
            self._show_live(self.progress, self.task, ev)

    def _print_plain(self, ev: Event) -> None:
        if ev.kind in ("kernel_done", "connected", "disconnected", "output"):
            self.console.print(visible(ev.text), markup=False, highlight=False)
        elif ev.kind in ("error", "warning"):
            self.console.print(f"ncu {ev.kind}: {visible(ev.text)}", markup=False, highlight=False)

    def _show_live(self, p: Progress, t: TaskID, ev: Event) -> None:
        if ev.kind == "kernel":
            self._start_kernel(p, t, ev)
        elif ev.kind == "progress":
            p.update(t, completed=ev.pct or 0, passes=self._pass_text(ev.pct))
        elif ev.kind == "kernel_done":
            self._finish_kernel(p, t, ev)
        elif ev.kind == "connected":
            p.update(t, description=f"application started (process {ev.pid})")
        elif ev.kind in _LIVE_LABELS:
            self.console.print(f"{_LIVE_LABELS[ev.kind]} {escape(ev.text)}")
        elif ev.kind == "output":
            self.console.print(visible(ev.text), markup=False, highlight=False)

    def _start_kernel(self, p: Progress, t: TaskID, ev: Event) -> None:
        idx = f" ({ev.index[0]}/{ev.index[1]})" if ev.index else ""
        p.update(
            t,
            description=f"profiling {escape(ev.kernel or '?')} launch {ev.launch}{idx}",
            completed=0,
            passes=self._pass_text(0),
        )

    def _finish_kernel(self, p: Progress, t: TaskID, ev: Event) -> None:
        self.done += 1
        if ev.passes:
            self.passes = ev.passes
        p.update(t, completed=100, passes="")
        self.console.print(
            f"[green]✓[/green] {escape(ev.kernel or '?')} launch {ev.launch}: "
            f"{ev.passes if ev.passes is not None else '?'} passes"
        )


#: How the live view labels ncu's own messages.
_LIVE_LABELS = {"error": "[red]ncu error:[/red]", "warning": "[yellow]ncu warning:[/yellow]"}


# ---------------------------------------------------------------------------------------
# drgpu profile
# ---------------------------------------------------------------------------------------
def profile(
    app_argv: Optional[List[str]] = typer.Argument(
        None, metavar="-- APP [ARGS...]", help="The application and its arguments, after --."
    ),
    output_dir: Optional[Path] = typer.Option(
        None,
        "--output-dir",
        "-d",
        readable=False,
        help="Folder for the report, ncu's log and the analysis (default: ./drgpu-APP).",
    ),
    name: Optional[str] = typer.Option(None, "--name", help="File name stem (default: the application's name)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing report and outputs."),
    kernel: Optional[str] = typer.Option(
        None, "--kernel", "-k", help="Profile only kernels whose name matches this regex (ncu -k regex:...)."
    ),
    # The sets of values are ncu's (drgpu_py.ncu.session; tests/unit/test_cli_choices.py).
    kernel_name_base: Optional[Literal["function", "demangled", "mangled"]] = typer.Option(
        None, "--kernel-name-base", help="Name --kernel matches (default: function)."
    ),
    launch_skip: Optional[int] = typer.Option(
        None, "--launch-skip", "-s", min=0, help="Skip this many matching launches first (ncu -s)."
    ),
    launch_count: Optional[int] = typer.Option(
        None, "--launch-count", "-c", min=1, help="Profile at most this many launches (ncu -c)."
    ),
    replay_mode: Optional[Literal["kernel", "application", "range", "app-range"]] = typer.Option(
        None, "--replay-mode", help="ncu's replay mode (default: kernel)."
    ),
    clock_control: Optional[Literal["base", "none"]] = typer.Option(
        None, "--clock-control", help="base (ncu's default: lock to base clocks) or none."
    ),
    target_processes: Optional[Literal["all", "application-only"]] = typer.Option(
        None, "--target-processes", help="all (ncu's default: child processes too) or application-only."
    ),
    rank_var: str = typer.Option(
        "auto",
        "--rank-var",
        help="One report per MPI rank: the rank's environment variable (auto: the first of OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID set here; none: off).",
    ),
    metric_set: Optional[str] = typer.Option(
        None,
        "--metric-set",
        help="Metric set: a chip (tu102, ga100, ga102, ad102, gh100, gb100, gb202), base, or a YAML file. Default: detected.",
    ),
    with_groups: Optional[List[str]] = typer.Option(
        None, "--with", help="Also collect an optional group of the set (stall_counters, context); repeatable."
    ),
    add_section: Optional[List[str]] = typer.Option(
        None, "--add-section", help="Also collect this ncu section; repeatable."
    ),
    add_metrics: Optional[List[str]] = typer.Option(
        None, "--add-metrics", help="Also collect these metrics (comma-separated); repeatable."
    ),
    skip_metric_check: bool = typer.Option(
        False, "--skip-metric-check", help="Do not check added metric names against ncu's catalogue first."
    ),
    strict_metrics: bool = typer.Option(
        False,
        "--strict-metrics",
        help="Exit 14 when a requested metric is missing from the report (default: a warning).",
    ),
    no_import_source: bool = typer.Option(
        False, "--no-import-source", help="Do not embed the CUDA source files in the report."
    ),
    nvtx_include: Optional[List[str]] = typer.Option(
        None,
        "--nvtx-include",
        help="Profile only kernels inside this NVTX range (ncu --nvtx-include syntax, e.g. 'step/' or 'train@step'); repeatable.",
    ),
    nvtx_exclude: Optional[List[str]] = typer.Option(
        None, "--nvtx-exclude", help="Skip kernels inside this NVTX range (ncu --nvtx-exclude); repeatable."
    ),
    from_start: bool = typer.Option(
        True,
        "--from-start/--no-from-start",
        help="--no-from-start: profile only between cudaProfilerStart and cudaProfilerStop (torch.cuda.profiler.start/stop).",
    ),
    ncu: Optional[str] = typer.Option(None, "--ncu", help="The ncu to run (default: $NCU, else ncu on PATH)."),
    ncu_arg: Optional[List[str]] = typer.Option(
        None, "--ncu-arg", help="Pass one extra argument to ncu, verbatim; repeatable."
    ),
    threshold: Thresholds = None,
    timeout: Optional[float] = typer.Option(
        None,
        "--timeout",
        help="Stop ncu (and the application) after this many seconds; what it profiled is kept (exit 10).",
    ),
    passes: Optional[Literal["1", "2", "auto"]] = typer.Option(
        None,
        "--passes",
        help="1 (default): one ncu run of the whole set. 2: a cheap run over every launch, then the rest of the set "
        "only for the kernels holding --focus-share of the GPU time. auto: 2 unless it cannot pay off or be "
        "joined (docs/profile.md).",
    ),
    focus_share: Optional[float] = typer.Option(
        None,
        "--focus-share",
        help="With two passes: the share of the first run's GPU time whose kernels get the whole set, "
        "above 0 and at most 1 (default 0.8).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the ncu command(s) and exit."),
    list_kernels: bool = typer.Option(
        False, "--list-kernels", help="Run the application once cheaply and list the kernels it launches."
    ),
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Profile an application with ncu and drgpu's metric set, keep the report, analyze it.

    Example: drgpu profile -k 'gemm' -c 3 -- ./app --size 4096
    """

    def body():
        console = _console.Console()
        status = _console.Console(stderr=True)
        opts = session.SessionOptions(
            app=list(app_argv or []),
            output_dir=output_dir,
            name=name,
            force=force,
            kernel=kernel,
            kernel_name_base=kernel_name_base,
            launch_skip=launch_skip,
            launch_count=launch_count,
            replay_mode=replay_mode,
            clock_control=clock_control,
            target_processes=target_processes,
            rank_var=rank_var,
            metric_set=metric_set,
            with_groups=list(with_groups or []),
            add_sections=list(add_section or []),
            add_metrics=list(add_metrics or []),
            skip_metric_check=skip_metric_check,
            strict_metrics=strict_metrics,
            import_source=not no_import_source,
            nvtx_include=list(nvtx_include or []),
            nvtx_exclude=list(nvtx_exclude or []),
            profile_from_start=from_start,
            ncu=ncu,
            ncu_args=list(ncu_arg or []),
            timeout=timeout,
            **{k: v for k, v in (("passes", passes), ("focus_share", focus_share)) if v is not None},
        )
        s = session.Session(opts, dry_run=dry_run)
        if list_kernels:
            with ProgressView(status, quiet) as view:
                counts, log = s.list_kernels(on_event=view)
            _show_kernels(console, counts, log, s.req.app)
            return 0
        s.choose()
        if dry_run:
            for line in s.dry_run_lines():
                console.print(line, markup=False, highlight=False, soft_wrap=True)
            return 0
        # Checked before ncu runs (a mistyped key used to surface only after profiling).
        opts.thresholds = data.thresholds(parse_threshold_args(threshold))
        s.prepare_outputs()
        if not quiet:
            status.print(
                f"[bold]drgpu profile[/bold]: metric set [cyan]{s.ms.name}[/cyan] "
                f"({len(s.sel.sections)} sections, {len(s.sel.metrics)} metrics), output in {escape(str(s.req.output_dir))}"
            )
            if s.two is not None:
                status.print(
                    f"two ncu runs ({escape(s.passes_why)}): first {escape(s.two.req1.stem)}, then {escape(s.two.req2.stem)}"
                )
            for n in s.notes:
                status.print(f"[yellow]note:[/yellow] {escape(n)}")
        with ProgressView(status, quiet) as view:
            s.run_ncu(on_event=view)
        done = s.finish(on_warning=lambda text: status.print(f"[yellow]warning:[/yellow] {escape(text)}"))
        _summary(console, done.rows, done.result, done.reports, done.written, done.failures, done.log_path, quiet)
        done.check()
        return 0

    run_guarded(body)


def _show_kernels(console: Console, counts: dict[str, int], log: Path, app: list[str]) -> None:
    t = _table.Table("kernel (ncu's name)", "launches", title=f"kernels launched by {escape(os.path.basename(app[0]))}")
    for name, n in counts.items():
        t.add_row(escape(name), str(n))
    console.print(t if counts else "no kernel was launched")
    console.print(f"[dim]ncu's output: {escape(str(log))}; use --kernel REGEX to pick launches[/dim]")


def _summary(
    console: Console, rows, result: RunResult, reports, written, failures, log_path: Path, quiet: bool
) -> None:
    if rows:
        console.print(_summary_table(rows, result, reports))
    for f in failures:
        console.print(f"[red]not analyzed:[/red] {escape(f)}")
    if not quiet:
        files = [*reports, *written, log_path]
        console.print("[dim]kept: " + ", ".join(escape(str(p)) for p in files) + "[/dim]")


def _counted(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def _summary_title(rows, result: RunResult, reports, passes: set) -> str:
    """Launches, kernels and reports, and the replay passes when every launch took as many."""
    n = sum(r["launches"] for r in rows)
    same_passes = len(passes) == 1 and "?" not in passes
    return (
        f"drgpu profile: {_counted(n, 'kernel launch', 'kernel launches')} ({_counted(len(rows), 'kernel', 'kernels')}) "
        f"in {_counted(len(reports), 'report', 'reports')} ({result.wall_s:.1f} s under ncu"
        + (f", {next(iter(passes))} replay passes per launch)" if same_passes else ")")
    )


def _summary_columns(rows, passes: set) -> list[tuple[str, dict]]:
    """At 80 columns ten boxed columns left five characters per cell ("scal…", "glob…"):
    columns that say the same on every row move to the title, numbers and labels never
    wrap, and the kernel name and finding id fold instead of being cut."""
    cols = [("report", {"overflow": "fold", "min_width": 8})] if len({r["report"] for r in rows}) > 1 else []
    cols += [
        ("kernel", {"overflow": "fold", "min_width": 12, "ratio": 2}),
        ("id", {"no_wrap": True}),
        ("launches", {"no_wrap": True}),
        ("mean µs", {"no_wrap": True}),
        ("bound", {"no_wrap": True}),
        ("grade", {"no_wrap": True}),
        ("top finding", {"overflow": "fold", "min_width": 10, "ratio": 1}),
        ("speedup", {"no_wrap": True}),
    ]
    if len(passes) > 1:
        cols.append(("passes", {"no_wrap": True}))
    return cols


def _summary_cells(r: dict) -> dict[str, str]:
    sp = r["speedup"]
    return {
        "report": escape(r["report"]),
        "kernel": escape(r["kernel"]),
        "id": str(r["id"]),
        "launches": str(r["launches"]),
        "mean µs": f"{r['duration_us']:.1f}" if r["duration_us"] is not None else "n/a",
        "bound": r["bound"],
        "grade": r["grade"],
        "top finding": r["top"],
        "speedup": f"{sp:.2f}x" if isinstance(sp, (int, float)) else "-",
        "passes": r["passes"],
    }


def _summary_table(rows, result: RunResult, reports) -> Table:
    passes = {r["passes"] for r in rows}
    cols = _summary_columns(rows, passes)
    t = _table.Table(
        title=_summary_title(rows, result, reports, passes),
        box=None,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
        header_style="bold underline",
    )
    for name, kw in cols:
        t.add_column(name, **kw)
    for r in rows:
        cells = _summary_cells(r)
        t.add_row(*(cells[name] for name, _ in cols))
    return t


# ---------------------------------------------------------------------------------------
# drgpu metrics
# ---------------------------------------------------------------------------------------
def metrics_cmd(
    metric_set: Optional[str] = typer.Argument(
        None, help="A set (base, a chip name, a compute capability or a YAML file); default: the detected GPU's."
    ),
    with_groups: Optional[List[str]] = typer.Option(
        None, "--with", help="Include an optional group in the ncu command shown."
    ),
) -> None:
    """List drgpu's metric sets and what each metric is for."""

    def body():
        console = stdout_console()
        t = _table.Table(
            "set",
            "chip family",
            "compute capability",
            "sections",
            "metrics",
            "optional groups",
            title="drgpu metric sets",
        )
        for n in msets.available_sets():
            s = msets.load_metric_set(n)
            sel = s.selection()
            t.add_row(
                n,
                s.family or ("portable" if n == "base" else ""),
                ", ".join(s.compute_capability) or "any",
                str(len(sel.sections)),
                str(len(sel.metrics)),
                ", ".join(s.group_names(optional=True)),
            )
        console.print(t)
        chosen = metric_set
        if not chosen:
            gpu = session.detect_gpu()
            chosen = gpu.chip if gpu and gpu.chip in msets.available_sets() else "base"
            console.print(
                f"detected GPU: {escape(gpu.name)} (cc {gpu.compute_capability})" if gpu else "no GPU detected"
            )
        ms = msets.load_metric_set(chosen)
        d = _table.Table(
            "group", "how", "name", "what drgpu uses it for", title=f"set {ms.name}: {ms.description}", show_lines=False
        )
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
