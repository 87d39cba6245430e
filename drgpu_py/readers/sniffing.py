"""Input format sniffing: what a file is, from its first bytes, never from its name.

Contract: ``sniff(path)`` reads at most the head of the file (past leading blank lines and
up to the first line end of a wide CSV header), never blocks on a FIFO, and returns one of
``FORMATS``. An unreadable path raises :class:`~drgpu_py.errors.InputError`, an empty file
:class:`~drgpu_py.errors.ReportFormatError`; anything else is a name, ``"unknown"`` included.
The reader registry (:mod:`drgpu_py.readers.registry`) maps these names to readers.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, ReportFormatError
from ..io import open_input, require_input_file
from ..sass.container import NCU_MAGIC
from .csv_text import decode_csv_bytes

__all__ = [
    "COMPRESSED",
    "COMPRESSED_MAGIC",
    "DETAILS_PAGE",
    "FORMATS",
    "NCU_REP",
    "RAW_PAGE",
    "SOURCE_PAGE",
    "UNKNOWN",
    "sniff",
]

#: An Nsight Compute report (``NVR`` magic).
NCU_REP = "ncu-rep"
#: ncu's raw-page CSV export (``--page raw``): one row per launch.
RAW_PAGE = "csv-raw"
#: ncu's source-page CSV export (``--page source --print-source sass``): a raw page's companion.
SOURCE_PAGE = "csv-source"
#: ncu's details-page CSV export: no raw metrics.
DETAILS_PAGE = "csv-details"
#: A gzip, xz, zip, zstd or bzip2 file.
COMPRESSED = "compressed"
#: Anything else.
UNKNOWN = "unknown"
#: Every name ``sniff`` returns.
FORMATS = (NCU_REP, RAW_PAGE, SOURCE_PAGE, DETAILS_PAGE, COMPRESSED, UNKNOWN)

#: gzip, xz, zip, zstd, bzip2: a report someone compressed before handing it over.
COMPRESSED_MAGIC = (b"\x1f\x8b", b"\xfd7zXZ\x00", b"PK\x03\x04", b"\x28\xb5\x2f\xfd", b"BZh")


def sniff(p: Path) -> str:
    """Return 'ncu-rep', 'csv-raw', 'csv-source', 'csv-details', 'compressed' or 'unknown'.
    Raises InputError when the path cannot be read, ReportFormatError when it is empty."""
    require_input_file(p)
    try:
        with open_input(p) as fh:  # O_NONBLOCK + fstat: a path swapped for a FIFO never blocks
            head = _head(fh)
    except PermissionError as e:
        raise InputError(f"{p}: permission denied") from e
    except OSError as e:
        raise InputError(f"{p}: cannot read ({e.strerror})") from e
    if not head.strip():
        raise ReportFormatError(
            f"{p} is empty" + (" (blank lines only)" if head else " (0 bytes)"),
            hint="the export or copy may have failed; export or profile again",
        )
    if head.startswith(NCU_MAGIC):
        return NCU_REP
    if any(head.startswith(m) for m in COMPRESSED_MAGIC):
        return COMPRESSED
    return _csv_page(decode_csv_bytes(head).lstrip().split("\n", 1)[0])


def _head(fh) -> bytes:
    """The file's first bytes: past leading blank lines, and to the first line end of a
    raw page's header of 2,000+ columns (at most 1 MiB)."""
    head = fh.read(4096)
    while head and not head.strip():  # leading blank lines: look past them
        more = fh.read(1 << 16)
        if not more:
            break
        head = more.lstrip() or b" "
    while b"\n" not in head and not head.startswith(NCU_MAGIC) and len(head) < 1 << 20:
        more = fh.read(1 << 16)
        if not more:
            break
        head += more
    return head


def _csv_page(first: str) -> str:
    """Which page of an ncu CSV export a first line is, by its header."""
    if first.startswith('"Kernel Name",') or first.startswith("Kernel Name,"):
        return SOURCE_PAGE
    if '"Section Name"' in first and '"Metric Name"' in first:
        return DETAILS_PAGE
    if first.startswith('"ID"') or first.startswith("ID,"):
        return RAW_PAGE
    return RAW_PAGE if _reordered_raw_header(first) else UNKNOWN


def _reordered_raw_header(first: str) -> bool:
    """A raw page whose columns were reordered (or lost their ID): the reader says which
    identity columns are missing."""
    cells = {c.strip().strip('"') for c in first.split(",")}
    return "Kernel Name" in cells and ("ID" in cells or len(cells) > 5)
