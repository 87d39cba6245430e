"""Command-line interface (Typer). Thin: parses options, calls the library, maps typed errors
to one-line messages and documented exit codes (README "Exit codes"). Set DRGPU_DEBUG=1 to
see tracebacks of internal errors.

Other modules add commands to ``app`` (``cli_profile``, ``cli_compare``); they are imported
at the bottom so each command lives beside the code it drives.
"""
from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path
from typing import Callable, List, Optional

import typer

from . import __version__
from .errors import DrgpuError, OutputError, Terminated, UsageError

class _PlainHelpGroup(typer.core.TyperGroup):
    """Help text with plain metavars: 'REPORTS...', '--top N', '--kernel TEXT', never typer's
    '<list[Path]>' type labels. Applied to each command when it is looked up (typer builds the
    commands, also under the test runner, through this class)."""

    _LABELS = {"int": "N", "float": "NUMBER", "Path": "PATH", "list[Path]": "PATH", "str": "TEXT", "list[str]": "TEXT"}

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        for p in getattr(cmd, "params", ()):
            if p.param_type_name == "argument":
                if p.metavar is None:
                    # typer adds '...' to a list argument in the usage line: REPORT...
                    p.metavar = p.name.upper().removesuffix("S") if p.nargs != 1 else p.name.upper()
                p.display_type_rich = lambda ctx=None: None  # the metavar says it
            elif p.metavar is None and not getattr(p, "is_flag", False) and p.name not in ("help", "version"):
                try:
                    label = p.bare_type()
                except Exception:  # noqa: BLE001 - a typer without it keeps its own labels
                    continue
                p.metavar = self._LABELS.get(label, "TEXT")
        return cmd


# Path options and arguments pass readable=False: typer's own check prints a usage block (exit 2)
# for an unreadable path, where drgpu's readers say "permission denied" with exit 3.

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None, cls=_PlainHelpGroup,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="drgpu: top-down GPU performance advice from Nsight Compute reports.")


def _version_option(value: bool) -> None:
    if value:
        typer.echo(f"drgpu {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", "-V", callback=_version_option, is_eager=True,
                                       help="Print drgpu's version and exit.")) -> None:
    """drgpu: top-down GPU performance advice from Nsight Compute reports."""
EXIT_INTERNAL = 70


def text_width() -> int:
    """Width of text output (drgpu_py.render.text_width: COLUMNS, else the terminal, else 120)."""
    from .render import text_width as width
    return width()


def check_fail_on(fail_on: str | None, severities: list[str]) -> None:
    """``--fail-on LEVEL``: exit 9 (docs/errors.md) when a finding is at LEVEL or worse."""
    if fail_on is None:
        return
    from .analysis.findings import severity_rank
    from .errors import CheckFailedError
    hits = [s for s in severities if severity_rank(s) <= severity_rank(fail_on)]
    if hits:
        raise CheckFailedError(f"{len(hits)} finding(s) at severity {fail_on} or above (--fail-on {fail_on})")


def fail_on_value(value: str | None) -> str | None:
    if value is not None and value not in ("high", "medium"):
        raise UsageError(f"--fail-on {value!r}: expected high or medium")
    return value


def lazy_module(name: str):
    """The module ``name``, executed on its first attribute access: command modules name what
    only their command needs without every ``drgpu`` start-up paying for its import."""
    if name in sys.modules:
        return sys.modules[name]
    import importlib.util
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


data = lazy_module(f"{__package__}.data")  # YAML data files: only commands that read them


# A path or name in a message may hold a newline, ESC or a right-to-left override: shown as
# escapes, so an error stays one line and never drives the terminal.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100
                        else f"\\u{ord(m.group(0)):04x}", str(text))


def run_guarded(fn: Callable[[], int | None]) -> None:
    """Run a command body; turn drgpu errors into a message and an exit code."""
    try:
        code = fn() or 0
    except DrgpuError as e:
        # Plain writes: one message per line, never wrapped to the terminal width.
        typer.echo(f"drgpu: {e.kind}: {one_line(e.message)}", err=True)
        if e.hint:
            typer.echo(f"  hint: {one_line(e.hint)}", err=True)
        raise typer.Exit(e.exit_code) from None
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", signal.SIGINT)
        typer.echo("drgpu: interrupted" + (f" ({signal.Signals(signum).name})" if signum != signal.SIGINT else ""), err=True)
        raise typer.Exit(128 + signum) from None
    except typer.Exit:
        raise
    except OSError as e:
        # An operating-system error no boundary named: still the user's environment, not
        # a bug (docs/errors.md): a full or read-only disk is the output's, the rest the input's.
        from .io import os_error
        err = os_error(e)
        typer.echo(f"drgpu: {err.kind}: {one_line(err.message)}", err=True)
        raise typer.Exit(err.exit_code) from None
    except Exception as e:  # never show users a traceback unless asked
        if os.environ.get("DRGPU_DEBUG"):
            raise
        typer.echo(f"drgpu: internal error: {type(e).__name__}: {e}", err=True)
        typer.echo("  hint: rerun with DRGPU_DEBUG=1 for a traceback and report it", err=True)
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


def parse_threshold_args(items: list[str] | None) -> dict[str, float]:
    """``KEY=VALUE`` overrides: a known key and a finite, non-negative number, else a usage
    error (exit 2)."""
    import math
    known = data.threshold_docs()
    out = {}
    for it in items or []:
        if "=" not in it:
            raise UsageError(f"--threshold expects KEY=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        k = k.strip()
        if k not in known:
            raise UsageError(f"--threshold: unknown key {k!r}", hint="drgpu thresholds lists them")
        try:
            out[k] = float(v)
        except ValueError as e:
            raise UsageError(f"--threshold {k}: {v!r} is not a number") from e
        if not math.isfinite(out[k]) or out[k] < 0:
            raise UsageError(f"--threshold {k}: {v!r} must be a finite number >= 0")
    return out


def refuse_output_over_inputs(output: Path | None, inputs: list) -> None:
    """drgpu never modifies its inputs: not even --force may write the output over one."""
    if output is None:
        return
    from .readers.ncu_csv import _sibling  # a CSV's auto-detected companions are inputs too
    inputs = inputs + [_sibling(Path(r), sfx) for r in inputs if r is not None for sfx in (".source.csv", ".ncu-rep")]
    for src in inputs:
        try:
            same = src is not None and Path(src).exists() and Path(output).exists() and Path(output).samefile(src)
        except OSError:
            same = False
        if same:
            raise OutputError(f"{output} is an input of this run ({src}); drgpu never overwrites its inputs",
                              hint="choose another output file")


def progress_printer(label: str, quiet: bool):
    """A callback (done, total) that shows a rich progress bar on stderr for long work (five
    items or more); None when quiet or stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None
    try:
        # A copy of the terminal's descriptor: while a report is read, descriptor 2 is sent
        # to a buffer to keep ncu_report's native log off the screen (readers.common).
        out = os.fdopen(os.dup(sys.stderr.fileno()), "w")
    except (OSError, ValueError):
        out = sys.stderr
    state: dict = {}

    def cb(done: int, total: int) -> None:
        if total < 5:
            return
        if "bar" not in state:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
            bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           console=Console(file=out, force_terminal=True), transient=False, auto_refresh=False)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(label, total=total)
        bar = state["bar"]
        bar.update(state["task"], completed=done, total=total, refresh=True)
        if done >= total:
            bar.stop()
            state.clear()
    return cb


@app.command()
def analyze(
    reports: List[Path] = typer.Argument(..., readable=False, help="An .ncu-rep, a raw-page CSV export (ncu -i R --csv --page raw --print-units base), several (merged as ranks), or a folder of them."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel launch id, id range a:b, or name regex."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="text, json, csv, sarif, dot, svg, png or html (default: from -o, else text)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", readable=False, help="Output file (format inferred from its extension)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output file."),
    source_csv: Optional[Path] = typer.Option(None, "--source-csv", readable=False, help="Source-page CSV export (default: X.source.csv beside X.raw.csv)."),
    line_report: Optional[Path] = typer.Option(None, "--line-report", readable=False, help="An .ncu-rep whose line table gives a CSV's source lines (default: X.ncu-rep beside X.raw.csv)."),
    cubin: Optional[Path] = typer.Option(None, "--cubin", readable=False, help="Cubin of the profiled code: control codes and line table for SASS slicing."),
    binary: Optional[Path] = typer.Option(None, "--binary", readable=False, help="Executable or library holding the profiled kernels (cubins are extracted)."),
    threshold: Optional[List[str]] = typer.Option(None, "--threshold", "-t", help="Override a threshold: KEY=VALUE (see drgpu thresholds)."),
    thresholds_file: Optional[Path] = typer.Option(None, "--thresholds", readable=False, help="YAML file of threshold overrides."),
    fold: float = typer.Option(0.02, "--fold", help="Fold tree nodes whose subtree is below this share of stall cycles (0..1)."),
    per_launch: bool = typer.Option(False, "--per-launch", help="Analyze every launch on its own (default: launches of one kernel as one group)."),
    top: int = typer.Option(3, "--top", help="Terminal: trees of the N kernels with the most GPU time after the summary (0: all)."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes for kernel groups and for reading several reports (0: one per core; 1: none)."),
    merge: bool = typer.Option(False, "--merge", help="Several reports: merge them as ranks of one program even when they share no kernel name."),
    fail_on: Optional[str] = typer.Option(None, "--fail-on", metavar="high|medium",
                                          help="Exit 9 after writing the output when a finding has this severity or a higher one (for CI)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
) -> None:
    """Analyze an existing Nsight Compute report (or CSV export), several reports of one program (merged as ranks), or a folder of them: summary, stall trees and ranked findings."""
    def body():
        # nvdisasm lists the report's code while the analysis modules load (drgpu_py.cubin_sass).
        sass = start_report_sass(reports)
        from .pipeline import SEPARATE_NOTE, analyze_reports, write_result
        if top < 0:
            raise UsageError(f"--top must be 0 or more, got {top}")
        if jobs < 0:
            raise UsageError(f"--jobs must be 0 (one per core) or more, got {jobs}")
        from .pipeline.parallel import default_jobs
        check_fold(fold)
        fail_on_value(fail_on)
        refuse_output_over_inputs(output, [*reports, source_csv, line_report, cubin, binary, thresholds_file])
        th = data.thresholds(parse_threshold_args(threshold), thresholds_file)
        result = analyze_reports(reports, kernel=kernel, source_csv=source_csv, line_report=line_report,
                                 cubin=cubin, binary=binary, thresholds=th,
                                 progress=progress_printer("analyzing kernels", quiet),
                                 read_progress=progress_printer("reading kernels", quiet), per_launch=per_launch,
                                 jobs=jobs or default_jobs(), merge=True if merge else None, sass=sass)
        if result.profile.format == "separate":
            typer.echo(f"drgpu: warning: {SEPARATE_NOTE}", err=True)
        write_result(result, fmt=fmt, output=output, force=force, fold=fold, top=top)
        check_fail_on(fail_on, [f.severity for ka in result.kernels for f in ka.findings])
    run_guarded(body)


def start_report_sass(reports) -> object | None:
    """For one ``.ncu-rep`` (checked by its magic bytes), nvdisasm started on the cubins it
    carries (``cubin_sass.SassSource``); None for anything else."""
    # A regular file only: opening a FIFO would block (the reader refuses those itself).
    if len(reports) != 1 or not Path(reports[0]).is_file():
        return None
    try:
        with open(reports[0], "rb") as fh:
            if fh.read(4) != b"NVR\x00":
                return None
    except OSError:
        return None
    from .sass.cubin import SassSource, cubins_in_report, max_cubins
    return SassSource.start(cubins_in_report(reports[0], limit=max_cubins()))


def check_fold(fold: float) -> None:
    if not 0.0 <= fold <= 1.0:
        raise UsageError(f"--fold is a share between 0 and 1, got {fold:g}", hint="e.g. --fold 0.05 folds nodes below 5%")


@app.command("thresholds")
def thresholds_cmd() -> None:
    """List the analysis thresholds, their defaults and what they mean."""
    def body():
        from rich.console import Console
        from rich.table import Table
        t = Table("key", "default", "meaning")
        for k, spec in data.threshold_docs().items():
            t.add_row(k, f"{spec['default']:g}", spec["doc"])
        Console().print(t)
    run_guarded(body)


@app.command()
def version() -> None:
    """Print drgpu's version."""
    typer.echo(f"drgpu {__version__}")


for _mod in ("cli_profile", "cli_compare"):
    try:
        __import__(f"{__package__}.{_mod}")
    except ModuleNotFoundError as _e:
        if _e.name != f"{__package__}.{_mod}":
            raise


def _on_signal(signum, frame) -> None:
    raise Terminated(signum)


def install_signal_handlers() -> None:
    """SIGTERM (kill, a batch scheduler) and SIGHUP (the terminal closed) stop drgpu as Ctrl-C
    does: temporary files removed, ncu's process group stopped, the run record kept."""
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            try:
                signal.signal(sig, _on_signal)
            except (ValueError, OSError):  # not the main thread (embedded use)
                pass


def main() -> None:
    install_signal_handlers()
    # Kernel names and paths are arbitrary text: a terminal or pipe that cannot encode a
    # character gets '?' rather than an exception in the middle of the output.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    app()


if __name__ == "__main__":
    # Run as a script the module is __main__, not drgpu_py.cli, on whose app the other
    # command modules register: call the package's own.
    from drgpu_py.cli import main as _main
    _main()
