"""The readers, one per input format, behind one protocol and one registry.

Contract: ``sniff`` (:mod:`.sniffing`) names a file's format from its content; ``REGISTRY``
maps every name it returns to a :class:`Reader`, so that nothing else branches on those
names: ``reader_for(path)`` is the reader of a file. A format drgpu cannot analyze (a
source- or details-page export, a compressed file inside a compressed file, anything
unknown) has a :class:`Refusal`, whose ``open`` raises
:class:`~drgpu_py.errors.ReportFormatError` with the hint that fixes it. Every reader returns
a :class:`~drgpu_py.profile.Profile` with one ``KernelProfile`` per launch; damage is refused
or noted, never papered over.

The steps of a read, each a method of the protocol:

- ``start(path, kernel, jobs, progress)``: optional early work begun before the caller loads
  the analysis (the ``.ncu-rep`` reader starts ncu_report and nvdisasm in a child), an object
  with ``close()`` to pass to ``open`` as the request's ``sass``, or None;
- ``open(path, request)``: the whole profile (metrics, per-instruction tables, notes);
- ``launches(path, kernel)``: the launches only (ids, names, grid, block, duration), for
  ``drgpu list``.

A new format: docs/architecture.md, "Add a reader".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import ReportFormatError, UsageError
from ..profile import Profile
from .rep_open import StartedRead, read_rep_checked, start_read
from .sections import note_missing_sections
from .selection import KernelSelector
from .sniffing import COMPRESSED, DETAILS_PAGE, FORMATS, NCU_REP, RAW_PAGE, SOURCE_PAGE, UNKNOWN, sniff

__all__ = ["REGISTRY", "NcuRepReader", "RawCsvReader", "ReadRequest", "Reader", "Refusal", "reader_for"]


@dataclass(frozen=True)
class ReadRequest:
    """What ``open_report`` was asked, as a reader's ``open`` gets it. ``source_csv`` and
    ``line_report``: a raw CSV's companions (given, or found beside it: a reader with
    ``companions`` only); ``kernel``: the selector (a reader may skip launches it cannot
    pick); ``sass``: what ``start`` returned, or a ``sass.cubin.SassSource``; ``jobs``:
    processes that may read parts at once; ``nested``: the file came out of a compressed one."""

    source_csv: Path | None = None
    line_report: Path | None = None
    progress: Any = None
    kernel: KernelSelector | None = None
    sass: Any = None
    jobs: int = 1
    nested: bool = False


class Reader(Protocol):
    """One input format's reader (see the module's contract)."""

    @property
    def format(self) -> str:
        """The name ``sniff`` gives the format."""
        ...

    @property
    def companions(self) -> bool:
        """Whether the format has companions (``--source-csv``, ``--line-report``, found beside it)."""
        ...

    def start(self, path: Path, kernel: KernelSelector | None, jobs: int, progress: Any) -> Any | None:
        """Early work on ``path`` to pass to ``open`` as ``ReadRequest.sass``, or None."""
        ...

    def open(self, path: Path, request: ReadRequest) -> Profile:
        """The profile of ``path``."""
        ...

    def launches(self, path: Path, kernel: KernelSelector | None) -> Profile:
        """The launches of ``path`` without their metrics, SASS or source."""
        ...


class NcuRepReader:
    """``.ncu-rep``: ncu_report in child processes (:mod:`.rep_open`, :mod:`.ncu_rep`)."""

    format = NCU_REP
    companions = False

    def start(self, path: Path, kernel: KernelSelector | None, jobs: int, progress: Any) -> Any | None:
        """The read started in a child (``start_read``), which starts nvdisasm on the
        report's cubins; where the read is not one child's (read in parts, or in this
        process), nvdisasm started on them here (``sass.cubin.SassSource``). None for a
        report whose framing ends in zeros (the reader refuses it: no scan of gigabytes of
        zeros for cubins first)."""
        from ..sass.container import ends_in_zeros, rep_walk

        if ends_in_zeros(path) and rep_walk(path).zero_tail is not None:
            return None
        started = start_read(path, kernel=kernel, jobs=jobs, progress=progress)
        if started is not None:
            return started
        from ..sass.cubin import SassSource, cubins_in_report, max_cubins
        from ..sass.early import take

        return take(path) or SassSource.start(cubins_in_report(path, limit=max_cubins()))

    def open(self, path: Path, request: ReadRequest) -> Profile:
        if request.source_csv is not None:
            raise UsageError("--source-csv applies to CSV input, not to an .ncu-rep")
        kernel = request.kernel
        keep_id = kernel.id_filter() if kernel else None
        return note_missing_sections(
            read_rep_checked(path, request.progress, keep_id=keep_id, sass=request.sass, jobs=request.jobs)
        )

    def launches(self, path: Path, kernel: KernelSelector | None) -> Profile:
        return read_rep_checked(path, keep_id=kernel.id_filter() if kernel else None, launches_only=True)


class RawCsvReader:
    """ncu's raw-page CSV export, with its source-page export and line report
    (:mod:`.ncu_csv`; pandas loads with it)."""

    format = RAW_PAGE
    companions = True

    def start(self, path: Path, kernel: KernelSelector | None, jobs: int, progress: Any) -> Any | None:
        return None

    def open(self, path: Path, request: ReadRequest) -> Profile:
        from .ncu_csv import read_ncu_csv

        return note_missing_sections(
            read_ncu_csv(path, source_csv=request.source_csv, line_report=request.line_report, kernel=request.kernel)
        )

    def launches(self, path: Path, kernel: KernelSelector | None) -> Profile:
        from .ncu_csv import read_ncu_csv

        return read_ncu_csv(path, kernel=kernel, launches_only=True)


@dataclass(frozen=True)
class Refusal:
    """A format that is no report drgpu reads: ``open`` and ``launches`` raise
    ReportFormatError (``{path}`` in the texts is the file; ``nested_message``, where
    given, is the message for a file that came out of a compressed one)."""

    format: str
    message: str
    hint: str | None = None
    nested_message: str | None = None
    companions = False

    def start(self, path: Path, kernel: KernelSelector | None, jobs: int, progress: Any) -> Any | None:
        return None

    def open(self, path: Path, request: ReadRequest) -> Profile:
        text = self.nested_message if request.nested and self.nested_message else self.message
        raise ReportFormatError(text.format(path=path), hint=self.hint)

    def launches(self, path: Path, kernel: KernelSelector | None) -> Profile:
        return self.open(path, ReadRequest(kernel=kernel))


#: The reader of each format ``sniff`` names.
REGISTRY: dict[str, Reader] = {
    NCU_REP: NcuRepReader(),
    RAW_PAGE: RawCsvReader(),
    COMPRESSED: Refusal(
        COMPRESSED,
        "{path} is a compressed file, not a report",
        hint="decompress it first (unxz, gunzip, bunzip2, unzip, zstd -d) and pass the .ncu-rep or .csv inside",
        nested_message="{path} is a compressed file inside a compressed file, not a report",
    ),
    SOURCE_PAGE: Refusal(
        SOURCE_PAGE,
        "{path} is a source-page CSV export (per-instruction data only)",
        hint="pass the raw-page export (ncu -i R --csv --page raw --print-units base) and give this file with --source-csv",
    ),
    DETAILS_PAGE: Refusal(
        DETAILS_PAGE,
        "{path} is a details-page CSV export, which lacks the raw metrics drgpu needs",
        hint="export with: ncu -i REPORT --csv --page raw --print-units base",
    ),
    UNKNOWN: Refusal(UNKNOWN, "{path} is neither an Nsight Compute report (.ncu-rep) nor an ncu CSV export"),
}
assert set(REGISTRY) == set(FORMATS), "every format sniff names has a reader"


def reader_for(path: Path) -> Reader:
    """The reader of the file at ``path`` by its content (``sniff``; its errors pass through)."""
    return REGISTRY[sniff(path)]


def takes_started(reader: Reader, sass: Any, path: Path, kernel: KernelSelector | None, jobs: int) -> bool:
    """Whether ``sass`` (a ``StartedRead``) is the read ``reader`` makes of ``path``."""
    return isinstance(sass, StartedRead) and isinstance(reader, NcuRepReader) and sass.reads(path, kernel, jobs)
