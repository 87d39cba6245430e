"""Shared pieces of the commands: option checks (``--threshold``, ``--fold``, ``--fail-on``),
output guards, the progress bar, lazy module loading, and ``run_guarded``, which runs a
command's body and turns typed errors into one-line messages and exit codes (docs/errors.md).

Imported by every command module at start-up: it imports nothing beyond Typer and the error
types until a command runs.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Annotated, Callable, List, Optional, TextIO

import typer

from ..errors import DrgpuError, OutputError, UsageError

EXIT_INTERNAL = 70

# Options several commands take, declared once: the same flags and help on every command.
Force = Annotated[bool, typer.Option("--force", help="Overwrite an existing output file.")]
Thresholds = Annotated[
    Optional[List[str]],
    typer.Option("--threshold", "-t", help="Override a threshold: KEY=VALUE (see drgpu thresholds)."),
]
ThresholdsFile = Annotated[
    Optional[Path], typer.Option("--thresholds", readable=False, help="YAML file of threshold overrides.")
]
Fold = Annotated[
    float, typer.Option("--fold", help="Fold tree nodes whose subtree is below this share of stall cycles (0..1).")
]
Jobs = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        help="Worker processes for kernel groups and for reading several reports (0: one per core; 1: none).",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]


def text_width() -> int:
    """Width of text output (drgpu_py.render.text_width: COLUMNS, else the terminal, else 120)."""
    from ..render import text_width as width

    return width()


def check_fail_on(fail_on: str | None, severities: list[str]) -> None:
    """``--fail-on LEVEL``: exit 9 (docs/errors.md) when a finding is at LEVEL or worse."""
    if fail_on is None:
        return
    from ..analysis.findings import severity_rank
    from ..errors import CheckFailedError

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
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


data = lazy_module("drgpu_py.specs.loader")  # YAML data files: only commands that read them


def one_line(text: str) -> str:
    """A path or name in a message may hold a newline, ESC or a right-to-left override: shown
    as escapes, so an error stays one line and never drives the terminal."""
    from ..io import visible

    return visible(text, one_line=True)


class _Command:
    """Whether the command's body has started and ended (returned or raised): before it
    starts and once it has ended nothing is being written, its outcome is decided and its
    outputs are complete or absent (cli's signal handler reads this); ``signalled``: the
    stop signal that came during it (0: none)."""

    started = False
    finished = False
    signalled = 0


def command_finished() -> bool:
    return _Command.finished


def command_started() -> bool:
    return _Command.started


def note_signal(signum: int) -> None:
    """Record a stop signal that came during the body (cli's signal handler calls this)."""
    _Command.signalled = _Command.signalled or signum


def run_guarded(fn: Callable[[], int | None]) -> None:
    """Run a command body; turn drgpu errors into a message and an exit code."""
    try:
        try:
            _Command.started = True
            code = fn() or 0
        finally:
            _Command.finished = True
    except DrgpuError as e:
        # Plain writes: one message per line, never wrapped to the terminal width.
        typer.echo(f"drgpu: {e.kind}: {one_line(e.message)}", err=True)
        if e.hint:
            typer.echo(f"  hint: {one_line(e.hint)}", err=True)
        raise typer.Exit(e.exit_code) from None
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", signal.SIGINT)
        typer.echo(
            "drgpu: interrupted" + (f" ({signal.Signals(signum).name})" if signum != signal.SIGINT else ""), err=True
        )
        raise typer.Exit(128 + signum) from None
    except typer.Exit:
        raise
    except OSError as e:
        # An operating-system error no boundary named: still the user's environment, not
        # a bug (docs/errors.md): a full or read-only disk is the output's, the rest the input's.
        from ..io import os_error

        err = os_error(e)
        typer.echo(f"drgpu: {err.kind}: {one_line(err.message)}", err=True)
        raise typer.Exit(err.exit_code) from None
    except Exception as e:  # never show users a traceback unless asked
        if _Command.signalled:
            # The signal's exception was raised inside an import, which it left half done:
            # what fails next (an ImportError of that module) is the interruption's doing.
            signum = _Command.signalled
            typer.echo(f"drgpu: interrupted ({signal.Signals(signum).name})", err=True)
            raise typer.Exit(128 + signum) from None
        if os.environ.get("DRGPU_DEBUG"):
            raise
        typer.echo(f"drgpu: internal error: {type(e).__name__}: {e}", err=True)
        typer.echo("  hint: rerun with DRGPU_DEBUG=1 for a traceback and report it", err=True)
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


def stdout_console():
    """A rich Console on standard output for a command's table, or an OutputError (exit 6)
    when standard output is closed (``>&-``): rich would write into nothing and exit 0."""
    if sys.stdout is None:
        raise OutputError("standard output is closed", hint="give the command a standard output: > FILE")
    from rich.console import Console

    return Console()


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
            raise UsageError(f"--threshold {k}: {_short(v)!r} is not a number") from e
        if not math.isfinite(out[k]) or out[k] < 0:
            raise UsageError(f"--threshold {k}: {_short(v)!r} must be a finite number >= 0")
    return out


def _short(text: str, keep: int = 40) -> str:
    """A value for a message: a number of 5,000 digits is shown by its first digits."""
    return text if len(text) <= keep else f"{text[:keep]}... ({len(text):,} characters)"


def refuse_output_over_inputs(output: Path | None, inputs: list) -> None:
    """drgpu never modifies its inputs: not even --force may write the output over one."""
    if output is None:
        return
    from ..readers.ncu_csv import _sibling  # a CSV's auto-detected companions are inputs too

    inputs = [m for r in inputs if r is not None for m in _with_members(Path(r))]
    inputs = inputs + [_sibling(Path(r), sfx) for r in inputs for sfx in (".source.csv", ".ncu-rep")]
    for src in inputs:
        try:
            same = src is not None and Path(src).exists() and Path(output).exists() and Path(output).samefile(src)
        except OSError:
            same = False
        if same:
            raise OutputError(
                f"{output} is an input of this run ({src}); drgpu never overwrites its inputs",
                hint="choose another output file",
            )


def _with_members(path: Path) -> list[Path]:
    """An input, and when it is a folder, every report in it that the run may read (its
    ``.ncu-rep`` files and raw CSV exports: a folder stands for them)."""
    try:
        if path.is_dir():
            return [path, *path.glob("*.ncu-rep"), *path.glob("*.raw.csv")]
    except OSError:  # a folder we may not list: the reader says so
        pass
    return [path]


def progress_printer(label: str, quiet: bool):
    """A callback (done, total) that shows a rich progress bar on stderr for long work (five
    items or more); None when quiet or stderr is not a terminal."""
    if quiet or sys.stderr is None or not sys.stderr.isatty():  # None: standard error closed (2>&-)
        return None
    try:
        # A copy of the terminal's descriptor: while a report is read, descriptor 2 is sent
        # to a buffer to keep ncu_report's native log off the screen (readers.common).
        out: TextIO = os.fdopen(os.dup(sys.stderr.fileno()), "w")
    except (OSError, ValueError):
        out = sys.stderr
    state: dict = {}

    def cb(done: int, total: int) -> None:
        if total < 5:
            return
        if "bar" not in state:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(
                TextColumn(label),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=out, force_terminal=True),
                transient=False,
                auto_refresh=False,
            )
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(label, total=total)
        bar = state["bar"]
        bar.update(state["task"], completed=done, total=total, refresh=True)
        if done >= total:
            bar.stop()
            state.clear()

    return cb


def check_fold(fold: float) -> None:
    if not 0.0 <= fold <= 1.0:
        raise UsageError(
            f"--fold is a share between 0 and 1, got {fold:g}", hint="e.g. --fold 0.05 folds nodes below 5%"
        )
