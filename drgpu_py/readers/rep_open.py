"""Opening an ``.ncu-rep``: its framing checked before ncu_report loads it, ncu_report run in
child processes (in parts for ``-j N``, or started early: ``start_read``), and the launches
it could not read dropped with a note.

Contract: a damaged report is refused (:class:`~drgpu_py.errors.ReportFormatError`, one line
saying what is wrong) or read with a note naming what was lost, never papered over;
ncu_report's native log never reaches the terminal (``readers.native``). The profile is the
same whether the report is read in one process, in parts, or by a ``StartedRead``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..errors import DrgpuError, ReportFormatError
from ..profile import Profile
from ..sass.container import RepWalk, rep_walk
from ..sass.early import EarlyListing
from ..sass.early import take as early_listing
from . import isolate
from .frame import FrameParts
from .isolate import Started, in_children
from .native import native_log_summary, native_stderr_captured
from .selection import KernelSelector
from .sniffing import sniff

__all__ = [
    "MIN_BLOCKS_PER_PART",
    "READER_MEMORY_PER_BYTE",
    "StartedRead",
    "available_memory",
    "read_parts",
    "read_rep_checked",
    "start_read",
]

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
    free = available_memory()
    if free is not None:  # unknown: the cores decide
        n = min(n, free // max(1, READER_MEMORY_PER_BYTE * report_bytes))
    return max(1, n)


def available_memory() -> int | None:
    """Bytes a new process can take now: the kernel's MemAvailable (free memory and the page
    cache it can drop), else the free pages alone; None where neither is known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


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


def read_rep_checked(
    p: Path, progress=None, keep_id=None, sass=None, jobs: int = 1, launches_only: bool = False
) -> Profile:
    """Read an .ncu-rep, turning ncu_report's silent failures into ReportFormatError.
    ``launches_only``: names, ids, grid, block and duration only (``list_launches``).
    ``sass``: as ``open_report``'s; a ``StartedRead`` gives the profile it read."""
    started = sass if isinstance(sass, StartedRead) and not launches_only else None
    walk = started.walk if started is not None else rep_walk(p)
    framing = walk.problem
    _refuse_damaged_framing(p, walk)
    calls = [] if started is not None else _read_calls(p, walk, progress, keep_id, sass, jobs, launches_only)
    with started.captured() if started is not None else native_stderr_captured() as log:
        try:
            # In child processes: ncu_report can crash natively on a damaged report.
            profile = started.profile() if started is not None else _joined(in_children(calls, what=str(p)))
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
        self._early: EarlyListing | None = None  # nvdisasm started as the process started
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
        if self._early is not None:
            self._early.close()
            self._early = None
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
        read._early = early_listing(p)
        read._child = isolate.start(_read_started, p, keep_id, progress, log_fd, read._cubins.name, read._early)
    except BaseException:
        read.close()
        raise
    if read._child is None:  # read in this process (DRGPU_READ_IN_PROCESS, ncu_report loaded)
        read.close()
        return None
    return read


def _read_started(
    p: Path, keep_id, progress, log_fd: int | None, cubin_dir: str, early: EarlyListing | None = None
) -> Profile:
    """The child of ``start_read``: nvdisasm on the report's cubins (as ``drgpu analyze``
    starts it; ``early``: started already, as the process started), the report read
    meanwhile, its tables left as parts (no pandas here)."""
    if log_fd is not None:
        os.dup2(log_fd, 2)  # ncu_report's native log, as native_stderr_captured keeps it
    from ..sass.cubin import SassSource, cubins_in_report, max_cubins
    from .ncu_rep import read_ncu_rep

    source = early or SassSource.start(cubins_in_report(p, limit=max_cubins()), folder=cubin_dir)
    try:
        return read_ncu_rep(p, progress, keep_id=keep_id, sass=source, frames=False)
    finally:
        source.close()


def _read_calls(p: Path, walk, progress, keep_id, sass, jobs: int, launches_only: bool) -> list:
    """The reads of the report, each run in a child process: the launches alone, or the
    report in ``read_parts`` consecutive parts read by several processes at once (their
    launches in order are the whole report's)."""
    from .ncu_rep import read_ncu_rep, read_ncu_rep_launches

    if launches_only:
        return [(read_ncu_rep_launches, (p,), {"keep_id": keep_id})]
    listings = sass.result() if sass is not None else None
    n = read_parts(0 if walk.problem else walk.blocks, jobs, keep_id is not None, p.stat().st_size)
    kw = {"progress": progress if n == 1 else None, "keep_id": keep_id, "sass": listings}
    return [(read_ncu_rep, (p,), {**kw, "part": (i, n) if n > 1 else None}) for i in range(n)]


def _joined(parts: list[Profile]) -> Profile:
    """The first part's profile with the launches of the others appended, in order."""
    profile = parts[0]
    for more in parts[1:]:
        profile.kernels.extend(more.kernels)
    return profile


def _checked_launches(p: Path, profile: Profile, framing: str | None, log: list[str]) -> Profile:
    """``profile`` as read from ``p``: refused when no launch could be read, launches without a
    name or metrics dropped with a note, framing damage and ncu_report's log noted."""
    native = native_log_summary(log[0] if log else "")
    why = _why_unreadable(framing, native)
    good = [k for k in profile.kernels if k.name and k.metrics]
    if not good:
        raise ReportFormatError(
            f"{p} is truncated or corrupt: no kernel launch could be read ({why})", hint=_DAMAGED_HINT
        )
    if len(good) < len(profile.kernels):
        _keep_readable(profile, good, why)
    elif framing:
        profile.notes.append(f"the report's block structure looks damaged ({framing}): launches may be missing")
    if native:
        profile.notes.append(f"ncu_report: {native}")
    return profile


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids[:10])) + (", ..." if len(ids) > 10 else "")


def _why_unreadable(framing: str | None, native: str) -> str:
    """Why launches could not be read: the damaged framing, else ncu_report's own log."""
    return framing or native or "ncu_report could not decode it"


def _keep_readable(profile: Profile, good: list, why: str) -> None:
    """Keep the launches that could be read, saying which could not."""
    kept = {id(k) for k in good}
    lost = [k.id for k in profile.kernels if id(k) not in kept]
    profile.notes.append(
        f"partial: {len(lost)} of {len(profile.kernels)} kernel launches (ids {_ids(lost)}) "
        f"could not be read ({why}); the others are analyzed"
    )
    profile.kernels = good
