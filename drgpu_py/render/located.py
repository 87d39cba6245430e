"""Findings as located problems, for the outputs that code-scanning tools and editors read
(``sarif.py``, ``gcc.py``): one problem per finding and kernel group, with its level, the time
its fix would save, and its source lines with their paths mapped.

Contract: ``problems(analysis) -> list[Problem]`` is pure and in the analysis' order
(kernel groups, then each group's ranked findings). A problem's ``level`` is SARIF's
(``error``, ``warning``, ``note``) from the finding's severity and the share of the profiled
GPU time its fix would save (``saved_share``, None without measured durations), with the
thresholds ``error_saved_share`` and ``warning_saved_share`` (specs/thresholds.yaml; the
rule: ``level``). Paths: a report names its source files as the profiling machine saw
them; ``PathMapping`` entries (``--source-root DIR``, ``--path-map FROM=TO``) rewrite the
folder FROM at the start of a path into TO (empty: relative to FROM). ``map_path`` applies
the longest FROM that matches; a path no mapping matches is left as it is.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from ..errors import UsageError
from ..profile import short_name
from ..specs import loader as data

#: Severity -> level where the report has no durations (the time share is not measured).
SEVERITY_LEVEL = {"high": "error", "medium": "warning", "low": "note"}


@dataclass(frozen=True)
class PathMapping:
    """A folder prefix of the report's source paths (``source``, as the profiling machine
    named it) and what replaces it (``target``): empty for paths relative to ``source``, a
    relative folder, or an absolute folder of this machine. ``local``: ``source`` is a
    relative ``--source-root`` made absolute here, so its text is a path of the analysing
    machine, which no output writes (SARIF leaves its base to the reader)."""

    source: str
    target: str = ""
    local: bool = False

    @property
    def relative(self) -> bool:
        return not _is_absolute(self.target)


def parse_path_map(text: str) -> PathMapping:
    """``FROM=TO`` (``--path-map``) as a PathMapping; FROM must be an absolute folder."""
    source, sep, target = text.partition("=")
    if not sep or not source.strip():
        raise UsageError(f"--path-map takes FROM=TO, got {text!r}", hint="e.g. --path-map /opt/build/src=src")
    if not _is_absolute(source):
        raise UsageError(f"--path-map FROM must be an absolute folder (as the report names its files), got {source!r}")
    return PathMapping(_strip_sep(source), _strip_sep(target) if target not in ("", ".", "./") else "")


def source_root(folder: str | os.PathLike) -> PathMapping:
    """``--source-root DIR``: files under DIR (made absolute) are named relative to it."""
    given = os.fspath(folder)
    return PathMapping(_strip_sep(os.path.abspath(given)), "", local=not _is_absolute(given))


def _is_absolute(path: str) -> bool:
    return PurePosixPath(path).is_absolute() or bool(PureWindowsPath(path).drive)


def _strip_sep(path: str) -> str:
    stripped = path.rstrip("/\\")
    return stripped or path[:1]  # "/" stays the root


def map_path(path: str, mappings: tuple[PathMapping, ...] | list[PathMapping]) -> tuple[str, int | None]:
    """(``path`` rewritten by the longest mapping whose folder holds it, that mapping's index),
    or (``path``, None) when none does. Separators after the folder may be / or \\."""
    best: int | None = None
    for i, m in enumerate(mappings):
        src = m.source
        inside = path == src or (
            path.startswith(src) and (src.endswith(("/", "\\")) or path[len(src) : len(src) + 1] in ("/", "\\"))
        )
        if inside and (best is None or len(src) > len(mappings[best].source)):
            best = i
    if best is None:
        return path, None
    m = mappings[best]
    rest = path[len(m.source) :].lstrip("/\\").replace("\\", "/")
    if not m.target:
        return rest or ".", best
    return (m.target.rstrip("/\\") + "/" + rest) if rest else m.target, best


def level(severity: str, saved_share: float | None, th) -> str:
    """SARIF's level of a finding: ``error`` only for a high finding whose fix would save at
    least ``error_saved_share`` of the profiled GPU time, ``warning`` for a high or medium one
    saving at least ``warning_saved_share``, else ``note``; without measured durations
    (``saved_share`` None) the severity's (high error, medium warning, low note)."""
    if saved_share is None:
        return SEVERITY_LEVEL.get(severity, "note")
    if severity == "high" and saved_share >= th["error_saved_share"]:
        return "error"
    if severity in ("high", "medium") and saved_share >= th["warning_saved_share"]:
        return "warning"
    return "note"


@dataclass
class Problem:
    """One finding of one kernel group as a located problem."""

    finding: Any  # analysis.findings.Finding
    kernel: Any  # profile.KernelProfile (the group's)
    level: str
    report: str  # the report file the kernel came from
    time_saved_ns: float | None  # in the profiled run (groups.time_saved); None: not measured
    saved_share: float | None  # of the profiled GPU time; None: not measured
    lines: list[dict[str, Any]] = field(default_factory=list)  # the finding's locations with a file and line

    @property
    def short_kernel(self) -> str:
        return short_name(self.kernel.name or "", 60)

    def message(self) -> str:
        """One line: title, kernel, estimate, time saved, advice."""
        f = self.finding
        saved = ""
        if self.time_saved_ns is not None and self.saved_share is not None:
            saved = f"; saves {self.time_saved_ns / 1e3:,.1f} µs, {_pct(self.saved_share)} of the profiled GPU time"
        where = ""
        if not self.lines and f.locations:
            from ..analysis.tree import location_text

            where = f" at {location_text(f.locations[0])}"
        return f"{f.title} in {self.short_kernel}{where} (est. {f.speedup_text()}{saved}): {' '.join(f.advice.split())}"


def _pct(share: float) -> str:
    pct = 100.0 * share
    return f"{pct:.0f}%" if pct >= 10 else f"{pct:.2g}%"


def thresholds_of(analysis):
    """The thresholds the analysis ran with (its kernels' context), else the defaults."""
    for ka in analysis.kernels:
        if getattr(ka, "context", None) is not None:
            return ka.context.th
    return data.thresholds()


_FROM_NOTE = re.compile(r"^from (.+) \(id \d+ there\)$")


def report_of(analysis, kernel) -> str:
    """The report file a kernel group came from: the analysis' one report; of several
    reports side by side, the one its note names; of merged ranks, the first."""
    paths = str(analysis.profile.path or "").split(" + ")
    if len(paths) > 1:
        for note in kernel.notes:
            m = _FROM_NOTE.match(note)
            if m and m[1] in paths:
                return m[1]
    return paths[0]


def problems(analysis) -> list[Problem]:
    # The analysis' modules load with the output that needs them: the path options are
    # parsed (parse_path_map, source_root) before a report is read.
    from ..analysis import groups

    th = thresholds_of(analysis)
    totals = [groups.total_ns(ka.kernel) for ka in analysis.kernels]
    profiled = sum(t for t in totals if t is not None)
    out = []
    for ka, total in zip(analysis.kernels, totals):
        report = report_of(analysis, ka.kernel)
        for f in ka.findings:
            saved = groups.time_saved(total, f.estimated_speedup)
            share = saved / profiled if saved is not None and profiled > 0 else None
            lines = [loc for loc in f.locations if loc.get("file") and loc.get("line")]
            out.append(
                Problem(
                    finding=f,
                    kernel=ka.kernel,
                    level=level(f.severity, share, th),
                    report=report,
                    time_saved_ns=saved if share is not None else None,
                    saved_share=share,
                    lines=lines,
                )
            )
    return out
