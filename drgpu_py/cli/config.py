"""Defaults of the command-line options from outside the command line.

Contract: every option of every command may take its default from, in this order of
precedence (the first that gives a value wins):

1. the command line;
2. the environment variable ``DRGPU_<COMMAND>_<OPTION>`` (``DRGPU_ANALYZE_FORMAT=json``,
   ``DRGPU_LIST_SORT=duration``, ``DRGPU_ANALYZE_FAIL_ON=high``: the command and the long
   option name upper-cased, dashes as underscores; a flag takes 1/0, true/false);
3. the table ``[tool.drgpu.<command>]`` of the nearest ``pyproject.toml`` (the working
   folder's, else its parent's, and so on up), keys named as the long options
   (``format = "json"``, ``fail-on = "high"``, ``threshold = ["sol_pct=70"]``); relative
   paths are relative to that file's folder;
4. drgpu's built-in defaults.

``config_defaults`` reads and checks the pyproject table (an unknown command, an unknown
option or a value the option refuses is a DataFileError naming the file and key, exit 8);
the CLI framework applies the environment and the defaults while it parses the command
line, with each option's own checks (ranges, choices). Arguments (the reports) are never
taken from either. docs/config.md documents the same.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, get_args

from ..errors import DataFileError

log = logging.getLogger(__name__)

ENV_PREFIX = "DRGPU"
#: Options that are never defaults from outside: they act at once instead of setting a value.
NOT_CONFIGURABLE = frozenset({"help", "version", "install_completion", "show_completion"})


def option_key(param) -> str | None:
    """The name an option goes by outside the command line: its longest ``--`` name without
    the dashes (``--fail-on`` -> ``fail-on``); None for an argument or a non-configurable one."""
    if getattr(param, "param_type_name", None) != "option" or param.name in NOT_CONFIGURABLE:
        return None
    longs = [o for o in param.opts if o.startswith("--")]
    return max(longs, key=len)[2:] if longs else None


def env_name(command: str, key: str) -> str:
    """``DRGPU_<COMMAND>_<OPTION>``: the environment variable of an option of ``command``."""
    return f"{ENV_PREFIX}_{command}_{key}".upper().replace("-", "_")


def find_pyproject(start: Path | None = None) -> Path | None:
    """The nearest ``pyproject.toml``: in ``start`` (the working folder), else in the
    nearest folder above it that has one; None when none has."""
    here = (start or Path.cwd()).absolute()
    for folder in (here, *here.parents):
        cand = folder / "pyproject.toml"
        if cand.is_file():
            return cand
    return None


def read_tool_table(pyproject: Path) -> dict[str, Any]:
    """``[tool.drgpu]`` of ``pyproject`` (empty when it has none); a file TOML cannot read
    is a DataFileError."""
    import tomllib

    try:
        with open(pyproject, "rb") as fh:
            doc = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise DataFileError(f"{pyproject}: not valid TOML: {e}") from e
    except OSError as e:
        raise DataFileError(f"{pyproject}: cannot read ({e.strerror or e})") from e
    table = doc.get("tool", {}).get("drgpu", {})
    if not isinstance(table, dict):
        raise DataFileError(f"{pyproject}: [tool.drgpu] is not a table")
    return table


def config_defaults(commands: dict[str, Any], ctx, start: Path | None = None) -> tuple[dict[str, dict], Path | None]:
    """({command name: {parameter name: value}}, the pyproject.toml read) for the CLI
    framework's defaults, from ``[tool.drgpu.<command>]`` of the nearest pyproject.toml.
    ``commands``: the commands by name (their options say which keys exist and check the
    values, as on the command line)."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        log.debug("no pyproject.toml in %s or above: built-in defaults", (start or Path.cwd()).absolute())
        return {}, None
    table = read_tool_table(pyproject)
    if not table:
        log.debug("%s has no [tool.drgpu]: built-in defaults", pyproject)
        return {}, pyproject
    defaults: dict[str, dict] = {}
    for command, values in table.items():
        where = f"{pyproject}: [tool.drgpu.{command}]"
        if command not in commands:
            raise DataFileError(
                f"{pyproject}: [tool.drgpu] has a table {command!r}, which is no drgpu command",
                hint="tables are named after commands: " + ", ".join(sorted(commands)),
            )
        if not isinstance(values, dict):
            raise DataFileError(f"{where} is not a table of options")
        defaults[command] = _command_defaults(command, values, commands[command], ctx, pyproject, where)
        log.info("defaults from %s: %s", where, ", ".join(f"{k} = {v!r}" for k, v in values.items()))
    return defaults, pyproject


def _command_defaults(command: str, values: dict, cmd, ctx, pyproject: Path, where: str) -> dict:
    """{parameter name: value} of one command's table, each key an option of the command and
    each value checked as on the command line (paths relative to the file's folder)."""
    by_key = {k: p for p in cmd.params if (k := option_key(p)) is not None}
    out = {}
    for key, value in values.items():
        param = by_key.get(key) or by_key.get(key.replace("_", "-"))
        if param is None:
            raise DataFileError(
                f"{where}: no option --{key}",
                hint=f"options of drgpu {command}: " + ", ".join(f"--{k}" for k in sorted(by_key)),
            )
        value = _relative_paths(param, value, pyproject.parent)
        _check_value(param, value, ctx, f"{where} {key}")
        out[param.name] = value
    return out


def _relative_paths(param, value, folder: Path):
    """A path option's value from the file (one path, or a list of them for a repeatable
    option), relative to the file's folder."""
    desc = getattr(param, "type_descriptor", None)
    if desc is None or not (getattr(desc, "is_path", False) or Path in get_args(desc.annotation)):
        return value
    if isinstance(value, list):
        return [str(folder / os.path.expanduser(str(v))) for v in value]
    return str(folder / os.path.expanduser(str(value))) if isinstance(value, str) else value


def _check_value(param, value, ctx, where: str) -> None:
    """The option's own check of ``value`` (its type, range and choices), as on the command
    line; a value it refuses is a DataFileError naming where it came from."""
    if param.multiple and not isinstance(value, list):
        raise DataFileError(f"{where}: expected a list (the option is repeatable), got {value!r}")
    try:
        param.get_runtime_param().coerce(value, param=param, ctx=ctx)
    except Exception as e:  # noqa: BLE001 - the framework's BadParameter (and its conversions' errors): the message is what matters
        message = (getattr(e, "message", None) or str(e)).replace("Value error, ", "")  # the type check's prefix
        raise DataFileError(f"{where}: {message}") from None
