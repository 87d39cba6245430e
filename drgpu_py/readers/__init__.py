"""Readers: one per input format, all returning a :class:`~drgpu_py.profile.Profile`.

``open_report(path)`` tells formats apart by content, not by name: an ``.ncu-rep`` starts
with ncu's ``NVR`` magic; a CSV is recognised by its header (raw page, source page, or the
details page, which is refused with a hint). For a raw-page CSV ``X.raw.csv`` the per-
instruction export ``X.source.csv`` beside it is picked up automatically. A file compressed
with xz, gzip or bzip2 is read through a bounded, temporary decompressed copy
(:mod:`.compressed`); zip and zstd files are refused with the command that unpacks them.

Damage is reported, never papered over: an empty, truncated or corrupt input
raises :class:`ReportFormatError` with one line saying what is wrong. Launches a damaged
``.ncu-rep`` lost are dropped with a profile note when others survive; a kernel whose
report lacks whole sections gets a note naming them (the analysis is then partial).

Each format's reader is a :class:`~drgpu_py.readers.registry.Reader` in ``REGISTRY``
(:mod:`.registry`): ``open_report`` and ``list_launches`` go through it, and ``prefetch``
starts a read before the caller loads the analysis.
"""

from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path

from ..errors import DrgpuError, NoKernelsError
from ..profile import Profile, signature
from .companions import companion_paths, find_companions
from .registry import REGISTRY, ReadRequest, Reader, Refusal, reader_for, takes_started
from .rep_open import StartedRead, start_read
from .selection import KernelSelector, library_names, missed_library_kernels, warn_missed_library_kernels
from .sniffing import sniff

__all__ = [
    "REGISTRY",
    "KernelSelector",
    "ReadRequest",
    "Reader",
    "StartedRead",
    "companion_paths",
    "list_launches",
    "open_report",
    "prefetch",
    "reader_for",
    "select_kernels",
    "sniff",
    "start_read",
]

log = logging.getLogger(__name__)


def open_report(
    path: str | Path,
    *,
    source_csv: str | Path | None = None,
    line_report: str | Path | None = None,
    progress=None,
    kernel: KernelSelector | str | None = None,
    sass=None,
    jobs: int = 1,
) -> Profile:
    """Read a report. ``source_csv``: the per-instruction CSV for a raw CSV (else looked
    for beside it). ``line_report``: an ``.ncu-rep`` whose line table annotates a CSV.
    ``kernel``: the ``--kernel`` selector (text is parsed here); both readers may skip launches it cannot pick
    (ids and id ranges; the CSV reader also name patterns, its names being plain cells), so
    the result may hold fewer launches than the report. ``select_kernels`` still applies it
    and reports no match: a selector that matches nothing reads every launch. ``sass``: a
    ``sass.cubin.SassSource`` started on the profiled code's cubins; an ``.ncu-rep``'s
    launches whose function it lists take their SASS from it (same text, read faster); or a
    ``StartedRead`` of this very report (``start_read``), whose profile is then taken.
    ``jobs``: processes that may read parts of a large ``.ncu-rep`` at once (``read_parts``);
    the profile is the same.

    A report, export or companion compressed with xz, gzip or bzip2 (``R.ncu-rep.xz``) is
    read through a temporary decompressed copy (:mod:`.compressed`: bounded, removed
    afterwards); messages and the profile name the file given. A path that does not exist
    is read from ``PATH.xz`` (``.gz``, ``.bz2``) beside it, with a note saying so; so are
    the companions a raw CSV finds beside itself (``X.source.csv``, ``X.ncu-rep``)."""
    from .compressed import by_hand, compressed_twin, compression_of, decompressed

    p = Path(path)
    kernel = KernelSelector.of(kernel)
    notes = []
    twin = compressed_twin(p)
    if twin is not None:
        notes.append(
            f"{p.name} does not exist: read {twin.name} beside it through a temporary decompressed copy "
            f"(`{by_hand(twin, compression_of(twin) or 'xz')}` keeps one)"
        )
        p = twin
    t0 = time.monotonic()
    originals: dict[str, str] = {}  # a decompressed copy's path -> the file given
    with contextlib.ExitStack() as stack:

        def readable(q: Path) -> Path:
            copy = stack.enter_context(decompressed(q))
            if copy != q:
                originals[str(copy)] = str(q)
            return copy

        try:
            inner = readable(p)
            reader = reader_for(inner)
            kind = reader.format
            if reader.companions:
                source_csv, line_report = find_companions(
                    p.with_name(inner.name), source_csv, line_report, readable, moved=inner != p
                )
            if isinstance(sass, StartedRead) and not takes_started(reader, sass, inner, kernel, jobs):
                sass.close()  # not this read's (the command line starts the read it then asks for)
                sass = None
            request = ReadRequest(
                source_csv=Path(source_csv) if source_csv is not None else None,
                line_report=Path(line_report) if line_report is not None else None,
                progress=progress,
                kernel=kernel,
                sass=sass,
                jobs=jobs,
                nested=inner != p,
            )
            profile = reader.open(inner, request)
        except DrgpuError as e:
            _name_given_in_error(e, originals)
            raise
    if originals:
        _name_given(profile, p, originals)
    profile.notes[:0] = notes
    log.info("read %s (%s): %d kernel launches in %.2f s", p, kind, len(profile.kernels), time.monotonic() - t0)
    return profile


def _name_given_in_error(e: DrgpuError, originals: dict[str, str]) -> None:
    """The error names the file given, not a decompressed copy."""
    for copy, given in originals.items():
        e.message = e.message.replace(copy, given)
        e.hint = e.hint.replace(copy, given) if e.hint else e.hint
    e.args = (e.message,)


def _name_given(profile: Profile, p: Path, originals: dict[str, str]) -> None:
    """The profile and its notes name the files given, not their decompressed copies."""
    profile.path = str(p)
    profile.notes = [_named(n, originals) for n in profile.notes]
    for k in profile.kernels:
        k.notes = [_named(n, originals) for n in k.notes]


def _named(text: str, originals: dict[str, str]) -> str:
    for copy, given in originals.items():
        text = text.replace(copy, given)
    return text


def select_kernels(profile: Profile, selector: KernelSelector | str | None) -> Profile:
    """Keep the launches matching ``selector`` (:class:`KernelSelector`; text is parsed): a
    launch id, ``a:b`` (id range), or a regular expression searched in the demangled and
    mangled names. A pattern that matches nothing is a NoKernelsError whose hint names the
    report's kernels, its library kernels apart; one that picks kernels but none of the
    report's library kernels warns (:class:`~drgpu_py.errors.SelectionHint`) naming those."""
    selector = KernelSelector.of(selector)
    if selector is None:
        if not profile.kernels:
            raise NoKernelsError(f"{profile.path} holds no kernel launch")
        return profile
    ks = profile.kernels
    picked = selector.pick(ks)
    if not picked:
        raise NoKernelsError(f"--kernel {selector.text!r} matched no kernel", hint=_kernels_in(ks, selector))
    warn_missed_library_kernels(selector, ks, picked, profile.path)
    return Profile(path=profile.path, format=profile.format, kernels=picked, notes=profile.notes)


def _kernels_in(kernels: list, selector: KernelSelector) -> str:
    """What a report holds, for a selector that matched nothing: its kernels' names, and for a
    name pattern its library kernels apart (named by their library, so a pattern such as
    ``gemm`` misses them)."""
    missed = missed_library_kernels(selector, kernels, [])
    library = {id(k) for k in missed}
    names = ", ".join(sorted({signature(k.name) for k in kernels if id(k) not in library})[:10])
    if not missed:
        return f"kernels in the report: {names or 'none'}"
    return (
        f"kernels in the report: {names or 'no other'}; its library kernels (named by their library: "
        f"cuBLAS's GEMMs are nvjet_*): {library_names(missed)}"
    )


def list_launches(path: str | Path, *, kernel: KernelSelector | str | None = None) -> Profile:
    """The launches of a report with their names, ids, grid, block and duration only (no
    other metric, SASS or source: what ``drgpu list`` shows, read in a fraction of the time
    ``open_report`` takes). ``kernel`` as for ``open_report``: launches it cannot pick by id may
    be skipped; ``select_kernels`` still applies it. Damage is refused as ``open_report``
    refuses it."""
    p = Path(path)
    kernel = KernelSelector.of(kernel)
    reader = reader_for(p)
    if isinstance(reader, Refusal):
        return open_report(p, kernel=kernel)  # not a report as it is: open_report decompresses it or says what it is
    return reader.launches(p, kernel)


def prefetch(reports, kernel: KernelSelector | None = None, jobs: int = 1, progress=None, companions: bool = False):
    """For one report, the read its reader starts before the caller loads the analysis
    (``Reader.start``: for an ``.ncu-rep``, ncu_report and nvdisasm in a child, or nvdisasm
    here), to pass to ``open_report`` (or ``pipeline.analyze_reports``) as ``sass``; the
    caller ``close()``s one nobody took. None for several reports, a path that is no
    regular file (opening a FIFO would block; the reader refuses those itself), a file that
    cannot be read or sniffed (``open_report`` then says what is wrong), a format that
    starts nothing, and with ``companions`` (``--source-csv``, ``--line-report``: CSV
    options the ``.ncu-rep`` reader refuses)."""
    if len(reports) != 1 or companions:
        return None
    p = Path(reports[0])
    try:
        if not p.is_file():
            return None
        reader = reader_for(p)
    except (DrgpuError, OSError):
        return None
    return reader.start(p, kernel, jobs, progress)
