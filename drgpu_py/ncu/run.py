"""Find and run ncu.

Contract:
- ``find_ncu(explicit)``: ``--ncu``, else $NCU, else ncu on PATH, else the CUDA toolkit's;
  ToolNotFoundError when there is none.
- ``with_log_file(argv, private_log())`` gives ncu ``--log-file`` in a private folder, named
  before the argument list is built so that the list printed (``drgpu profile --dry-run``),
  run and recorded is one list; ``run_ncu(argv, log_path, on_event, ncu_log=...)`` runs that
  list as it is (an argument list, never a shell line), making the folder for the run and
  removing it after: ncu's own messages (progress, errors, reports) are read from there and
  parsed into :class:`~drgpu_py.ncu.console.Event` callbacks; the console,
  which the application shares, is relayed as ``output`` events and decides nothing (an
  application printing ``==ERROR== ...`` changes no outcome). Both are teed to ``log_path``
  line by line; it returns a :class:`RunResult`. ncu runs in
  a process group of its own (with the application it starts): Ctrl-C, SIGTERM or SIGHUP
  reaching drgpu stop that whole group (``stop``), Ctrl-C gently (ncu writes what it
  profiled), and the result says ``interrupted`` (``signum``: which); nothing written is
  deleted. ``timeout_s`` stops a run that has not ended by then the same way and sets
  ``timed_out``.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import OutputError, ToolNotFoundError
from ..io import open_output_text
from .console import APP_CODE, UNAVAILABLE, KEPT_MESSAGES, AppOutput, Event, OutputParser

NCU_HELP_URL = "https://developer.nvidia.com/nsight-compute"


def find_ncu(explicit: str | None = None, env: dict | None = None) -> str:
    """Path of ncu: ``--ncu``, else $NCU, else ncu on PATH, else the CUDA toolkit's."""
    env = dict(os.environ if env is None else env)
    cand = explicit or env.get("NCU")
    if cand:
        return _named_ncu(cand, env)
    found = shutil.which("ncu", path=env.get("PATH"))
    if found:
        return found
    for root in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "ncu"), os.X_OK):
            return os.path.join(root, "bin", "ncu")
    raise ToolNotFoundError(
        "Nsight Compute (ncu) is not installed or not on PATH",
        hint=f"install the CUDA toolkit or Nsight Compute ({NCU_HELP_URL}), then put ncu on PATH or give --ncu PATH",
    )


def _named_ncu(cand: str, env: dict) -> str:
    """The ncu ``--ncu`` or $NCU names: a command looked up on PATH, or an executable file."""
    if os.sep not in cand:
        found = shutil.which(cand, path=env.get("PATH"))
    else:
        found = cand if os.access(cand, os.X_OK) and os.path.isfile(cand) else None
    if not found:
        raise ToolNotFoundError(
            f"ncu not found at {cand!r}",
            hint=f"give the path of Nsight Compute's ncu with --ncu or NCU=; it ships with the CUDA toolkit and at {NCU_HELP_URL}",
        )
    return found


@dataclass
class KernelRun:
    name: str
    launch: int
    passes: int | None


@dataclass
class RunResult:
    argv: list[str]
    returncode: int | None
    log_path: Path
    wall_s: float
    kernels: list[KernelRun] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)  # as ncu announced them
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    app_exit_code: int | None = None
    interrupted: bool = False
    processes: int = 0
    signum: int | None = None  # the signal that interrupted drgpu (SIGINT, SIGTERM, SIGHUP)
    timed_out: bool = False
    dropped_messages: int = 0  # ncu errors/warnings beyond KEPT_MESSAGES (the log has them all)

    @property
    def permission_denied(self) -> bool:
        return any("ERR_NVGPUCTRPERM" in e for e in self.errors)

    @property
    def ncu_unavailable_metrics(self) -> list[str]:
        out: list[str] = []
        for w in self.warnings:
            m = UNAVAILABLE.search(w)
            if m:
                out += [x.strip() for x in m.group(1).split(",") if x.strip()]
        return out


def stop(proc: subprocess.Popen, steps) -> None:
    """Stop ncu and the application it runs (their own process group): each (signal, wait)
    in turn until ncu has exited. SIGINT first makes ncu write what it profiled."""
    for sig, wait in steps:
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        except OSError:
            proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(OSError):  # what ncu left of the group (an application that ignored ncu's signals)
        os.killpg(proc.pid, signal.SIGKILL)


def _stop_steps(signum: int, grace_s: float) -> tuple:
    """Ctrl-C (or a timeout): ask ncu to save what it profiled, then insist. SIGTERM/SIGHUP:
    whoever sent it wants drgpu gone soon (a scheduler kills after a grace period), so
    terminate at once and kill after a short wait."""
    if signum == signal.SIGINT:
        return ((signal.SIGINT, grace_s), (signal.SIGINT, 30.0), (signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0))
    return ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0))


class _LineTee:
    """One source's text into the shared log, whole lines at a time (ncu's messages and the
    application's output interleave by line, never mid-line); a line longer than 64 KiB
    goes out in pieces, so memory stays bounded."""

    def __init__(self, log) -> None:
        self.log = log
        self.tail = ""

    def write(self, text: str) -> None:
        if "\n" in text:
            head, _, self.tail = (self.tail + text).rpartition("\n")
            self.log.write(head + "\n")
        else:
            self.tail += text
        if len(self.tail) > 1 << 16:
            self.log.write(self.tail)
            self.tail = ""
        self.log.flush()

    def close(self) -> None:
        if self.tail:
            self.log.write(self.tail + "\n")
            self.tail = ""
        self.log.flush()


def private_log() -> Path:
    """Where ncu is to write its own messages (``--log-file``): ``ncu.log`` in a folder of the
    temporary directory named at random and not made yet (``run_ncu`` makes it for the run).
    Named before ncu's argument list is built, so that ``drgpu profile --dry-run`` prints
    the list a run passes, and nothing is made by a dry run."""
    return Path(tempfile.gettempdir()) / f"drgpu-ncu-{secrets.token_hex(8)}" / "ncu.log"


def with_log_file(argv: list[str], ncu_log: Path) -> list[str]:
    """ncu's argument list ``argv`` with ``--log-file ncu_log`` after the program."""
    return [argv[0], "--log-file", str(ncu_log), *argv[1:]]


@contextlib.contextmanager
def _private_folder(folder: Path):
    """``folder`` made for the run (mode 0700; a name already taken is refused, never
    shared) and removed with what ncu wrote there once the run is over."""
    try:
        os.mkdir(folder, 0o700)
    except OSError as e:
        raise OutputError(f"cannot create a private folder for ncu's log: {folder}: {e.strerror}") from e
    try:
        yield
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_ncu(
    argv: list[str],
    log_path: Path,
    on_event: Callable[[Event], None] | None = None,
    env: dict | None = None,
    cwd: str | Path | None = None,
    sigint_grace_s: float = 5.0,
    timeout_s: float | None = None,
    ncu_log: Path | None = None,
) -> RunResult:
    """Run ``argv`` as it is (argument list, no shell), tee its console to ``log_path``,
    report events.

    ``ncu_log``: the file that ``argv``'s ``--log-file`` names (``with_log_file`` with
    ``private_log()``); its folder is made for the run and removed after. ncu writes its own
    messages there and only they are parsed (progress, errors, reports, the application's
    exit code, a shutdown); the console, which ncu shares with the application, is relayed
    as ``output`` events and decides nothing. Both go to ``log_path``, line by line. None:
    ``argv`` has no ``--log-file`` of drgpu's and the console is parsed."""
    if ncu_log is None:
        return _run(argv, log_path, on_event, env, cwd, sigint_grace_s, timeout_s, None)
    with _private_folder(ncu_log.parent):
        return _run(argv, log_path, on_event, env, cwd, sigint_grace_s, timeout_s, ncu_log)


def _run(  # noqa: C901, PLR0912, PLR0915 - one event loop over the child's output, ncu's log, signals and timeout
    argv: list[str],
    log_path: Path,
    on_event: Callable[[Event], None] | None,
    env: dict | None,
    cwd: str | Path | None,
    sigint_grace_s: float,
    timeout_s: float | None,
    ncu_log: Path | None,
) -> RunResult:
    parser = OutputParser()  # ncu's own messages
    console: OutputParser | AppOutput = AppOutput() if ncu_log is not None else parser
    result = RunResult(argv=list(argv), returncode=None, log_path=Path(log_path), wall_s=0.0)
    t0 = time.monotonic()

    def handle(events: list[Event]) -> None:
        for ev in events:
            _record_event(result, ev)
            if on_event:
                on_event(ev)

    # Never a blocking open: a FIFO at the log's name (with --force) is refused, not waited on.
    with open_output_text(log_path) as log:
        log.write("# " + " ".join(_quote(a) for a in argv) + "\n")
        log.flush()
        console_tee, ncu_tee = _LineTee(log), _LineTee(log)
        console_text = codecs.getincrementaldecoder("utf-8")("replace")
        ncu_text = codecs.getincrementaldecoder("utf-8")("replace")
        ncu_fh = None

        def from_console(data: bytes, final: bool = False) -> None:
            text = console_text.decode(data, final)
            console_tee.write(text)
            handle(console.feed(text))

        def from_ncu_log(final: bool = False) -> None:
            """What ncu added to its log file since the last call (the whole rest if ``final``)."""
            nonlocal ncu_fh
            if ncu_log is None:
                return
            if ncu_fh is None:
                try:
                    # Read as ncu writes it, across calls; closed when the run ends.
                    ncu_fh = open(ncu_log, "rb")  # noqa: SIM115
                except OSError:
                    return  # not written yet (or never: an ncu that failed before opening it)
            while data := ncu_fh.read(1 << 16):
                text = ncu_text.decode(data)
                ncu_tee.write(text)
                handle(parser.feed(text))
            if final:
                ncu_tee.write(ncu_text.decode(b"", True))

        try:
            # A process group of its own: a signal to drgpu can then stop ncu and the
            # application together, without drgpu signalling itself.
            proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=cwd,
                bufsize=0,
                process_group=0,
            )
        except FileNotFoundError as e:
            raise ToolNotFoundError(
                f"cannot run {argv[0]}: not found", hint=f"install Nsight Compute ({NCU_HELP_URL}) or give --ncu PATH"
            ) from e
        except PermissionError as e:
            raise ToolNotFoundError(
                f"cannot run {argv[0]}: permission denied", hint="give the path of an executable ncu with --ncu"
            ) from e
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        watchdog = None
        if timeout_s is not None:

            def expire() -> None:
                result.timed_out = True
                stop(proc, ((signal.SIGINT, sigint_grace_s), (signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)))

            watchdog = threading.Timer(timeout_s, expire)
            watchdog.daemon = True
            watchdog.start()
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], 0.1)
                if ready:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    from_console(chunk)
                from_ncu_log()
            result.returncode = proc.wait()
            from_console(b"", final=True)
            from_ncu_log(final=True)
            handle(console.close() + (parser.close() if console is not parser else []))
        except KeyboardInterrupt as e:
            result.interrupted = True
            result.signum = getattr(e, "signum", signal.SIGINT)
            if watchdog is not None:
                watchdog.cancel()
            stop(proc, _stop_steps(result.signum, sigint_grace_s))
            try:
                rest = proc.stdout.read() or b""
            except (OSError, ValueError):
                rest = b""
            from_console(rest, final=True)
            from_ncu_log(final=True)
            handle(console.close() + (parser.close() if console is not parser else []))
            result.returncode = proc.poll()
            console_tee.close()
            ncu_tee.close()
            log.write(
                "\n# drgpu: interrupted by the user\n"
                if result.signum == signal.SIGINT
                else f"\n# drgpu: stopped by {signal.Signals(result.signum).name}\n"
            )
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if ncu_fh is not None:
                ncu_fh.close()
        console_tee.close()
        ncu_tee.close()
        if result.timed_out:
            log.write(f"\n# drgpu: ncu did not finish within {timeout_s:g} s and was stopped\n")
    result.wall_s = time.monotonic() - t0
    return result


def _record_event(result: RunResult, ev: Event) -> None:
    """What a console event adds to the run's result."""
    if ev.kind == "kernel_done":
        result.kernels.append(KernelRun(ev.kernel or "?", ev.launch or 0, ev.passes))
    elif ev.kind == "report":
        result.reports.append(Path(ev.text))
    elif ev.kind == "error":
        _record_error(result, ev.text)
    elif ev.kind == "warning":
        _record_warning(result, ev.text)
    elif ev.kind == "connected":
        result.processes += 1
    elif ev.kind == "shutdown":
        result.interrupted = True  # a signal reached ncu (Ctrl-C, kill): same as ours


def _record_error(result: RunResult, text: str) -> None:
    """An error message: the application's exit code when it gives one; kept up to
    KEPT_MESSAGES, beyond that only the exit code's and the permission error, the rest counted."""
    m = APP_CODE.search(text)
    if m:
        result.app_exit_code = int(m.group(1))
    if len(result.errors) < KEPT_MESSAGES or m or "ERR_NVGPUCTRPERM" in text:
        result.errors.append(text)
    else:
        result.dropped_messages += 1


def _record_warning(result: RunResult, text: str) -> None:
    """A warning: kept up to KEPT_MESSAGES, beyond that only those naming unavailable metrics."""
    if len(result.warnings) < KEPT_MESSAGES or UNAVAILABLE.search(text):
        result.warnings.append(text)
    else:
        result.dropped_messages += 1


def _quote(a: str) -> str:
    # Display only (the log's first line); the command itself never goes through a shell.
    return a if re.fullmatch(r"[A-Za-z0-9_./:=,%{}+-]+", a) else "'" + a.replace("'", "'\\''") + "'"
