"""nvdisasm started on the cubins of the report ``drgpu analyze R`` names, as the process starts:
before the command line is parsed (the CLI framework and its option checks take 0.1-0.2 s),
for the read that the command then starts on that report (``readers.start_read``, or the
report's reader itself), which takes it with ``take(path)``.

Contract: ``start(argv)`` looks at the arguments after ``analyze`` (nothing else is parsed
here) and, where exactly one of them is a regular file with the ``.ncu-rep`` magic and no
option names a companion or code file, starts one nvdisasm per cubin of that report, as
``SassSource.start`` would (the same cubins, tool and arguments; not where nvdisasm is missing,
the cubins are more than ``max_cubins()``, the report ends in zeros, or processes cannot be
forked). ``take(path)`` gives that listing for ``path`` (the same file, unchanged since) once,
else None. ``EarlyListing.result()`` is ``SassSource.result()`` of those cubins, in the process
that started it or any process forked from it after (the read's child): each nvdisasm runs
under a forked helper that waits for it and writes its exit status down a pipe, and writes its
listing to a file. ``close()`` in the starting process stops and reaps what still runs and
removes the files; one nobody took is closed at exit. Nothing is cached between runs.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .container import NCU_MAGIC, ends_in_zeros
from .cubin import (
    TOOL_TIMEOUT_S,
    NVDISASM_ARGS,
    FunctionSass,
    Listings,
    cubins_in_report,
    find_tool,
    max_cubins,
    parse_listing,
)

__all__ = ["EarlyListing", "start", "take"]

#: Options whose value is a file (a companion, the code, an output): a report given there is
#: not the one read, and with a companion or code file the read starts no nvdisasm of its own.
_REFUSING = ("--source-csv", "--line-report", "--cubin", "--binary")

_started: EarlyListing | None = None


_Ident = tuple[int, int, int, int]  # device, inode, size, modification time: the same file, unchanged


def _identity(path: Path) -> _Ident | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _is_report(arg: str) -> bool:
    """Whether ``arg`` names a regular file that starts with the report magic (a FIFO is not
    opened: that would block)."""
    try:
        if not os.path.isfile(arg):
            return False
        fd = os.open(arg, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return os.read(fd, len(NCU_MAGIC)) == NCU_MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


def report_of(argv: list[str]) -> Path | None:
    """The one ``.ncu-rep`` among ``drgpu analyze``'s arguments ``argv`` (those after the
    program's name), or None."""
    if not argv or argv[0] != "analyze" or any(a.split("=")[0] in _REFUSING for a in argv):
        return None
    found = [a for a in argv[1:] if not a.startswith("-") and _is_report(a)]
    return Path(found[0]) if len(found) == 1 else None


def start(argv: list[str]) -> None:
    """Start nvdisasm on the report ``argv`` names (see the module docstring); at most once."""
    global _started
    if _started is not None or not hasattr(os, "fork") or os.environ.get("DRGPU_READ_IN_PROCESS"):
        return
    path = report_of(argv)
    if path is None or ends_in_zeros(path):
        return
    ident = _identity(path)
    tool = find_tool("nvdisasm")
    cubins = cubins_in_report(path, limit=max_cubins())
    if ident is None or tool is None or not cubins or len(cubins) > max_cubins():
        return
    _started = EarlyListing.start(ident, tool, cubins)
    atexit.register(_started.close)


def take(path: str | os.PathLike[str]) -> EarlyListing | None:
    """The listing started for the report at ``path`` (unchanged since), once; else None."""
    global _started
    early = _started
    if early is None or early.ident != _identity(Path(path)):
        return None
    _started = None
    return early


@dataclass
class _Job:
    pid: int  # the helper: a fork of this process that runs nvdisasm and waits for it
    status: int  # read end of the pipe the helper writes nvdisasm's exit status to
    out: Path  # nvdisasm's listing


class EarlyListing:
    """nvdisasm on each of a report's cubins (``start``); ``result()`` as ``SassSource``'s."""

    def __init__(self, ident: _Ident, jobs: list[_Job], tmp: tempfile.TemporaryDirectory[str]) -> None:
        self.ident = ident
        self._jobs = jobs
        self._tmp = tmp
        self._owner = os.getpid()
        self._result: Listings | None = None
        self._done = False

    @classmethod
    def start(cls, ident: _Ident, tool: str, cubins: list[bytes]) -> EarlyListing:
        tmp = tempfile.TemporaryDirectory(prefix="drgpu-sass-")
        jobs = []
        for n, cubin in enumerate(cubins):
            src, out = Path(tmp.name, f"{n}.cubin"), Path(tmp.name, f"{n}.sass")
            src.write_bytes(cubin)
            jobs.append(_spawn([tool, *NVDISASM_ARGS, str(src)], out))
        return cls(ident, jobs, tmp)

    def result(self) -> Listings | None:
        if self._done:
            return self._result
        self._done = True
        funcs: list[FunctionSass] = []
        ok = bool(self._jobs)
        for job in self._jobs:
            if _status(job) != 0:
                ok = False
                continue
            funcs.extend(parse_listing(job.out.read_bytes().decode("utf-8", errors="replace")).values())
        self._result = Listings(funcs) if ok and funcs else None
        return self._result

    def function(self, mangled: str, sm: int | None) -> FunctionSass | None:
        listings = self.result()
        return listings.function(mangled, sm) if listings is not None else None

    def close(self) -> None:
        """In the starting process: stop the helpers still running, reap them, remove the
        files (idempotent). In a process forked from it: nothing (the files are the starter's)."""
        if os.getpid() != self._owner:
            return
        jobs, self._jobs = self._jobs, []
        for job in jobs:
            with contextlib.suppress(OSError):
                os.close(job.status)
            with contextlib.suppress(ChildProcessError, OSError):
                if os.waitpid(job.pid, os.WNOHANG) == (0, 0):
                    os.killpg(job.pid, signal.SIGKILL)  # the helper and its nvdisasm
                    os.waitpid(job.pid, 0)
        self._tmp.cleanup()


def _spawn(argv: list[str], out: Path) -> _Job:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the helper; its outcome is what the tests see
        code = 1
        try:
            os.close(r)
            os.setpgid(0, 0)  # close() stops the helper and nvdisasm together
            with open(out, "wb") as fh:
                try:
                    code = subprocess.call(
                        argv, stdout=fh, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=TOOL_TIMEOUT_S
                    )
                except (OSError, subprocess.TimeoutExpired):
                    code = -1
            os.write(w, str(code).encode())
        finally:
            os._exit(0)
    os.close(w)
    with contextlib.suppress(OSError):  # as the helper does: its group exists before close() may need it
        os.setpgid(pid, pid)
    return _Job(pid, r, out)


def _status(job: _Job) -> int | None:
    """nvdisasm's exit status, once it has ended (None: no answer within the tool's time limit)."""
    got = b""
    deadline = time.monotonic() + TOOL_TIMEOUT_S + 5
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([job.status], [], [], left)
        if not ready:
            break
        chunk = os.read(job.status, 64)
        if not chunk:
            return int(got) if got.lstrip(b"-").isdigit() else None
        got += chunk
    return None
