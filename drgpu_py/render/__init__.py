"""Renderers: one module per output format, one interface.

Each renderer is a function ``render(document, options) -> str | bytes`` registered under
its format name with the file extensions it owns, for one kind of document: ``analysis``
(an :class:`~drgpu_py.analysis.Analysis`; ``RENDERERS``), ``list`` (the rows of ``drgpu
list``; render/list_.py) or ``diff`` (``drgpu diff``'s dict; render/diff.py), each kind in
its own table of ``REGISTRIES``. ``infer_format`` maps an output file name to an analysis
format; ``render_to`` renders and writes atomically.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..errors import UsageError
from ..io import atomic_write, document_text
from .units import format_number as format_number, format_value as format_value

if TYPE_CHECKING:
    from .located import PathMapping


@dataclass
class RenderOptions:
    fold_share: float = 0.02  # fold tree nodes whose subtree total is below this share
    top_findings: int = 5  # findings shown by the text renderer
    width: int = field(default_factory=lambda: text_width())  # text width
    top_kernels: int = 3  # trees shown for the busiest kernel groups (0: all)
    # Text and HTML: findings estimated below hide_below and source lines at 0% are left out
    # and counted (render/quiet.py, Worth); show_all shows them. JSON keeps everything.
    hide_below: float = 1.02
    show_all: bool = False
    # SARIF, gcc and CSV: source paths rewritten (--source-root, --path-map; render/located.py)
    path_map: tuple["PathMapping", ...] = ()


def text_width() -> int:
    """Width of text output: COLUMNS when set (also when piped or written to a file), else
    the terminal's width on a terminal, else 120."""
    import shutil

    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) >= 20:
        return int(cols)
    if sys.stdout is not None and sys.stdout.isatty():
        return max(20, shutil.get_terminal_size((120, 24)).columns)
    return 120


@dataclass
class RendererSpec:
    name: str
    extensions: tuple[str, ...]
    render: Callable
    binary: bool = False


RENDERERS: dict[str, RendererSpec] = {}
#: Document kind -> its renderers by format name.
REGISTRIES: dict[str, dict[str, RendererSpec]] = {"analysis": RENDERERS, "list": {}, "diff": {}}


def register(name: str, extensions: tuple[str, ...], binary: bool = False, kind: str = "analysis"):
    def deco(fn):
        REGISTRIES[kind][name] = RendererSpec(name, extensions, fn, binary)
        return fn

    return deco


def format_for(path: str | Path, kind: str) -> str | None:
    """The format of ``kind`` whose extensions end ``path``'s name, or None."""
    name = str(path).lower()
    return next((s.name for s in REGISTRIES[kind].values() if any(name.endswith(e) for e in s.extensions)), None)


# Format -> the module that registers it: rendering one format imports only its module (the
# HTML renderer's jinja2 and pandas, the DOT renderer's graphviz, rich for text), not all.
_MODULES = {
    "csv": "csv_",
    "json": "json_",
    "sarif": "sarif",
    "gcc": "gcc",
    "text": "text",
    "dot": "dot",
    "svg": "dot",
    "png": "dot",
    "html": "html",
}
#: Third-party packages whose absence (a stripped install) leaves a format unknown. Any other
#: ImportError, such as a bug in a renderer module, surfaces as itself, not as "unknown format".
OPTIONAL_PACKAGES = ("graphviz", "jinja2", "markupsafe")


def missing_optional(e: ImportError) -> bool:
    """Whether ``e`` says an optional third-party package is not installed."""
    return isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] in OPTIONAL_PACKAGES


def _load(module: str) -> None:
    try:
        __import__(f"{__name__}.{module}")
    except ImportError as e:
        if not missing_optional(e):
            raise


def _load_all() -> None:
    for module in dict.fromkeys(_MODULES.values()):
        _load(module)


def infer_format(path: str | Path) -> str:
    name = str(path).lower()
    for spec in RENDERERS.values():
        if any(name.endswith(ext) for ext in spec.extensions):
            return spec.name
    _load_all()
    for spec in RENDERERS.values():
        if any(name.endswith(ext) for ext in spec.extensions):
            return spec.name
    raise UsageError(
        f"cannot tell the output format from {Path(path).name!r}",
        hint="use an extension such as "
        + ", ".join(sorted({e for s in RENDERERS.values() for e in s.extensions}))
        + " or give --format",
    )


def formats() -> list[str]:
    _load_all()
    return sorted(RENDERERS)


def render(analysis, fmt: str, options: RenderOptions | None = None):
    if fmt in _MODULES:
        _load(_MODULES[fmt])
    if fmt not in RENDERERS:
        _load_all()
    if fmt not in RENDERERS:
        raise UsageError(f"unknown format {fmt!r}", hint="one of: " + ", ".join(formats()))
    out = RENDERERS[fmt].render(analysis, options or RenderOptions())
    # A page holds report text in markup, attributes and script JSON: no raw control or
    # bidi character reaches the file, wherever the template put it.
    return document_text(out) if fmt == "html" and isinstance(out, str) else out


def render_to(analysis, fmt: str, path: str | Path, force: bool = False, options: RenderOptions | None = None) -> Path:
    return atomic_write(path, render(analysis, fmt, options), force=force)
