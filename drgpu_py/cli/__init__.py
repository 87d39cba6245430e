"""Command-line interface (Typer). Thin: each command parses its options, calls the library
and maps typed errors to one-line messages and documented exit codes (README "Exit codes").
Set DRGPU_DEBUG=1 to see tracebacks of internal errors.

Composition: the commands are plain functions in one module per command group
(:mod:`.analyze`, :mod:`.profile`, :mod:`.compare`), registered on ``app`` below in the order
``drgpu --help`` lists them. Those modules import only Typer and :mod:`.options` at start-up;
what a command needs (pandas, the analysis, the renderers, ncu) is imported when it runs.

Every option may take its default from a ``DRGPU_<COMMAND>_<OPTION>`` environment variable
or from ``[tool.drgpu.<command>]`` of the nearest pyproject.toml (:mod:`.config`, which
states the precedence). Shell completion: ``drgpu --install-completion``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys

import typer

from ..version import __version__
from ..errors import DrgpuError, Terminated, UsageError
from . import analyze, compare, profile
from .config import config_defaults, env_name, option_key
from .options import command_finished, command_started, note_signal, show_error


def _plain_argument(p) -> None:
    if p.metavar is None:
        # typer adds '...' to a list argument in the usage line: REPORT...
        p.metavar = p.name.upper().removesuffix("S") if p.nargs != 1 else p.name.upper()
    p.display_type_rich = lambda ctx=None: None  # the metavar says it


class _PlainHelpGroup(typer.core.TyperGroup):
    """Help text with plain metavars: 'REPORTS...', '--top N', '--kernel TEXT', an option with
    a short fixed set of values as its choices ('--fail-on high|medium'; a longer set is named,
    '--format FORMAT', and its values listed in the help), never typer's '<list[Path]>' type
    labels; and each option's environment variable, ``DRGPU_<COMMAND>_<OPTION>``
    (:mod:`.config`). Applied to each command when it is looked up (typer builds the
    commands, also under the test runner, through this class; a second lookup changes nothing)."""

    _CHOICES_IN_METAVAR = 11  # high|medium; longer sets would widen the options column
    _LABELS = {"int": "N", "float": "NUMBER", "Path": "PATH", "list[Path]": "PATH", "str": "TEXT", "list[str]": "TEXT"}

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        for p in getattr(cmd, "params", ()):
            if p.param_type_name == "argument":
                _plain_argument(p)
            else:
                self._plain_option(cmd_name, p)
        return cmd

    def _plain_option(self, cmd_name, p) -> None:
        key = option_key(p)
        if key is not None and p.envvar is None:
            p.envvar = env_name(cmd_name, key)
            p.show_envvar = False  # one rule for all (drgpu --help, docs/config.md), not a line per option
        desc = getattr(p, "type_descriptor", None)
        if desc is not None and desc.is_ranged:
            # The help text says the range in words ("(0..1)", "0: all"), not '[0.0<=x<=1.0]'.
            p._get_number_range_help_str = lambda: ""
        if p.metavar is None:
            self._plain_metavar(p, key, desc)

    def _plain_metavar(self, p, key, desc) -> None:
        """An option's short set of choices, or a plain label of its type; flags have none."""
        if desc is not None and desc.is_choice and desc.choices:
            self._choice_metavar(p, key, [str(c) for c in desc.choices])
        elif not getattr(p, "is_flag", False) and p.name not in ("help", "version"):
            self._type_metavar(p)

    def _choice_metavar(self, p, key, choices: list[str]) -> None:
        if len("|".join(choices)) <= self._CHOICES_IN_METAVAR:
            p.metavar = "|".join(choices)
            return
        # A long list would widen the whole options column: named, listed in the help.
        p.metavar = (key or p.name).upper().replace("-", "_")
        p.help = f"{p.help or ''} One of: {', '.join(choices)}.".strip()

    def _type_metavar(self, p) -> None:
        try:
            label = p.bare_type()
        except Exception:  # noqa: BLE001 - a typer without it keeps its own labels
            return
        p.metavar = self._LABELS.get(label, "TEXT")

    def invoke(self, ctx):
        """A command's options refused while its command line is parsed (an unknown option,
        a value outside an option's range or choices, a missing argument) get drgpu's own
        one-line message (docs/errors.md: ``drgpu: usage: ...``, exit 2), not the framework's
        usage block; no report has been read."""
        from typer._click.exceptions import UsageError as ParseError  # typer's own click (typer is pinned)

        try:
            return super().invoke(ctx)
        except ParseError as e:
            if e.ctx is None or e.ctx.parent is None:
                raise  # the root's own options: the framework's message
            # "Value error, " is the type check's prefix, which says nothing to a user.
            message = e.format_message().replace("Value error, ", "")
            param = getattr(e, "param", None)
            source = e.ctx.get_parameter_source(param.name) if param is not None and param.name else None
            if getattr(source, "name", "") == "ENVIRONMENT":
                message += f" (the value of the environment variable {param.envvar})"
            show_error(UsageError(message, hint=f"{e.ctx.command_path} -h lists its options and their values"))
            raise typer.Exit(2) from None


app = typer.Typer(
    add_completion=True,
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


@app.callback(
    epilog="Option defaults: DRGPU_<COMMAND>_<OPTION> environment variables (DRGPU_ANALYZE_FORMAT=json), "
    "then [tool.drgpu.<command>] in the nearest pyproject.toml; the command line wins over both."
)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version_option, is_eager=True, help="Print drgpu's version and exit."
    ),
) -> None:
    """drgpu: top-down GPU performance advice from Nsight Compute reports."""
    if ctx.invoked_subcommand is None or ctx.resilient_parsing:  # completion parses without running
        return
    group = ctx.command
    assert isinstance(group, typer.core.TyperGroup)  # the app's (cls=_PlainHelpGroup)
    commands = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    try:
        defaults, _ = config_defaults(commands, ctx)
    except DrgpuError as e:
        show_error(e)
        raise typer.Exit(e.exit_code) from None
    if defaults:
        # The commands' contexts take their part of it (the framework's default_map).
        ctx.default_map = {**(ctx.default_map or {}), **defaults}


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
    from ..sass.early import start

    start(sys.argv[1:])  # nvdisasm on the report `drgpu analyze R` names, before the options are parsed
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
    try:
        app()
    finally:
        # The process ends now. Its objects go to the collector's permanent generation, so
        # that the interpreter's exit does not walk them all again for cycles (0.07 s after a
        # one-kernel analysis, a tenth of its run): they are freed with the process. Exit
        # handlers, stream flushes and temporary-file removal run as usual.
        gc.freeze()
