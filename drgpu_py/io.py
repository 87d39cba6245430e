"""Safe output: atomic writes (temporary file in the target folder, then rename), refusing to
overwrite without ``force``, and clear errors for unwritable paths. drgpu never modifies or
deletes its inputs (reports)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from .errors import InputError, OutputError

# Text drgpu did not write itself (kernel, file and NVTX names from a report, lines ncu or
# the application printed) may hold ESC (terminal sequences), other C0/C1 controls and
# bidirectional overrides: shown as escapes, never passed on to a terminal or a document.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROLS_AND_LINES = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape_one(m: re.Match) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text, one_line: bool = False) -> str:
    """``text`` with control characters and bidi overrides as ``\\xNN``/``\\uNNNN`` escapes.
    Tabs and newlines are kept, unless ``one_line`` (then they are escaped too)."""
    return (_CONTROLS_AND_LINES if one_line else _CONTROLS).sub(_escape_one, str(text))


# In a JSON or HTML document drgpu writes: the same characters but tab, newline and CR.
_DOCUMENT_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def document_text(text: str) -> str:
    """A JSON or HTML document with each raw control character and bidi override as a
    ``\\uNNNN`` escape: inside a JSON string (where alone they can occur in JSON) the same
    string once parsed, in HTML text a visible escape. Nothing else changes."""
    if not _DOCUMENT_CONTROLS.search(text):
        return text
    return _DOCUMENT_CONTROLS.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


# A spreadsheet runs a cell starting with one of these as a formula (OWASP: CSV injection).
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """One cell for a CSV file drgpu writes: text starting like a formula gets a leading
    single quote (OWASP's rule) and its control characters made visible; numbers, None and
    other non-text values are returned as they are (a negative number stays a number)."""
    if not isinstance(value, str):
        return value
    if value.startswith(CSV_FORMULA_STARTS):
        value = "'" + value
    return visible(value)


def require_input_file(path: str | Path, what: str = "a report", hint: str | None = None) -> Path:
    """An input must be a regular file (or a link to one): a FIFO, device or socket would
    block or never end, so it is refused at once; a missing path or a folder says so (with
    ``hint``: what the option expects)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file", hint=hint) from None
    except OSError as e:  # a link loop, a name too long, a folder we may not search
        raise path_error(p, e, hint) from e
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p} is a directory, not {what}", hint=hint)
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        raise InputError(f"{p} is {kind}, not {what}", hint="give a file: drgpu reads its inputs whole")
    return p


def open_input(path: str | Path, what: str = "a report"):
    """An input file opened for binary reading, never blocking: the path is opened with
    O_NONBLOCK and the opened descriptor is checked (fstat), so a path that became a FIFO,
    device or socket after ``require_input_file`` looked at it is refused (exit 3) instead
    of hanging on it."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as e:
        raise path_error(p, e) from e
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{p} is a directory, not {what}")
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
            raise InputError(f"{p} is {kind}, not {what}", hint="give a file: drgpu reads its inputs whole")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_output_text(path: str | Path):
    """A file drgpu writes as it goes (ncu's log under ``drgpu profile``), opened for text
    writing (UTF-8, undecodable text replaced), created or truncated, never blocking: opened
    with O_NONBLOCK and checked on the opened descriptor, so a FIFO, device or socket at the
    name (or a link to one) is refused (exit 6) instead of waited on or written into."""
    p = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    not_regular = OutputError(
        f"{p} is not a regular file (a device, FIFO or socket): drgpu does not write over it",
        hint="remove it, or give another --output-dir/--name",
    )
    try:
        fd = os.open(p, flags, 0o666)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO nobody reads
            raise not_regular from None
        raise OutputError(f"cannot write {p}: {e.strerror or e}") from e
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise not_regular
        os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "w", encoding="utf-8", errors="replace")
    except BaseException:
        os.close(fd)
        raise


def read_input_bytes(path: str | Path, what: str = "a report") -> bytes:
    """All bytes of an input file, opened as ``open_input`` opens it."""
    with open_input(path, what) as fh:
        try:
            return fh.read()
        except OSError as e:
            raise path_error(path, e) from e


def path_error(path: str | Path, e: OSError, hint: str | None = None) -> InputError:
    """The InputError (exit 3) for an OS error met on an input path, named for what it is:
    a link loop is not a missing file, a name over NAME_MAX/PATH_MAX not a permission."""
    # e.errno is None for an OSError raised without one: the default text then.
    reasons: dict[int | None, str] = {
        errno.ELOOP: f"is a symbolic link loop ({e.strerror})",
        errno.ENAMETOOLONG: f"name too long ({e.strerror}: over the system's NAME_MAX or PATH_MAX)",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENOENT: "no such file",
        errno.ENOTDIR: "a part of the path is not a folder",
    }
    why = reasons.get(e.errno, f"cannot read ({e.strerror or e})")
    text = str(path)
    if len(text) > 200:  # a name of 4,000 characters says nothing more than its ends
        text = f"{text[:100]}...{text[-60:]}"
    return InputError(f"{text}: {why}", hint=hint or "check the path and its permissions")


_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EPIPE, errno.EROFS, errno.EFBIG}


def os_error(e: OSError) -> InputError | OutputError:
    """A documented error for any OS error: exit 6 for a full, read-only or closed
    destination, exit 3 (named by ``path_error``) for the rest."""
    if e.errno in _OUTPUT_ERRNOS:
        where = f"{e.filename}" if e.filename else "the output"
        return OutputError(f"cannot write {where}: {e.strerror or e}")
    if e.filename:
        return path_error(e.filename, e)
    return InputError(f"operating-system error: {e.strerror or e}")


#: Lone surrogates: what Python makes of bytes that are not UTF-8 in a file name
#: (surrogate escapes) or what a JSON escape (\\udcff) can hold; no UTF-8 text has them.
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` as UTF-8 can hold it: each lone surrogate (an undecodable byte of a file
    name, a kernel name from a JSON escape) becomes U+FFFD, as undecodable bytes of a CSV do."""
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output now (flushed): a closed stdout, a full disk
    (``> /dev/full``) or a closed pipe is an OutputError (exit 6), not a traceback. After a
    failure the unwritten rest is dropped, so the exit does not fail on it again."""
    out = sys.stdout
    if out is None:
        raise OutputError("standard output is closed", hint="give an output file with -o")
    try:
        out.write(clean_text(text))
        out.flush()
    except (OSError, ValueError) as e:  # ValueError: the stream was closed
        with contextlib.suppress(OSError):
            # Replaces the closed stream for the rest of the process: kept open on purpose.
            sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
        why = getattr(e, "strerror", None) or str(e)
        raise OutputError(
            f"cannot write to standard output: {why}",
            hint="give an output file with -o, or free space where stdout goes",
        ) from e


def check_writable(path: str | Path, force: bool) -> Path:
    """The path to write: refused when it is a folder, exists without ``force``, or is
    anything but a regular file (a device, FIFO or socket, or a link to one: replacing
    /dev/null with a file, even with ``force``, is never what was meant). A link to a
    regular file is written through: the file it points to is replaced."""
    p = Path(path)
    try:
        link = p.is_symlink()
        if link:
            p = Path(os.path.realpath(p))
        exists, is_dir = p.exists(), p.is_dir()
        mode = p.stat().st_mode if exists else None
    except OSError as e:  # e.g. a parent folder we may not search, a link loop
        raise OutputError(f"cannot write {path}: {e.strerror}") from e
    if link and not exists:
        # Writing through it would create a file wherever the link points (another user's
        # folder, a planted name): never what -o meant.
        raise OutputError(
            f"{path} is a dangling symbolic link (it points to {_link_target(path)}, which does not exist): "
            "drgpu does not create files where a link points",
            hint="remove the link, or give another name",
        )
    if is_dir:
        raise OutputError(f"{p} is a directory", hint="give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputError(
            f"{path} is not a regular file (a device, FIFO or socket): drgpu does not write over it",
            hint="give the name of a file",
        )
    if exists and not force:
        raise OutputError(f"{p} exists", hint="use --force to overwrite")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"folder {parent} does not exist", hint="create it first, or choose another path")
    if not parent.is_dir():
        raise OutputError(f"cannot write {p}: {parent} is not a folder")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"cannot write to {parent}: permission denied")
    return p


def _link_target(path: str | Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "a name that is gone"


def _create_exclusively(tmp: str, p: Path) -> None:
    """Move ``tmp`` to ``p`` only if ``p`` does not exist, atomically: a hard link fails when
    the name exists, so of two runs writing the same new output one wins and the other is
    told it exists (a check then a rename would let both replace it). File systems without
    hard links fall back to that check and rename."""
    try:
        os.link(tmp, p)
    except FileExistsError:
        raise
    except OSError:
        if p.exists():  # appeared since the check: still refuse to overwrite it
            raise FileExistsError(17, "file exists", str(p)) from None
        os.replace(tmp, p)
        return
    os.unlink(tmp)


#: The signals drgpu stops on (Ctrl-C, kill, a closed terminal: cli.install_signal_handlers).
_STOP_SIGNALS = tuple(
    sig for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if sig is not None
)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held back for the few system calls inside (creating a
    temporary file, renaming it into place, removing it): a signal arriving then acts once
    they are done, so an interruption never falls between a file's creation and the record
    of its name, or between a rename and the forgetting of the temporary name. Python runs
    signal handlers in the main thread only: elsewhere this defers nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    old: dict[int, Any] = {}  # each signal's handler: a function, SIG_DFL or SIG_IGN
    try:
        for sig in _STOP_SIGNALS:
            if signal.getsignal(sig) is not None:  # None: a handler not set from Python, left alone
                old[sig] = signal.signal(sig, lambda signum, frame: held.append(signum))
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if held:
            handler = old.get(held[0])
            if callable(handler):
                handler(held[0], None)  # raises KeyboardInterrupt (Terminated under the CLI)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), held[0])


_TEMP_STEM_BYTES = 40


def _temp_name(p: Path) -> Path:
    """A temporary name beside ``p``: ``.STEM.RANDOM.tmp``, STEM the start of ``p``'s name
    cut to 40 bytes, so that a name near NAME_MAX (255 bytes) still has a temporary one."""
    stem = p.name[:_TEMP_STEM_BYTES]
    while len(stem.encode("utf-8", "surrogatepass")) > _TEMP_STEM_BYTES:
        stem = stem[:-1]
    parent = p.parent if str(p.parent) else Path(".")
    return parent / f".{stem}.{secrets.token_hex(4)}.tmp"


def _create_temp(p: Path) -> tuple[Path, BinaryIO]:
    """The temporary file for ``p``, created (O_EXCL, mode 0600) and opened for binary
    writing. Call it under ``signals_deferred`` and assign its result there: a signal then
    acts once the caller knows the name to remove."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = _temp_name(p)
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:
            continue
        try:
            return tmp, os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(p))


def atomic_write(path: str | Path, content: str | bytes | BinaryIO, force: bool = False) -> Path:
    """Write ``content`` (text, bytes, or a binary file read to its end) to ``path`` all at
    once: readers of ``path`` see the old file or the complete new one, never a part; on any
    failure (disk full, Ctrl-C) nothing is left. A file replaced under ``force`` keeps its
    permission bits (a 0600 output stays private).

    Signals (Ctrl-C, SIGTERM, SIGHUP) interrupt the writing itself; around the temporary
    file's creation, the rename into place and the removal of the temporary file they are
    deferred (``signals_deferred``): an interrupted write leaves the complete output or none,
    and never the temporary file."""
    p = check_writable(path, force)
    data = clean_text(content).encode("utf-8") if isinstance(content, str) else content
    tmp: Path | None = None
    try:
        with signals_deferred():
            tmp, fh = _create_temp(p)
        with fh:
            if isinstance(data, bytes):
                fh.write(data)
            else:
                shutil.copyfileobj(data, fh, 1 << 20)
        with signals_deferred():
            try:
                mode = stat.S_IMODE(os.stat(p).st_mode)  # the file --force replaces: its mode
            except FileNotFoundError:
                # Created 0600; outputs are shared, so give them the usual umask mode.
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)
            if force:
                os.replace(tmp, p)
            else:
                _create_exclusively(str(tmp), p)
            tmp = None  # in place: nothing to remove, whatever comes now
    except BaseException as e:
        if tmp is not None:
            with signals_deferred(), contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(e, FileExistsError):
            raise OutputError(f"{p} exists", hint="use --force to overwrite") from e
        if isinstance(e, OSError):
            raise OutputError(f"cannot write {p}: {e.strerror or e}") from e
        raise
    return p
