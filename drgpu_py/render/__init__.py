"""Renderers: one module per output format, one interface.

Each renderer is a function ``render(analysis, options) -> str | bytes`` registered in
``RENDERERS`` under its format name with the file extensions it owns. ``infer_format``
maps an output file name to a format; ``render_to`` renders and writes atomically.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import UsageError
from ..io import atomic_write


@dataclass
class RenderOptions:
    fold_share: float = 0.02          # fold tree nodes whose subtree total is below this share
    max_lines: int = 3                # source lines shown per stall node
    top_findings: int = 5             # findings shown by the text renderer
    width: int = 120                  # text width
    color: bool = False
    top_kernels: int = 3              # trees shown for the busiest kernel groups (0: all)


@dataclass
class RendererSpec:
    name: str
    extensions: tuple[str, ...]
    render: Callable
    binary: bool = False


RENDERERS: dict[str, RendererSpec] = {}


def register(name: str, extensions: tuple[str, ...], binary: bool = False):
    def deco(fn):
        RENDERERS[name] = RendererSpec(name, extensions, fn, binary)
        return fn
    return deco


# Format -> the module that registers it: rendering one format imports only its module (the
# HTML renderer's jinja2 and pandas, the DOT renderer's graphviz, rich for text), not all.
_MODULES = {"csv": "csv_", "json": "json_", "text": "text", "dot": "dot", "svg": "dot", "png": "dot", "html": "html"}
_OPTIONAL = ("dot", "html")


def _load(module: str) -> None:
    try:
        __import__(f"{__name__}.{module}")
    except ImportError:
        if module not in _OPTIONAL:
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
    raise UsageError(f"cannot tell the output format from {Path(path).name!r}",
                     hint="use an extension such as " + ", ".join(sorted({e for s in RENDERERS.values() for e in s.extensions})) + " or give --format")


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
    return RENDERERS[fmt].render(analysis, options or RenderOptions())


def render_to(analysis, fmt: str, path: str | Path, force: bool = False, options: RenderOptions | None = None) -> Path:
    return atomic_write(path, render(analysis, fmt, options), force=force)
