"""Run a reader in a child process, so that a native crash of NVIDIA's ``ncu_report`` module
on a damaged report becomes a typed error instead of killing drgpu without a word.

Contract: ``in_child(fn, *args, what=PATH, **kwargs)`` returns ``fn(*args, **kwargs)`` or
raises what it raised (typed errors keep their message and hint; one that cannot cross the
process boundary arrives as ``RuntimeError`` naming it). A child that dies of a signal or
exits without an answer raises :class:`ReportFormatError` naming ``what`` and the signal
(exit 4). Ctrl-C kills the child and is re-raised. ``in_children(calls, what=PATH)`` runs
several calls in children at once and returns their results in order. Where a child cannot
be used safely, or with ``DRGPU_READ_IN_PROCESS=1``, the call runs in this process, unguarded.
``start(fn, *args, **kwargs)`` starts one call in a child and returns at once: its
``collect(what)`` is ``in_child``'s outcome, ``stop()`` kills a child whose answer is not
wanted; None where ``in_child`` would run the call in this process.

How and when: docs/performance.md, "Reading in child processes".
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from typing import Any, Callable

from ..errors import ReportFormatError

_HINT = (
    "the report is damaged (NVIDIA's ncu_report module crashed reading it): copy or profile it again; "
    "if ncu itself opens it, try a newer ncu_report (pip install -U ncu-report)"
)


def _signal_name(n: int) -> str:
    try:
        return f"signal {n}, {signal.Signals(n).name}"
    except ValueError:
        return f"signal {n}"


def _in_process() -> bool:
    return not hasattr(os, "fork") or bool(os.environ.get("DRGPU_READ_IN_PROCESS")) or "ncu_report" in sys.modules


def in_child(fn: Callable[..., Any], *args, what: str, **kwargs) -> Any:
    if _in_process():
        return fn(*args, **kwargs)
    return _collect(*_start(fn, args, kwargs), what)


def in_children(calls: list[tuple[Callable[..., Any], tuple, dict]], what: str) -> list:
    """``in_child`` of each ``(fn, args, kwargs)``, all children running at once; results in
    order. The first failure (in call order) is raised, after every other child is stopped."""
    if _in_process():
        return [fn(*args, **kwargs) for fn, args, kwargs in calls]
    started = []
    try:
        for fn, args, kwargs in calls:
            started.append(_start(fn, args, kwargs))
        out = []
        while started:
            pid, r = started.pop(0)
            out.append(_collect(pid, r, what))
        return out
    finally:
        for pid, r in started:  # after a failure: the others' answers are not wanted
            _kill(pid)
            os.close(r)


class Started:
    """A call running in a child process (``start``); collected once, or stopped."""

    def __init__(self, pid: int, r: int) -> None:
        self._pid, self._r = pid, r
        self._open = True

    def collect(self, what: str) -> Any:
        """The call's result, or what it raised (as ``in_child``)."""
        if not self._open:
            raise RuntimeError("the child's answer was collected or stopped already")
        self._open = False
        return _collect(self._pid, self._r, what)

    def stop(self) -> None:
        """Kill the child and close its pipe, unless it was collected; idempotent."""
        if self._open:
            self._open = False
            _kill(self._pid)
            os.close(self._r)


def start(fn: Callable[..., Any], *args, **kwargs) -> Started | None:
    if _in_process():
        return None
    return Started(*_start(fn, args, kwargs))


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def _start(fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[int, int]:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(
            OSError, ValueError, AttributeError
        ):  # what the parent buffered must not be written twice
            stream.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child; its outcome is what the tests see
        code = 0
        try:
            os.close(r)
            import faulthandler

            faulthandler.disable()  # the parent reports a crash; no traceback dump from here
            try:
                answer = ("ok", fn(*args, **kwargs))
            except BaseException as e:  # noqa: BLE001 - every outcome goes to the parent
                answer = ("err", e)
            try:
                payload = pickle.dumps(answer, protocol=5)
            except Exception as e:  # noqa: BLE001 - an unpicklable exception or result
                payload = pickle.dumps(
                    (
                        "err",
                        RuntimeError(
                            f"{type(answer[1]).__name__}: {answer[1]}"
                            if answer[0] == "err"
                            else f"unpicklable result ({e})"
                        ),
                    )
                )
            with os.fdopen(w, "wb") as fh:
                fh.write(payload)
        except BaseException:  # noqa: BLE001 - never return into the parent's code
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _collect(pid: int, r: int, what: str) -> Any:
    try:
        with os.fdopen(r, "rb") as fh:
            payload = fh.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:
        # Ctrl-C (or a signal turned into an exception) while the child reads: stop it too.
        _kill(pid)
        raise
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGINT:
            raise KeyboardInterrupt
        raise ReportFormatError(f"{what} is corrupt: ncu_report crashed reading it ({_signal_name(sig)})", hint=_HINT)
    try:
        kind, value = pickle.loads(payload)
    except Exception:  # noqa: BLE001 - the child died before it could answer
        raise ReportFormatError(
            f"{what} could not be read: the reading process exited with code {os.WEXITSTATUS(status)} and no answer",
            hint=_HINT,
        ) from None
    if kind == "err":
        raise value
    return value
