"""Shared pieces of the commands: option checks (``--threshold``, ``--fold``, ``--fail-on``),
output guards, the progress bar, lazy module loading, and ``run_guarded``, which runs a
command's body and turns typed errors into one-line messages and exit codes (docs/errors.md).

Imported by every command module at start-up: it imports nothing beyond Typer and the error
types until a command runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Callable, List, Literal, Optional, TextIO

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
# Bounds and fixed sets of values are the options' types: a bad value is refused while the
# command line is parsed (exit 2, the message names the range or the choices), before any
# report is read. tests/unit/test_cli_choices.py keeps each set equal to what the library
# accepts (the renderers' registries, the sort keys, ncu's values).
Fold = Annotated[
    float,
    typer.Option(
        "--fold", min=0.0, max=1.0, help="Fold tree nodes whose subtree is below this share of stall cycles (0..1)."
    ),
]
HideBelow = Annotated[
    float,
    typer.Option(
        "--hide-below",
        min=1.0,
        help="Text and HTML: hide findings estimated below this speedup, and source lines at 0%, saying how many "
        "(JSON, CSV and SARIF keep all).",
    ),
]
ShowAll = Annotated[
    bool,
    typer.Option("--show-all", help="Text and HTML: show every finding and source line (no --hide-below)."),
]
Jobs = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        min=0,
        help="Worker processes for kernel groups and for reading several reports (0: one per core; 1: none).",
    ),
]
#: ``analyze``/``merge --format``: every analysis renderer (drgpu_py.render).
AnalysisFormat = Literal["text", "json", "csv", "sarif", "gcc", "dot", "svg", "png", "html"]
#: ``list --format`` (drgpu_py.render.list_) and ``diff --format`` (drgpu_py.render.diff).
ListFormat = Literal["text", "json", "csv"]
DiffFormat = Literal["text", "json", "html"]
#: ``list --sort`` (drgpu_py.pipeline.compare.SORT_KEYS).
SortKey = Literal["duration", "stall", "name"]
#: ``analyze --fail-on``: a finding severity and those above it.
FailOn = Literal["high", "medium"]
#: Formats written as bytes: only to a file (-o). SVG is text (XML): it may go to standard output.
BINARY_FORMATS = ("png",)


def standard_output_dash(value: Path | None) -> Path | None:
    """``-o -`` is standard output, as no ``-o`` is (the convention of most tools); the
    callback of every command's ``-o``. A file named ``-`` is written by a path that says
    more than its name (an absolute path ending in ``/-``; ``./-`` reads as ``-``)."""
    return None if value is not None and str(value) == "-" else value


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]


def _verbose(value: int) -> int:
    setup_logging(value)
    return value


Verbose = Annotated[
    int,
    typer.Option(
        "--verbose",
        "-v",
        count=True,
        callback=_verbose,
        help="Say what drgpu does on standard error (-v: steps and timings; -vv: details too).",
    ),
]

#: The handler ``setup_logging`` installed (one at a time: a second command in one process,
#: as under the test runner, replaces it).
_log_handler: list = []


def setup_logging(verbosity: int) -> None:
    """Log records of drgpu's modules (loggers under ``drgpu_py``) on standard error through
    rich's handler: INFO and up for ``-v``, DEBUG too for ``-vv``; nothing without. The
    library only emits records (no handler of its own), so an embedding program decides."""
    import logging

    logger = logging.getLogger("drgpu_py")
    for old in _log_handler:
        logger.removeHandler(old)
    _log_handler.clear()
    if verbosity <= 0:
        logger.setLevel(logging.NOTSET)
        return
    from rich.console import Console
    from rich.logging import RichHandler

    try:
        # A copy of the terminal's descriptor: while a report is read, descriptor 2 is sent to
        # a buffer to keep ncu_report's native log off the screen (readers.native).
        out: TextIO = os.fdopen(os.dup(sys.stderr.fileno()), "w")
    except (OSError, ValueError, AttributeError):
        out = sys.stderr
    handler = RichHandler(console=Console(file=out), show_path=verbosity > 1, markup=False, rich_tracebacks=False)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbosity > 1 else logging.INFO)
    _log_handler.append(handler)


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


def analysis_format(fmt: str | None, output: Path | None) -> str:
    """The format ``analyze``/``merge`` will write: ``--format``, else the one ``-o``'s
    extension names, else text. Checked before any report is read: an extension no
    renderer writes, or a binary format for standard output, is a usage error (exit 2)."""
    if fmt is None and output is not None:
        from ..render import infer_format

        fmt = infer_format(output)
    fmt = fmt or "text"
    if fmt in BINARY_FORMATS and output is None:
        raise UsageError(f"format {fmt} is binary", hint="give an output file with -o")
    return fmt


def check_kernel(kernel: str | None):
    """The ``--kernel`` selector parsed and, when it is a name pattern, compiled: an invalid
    one is a usage error before any report is read. None without one (no import then)."""
    if not kernel:
        return None
    from ..readers import KernelSelector

    selector = KernelSelector.parse(kernel)
    if selector is not None and not selector.by_id:
        selector.regex  # noqa: B018 - compiled now: a pattern Python cannot compile is a usage error
    return selector


def human_size(n: int) -> str:
    """A file size as people read it: 812 bytes, 14.2 kB, 1.5 MB, 2.1 GB (powers of 1,000)."""
    if n < 1000:
        return f"{n} byte{'s' if n != 1 else ''}"
    value, unit = n / 1000, "kB"
    for bigger in ("MB", "GB"):
        if value < 999.95:  # would print as 1000.0 of this unit: the next one
            break
        value, unit = value / 1000, bigger
    return f"{value:.1f} {unit}"


def wrote(output: Path | None, quiet: bool) -> None:
    """``drgpu: wrote PATH (SIZE)`` on standard error once an output file is complete (not
    with ``--quiet``, nor for standard output): where the result went, and that it is there."""
    if output is None or quiet or sys.stderr is None:
        return
    try:
        size = human_size(Path(output).stat().st_size)
    except OSError:  # written, then moved away by someone else: say where it went without a size
        size = "size unknown"
    typer.echo(f"drgpu: wrote {one_line(str(output))} ({size})", err=True)


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


def show_error(e: DrgpuError) -> None:
    """``drgpu: KIND: MESSAGE`` and its hint on standard error (docs/errors.md)."""
    # Plain writes: one message per line, never wrapped to the terminal width.
    typer.echo(f"drgpu: {e.kind}: {one_line(e.message)}", err=True)
    if e.hint:
        typer.echo(f"  hint: {one_line(e.hint)}", err=True)


def _log_option_sources() -> None:
    """With -v: each option whose value came from the environment or a pyproject.toml, and
    from which (the precedence is in docs/config.md)."""
    import logging

    log = logging.getLogger("drgpu_py.cli")
    if not log.isEnabledFor(logging.INFO):
        return
    try:
        from typer._click.globals import get_current_context  # typer's own click (typer is pinned)
    except ImportError:
        return
    ctx = get_current_context(silent=True)
    if ctx is None:
        return
    for p in ctx.command.params:
        source = ctx.get_parameter_source(p.name)
        name = getattr(source, "name", "")
        if name == "ENVIRONMENT":
            log.info("%s = %r from the environment (%s)", p.opts[0], ctx.params.get(p.name), p.envvar)
        elif name == "DEFAULT_MAP":
            log.info("%s = %r from pyproject.toml [tool.drgpu.%s]", p.opts[0], ctx.params.get(p.name), ctx.info_name)


@contextlib.contextmanager
def hints_on_stderr() -> Iterator[None]:
    """While it lasts, :class:`~drgpu_py.errors.SelectionHint` warnings (what a ``--kernel``
    pattern left out) are ``drgpu: hint: MESSAGE`` lines on stderr, each text once (``diff``
    selects on both sides); other warnings are shown as Python shows them."""
    import warnings

    from ..errors import SelectionHint

    shown: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("always", SelectionHint)
        other = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if not issubclass(category, SelectionHint):
                return other(message, category, filename, lineno, file, line)
            text = one_line(str(message))
            if text not in shown:
                shown.add(text)
                typer.echo(f"drgpu: hint: {text}", err=True)
            return None

        warnings.showwarning = show
        yield


#: The BLAS thread settings of the libraries numpy may be built with (OpenBLAS in the wheels).
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS",)


def load_numpy_one_blas_thread() -> None:
    """Import numpy (pandas' base) with its BLAS on one thread, unless the user's environment
    sets a thread count. OpenBLAS starts a thread per core when numpy loads (0.1 s of CPU on 2
    cores, 1.5 s on a 16-core host), and drgpu calls no BLAS routine (no matrix product or
    linear algebra), so no result can depend on it. The environment is restored afterwards:
    no program drgpu starts later inherits the setting. For the commands that run no program
    of the user's (``profile`` loads numpy in a thread while ncu runs the application)."""
    if "numpy" in sys.modules:
        return
    unset = [name for name in _BLAS_THREADS if name not in os.environ]
    for name in unset:
        os.environ[name] = "1"
    try:
        import numpy  # noqa: F401 - loaded here, for its BLAS threads; used by pandas and the analysis
    except ImportError:  # the analysis' own import says what is missing
        pass
    finally:
        for name in unset:
            os.environ.pop(name, None)


def run_guarded(fn: Callable[[], int | None]) -> None:
    """Run a command body; turn drgpu errors into a message and an exit code."""
    _log_option_sources()
    try:
        try:
            _Command.started = True
            with hints_on_stderr():
                code = fn() or 0
        finally:
            _Command.finished = True
    except DrgpuError as e:
        show_error(e)
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
    from ..readers import companion_paths  # a CSV's auto-detected companions are inputs too

    inputs = [m for r in inputs if r is not None for m in _with_members(Path(r))]
    inputs = inputs + [c for r in inputs for c in companion_paths(Path(r))]
    for src in inputs:
        if _same_file(output, src):
            raise OutputError(
                f"{output} is an input of this run ({src}); drgpu never overwrites its inputs",
                hint="choose another output file",
            )


def _same_file(output: Path, src) -> bool:
    """Whether ``output`` is the existing file ``src`` (an unreadable one is not)."""
    try:
        return src is not None and Path(src).exists() and Path(output).exists() and Path(output).samefile(src)
    except OSError:
        return False


def _with_members(path: Path) -> list[Path]:
    """An input, and when it is a folder, every report in it that the run may read (its
    ``.ncu-rep`` files and raw CSV exports: a folder stands for them)."""
    try:
        if path.is_dir():
            return [path, *path.glob("*.ncu-rep"), *path.glob("*.raw.csv")]
    except OSError:  # a folder we may not list: the reader says so
        pass
    return [path]


class SlowWork:
    """A spinner with the elapsed time on the terminal's standard error for work that runs past
    ``after`` seconds (one large function's analysis shows no per-kernel bar, and looked hung):
    shown only when standard error is a terminal, not quiet, and rich can be imported; gone
    (transient) when the work ends or a progress bar takes the line (``stop``). A context
    manager; ``after``'s timer runs on a daemon thread, so a short analysis never shows it."""

    def __init__(self, label: str, quiet: bool, after: float = 2.0) -> None:
        self.label, self.after = label, after
        self._bar: Any = None  # rich.progress.Progress once shown (rich is imported on use)
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._live = not quiet and sys.stderr is not None and sys.stderr.isatty()

    def __enter__(self) -> "SlowWork":
        if self._live:
            timer = threading.Timer(self.after, self._start)
            timer.daemon = True
            timer.start()
            self._timer = timer
        return self

    def _start(self) -> None:
        with self._lock:
            if not self._live:
                return
            try:
                from rich.console import Console
                from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

                out: TextIO = os.fdopen(os.dup(sys.stderr.fileno()), "w")  # see progress_printer
                bar = Progress(
                    SpinnerColumn(),
                    TextColumn(self.label),
                    TimeElapsedColumn(),
                    console=Console(file=out, force_terminal=True),
                    transient=True,
                )
                bar.add_task(self.label, total=None)
                bar.start()
            except (ImportError, OSError, ValueError):
                self._live = False
                return
            self._bar = bar

    def stop(self) -> None:
        with self._lock:
            self._live = False
            if self._timer is not None:
                self._timer.cancel()
            if self._bar is not None:
                self._bar.stop()
                self._bar = None

    def __exit__(self, *exc) -> None:
        self.stop()


def progress_printer(label: str, quiet: bool, before: Callable[[], None] | None = None):
    """A callback (done, total) that shows a rich progress bar on stderr for long work (five
    items or more); None when quiet or stderr is not a terminal. ``before``: called as the bar
    first shows (a SlowWork spinner's ``stop``, so that one line shows at a time)."""
    if quiet or sys.stderr is None or not sys.stderr.isatty():  # None: standard error closed (2>&-)
        return None
    try:
        # A copy of the terminal's descriptor: while a report is read, descriptor 2 is sent
        # to a buffer to keep ncu_report's native log off the screen (readers.native).
        out: TextIO = os.fdopen(os.dup(sys.stderr.fileno()), "w")
    except (OSError, ValueError):
        out = sys.stderr
    state: dict = {}

    def cb(done: int, total: int) -> None:
        if total < 5:
            return
        if "bar" not in state:
            if before is not None:
                before()
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
