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
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..specs import loader as data
from ..errors import DrgpuError, NoKernelsError, ReportFormatError, UsageError
from ..profile import Profile, signature
from .common import (
    FrameParts,
    KernelSelector,
    RepWalk,
    library_names,
    missed_library_kernels,
    warn_missed_library_kernels,
)
from .common import native_log_summary, native_stderr_captured, rep_walk, sniff
from .isolate import Started, in_children
from . import isolate

__all__ = ["KernelSelector", "StartedRead", "list_launches", "open_report", "select_kernels", "sniff", "start_read"]

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
            kind = sniff(inner)
            if kind == "csv-raw":
                source_csv, line_report = _companions(
                    p.with_name(inner.name), source_csv, line_report, readable, moved=inner != p
                )
            profile = _open_plain(inner, kind, source_csv, line_report, progress, kernel, sass, jobs, nested=inner != p)
        except DrgpuError as e:
            for copy, given in originals.items():  # the error names the file given, not a copy
                e.message = e.message.replace(copy, given)
                e.hint = e.hint.replace(copy, given) if e.hint else e.hint
            e.args = (e.message,)
            raise
    if originals:
        profile.path = str(p)
        profile.notes = [_named(n, originals) for n in profile.notes]
        for k in profile.kernels:
            k.notes = [_named(n, originals) for n in k.notes]
    profile.notes[:0] = notes
    log.info("read %s (%s): %d kernel launches in %.2f s", p, kind, len(profile.kernels), time.monotonic() - t0)
    return profile


def _named(text: str, originals: dict[str, str]) -> str:
    for copy, given in originals.items():
        text = text.replace(copy, given)
    return text


def _companions(origin: Path, source_csv, line_report, readable, moved: bool):
    """A raw CSV's ``--source-csv`` and ``--line-report``, each given (and decompressed when
    compressed) or, when not given, the one beside ``origin`` (where the CSV is, under its
    name without a compression suffix), plain or compressed. ``moved``: the CSV is read
    from a decompressed copy elsewhere, so the reader cannot find companions itself."""
    from .compressed import compressed_twin
    from .ncu_csv import _sibling

    if source_csv is not None:
        source_csv = readable(Path(source_csv))
    else:
        cand = _sibling(origin, ".source.csv")
        found = cand if cand is not None and (moved and cand.exists()) else None
        twin = compressed_twin(cand) if cand is not None else None
        if twin is not None:
            found = readable(twin)
        if found is not None and sniff(found) == "csv-source":  # as the reader picks one up itself
            source_csv = found
    if line_report is not None:
        line_report = readable(Path(line_report))
    else:
        cand = _sibling(origin, ".ncu-rep")
        if cand is not None and moved and cand.exists():
            line_report = cand
        twin = compressed_twin(cand) if cand is not None else None
        if twin is not None:
            line_report = readable(twin)
    return source_csv, line_report


def _open_plain(p: Path, kind: str, source_csv, line_report, progress, kernel, sass, jobs, nested: bool) -> Profile:
    """``open_report`` of a file that is not compressed, whose ``sniff`` is ``kind``."""
    if isinstance(sass, StartedRead) and not (kind == "ncu-rep" and sass.reads(p, kernel, jobs)):
        sass.close()  # not this read's (the command line starts the read it then asks for)
        sass = None
    if kind == "ncu-rep":
        if source_csv is not None:
            raise UsageError("--source-csv applies to CSV input, not to an .ncu-rep")
        return _note_missing_sections(
            _read_rep_checked(p, progress, keep_id=kernel.id_filter() if kernel else None, sass=sass, jobs=jobs)
        )
    if kind == "csv-raw":
        from .ncu_csv import read_ncu_csv

        return _note_missing_sections(read_ncu_csv(p, source_csv=source_csv, line_report=line_report, kernel=kernel))
    if kind == "compressed":
        raise ReportFormatError(
            f"{p} is a compressed file inside a compressed file, not a report"
            if nested
            else f"{p} is a compressed file, not a report",
            hint="decompress it first (unxz, gunzip, bunzip2, unzip, zstd -d) and pass the .ncu-rep or .csv inside",
        )
    if kind == "csv-source":
        raise ReportFormatError(
            f"{p} is a source-page CSV export (per-instruction data only)",
            hint="pass the raw-page export (ncu -i R --csv --page raw --print-units base) and give this file with --source-csv",
        )
    if kind == "csv-details":
        raise ReportFormatError(
            f"{p} is a details-page CSV export, which lacks the raw metrics drgpu needs",
            hint="export with: ncu -i REPORT --csv --page raw --print-units base",
        )
    raise ReportFormatError(f"{p} is neither an Nsight Compute report (.ncu-rep) nor an ncu CSV export")


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


_DAMAGED_HINT = (
    "copy or profile it again; if ncu itself opens it, the installed ncu_report module may be "
    "older than the ncu that wrote it (pip install -U ncu-report)"
)


#: Data blocks a reading process should have at least: each one loads the report and starts
#: ncu_report's disassembler (0.5-1 s of CPU) before its first launch (20-35 ms each on the
#: GPU host). ncu 2025.3 writes about ten blocks per launch, so this is about 16 launches.
MIN_BLOCKS_PER_PART = 160
#: Memory one reading process may need, in multiples of the report's size: ncu_report's
#: peak reading all of a report measured 7-17x the file (benchmarks/RESULTS.md).
READER_MEMORY_PER_BYTE = 16


def read_parts(blocks: int, jobs: int, selected: bool, report_bytes: int = 0) -> int:
    """Processes to read an ``.ncu-rep`` of ``blocks`` data blocks with: one for a launch
    selection (``--kernel``) or a report too small to pay for more; no more than the memory
    available now holds (each reader loads the whole report)."""
    if selected or jobs <= 1:
        return 1
    n = min(jobs, blocks // MIN_BLOCKS_PER_PART)
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        n = min(n, free // max(1, READER_MEMORY_PER_BYTE * report_bytes))
    except (ValueError, OSError, AttributeError):  # no sysconf: the cores decide
        pass
    return max(1, n)


def list_launches(path: str | Path, *, kernel: KernelSelector | str | None = None) -> Profile:
    """The launches of a report with their names, ids, grid, block and duration only (no
    other metric, SASS or source: what ``drgpu list`` shows, read in a fraction of the time
    ``open_report`` takes). ``kernel`` as for ``open_report``: launches it cannot pick by id may
    be skipped; ``select_kernels`` still applies it. Damage is refused as ``open_report``
    refuses it."""
    p = Path(path)
    kernel = KernelSelector.of(kernel)
    kind = sniff(p)
    if kind == "ncu-rep":
        return _read_rep_checked(p, keep_id=kernel.id_filter() if kernel else None, launches_only=True)
    if kind == "csv-raw":
        from .ncu_csv import read_ncu_csv

        return read_ncu_csv(p, kernel=kernel, launches_only=True)
    return open_report(p, kernel=kernel)  # not a report: open_report says what it is


def _refuse_damaged_framing(p: Path, walk) -> None:
    """Refuse an .ncu-rep whose block framing ends in zeros, holds a foreign block or ends in
    bytes that hold no whole block header, before ncu_report loads it: ncu_report reads all
    of a zero-filled tail into memory (4 GB of a sparse file's zeros), and skips a stray empty
    block or a short tail without a word, so bytes appended to a report (docs/errors.md: 4)
    would otherwise read as the report they follow."""
    at = walk.refusable_at
    if at is None:
        return
    blocks = walk.blocks
    before = "the zeros" if walk.zero_tail is not None else "it"
    raise ReportFormatError(
        f"{p} is truncated or corrupt: {walk.problem}",
        hint=(
            f"the {blocks} block(s) before {before} may be a whole report: analyze a copy cut there "
            f"(cp REPORT copy.ncu-rep; truncate -s {at} copy.ncu-rep); else copy or profile again"
            if blocks
            else "copy or profile again"
        ),
    )


def _read_rep_checked(
    p: Path, progress=None, keep_id=None, sass=None, jobs: int = 1, launches_only: bool = False
) -> Profile:
    """Read an .ncu-rep, turning ncu_report's silent failures into ReportFormatError.
    ``launches_only``: names, ids, grid, block and duration only (``list_launches``).
    ``sass``: as ``open_report``'s; a ``StartedRead`` gives the profile it read."""
    from .ncu_rep import read_ncu_rep, read_ncu_rep_launches

    started = sass if isinstance(sass, StartedRead) and not launches_only else None
    walk = started.walk if started is not None else rep_walk(p)
    blocks, framing = walk.blocks, walk.problem
    _refuse_damaged_framing(p, walk)
    calls = []
    if launches_only:
        calls = [(read_ncu_rep_launches, (p,), {"keep_id": keep_id})]
    elif started is None:
        listings = sass.result() if sass is not None else None
        n = read_parts(0 if framing else blocks, jobs, keep_id is not None, p.stat().st_size)
        # Several processes read consecutive parts of a large report at once; their launches
        # in order are the whole report's.
        kw = {"progress": progress if n == 1 else None, "keep_id": keep_id, "sass": listings}
        calls = [(read_ncu_rep, (p,), {**kw, "part": (i, n) if n > 1 else None}) for i in range(n)]
    with started.captured() if started is not None else native_stderr_captured() as log:
        try:
            if started is not None:
                profile = started.profile()
            else:
                # In child processes: ncu_report can crash natively on a damaged report.
                parts = in_children(calls, what=str(p))
                profile = parts[0]
                for more in parts[1:]:
                    profile.kernels.extend(more.kernels)
        except DrgpuError:
            raise
        except Exception as e:  # native module on a damaged file
            if framing is None:
                raise  # an intact file: a bug of ours, report it as one
            raise ReportFormatError(
                f"{p} is truncated or corrupt: {framing} ({type(e).__name__})", hint=_DAMAGED_HINT
            ) from e
    return _checked_launches(p, profile, framing, log)


class StartedRead:
    """A read of one ``.ncu-rep`` started in a child process (``start_read``) before the
    caller loads pandas and the analysis: the child starts nvdisasm on the report's cubins,
    parses the launches while it runs, and returns each launch's per-instruction table as
    ``FrameParts``; ``open_report(path, sass=this)`` takes the profile, its tables built here.
    The same profile as ``open_report`` reads itself: the same reader, child, listing and
    captured log, only started sooner. ``close()`` stops a read nobody asked for."""

    def __init__(self, path: Path, kernel: KernelSelector | None, jobs: int, walk: RepWalk) -> None:
        self.path, self.kernel, self.jobs, self.walk = path, kernel, jobs, walk
        self._child: Started | None = None
        self._cubins = tempfile.TemporaryDirectory(prefix="drgpu-sass-")
        self._log: IO[bytes] | None = None
        try:
            # As native_stderr_captured: where this process has no descriptor 2 to redirect,
            # the child's is not redirected either.
            sys.stderr.flush()
            os.close(os.dup(2))
            self._log = tempfile.TemporaryFile()  # noqa: SIM115 - open until the profile is taken (close())
        except (OSError, ValueError, AttributeError):
            self._log = None

    def reads(self, path: Path, kernel: KernelSelector | None, jobs: int) -> bool:
        """Whether this is the read ``open_report(path, kernel=kernel, jobs=jobs)`` makes."""
        return self._child is not None and Path(path) == self.path and kernel == self.kernel and jobs == self.jobs

    @contextlib.contextmanager
    def captured(self) -> Iterator[list[str]]:
        """What the child wrote to descriptor 2, as ``native_stderr_captured`` yields it."""
        captured: list[str] = []
        try:
            yield captured
        finally:
            if self._log is not None:
                self._log.seek(0)
                captured.append(self._log.read(1 << 16).decode("utf-8", errors="replace"))
            self.close()

    def profile(self) -> Profile:
        """The child's profile (or what it raised), each launch's table built."""
        child, self._child = self._child, None
        if child is None:
            raise RuntimeError(f"the read of {self.path} was collected or stopped already")
        profile: Profile = child.collect(str(self.path))
        for k in profile.kernels:
            if isinstance(k.instructions, FrameParts):
                k.instructions = k.instructions.frame()
        return profile

    def close(self) -> None:
        """Stop the child unless its profile was taken; remove the temporary files."""
        if self._child is not None:
            self._child.stop()
            self._child = None
        self._cubins.cleanup()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> StartedRead:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def start_read(
    path: str | Path, *, kernel: KernelSelector | None = None, jobs: int = 1, progress=None
) -> StartedRead | None:
    """Start reading the ``.ncu-rep`` at ``path`` as ``open_report(path, kernel=kernel,
    jobs=jobs, progress=progress)`` would, in a child process, and return at once; None where
    that read would not be one child's (a report read in parts, in this process, or refused
    for its framing: ``open_report`` then reads it as usual). Start it before loading the
    analysis, and pass it to ``open_report`` as ``sass``, or ``close()`` it."""
    from .ncu_rep import read_ncu_rep  # noqa: F401 - loaded here, once, not in the child

    p = Path(path)
    try:
        if not p.is_file() or sniff(p) != "ncu-rep":
            return None
        walk = rep_walk(p)
        size = p.stat().st_size
    except (DrgpuError, OSError):
        return None  # open_report says what is wrong
    if walk.zero_tail is not None or walk.foreign is not None:
        return None
    keep_id = kernel.id_filter() if kernel else None
    if read_parts(0 if walk.problem else walk.blocks, jobs, keep_id is not None, size) != 1:
        return None
    read = StartedRead(p, kernel, jobs, walk)
    try:
        log_fd = read._log.fileno() if read._log is not None else None
        read._child = isolate.start(_read_started, p, keep_id, progress, log_fd, read._cubins.name)
    except BaseException:
        read.close()
        raise
    if read._child is None:  # read in this process (DRGPU_READ_IN_PROCESS, ncu_report loaded)
        read.close()
        return None
    return read


def _read_started(p: Path, keep_id, progress, log_fd: int | None, cubin_dir: str) -> Profile:
    """The child of ``start_read``: nvdisasm on the report's cubins (as ``drgpu analyze``
    starts it), the report read meanwhile, its tables left as parts (no pandas here)."""
    if log_fd is not None:
        os.dup2(log_fd, 2)  # ncu_report's native log, as native_stderr_captured keeps it
    from ..sass.cubin import SassSource, cubins_in_report, max_cubins
    from .ncu_rep import read_ncu_rep

    source = SassSource.start(cubins_in_report(p, limit=max_cubins()), folder=cubin_dir)
    try:
        return read_ncu_rep(p, progress, keep_id=keep_id, sass=source, frames=False)
    finally:
        source.close()


def _checked_launches(p: Path, profile: Profile, framing: str | None, log: list[str]) -> Profile:
    """``profile`` as read from ``p``: refused when no launch could be read, launches without a
    name or metrics dropped with a note, framing damage and ncu_report's log noted."""
    native = native_log_summary(log[0] if log else "")
    why = framing or native or "ncu_report could not decode it"
    good = [k for k in profile.kernels if k.name and k.metrics]
    if not good:
        raise ReportFormatError(
            f"{p} is truncated or corrupt: no kernel launch could be read ({why})", hint=_DAMAGED_HINT
        )
    if len(good) < len(profile.kernels):
        kept = {id(k) for k in good}
        lost = [k.id for k in profile.kernels if id(k) not in kept]
        profile.notes.append(
            f"partial: {len(lost)} of {len(profile.kernels)} kernel launches (ids {_ids(lost)}) "
            f"could not be read ({why}); the others are analyzed"
        )
        profile.kernels = good
    elif framing:
        profile.notes.append(f"the report's block structure looks damaged ({framing}): launches may be missing")
    if native:
        profile.notes.append(f"ncu_report: {native}")
    return profile


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids[:10])) + (", ..." if len(ids) > 10 else "")


def _note_missing_sections(profile: Profile) -> Profile:
    """Note on each kernel what its report lacks that the analysis would use, and how to
    collect it: the ncu sections most of whose needed metrics are absent, and each metric
    group of drgpu's set (``metric_sets/``) with an ``absent_note`` (its absence changes a
    result) whose metrics the report lacks.

    "Needed" means what drgpu's own default set for the kernel's chip collects: a report
    made by ``drgpu profile`` is complete by that measure, whatever ``--set full`` adds."""
    stall_counters = [s["counter"][0] for s in data.stall_reasons().values()]
    sets: dict[str | None, tuple[list[tuple[str, str]], list]] = {}
    for k in profile.kernels:
        if k.chip not in sets:
            sets[k.chip] = _needed_metrics(k.chip)
        needed, noted = sets[k.chip]
        total: dict[str, int] = {}
        absent: dict[str, int] = {}
        for name, sec in needed:
            total[sec] = total.get(sec, 0) + 1
            if not k.collected(name):  # a value derived from others is no sign of its section
                absent[sec] = absent.get(sec, 0) + 1
        lacking = [sec for sec in total if absent.get(sec, 0) * 2 > total[sec]]
        # The stall mix comes from PC samples (SourceCounters) or, without them, from the
        # kernel-wide counters (WarpStateStats): only lacking both loses it.
        if stall_counters and not any(k.has(c) for c in stall_counters) and not k.has_sampling:
            lacking.append("WarpStateStats")
        if lacking:
            k.notes.append(
                "partial analysis: the report lacks most metrics of section(s) "
                + ", ".join(lacking)
                + " (collect them with ncu --set full, or --section NAME)"
            )
        # Sections the report has, without metrics that came with a later ncu (``since``):
        # its ncu predates them, and the section's name would not bring them.
        newer: dict[str, list[str]] = {}
        for name, sec in needed:
            if sec not in lacking and not k.has(name):
                advice = data.reprofile_advice(k.collected, name)
                if advice and advice.startswith("re-profile"):
                    newer.setdefault(advice, []).append(name)
        for advice, names in newer.items():
            k.notes.append(
                f"partial analysis: the report's ncu predates {', '.join(names)} (its sections are in the report): {advice}"
            )
        for metrics, note in noted:
            if not any(k.has(m) for m in metrics):
                k.notes.append(note)
    return profile


def _needed_metrics(chip: str | None) -> tuple[list[tuple[str, str]], list[tuple[list[str], str]]]:
    """([(canonical metric, its section)] of metrics.yaml that drgpu's default set for
    ``chip`` collects under one of their names, [(metrics, absent_note)] of the set's groups
    that have a note); the base set for a chip without one of its own."""
    from ..specs.metric_sets import load_metric_set

    try:
        ms = load_metric_set(chip or "base")
    except DrgpuError:
        ms = load_metric_set("base")
    expected = set(ms.selection().expected)
    needed = [
        (name, data.metric_section(name) or "?")
        for name, spec in data.metrics_table()["metrics"].items()
        if not spec.get("optional") and any(a in expected for a in data.metric_aliases(name))
    ]
    noted = [(list(g.metrics), g.absent_note) for g in ms.groups.values() if g.absent_note and g.metrics]
    return needed, noted
