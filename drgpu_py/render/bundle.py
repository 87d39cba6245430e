"""Write one analysis in every format into a folder (what ``drgpu profile`` leaves behind).

Contract: ``write_all(analysis, folder, stem, force=False, options=None) -> list[Path]``
writes ``STEM.json``, ``STEM.txt``, ``STEM.dot``, ``STEM.svg`` (only when Graphviz's ``dot``
is installed) and ``STEM.html`` into ``folder`` (which must exist), atomically, refusing to
overwrite without ``force``, and returns the paths written in that order. A missing ``dot``
is not an error here: the DOT source and the HTML outline still carry the tree.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import OutputError
from . import RenderOptions, render_to
from .dot import dot_available

FORMATS = (("json", ".json"), ("text", ".txt"), ("dot", ".dot"), ("svg", ".svg"), ("html", ".html"))


def write_all(
    analysis, folder: str | Path, stem: str, force: bool = False, options: RenderOptions | None = None
) -> list[Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise OutputError(f"output folder {folder} does not exist")
    if not stem or "/" in stem or "\\" in stem:
        raise OutputError(f"bad file stem {stem!r}", hint="give a plain file name without folders")
    options = options or RenderOptions()
    have_dot = dot_available()
    written = []
    for fmt, ext in FORMATS:
        if fmt == "svg" and not have_dot:
            continue
        written.append(render_to(analysis, fmt, folder / f"{stem}{ext}", force=force, options=options))
    return written
