"""nvdisasm started on the cubins of the report ``drgpu analyze R`` names, as the process starts:
before the command line is parsed (the CLI framework and its option checks take 0.1-0.2 s),
for the read that the command then starts on that report (``readers.start_read``, or the
report's reader itself), which takes it with ``take(path)``.

Contract: ``start(argv)`` looks at the arguments after ``analyze`` (nothing else is parsed
here) and, where exactly one of them is a regular file with the ``.ncu-rep`` magic and no
option names a CSV companion, forks a helper process and returns. The helper does
what ``SassSource.start`` would (the same cubins, tool and arguments: no listing where nvdisasm
is missing or the cubins are more than ``max_cubins()``), writes each listing to a file, waits
for each nvdisasm and writes their exit statuses down a pipe. ``take(path)`` gives that listing
for ``path`` (the same file, unchanged since) once, else None. ``EarlyListing.result()`` is
``SassSource.result()`` of those cubins, in the process that started it or in any process
forked from it after (the read's child). ``close()`` in the starting process stops and reaps
the helper if it still runs and removes the files; one nobody took is closed at exit. Nothing
is cached between runs.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .container import NCU_MAGIC, ends_in_zeros
from .cubin import TOOL_TIMEOUT_S

if TYPE_CHECKING:  # loaded where the listing is made or read, not as the process starts
    from .cubin import FunctionSass, Listings

__all__ = ["EarlyListing", "start", "take"]

#: The CSV companions' options: with them the input is a CSV (a report given to --line-report
#: is not the one read), and ``readers.prefetch`` starts no read.
_REFUSING = ("--source-csv", "--line-report")

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
    """Start nvdisasm on the report ``argv`` names (see the module docstring); at most once.
    Here only the arguments are looked at: the helper process finds the cubins."""
    global _started
    if _started is not None or not hasattr(os, "fork") or os.environ.get("DRGPU_READ_IN_PROCESS"):
        return
    path = report_of(argv)
    ident = _identity(path) if path is not None and not ends_in_zeros(path) else None
    if path is None or ident is None:
        return
    _started = EarlyListing.start(path, ident)
    atexit.register(_started.close)


def take(path: str | os.PathLike[str]) -> EarlyListing | None:
    """The listing started for the report at ``path`` (unchanged since), once; else None."""
    global _started
    early = _started
    if early is None or early.ident != _identity(Path(path)):
        return None
    _started = None
    return early


class EarlyListing:
    """nvdisasm on each of a report's cubins, run by a helper process (``start``);
    ``result()`` as ``SassSource``'s."""

    def __init__(self, ident: _Ident, pid: int, status: int, tmp: tempfile.TemporaryDirectory[str]) -> None:
        self.ident = ident
        self._pid = pid  # the helper: a fork of this process, which runs nvdisasm and waits for it
        self._status = status  # read end of the pipe the helper writes nvdisasm's exit statuses to
        self._tmp = tmp  # the cubins and nvdisasm's listings of them
        self._owner = os.getpid()
        self._result: Listings | None = None
        self._done = False

    @classmethod
    def start(cls, path: Path, ident: _Ident) -> EarlyListing:
        tmp = tempfile.TemporaryDirectory(prefix="drgpu-sass-")
        r, w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the helper; its outcome is what the tests see
            try:
                os.close(r)
                os.setpgid(0, 0)  # close() stops the helper and nvdisasm together
                answer = _listings(path, Path(tmp.name))
                if os.getppid() != parent:  # the starter is gone without closing it (os._exit)
                    shutil.rmtree(tmp.name, ignore_errors=True)
                os.write(w, answer.encode())
            finally:
                os._exit(0)
        os.close(w)
        with contextlib.suppress(OSError):  # as the helper does: its group exists before close() may need it
            os.setpgid(pid, pid)
        return cls(ident, pid, r, tmp)

    def result(self) -> Listings | None:
        if self._done:
            return self._result
        self._done = True
        statuses = _answer(self._status)
        if not statuses or any(statuses):  # no listing, or an nvdisasm that failed
            return None
        from .cubin import Listings, parse_listing

        funcs: list[FunctionSass] = []
        for n in range(len(statuses)):
            text = Path(self._tmp.name, f"{n}.sass").read_bytes().decode("utf-8", errors="replace")
            funcs.extend(parse_listing(text).values())
        self._result = Listings(funcs) if funcs else None
        return self._result

    def function(self, mangled: str, sm: int | None) -> FunctionSass | None:
        listings = self.result()
        return listings.function(mangled, sm) if listings is not None else None

    def close(self) -> None:
        """In the starting process: stop the helper if it still runs, reap it, remove the
        files (idempotent). In a process forked from it: nothing (the files are the starter's)."""
        if os.getpid() != self._owner or self._pid == 0:
            return
        pid, self._pid = self._pid, 0
        with contextlib.suppress(OSError):
            os.close(self._status)
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                os.killpg(pid, signal.SIGKILL)  # the helper and its nvdisasm
                os.waitpid(pid, 0)
        self._tmp.cleanup()


def _listings(path: Path, folder: Path) -> str:
    """In the helper: nvdisasm on each cubin of the report at ``path`` (as ``SassSource.start``:
    none when there are more than ``max_cubins()`` or nvdisasm is missing), all at once, its
    listing of cubin n in ``folder/n.sass``; their exit statuses, one line (none: no listing)."""
    from .cubin import NVDISASM_ARGS, cubins_in_report, find_tool, max_cubins

    tool = find_tool("nvdisasm")
    cubins = cubins_in_report(path, limit=max_cubins())
    if tool is None or not cubins or len(cubins) > max_cubins():
        return ""
    procs = []
    for n, cubin in enumerate(cubins):
        src = folder / f"{n}.cubin"
        src.write_bytes(cubin)
        with open(folder / f"{n}.sass", "wb") as out:
            procs.append(
                subprocess.Popen(
                    [tool, *NVDISASM_ARGS, str(src)], stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
                )
            )
    return " ".join(str(_exit_status(proc)) for proc in procs)


def _exit_status(proc: subprocess.Popen[bytes]) -> int:
    try:
        return proc.wait(timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return -1


def _answer(fd: int) -> list[int]:
    """The helper's exit statuses (``_listings``), once it has written them and ended; none
    where it gave no answer within the tool's time limit."""
    got = b""
    deadline = time.monotonic() + TOOL_TIMEOUT_S + 5
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            words = got.split()
            return [int(w) for w in words] if all(w.lstrip(b"-").isdigit() for w in words) else []
        got += chunk
    return []
