"""ncu's console output as events: ``OutputParser.feed(chunk)`` turns the stream (chunks,
possibly mid-line) into :class:`Event` s (a launch started, replay progress, a launch done
with its pass count, processes connecting, reports written, errors, warnings, a shutdown,
anything else). ``AppOutput`` does the same for the application's console, whose every
line is ``output`` whatever it says: ncu writes its own messages to its ``--log-file``, which
the application does not share, so a line the application prints ("==ERROR== The
application returned an error code (3).") never decides anything. Pure: no process, no file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# With a kernel filter (-k) ncu leaves the launch id out: 'Profiling "damp": 0%...'.
_PROFILING = re.compile(
    r'^==PROF== Profiling "(?P<name>.+?)"(?: - (?P<launch>\d+)(?: \((?P<i>\d+)/(?P<n>\d+)\))?)?:\s?(?P<rest>.*)$'
)
_PASSES = re.compile(r"- (\d+) pass(?:es)?\s*$")
_CONNECTED = re.compile(r"^==PROF== Connected to process (\d+) \((.*)\)")
_DISCONNECTED = re.compile(r"^==PROF== Disconnected from process (\d+)")
_REPORT = re.compile(r"^==PROF== Report: (.+?)\s*$")
APP_CODE = re.compile(r"The application returned an error code \((-?\d+)\)")
UNAVAILABLE = re.compile(r"Unable to access the following \d+ metrics?: (.*?)\.?\s*$")
# An ncu (or application) that floods its console: the log keeps every line; the run's
# record and memory keep the first errors and warnings (and every one drgpu acts on).
KEPT_MESSAGES = 100
#: What ncu prints when it got SIGINT/SIGTERM: it kills the application, then writes the report
#: of the launches it finished (seen with ncu 2025.3.1, mid progress line).
_SHUTDOWN = "==PROF== Trying to shutdown target application"


@dataclass
class Event:
    """One thing ncu said. kind: connected, kernel (a launch started), progress (pct),
    kernel_done (passes; None when cut short), disconnected, report, error, warning,
    shutdown (ncu was told to stop), output (anything else)."""

    kind: str
    text: str
    kernel: str | None = None
    launch: int | None = None
    index: tuple[int, int] | None = None
    pct: int | None = None
    passes: int | None = None
    pid: int | None = None


def _pct(rest: str) -> int:
    marks = list(re.finditer(r"(\d+)%", rest))
    if not marks:
        return 0
    last = marks[-1]
    return min(100, int(last.group(1)) + 10 * rest[last.end() :].count("."))


class OutputParser:
    """Turns ncu's console stream (chunks, possibly mid-line) into :class:`Event`s. A
    Profiling line grows while replay passes run ("0%....50%...."), so the unfinished tail
    is inspected too.

    Linear in the stream's length: only the first ``MAX_LINE`` characters of a line are kept
    and parsed (ncu's own lines are short; the log keeps everything), so an application
    printing megabytes without a newline costs no more than its length (it was quadratic)."""

    MAX_LINE = 1 << 16

    def __init__(self) -> None:
        self._tail = ""  # the unfinished line, at most MAX_LINE
        self._open: tuple[str, int, int] | None = None  # kernel, launch, last pct of the tail
        self._seq = 0  # launches profiled without an id so far (ncu omits it under -k)

    def _key(self, m) -> tuple[str, int]:
        return (m["name"], int(m["launch"]) if m["launch"] is not None else self._seq)

    def _keep(self, piece: str) -> None:
        if len(self._tail) < self.MAX_LINE:
            self._tail += piece[: self.MAX_LINE - len(self._tail)]

    def _take(self) -> str:
        tail, self._tail = self._tail, ""
        return tail

    def feed(self, chunk: str) -> list[Event]:
        events: list[Event] = []
        if "\n" in chunk:
            pieces = chunk.split("\n")
            self._keep(pieces[0])
            events += self._line(self._take().rstrip("\r"))
            for line in pieces[1:-1]:
                events += self._line(line[: self.MAX_LINE].rstrip("\r"))
            self._keep(pieces[-1])
        else:
            self._keep(chunk)
        if self._tail.startswith("==PROF== Profiling") and len(self._tail) < self.MAX_LINE:
            m = _PROFILING.match(buf := self._tail)
            if m:
                key = self._key(m)
                pct = _pct(m["rest"])
                if self._open is None or self._open[:2] != key:
                    events.append(self._start(m))
                    self._open = (*key, -1)
                if pct != self._open[2]:
                    events.append(Event("progress", buf, kernel=key[0], launch=key[1], pct=pct))
                    self._open = (*key, pct)
        return events

    def close(self) -> list[Event]:
        tail = self._take()
        return self._line(tail.rstrip("\r\n")) if tail.strip() else []

    def _start(self, m) -> Event:
        idx = (int(m["i"]), int(m["n"])) if m["i"] else None
        return Event("kernel", m.group(0), kernel=m["name"], launch=self._key(m)[1], index=idx)

    def _line(self, line: str) -> list[Event]:
        if _SHUTDOWN in line:
            head = line[: line.index(_SHUTDOWN)]
            return (self._line(head) if head.strip() else []) + [Event("shutdown", _SHUTDOWN)]
        out: list[Event] = []
        m = _PROFILING.match(line)
        if m:
            key = self._key(m)
            if self._open is None or self._open[:2] != key:
                out.append(self._start(m))
            self._open = None
            if m["launch"] is None:
                self._seq += 1
            pm = _PASSES.search(m["rest"])
            out.append(
                Event(
                    "kernel_done",
                    line,
                    kernel=key[0],
                    launch=key[1],
                    pct=_pct(m["rest"]),
                    passes=int(pm.group(1)) if pm else None,
                )
            )
            return out
        if c := _CONNECTED.match(line):
            return [Event("connected", line, pid=int(c.group(1)))]
        if d := _DISCONNECTED.match(line):
            return [Event("disconnected", line, pid=int(d.group(1)))]
        if r := _REPORT.match(line):
            return [Event("report", r.group(1))]
        if line.startswith("==ERROR=="):
            return [Event("error", line[len("==ERROR==") :].strip())]
        if line.startswith("==WARNING=="):
            return [Event("warning", line[len("==WARNING==") :].strip())]
        return [Event("output", line)]


class AppOutput:
    """The application's console as ``output`` events, one per line (the first
    ``OutputParser.MAX_LINE`` characters of each): it may print anything, ncu's message
    prefixes included, and none of it is parsed."""

    MAX_LINE = OutputParser.MAX_LINE

    def __init__(self) -> None:
        self._tail = ""

    def feed(self, chunk: str) -> list[Event]:
        if "\n" not in chunk:
            if len(self._tail) < self.MAX_LINE:
                self._tail += chunk[: self.MAX_LINE - len(self._tail)]
            return []
        pieces = chunk.split("\n")
        first = (self._tail + pieces[0][: max(0, self.MAX_LINE - len(self._tail))]).rstrip("\r")
        events = [Event("output", first)]
        events += [Event("output", line[: self.MAX_LINE].rstrip("\r")) for line in pieces[1:-1]]
        self._tail = pieces[-1][: self.MAX_LINE]
        return events

    def close(self) -> list[Event]:
        tail, self._tail = self._tail, ""
        return [Event("output", tail.rstrip("\r"))] if tail.strip() else []
