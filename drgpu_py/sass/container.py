"""The framing of an ``.ncu-rep`` file, walked without ncu_report and without numpy or
pandas (``drgpu analyze`` checks it before it starts nvdisasm on the report's cubins, while
the analysis modules load): magic, u32 size + file header, then blocks of u32 size + block
header (protobuf; field 5 = payload size) + payload, ending exactly at EOF.

The readers (``readers.sniffing``, ``readers.open_report``) use these names to explain a load that
looks broken, and refuse a file whose framing ends in a zero-filled tail before ncu_report
reads it whole.
"""

from __future__ import annotations

import errno
import os
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "NCU_MAGIC",
    "RepWalk",
    "ends_in_zeros",
    "payload_size",
    "rep_blocks",
    "rep_framing_problem",
    "rep_walk",
]

NCU_MAGIC = b"NVR\x00"


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    x = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("varint runs past the end")
        c = buf[i]
        i += 1
        x |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return x, i


def payload_size(header: bytes) -> int:
    """Field 5 (varint) of a block header message: the size of the block's payload."""
    return _header_fields(header)[0]


def _header_fields(header: bytes) -> tuple[int, frozenset[int]]:
    """(payload size, the field numbers present) of a block header message."""
    i, size = 0, 0
    seen: set[int] = set()
    while i < len(header):
        key, i = _varint(header, i)
        field_no, wire = key >> 3, key & 7
        seen.add(field_no)
        if wire == 0:
            v, i = _varint(header, i)
            if field_no == 5:
                size = v
        elif wire == 2:
            n, i = _varint(header, i)
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"wire type {wire}")
    if i != len(header):
        raise ValueError("header overruns its size")
    return size, frozenset(seen)


def rep_framing_problem(path: Path) -> str | None:
    """Describe damage to an ``.ncu-rep``'s block framing, or None when it is intact.

    The layout (ncu 2023-2025): magic, u32 size + file header, then blocks of u32 size +
    block header (protobuf; field 5 = payload size) + payload, ending exactly at EOF. It is
    not a documented format, so callers use the answer to explain a load that already looks
    broken, or as a note, never to refuse a report ncu_report reads."""
    return rep_walk(path).problem


def rep_blocks(path: Path) -> tuple[int, str | None]:
    """(data blocks, problem) of ``rep_framing_problem``'s walk over the framing: the block
    count (ncu 2025.3 writes about ten per launch) sizes a read, never checks one."""
    w = rep_walk(path)
    return w.blocks, w.problem


@dataclass(frozen=True)
class RepWalk:
    """The walk over an ``.ncu-rep``'s framing: data blocks, the damage met (None: intact),
    where a zero-filled tail starts (None: there is none), where a block that is not
    one ncu writes starts (``foreign``: bytes appended to a report, see ``rep_walk``; None:
    there is none), and where a tail too short to hold a whole block header starts
    (``short_tail``: bytes appended, or a copy cut inside a block's size or header; None:
    the file ends with a whole header)."""

    blocks: int
    problem: str | None
    zero_tail: int | None = None
    foreign: int | None = None
    short_tail: int | None = None

    @property
    def refusable_at(self) -> int | None:
        """The offset from which the file's bytes are no block ncu writes (a zero-filled
        tail, a foreign block, a tail without a whole block header): the reader refuses the
        file, and ``truncate -s`` at this offset keeps the blocks before it. None: no such
        damage (a block cut inside its payload is left to ncu_report, which reads the
        launches before it)."""
        for at in (self.zero_tail, self.foreign, self.short_tail):
            if at is not None:
                return at
        return None


#: Bytes scanned per read while stepping over a run of zero words.
_ZERO_SCAN = 1 << 20


def _zero_run_end(fd: int, pos: int, size: int) -> int:
    """The first offset at or after ``pos`` holding a byte that is not zero (``size`` when
    zeros run to the end). Holes of a sparse file are skipped without reading them
    (SEEK_DATA), written zeros read 1 MiB at a time: memory stays flat and a 4 GB run takes
    seconds, where stepping over it as empty 4-byte blocks took hours. The descriptor's
    offset is left where it was (a buffered reader over it keeps its place)."""
    saved = os.lseek(fd, 0, os.SEEK_CUR)
    try:
        while pos < size:
            if hasattr(os, "SEEK_DATA"):
                try:
                    data = os.lseek(fd, pos, os.SEEK_DATA)
                except OSError as e:
                    if e.errno == errno.ENXIO:  # only a hole from here to the end
                        return size
                    data = pos  # a file system without SEEK_DATA: read
                if data > pos:
                    pos = min(data, size)
                    continue
            chunk = os.pread(fd, min(_ZERO_SCAN, size - pos), pos)
            if not chunk:
                return size  # the file shrank under us: zeros to its (new) end
            rest = chunk.lstrip(b"\0")
            if rest:
                return pos + len(chunk) - len(rest)
            pos += len(chunk)
        return size
    finally:
        os.lseek(fd, saved, os.SEEK_SET)


def _short_tail(blocks: int, pos: int, size: int, why: str) -> RepWalk:
    """The walk's answer for a file whose last bytes, from ``pos``, hold no whole block
    header. ncu writes a block whole, so this is bytes appended to a report (random bytes
    whose first word reads as a header size beyond the end) or a copy cut inside a block's
    size or header; ncu_report reads the blocks before it and ignores the rest without a
    word, so an analysis would pass the damage over."""
    return RepWalk(
        blocks,
        f"the file's last {size - pos:,} bytes, from byte {pos:,}, are no whole block ({why}; the file has "
        f"{size:,} bytes): bytes appended to a report, or a copy cut short",
        short_tail=pos,
    )


def rep_walk(path: Path) -> RepWalk:  # noqa: PLR0912 - one return per kind of damage the framing shows
    """Walk an ``.ncu-rep``'s framing (see ``rep_framing_problem``). A zero word where a
    block starts is an empty block: a run of them is stepped over at once, and a run that
    reaches the end of the file is a zero-filled tail (``RepWalk.zero_tail``), damage no
    report written by ncu has. Every block ncu writes has the same header fields (1, 2, 4,
    5 and 6 in ncu 2025; 3 in some): a block whose header lacks field 5 (its payload size,
    written even when 0) or more than one field all the blocks before it have is not a
    block of the report (``RepWalk.foreign``). Six appended bytes (``02 00 00 00 08 00``)
    frame as an empty block, which ncu_report skips without a word. A tail too short for a
    whole block header (``RepWalk.short_tail``: 4 random bytes appended read as a header
    size of gigabytes) is passed over by ncu_report as silently. A block whose header is
    whole but whose payload runs past the end is a report cut inside a launch: only the
    problem is set, and ncu_report reads the launches before it."""
    blocks = 0
    common: frozenset[int] | None = None  # the header fields every block so far has
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            if fh.read(4) != NCU_MAGIC:
                return RepWalk(blocks, "no Nsight Compute magic")
            pos = 4
            n = fh.read(4)
            if len(n) < 4:
                return RepWalk(blocks, f"the file ends inside its header ({size} bytes)")
            (hlen,) = struct.unpack("<I", n)
            pos += 4 + hlen
            if pos > size:
                return RepWalk(blocks, f"the file ends inside its header ({size} bytes)")
            fh.seek(pos)
            while pos < size:
                n = fh.read(4)
                if n == b"\0\0\0\0":  # zero words: empty blocks, or a zero-filled tail
                    end = _zero_run_end(fh.fileno(), pos, size)
                    if end >= size:
                        where = f"after block {blocks}" if blocks else "before any data block"
                        return RepWalk(
                            blocks,
                            f"the file ends in {size - pos:,} zero bytes from byte {pos:,} ({where}): "
                            "a zero-filled tail, as a copy or download that did not finish leaves",
                            zero_tail=pos,
                        )
                    pos += (end - pos) // 4 * 4
                    fh.seek(pos)
                    continue
                if len(n) < 4:
                    return _short_tail(blocks, pos, size, f"{size - pos} byte(s), less than a block's size word")
                if n == NCU_MAGIC:  # `cat a.ncu-rep b.ncu-rep > c.ncu-rep`: ncu_report reads neither
                    return RepWalk(
                        blocks,
                        f"a second report starts at byte {pos}: two reports concatenated "
                        f"(give them as separate files; drgpu merge combines reports)",
                    )
                (hlen,) = struct.unpack("<I", n)
                if pos + 4 + hlen > size:
                    return _short_tail(
                        blocks, pos, size, f"a header of {hlen:,} bytes would need {pos + 4 + hlen - size:,} more"
                    )
                try:
                    payload, fields = _header_fields(fh.read(hlen))
                except ValueError as e:
                    return RepWalk(blocks, f"block {blocks + 1} has an unreadable header ({e})")
                lacking = sorted((common or frozenset({5})) - fields)
                if 5 in lacking or len(lacking) > 1:
                    return RepWalk(
                        blocks,
                        f"block {blocks + 1} at byte {pos:,} is not a block ncu writes: its header "
                        + (
                            "has no payload size (field 5)"
                            if 5 in lacking
                            else f"lacks fields {', '.join(map(str, lacking))}, which every block before it has"
                        )
                        + f"; {size - pos:,} bytes from there to the end: bytes appended to a report, or a damaged block",
                        foreign=pos,
                    )
                common = fields if common is None else common & fields
                pos += 4 + hlen + payload
                if pos > size:
                    return RepWalk(
                        blocks, f"block {blocks + 1} needs {pos - size} bytes more than the file has ({size} bytes)"
                    )
                fh.seek(pos)
                blocks += 1
            return RepWalk(blocks, None if blocks else "the file holds no data block")
    except OSError as e:
        return RepWalk(blocks, f"cannot read it ({e.strerror})")


def ends_in_zeros(path: str | os.PathLike[str]) -> bool:
    """Whether the file's last four bytes are zeros (no report ncu writes ends so; a
    zero-filled tail does): read with one pread, nothing else."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        return size >= 8 and os.pread(fd, 4, size - 4) == b"\0\0\0\0"
    except OSError:
        return False
    finally:
        os.close(fd)
