"""The text of an ncu CSV export, read 1 MiB at a time, and its rows.

Contract: ``text_pieces(path, notes)`` yields the decoded text in pieces cut after a line end
(undecodable bytes as U+FFFD, with a note); ``rows(pieces, origin, stop)`` parses them with
the csv module, up to the first row ``stop`` is true of. A file that would be loaded whole
only to be refused is refused (ReportFormatError, exit 4) before it is held: a zero-filled
tail (a sparse or unfinished copy; holes found with SEEK_HOLE, never read), a zero-filled
MiB, a line longer than any export has. Bounds and messages: docs/errors.md.
"""

from __future__ import annotations

import csv
import errno
import io
import os
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..errors import ReportFormatError
from ..io import open_input, path_error, require_input_file
from .common import decode_csv_bytes

#: The longest cell the csv module may read: its default (128 KiB) is shorter than some
#: template-heavy kernel names; a cell past this is a malformed file.
_FIELD_LIMIT = 1 << 26
#: The longest line (bytes between two line ends) read: four cells of ``_FIELD_LIMIT``. A
#: longer one is no ncu export (a file of text without line ends), refused before it is held.
_LINE_LIMIT = 4 * _FIELD_LIMIT
#: Bytes read (and decoded) at a time: a whole piece of zeros is a zero-filled block.
_PIECE = 1 << 20
#: Zero bytes at the end of a file that make it a zero-filled tail: a UTF-32 export's last
#: line end has three.
_ZERO_TAIL_MIN = 8


def _zero_tail_start(fd: int, size: int) -> int:
    """The offset where the run of zero bytes that ends the file starts (``size``: it ends
    in another byte). A sparse file's trailing hole is found with SEEK_DATA/SEEK_HOLE, not
    read; written zeros are read back 1 MiB at a time, so memory stays flat."""
    end = size
    saved = os.lseek(fd, 0, os.SEEK_CUR)
    try:
        if hasattr(os, "SEEK_HOLE"):
            try:
                pos = data_end = 0
                while pos < size:
                    pos = os.lseek(fd, os.lseek(fd, pos, os.SEEK_DATA), os.SEEK_HOLE)
                    data_end = pos
                end = min(data_end, size)
            except OSError as e:
                end = data_end if e.errno == errno.ENXIO else size  # ENXIO: only a hole after pos
    finally:
        os.lseek(fd, saved, os.SEEK_SET)
    while end > 0:
        n = min(_PIECE, end)
        rest = os.pread(fd, n, end - n).rstrip(b"\0")
        if rest:
            return end - n + len(rest)
        end -= n
    return 0


def _zero_error(p: Path, start: int, n: int, tail: bool) -> ReportFormatError:
    where = "ends in" if tail else "holds"
    return ReportFormatError(
        f"{p} is truncated or corrupt: the file {where} {n:,} zero bytes from byte {start:,} "
        "(a zero-filled or sparse block, as a copy or download that did not finish leaves): not text ncu writes",
        hint=(f"the text before them may be whole: cp FILE copy.csv; truncate -s {start} copy.csv; " if tail else "")
        + "else export again: ncu -i R --csv --page raw --print-units base",
    )


def text_pieces(p: Path, notes: list[str] | None = None) -> Iterator[str]:
    """The text of a CSV export, decoded 1 MiB at a time and cut after a line end (a byte
    no UTF-8 sequence holds). Undecodable bytes are shown as U+FFFD, with a note. Damage
    that would otherwise be loaded whole is refused (exit 4) before a byte of it is held: a
    zero-filled tail (a sparse or unfinished copy: found without reading its holes), a
    zero-filled MiB inside the file, a line of over ``_LINE_LIMIT`` bytes."""
    require_input_file(p, "a CSV export")
    with open_input(p, "a CSV export") as fh:  # O_NONBLOCK + fstat: a path swapped for a FIFO never blocks
        try:
            size = os.fstat(fh.fileno()).st_size
            tail = _zero_tail_start(fh.fileno(), size)
            if size - tail >= _ZERO_TAIL_MIN:
                raise _zero_error(p, tail, size - tail, tail=True)
            head = fh.read(4)
            if head[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16/32 with a byte-order mark (an editor's re-save)
                yield decode_csv_bytes(head + fh.read())
                return
            carry, first, noted = bytearray(head), True, False  # a line's bytes, appended in place
            while True:
                piece = fh.read(_PIECE)
                if piece and not piece.strip(b"\0") and len(piece) == _PIECE:
                    raise _zero_error(p, fh.tell() - len(piece), len(piece), tail=False)
                end = piece.rfind(b"\n")
                cut = len(carry) + end + 1 if end >= 0 else 0 if piece else len(carry) + len(piece)
                carry += piece
                if piece and not cut:  # no line end yet
                    if len(carry) > _LINE_LIMIT:
                        raise ReportFormatError(
                            f"{p} is not an ncu CSV export: a line of over {_LINE_LIMIT >> 20} MiB "
                            f"(from byte {fh.tell() - len(carry):,}; ncu's cells are read up to "
                            f"{_FIELD_LIMIT >> 20} MiB)",
                            hint="export again: ncu -i R --csv --page raw --print-units base",
                        )
                    continue
                whole = carry[:cut]
                del carry[:cut]
                try:
                    text = whole.decode("utf-8")
                except UnicodeDecodeError:
                    text = whole.decode("utf-8", errors="replace")
                    if notes is not None and not noted:
                        notes.append(f"{p.name} is not valid UTF-8: undecodable bytes shown as \ufffd")
                    noted = True
                if first:
                    text, first = text.lstrip("\ufeff"), False
                if text:
                    yield text
                if not piece:
                    return
        except OSError as e:
            raise path_error(p, e) from e


def read_text(p: Path, notes: list[str] | None = None) -> str:
    """The whole text of a CSV export (``text_pieces`` joined)."""
    return "".join(text_pieces(p, notes))


def _lines(pieces: Iterable[str]) -> Iterator[str]:
    """The lines of the pieces, each cut at ``\n`` only (as a file opened with newline=''
    gives them to the csv module: a ``\x1c`` or ``\u2028`` in a kernel name is no line end)."""
    for text in pieces:
        yield from io.StringIO(text)


def rows(pieces: Iterable[str], origin: Path, stop: Callable[[list[str]], bool] | None = None) -> list[list[str]]:
    """The rows of a CSV text, read as it is decoded; up to the first row ``stop`` is true
    of (that row included): a reader that refuses such a row needs none of the rest."""
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    rows: list[list[str]] = []
    try:
        for row in csv.reader(_lines(pieces)):
            rows.append(row)
            if stop is not None and stop(row):
                break
    except csv.Error as e:
        raise ReportFormatError(f"{origin}: malformed CSV ({e})") from e
    return rows


def ragged() -> Callable[[list[str]], bool]:
    """``rows``' stop for the raw page: a row with text whose cell count differs from the
    header's (the first row with text), which ``_read`` refuses as it would at the end."""
    width: list[int] = []

    def stop(row: list[str]) -> bool:
        if not any(c.strip() for c in row):
            return False
        if not width:
            width.append(len(row))
            return False
        return len(row) != width[0]

    return stop
