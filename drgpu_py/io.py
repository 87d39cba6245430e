"""Safe output: atomic writes (temporary file in the target folder, then rename), refusing to
overwrite without ``force``, and clear errors for unwritable paths. drgpu never modifies or
deletes its inputs (reports)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import OutputError


def check_writable(path: str | Path, force: bool) -> Path:
    p = Path(path)
    if p.exists() and p.is_dir():
        raise OutputError(f"{p} is a directory", hint="give a file name")
    if p.exists() and not force:
        raise OutputError(f"{p} exists", hint="use --force to overwrite")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"cannot write to {parent}: permission denied")
    return p


def atomic_write(path: str | Path, content: str | bytes, force: bool = False) -> Path:
    p = check_writable(path, force)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=str(p.parent if str(p.parent) else "."))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, p)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(f"cannot write {p}: {e.strerror}") from e
    return p
