"""Command-line interface (Typer). Thin: each command parses its options, calls the library
and maps typed errors to one-line messages and documented exit codes (README "Exit codes").
Set DRGPU_DEBUG=1 to see tracebacks of internal errors.

Composition: the commands are plain functions in one module per command group
(:mod:`.analyze`, :mod:`.profile`, :mod:`.compare`), registered on ``app`` below in the order
``drgpu --help`` lists them. Those modules import only Typer and :mod:`.options` at start-up;
what a command needs (pandas, the analysis, the renderers, ncu) is imported when it runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

import typer

from ..version import __version__
from ..errors import Terminated
from . import analyze, compare, profile
from .options import command_finished, command_started, note_signal


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


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=_PlainHelpGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="drgpu: top-down GPU performance advice from Nsight Compute reports.",
)


def _version_option(value: bool) -> None:
    if value:
        typer.echo(f"drgpu {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version_option, is_eager=True, help="Print drgpu's version and exit."
    ),
) -> None:
    """drgpu: top-down GPU performance advice from Nsight Compute reports."""


def version() -> None:
    """Print drgpu's version."""
    typer.echo(f"drgpu {__version__}")


app.command()(analyze.analyze)
app.command("thresholds")(analyze.thresholds_cmd)
app.command()(version)
app.command(context_settings={"help_option_names": ["-h", "--help"]})(profile.profile)
app.command("metrics")(profile.metrics_cmd)
app.command("list")(compare.list_cmd)
app.command()(compare.diff)
app.command()(compare.merge)


def _on_signal(signum, frame) -> None:
    if command_finished() or not command_started():
        # The body has ended (its outputs complete or absent) and drgpu is on its way out
        # (the message, the exit code, the interpreter's shutdown): an exception raised now
        # would escape the command's handling (the CLI framework turns it into a silent
        # 130), so exit now with the documented 128 + the signal, and say so.
        # Before the body starts (the CLI's modules loading, the options parsed) nothing is
        # written yet: the same exit, else the CLI framework's silent 130 for any signal.
        when = " as the command finished" if command_finished() else ""
        with contextlib.suppress(OSError):
            os.write(2, f"drgpu: interrupted ({signal.Signals(signum).name}){when}\n".encode())
        os._exit(128 + signum)
    note_signal(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def install_signal_handlers() -> None:
    """SIGTERM (kill, a batch scheduler) and SIGHUP (the terminal closed) stop drgpu as Ctrl-C
    does: temporary files removed, ncu's process group stopped, the run record kept. Ctrl-C
    raises KeyboardInterrupt as Python's own handler does (unless it is ignored, as in a
    background job). Once the command's body has ended, any of them exits at once with
    128 + the signal and a message (``_on_signal``)."""
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is None or (sig == signal.SIGINT and signal.getsignal(sig) is not signal.default_int_handler):
            continue
        with contextlib.suppress(ValueError, OSError):  # not the main thread (embedded use)
            signal.signal(sig, _on_signal)


def main() -> None:
    install_signal_handlers()
    # Kernel names and paths are arbitrary text: a terminal or pipe that cannot encode a
    # character gets '?' rather than an exception in the middle of the output.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a text file's; a replaced stream may lack it
        try:
            if reconfigure is not None:
                reconfigure(errors="replace")
        except ValueError:
            pass
    app()
