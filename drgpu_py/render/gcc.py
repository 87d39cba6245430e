"""gcc-style problems renderer (``-f gcc``): one line per finding and kernel group in the form
compilers print diagnostics, for editors' problem matchers (VS Code's ``$gcc``, Emacs'
compilation mode, Vim's quickfix with the default errorformat).

Contract: ``FILE:LINE: LEVEL: MESSAGE [FINDING-ID]`` for a finding on a source line (its first
line; the others follow as ``note:`` lines, ``blamed N%``), ``REPORT: LEVEL: MESSAGE
[FINDING-ID]`` for one without (a library kernel, a launch setting), in the analysis' order;
LEVEL is ``error``, ``warning`` or ``note``, set as SARIF's (located.py: severity and the share
of the profiled GPU time the fix would save). Paths as the report names them, or rewritten by
``--source-root``/``--path-map`` (relative paths then open from the source tree's root). One
line per problem: control characters in names and advice become spaces."""

from __future__ import annotations

import os
import re

from . import register
from .located import map_path, problems

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def _one_line(text: str) -> str:
    return " ".join(_CONTROL.sub(" ", text).split())


def _report_path(report: str, mappings) -> str:
    """The report as a mapping names it (it is a path of this machine: made absolute first),
    else as it was given (relative to the working folder, where the editor runs drgpu)."""
    mapped, index = map_path(os.path.abspath(report), mappings)
    return mapped if index is not None else report


@register("gcc", ())
def render_gcc(analysis, options) -> str:
    mappings = tuple(options.path_map)
    out = []
    for p in problems(analysis):
        tag = f"[{p.finding.id}]"
        message = _one_line(p.message())
        if not p.lines:
            out.append(f"{_one_line(_report_path(p.report, mappings))}: {p.level}: {message} {tag}")
            continue
        first, *rest = p.lines
        out.append(
            f"{_one_line(map_path(str(first['file']), mappings)[0])}:{int(first['line'])}: {p.level}: {message} {tag}"
        )
        for line in rest:
            share = 100.0 * float(line.get("share", 0.0))
            path = _one_line(map_path(str(line["file"]), mappings)[0])
            out.append(f"{path}:{int(line['line'])}: note: blamed {share:.0f}% of {tag[1:-1]}'s stall samples {tag}")
    return "\n".join(out) + "\n" if out else ""
