"""Compressed inputs: a report or CSV export compressed with xz, gzip or bzip2 is read through
a decompressed copy in a temporary folder (the Python standard library decompresses it).

Contract: ``decompressed(path)`` is a context manager that yields ``path`` itself when the
file is not compressed, else the path of its decompressed copy, named as the file without
its ``.xz``/``.gz``/``.bz2`` suffix; the copy and its folder are removed when the block ends,
however it ends (an error, Ctrl-C, SIGTERM). ``compressed_twin(path)`` finds ``PATH.xz``
(``.gz``, ``.bz2``) beside a path that does not exist.

Decompression is bounded, so a decompression bomb (a few KB standing for terabytes of
zeros) cannot fill the disk or run for minutes: the copy may grow to
``max(FLOOR_BYTES, MAX_RATIO x the compressed size)`` and never past the free space of the
temporary folder's disk less ``DISK_RESERVE_BYTES``; past either the copy is removed and
the input refused (ReportFormatError, exit 4; OutputError, exit 6, for the disk), with the
command that decompresses it by hand. Other compressions (zip, zstd) are refused with
that command too. It is streamed 1 MiB at a time: memory stays flat.
"""

from __future__ import annotations

import bz2
import contextlib
import errno
import gzip
import io
import logging
import lzma
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import OutputError, ReportFormatError
from ..io import open_input

log = logging.getLogger(__name__)

#: Compressions read here: name -> (magic bytes, file suffix, the command that decompresses by hand).
READ = {
    "xz": (b"\xfd7zXZ\x00", ".xz", "xz -dk"),
    "gzip": (b"\x1f\x8b", ".gz", "gunzip -k"),
    "bzip2": (b"BZh", ".bz2", "bunzip2 -k"),
}
#: Compressions recognised but not read: name -> (magic bytes, the command that unpacks them).
NOT_READ = {
    "zip": (b"PK\x03\x04", "unzip"),
    "zstd": (b"\x28\xb5\x2f\xfd", "zstd -d"),
}
#: What the copy may grow to whatever the ratio: a real report of a few launches.
FLOOR_BYTES = 1 << 30
#: Decompressed bytes allowed per compressed byte beyond the floor. Reports and exports
#: compress 10-110x with xz (sample_reports/, benchmarks/data/); a bomb of zeros 1,000-7,000x.
MAX_RATIO = 1000
#: Free space left on the temporary folder's disk, always.
DISK_RESERVE_BYTES = 1 << 30
_CHUNK = 1 << 20


def compression_of(path: str | Path) -> str | None:
    """The compression of the file at ``path`` by its first bytes (a name of ``READ`` or
    ``NOT_READ``), or None. The file is opened as inputs are (``io.open_input``)."""
    with open_input(path) as fh:
        head = fh.read(8)
    for name, (magic, *_rest) in (*READ.items(), *NOT_READ.items()):
        if head.startswith(magic):
            return name
    return None


def compressed_twin(path: str | Path) -> Path | None:
    """``PATH.xz`` (else ``.gz``, ``.bz2``) when ``path`` does not exist and it does."""
    p = Path(path)
    try:
        if p.exists():
            return None
        for _magic, suffix, _cmd in READ.values():
            twin = p.with_name(p.name + suffix)
            if twin.is_file():
                return twin
    except (OSError, ValueError):  # a name the system refuses: the reader says why
        return None
    return None


def inner_name(path: Path) -> str:
    """The name of the decompressed copy: ``path``'s without its compression suffix."""
    for _magic, suffix, _cmd in READ.values():
        if path.name.lower().endswith(suffix) and len(path.name) > len(suffix):
            return path.name[: -len(suffix)]
    return path.name


def size_limit(compressed_bytes: int, free_bytes: int) -> tuple[int, str]:
    """(the most bytes the copy may have, what sets it: 'ratio' or 'disk')."""
    by_ratio = max(FLOOR_BYTES, MAX_RATIO * compressed_bytes)
    by_disk = max(0, free_bytes - DISK_RESERVE_BYTES)
    return (by_ratio, "ratio") if by_ratio <= by_disk else (by_disk, "disk")


def by_hand(path: Path, kind: str) -> str:
    """The command that decompresses ``path`` by hand, beside itself."""
    cmd = READ[kind][2] if kind in READ else NOT_READ[kind][1]
    return f"{cmd} {path}"


@contextlib.contextmanager
def decompressed(path: str | Path, what: str = "a report") -> Iterator[Path]:
    """``path`` itself when it is not compressed (or not a regular file: the reader says
    why), else a decompressed copy in a temporary folder, removed when the block ends."""
    p = Path(path)
    try:
        kind = compression_of(p)
    except Exception:  # noqa: BLE001 - missing, a folder, unreadable: the reader's own checks name it
        kind = None
    if kind is None:
        yield p
        return
    if kind in NOT_READ:
        raise ReportFormatError(
            f"{p} is a {kind} file, not {what}",
            hint=f"unpack it first ({by_hand(p, kind)}) and pass the .ncu-rep or .csv inside",
        )
    folder = tempfile.mkdtemp(prefix="drgpu-unpacked-")
    try:
        out = Path(folder) / inner_name(p)
        _decompress(p, out, kind)
        yield out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _decompress(src: Path, out: Path, kind: str) -> None:
    compressed = src.stat().st_size
    free = shutil.disk_usage(out.parent).free
    limit, bound = size_limit(compressed, free)
    openers: dict[str, Callable[[BinaryIO], io.BufferedIOBase]] = {
        "xz": lzma.LZMAFile,
        "gzip": _gzip_file,
        "bzip2": bz2.BZ2File,
    }
    opener = openers[kind]
    t0 = time.monotonic()
    written = 0
    try:
        with open_input(src) as raw, opener(raw) as stream, open(out, "wb") as dst:
            while True:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                written += len(chunk)
                if written > limit:
                    raise _too_big(src, kind, limit, bound, out.parent)
                dst.write(chunk)
    except (lzma.LZMAError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ReportFormatError(
            f"{src}: the {kind} data is truncated or corrupt ({e})",
            hint=f"copy it again; `{by_hand(src, kind)}` says the same if it is damaged",
        ) from e
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise OutputError(
                f"cannot decompress {src} into {out.parent}: {e.strerror}",
                hint=f"set TMPDIR to a folder with room, or decompress it by hand ({by_hand(src, kind)})",
            ) from e
        if e.filename is None and e.errno is None:  # bz2's "Invalid data stream" and kin
            raise ReportFormatError(
                f"{src}: the {kind} data is truncated or corrupt ({e})", hint="copy it again"
            ) from e
        raise
    log.info(
        "decompressed %s (%s, %d bytes) to a temporary copy of %d bytes in %.2f s",
        src,
        kind,
        compressed,
        written,
        time.monotonic() - t0,
    )


def _gzip_file(fh: BinaryIO) -> io.BufferedIOBase:
    return gzip.GzipFile(fileobj=fh, mode="rb")


def _too_big(src: Path, kind: str, limit: int, bound: str, folder: Path) -> Exception:
    gib = f"{limit / (1 << 30):.1f} GiB" if limit >= 1 << 30 else f"{limit >> 20} MiB"
    if bound == "disk":
        return OutputError(
            f"cannot decompress {src}: it is larger than the {gib} free in {folder} "
            f"(drgpu keeps {DISK_RESERVE_BYTES >> 30} GiB of the disk free)",
            hint=f"set TMPDIR to a folder with room, or decompress it by hand ({by_hand(src, kind)})",
        )
    return ReportFormatError(
        f"{src} decompresses to over {gib} ({MAX_RATIO:,} times its size): refused as a decompression bomb",
        hint=f"if it is a real report, decompress it by hand ({by_hand(src, kind)}) and pass the file inside",
    )
