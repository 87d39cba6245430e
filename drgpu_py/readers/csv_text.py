"""The text of an ncu CSV export, read 1 MiB at a time, and its rows.

Contract: ``text_pieces(path, notes)`` yields the decoded text in pieces cut after a line end
(undecodable bytes as U+FFFD, with a note); ``rows(pieces, origin, stop, width)`` parses them
with the csv module, up to the first row ``stop`` is true of (``RawStop``, ``SourceStop``:
the first row that cannot belong to that page), a run of blank rows held as one. A file that would be loaded whole
only to be refused is refused (ReportFormatError, exit 4) before it is held: a zero-filled
tail (a sparse or unfinished copy; holes found with SEEK_HOLE, never read), a zero-filled
MiB, a line longer than any export has, a line of more cells than its header allows. Bounds and messages: docs/errors.md.
"""

from __future__ import annotations

import csv
import errno
import math
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..errors import ReportFormatError
from ..io import open_input, path_error, require_input_file

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
                with memoryview(carry)[:cut] as whole:  # decoded in place: no copy of the bytes
                    try:
                        text = str(whole, "utf-8")
                    except UnicodeDecodeError:
                        text = str(whole, "utf-8", "replace")
                        if notes is not None and not noted:
                            notes.append(f"{p.name} is not valid UTF-8: undecodable bytes shown as \ufffd")
                        noted = True
                del carry[:cut]
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


#: A line this long is counted (``_cells_over``) before the csv module splits it; ncu's
#: lines are shorter unless a cell is huge. What a line may hold before its row's width is
#: known (the header): more columns than any export has.
_LONG_LINE = 1 << 20
_MAX_CELLS = 1 << 16
#: Lines without text (empty, spaces, commas), one after another.
_BLANK_LINES = re.compile(r"[ ,\t\r\n]*\n")
_QUOTED = re.compile(r'[^"]*(?:""[^"]*)*"')  # the rest of a quoted cell, to its closing quote


def _cells_over(line: str, limit: int, quoted: bool) -> bool:
    """Whether the csv module (its default dialect) would split ``line`` into over ``limit``
    cells; ``quoted``: the line goes on a quoted cell begun on an earlier line (its row's
    earlier cells are not counted). Counted in C (str.count), with one step a quoted cell
    and at most ``limit`` steps: a line of 256 MiB of commas is counted, never split."""
    cells, pos, n = 1, 0, len(line)
    while pos < n and cells <= limit:
        if quoted or line.startswith('"', pos):
            m = _QUOTED.match(line, pos + (not quoted))
            if m is None:  # the cell goes on to a later line
                return False
            quoted, pos = False, m.end()
            j = line.find(",", pos)  # text after the closing quote stays in the cell
            if j < 0:
                return False
            cells, pos = cells + 1, j + 1
            continue
        j = line.find(',"', pos)  # every comma before a quoted cell ends an unquoted one
        if j < 0:
            return cells + line.count(",", pos) > limit
        cells, pos = cells + line.count(",", pos, j) + 1, j + 1
    return cells > limit


def rows(
    pieces: Iterable[str],
    origin: Path,
    stop: Callable[[list[str]], bool] | None = None,
    width: Callable[[], int] | None = None,
) -> list[list[str]]:
    """The rows of a CSV text, read as it is decoded; up to the first row ``stop`` is true
    of (that row included): a reader that refuses such a row needs none of the rest. A run
    of blank rows (empty, spaces or commas only) is kept as its first row (readers skip
    them: a flood of them would be held at 8 bytes and more a cell). ``width``: the most
    cells a row may have (a reader's header so far); a line of over 1 MiB that would be
    split into more is refused before it is (exit 4)."""
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    given = ended = 0  # lines given to the csv module; lines it had when it gave its last row

    def lines() -> Iterator[str]:
        nonlocal given
        blank = False
        for text in pieces:
            i, n = 0, len(text)
            while i < n:
                fresh = given == ended  # the line starts a row
                if fresh and text[i] in " ,\t\r\n":
                    m = _BLANK_LINES.match(text, i)
                    if m is not None:  # a run of blank lines: the first is given, the rest skipped
                        if not blank:
                            blank, given = True, given + 1
                            yield text[i : text.index("\n", i) + 1]
                        i = m.end()
                        continue
                # Cut at \n only, as a file opened with newline='' gives lines to the csv
                # module (a \x1c or \u2028 in a kernel name is no line end); slices, where
                # io.StringIO held a copy of 4 bytes a character.
                j = text.find("\n", i)
                line = text[i:] if j < 0 else text[i : j + 1]
                i = n if j < 0 else j + 1
                blank = False
                if width is not None and len(line) > _LONG_LINE:
                    w = width()
                    if _cells_over(line, w, quoted=not fresh):
                        raise ReportFormatError(
                            f"{origin} is not an ncu CSV export: a row has over {w:,} cells "
                            f"(the most its header allows), on a line of {len(line):,} characters",
                            hint="the CSV may be truncated or edited: export again with "
                            "ncu -i R --csv --page raw --print-units base",
                        )
                given += 1
                yield line

    out: list[list[str]] = []
    try:
        for row in csv.reader(lines()):
            ended = given
            out.append(row)
            if stop is not None and stop(row):
                break
    except csv.Error as e:
        raise ReportFormatError(f"{origin}: malformed CSV ({e})") from e
    return out


def _is_number(cell: str) -> bool:
    try:
        return math.isfinite(float(cell.replace(",", "")))
    except ValueError:
        return False


class RawStop:
    """``rows``' stop for the raw page, and its ``width``: stops at a header without the
    identity columns, and at the first row with text that cannot be a launch, which
    ``_read`` refuses as it would at the end: a cell count other than the header's (the
    first row with text), or ``junk``. Junk of the header's width is refused at its first
    row, not held to the end of a huge file."""

    def __init__(self) -> None:
        self.header: list[str] | None = None
        self.id_col = -1

    def width(self) -> int:
        return len(self.header) if self.header is not None else _MAX_CELLS

    def junk(self, row: list[str]) -> bool:
        """A row of the header's width that is no launch, no repeated header or units row:
        its ID is text (not empty, not a number, not ``ID``) and no cell holds a number.
        (An ID of text alone is read as launch 0, as before.)"""
        cell = row[self.id_col].strip()
        if not cell or cell == "ID" or _is_number(cell):
            return False
        return not any(_is_number(c) for c in row if c.strip())

    def __call__(self, row: list[str]) -> bool:
        if not any(c.strip() for c in row):
            return False
        if self.header is None:
            self.header = row
            if "ID" not in row or "Kernel Name" not in row:
                return True
            self.id_col = row.index("ID")
            return False
        return len(row) != len(self.header) or self.junk(row)


class SourceStop:
    """``rows``' stop for the source page, and its ``width``: a block is a ``Kernel Name``
    row, its header (the row after it, whatever it holds) and instruction rows. Stops at
    the first row with text that is no instruction row: a cell count other than the header's
    without an address (hex) in its Address cell, or the header's count with neither an
    address as ncu writes it (0x...) nor a number in any cell. Rows cut short, or with an
    unreadable address or n/a counters, are read (and skipped) as before; junk lines are
    refused at the first of them, not held to the end of a huge file."""

    def __init__(self) -> None:
        self.header: list[str] | None = None
        self.address = -1
        self.widest = 0
        self.mark = False  # the row before was a Kernel Name row
        self.stopped: list[str] | None = None  # the row it stopped at

    def width(self) -> int:
        return self.widest or _MAX_CELLS

    def __call__(self, row: list[str]) -> bool:
        if self.mark:
            self.header, self.mark = row, False
            self.address = row.index("Address") if "Address" in row else -1
            self.widest = max(self.widest, len(row))
            return False
        if row and row[0] == "Kernel Name":
            self.mark = True
            return False
        if self.header is None or not any(c.strip() for c in row):
            return False
        a = self.address
        addr = row[a].strip() if 0 <= a < len(row) else ""
        if len(row) != len(self.header):
            junk = not _is_hex(addr)
        else:  # of the header's width: junk when it has no address as ncu writes it and no number
            junk = not (addr[:2] in ("0x", "0X") and _is_hex(addr)) and not any(_is_number(c) for c in row)
        if junk:
            self.stopped = row
        return junk


def _is_hex(cell: str) -> bool:
    try:
        int(cell, 16)
    except ValueError:
        return False
    return True


def decode_csv_bytes(raw: bytes) -> str:
    """The text of CSV bytes: UTF-16 or UTF-32 when a byte-order mark says so (a re-save by
    an editor), else UTF-8 with undecodable bytes shown as U+FFFD; without the mark."""
    import codecs

    for bom, enc in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            # The head of a file may end inside a character: decode what is whole.
            return codecs.getincrementaldecoder(enc)(errors="replace").decode(raw).lstrip("\ufeff")
    return raw.decode("utf-8", errors="replace").lstrip("\ufeff")
