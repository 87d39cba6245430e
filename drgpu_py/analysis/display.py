"""Short text and HTML forms of analyses and their kernels, for the REPL and notebooks (the
``__repr__``, ``_repr_pretty_`` and ``_repr_html_`` of Analysis, KernelAnalysis and their
saved forms).

Contract: pure functions of summary rows (``Analysis.summary()``, ``SavedAnalysis.summary``)
or of one kernel's facts; each form is bounded whatever the report's size: kernel names
shortened (``profile.short_name``), at most ``MAX_ROWS`` table rows and ``MAX_NAMED``
findings named in a repr, each text clipped; in HTML every text is escaped. The full data
is in the frames (analysis/frames.py) and ``to_dict()``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..profile import short_name, short_names
from .figures import speedup

#: Rows an HTML table shows (kernel groups, or a kernel's findings); a footer counts the rest.
MAX_ROWS = 10
#: Findings a kernel's repr names.
MAX_NAMED = 3
#: Characters of a kernel's short name in a table: as wide as the terminal summary's widest
#: (render/text.py, NAME_MOST), and different for different names (``profile.short_names``).
NAME_WIDTH = 60
#: Characters of a report path or a finding's title shown (longer ones are clipped in the middle).
MAX_TEXT = 60


@dataclass(frozen=True)
class FindingLine:
    """One finding as a kernel's repr and table show it."""

    id: str
    severity: str
    estimated_speedup: float | None
    time_saved_ns: float | None
    where: str | None
    title: str


class Printer(Protocol):
    """IPython's pretty printer, as ``_repr_pretty_`` uses it."""

    def text(self, text: str) -> Any: ...


def pretty(text: str, printer: Printer) -> None:
    """``_repr_pretty_``: IPython shows the short repr, not a walk of the object."""
    printer.text(text)


def clip(text: str | None, width: int = MAX_TEXT) -> str:
    text = text or ""
    return text if len(text) <= width else text[: width // 2 - 1] + "…" + text[-(width // 2) :]


def duration(ns: float | None) -> str:
    """A duration in ns, in the largest of ms, µs and ns that keeps it >= 1 ('n/a': not measured)."""
    if ns is None or math.isnan(ns):
        return "n/a"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def _speedup(x: float | None) -> str:
    return speedup(x)


def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def _totals(rows: Sequence[dict[str, Any]]) -> str:
    launches = sum(r.get("launches") or 0 for r in rows)
    total = sum(r["total_ns"] for r in rows if r.get("total_ns") is not None)
    findings = sum(len(r.get("findings") or ()) for r in rows)
    return (
        f"{_plural(len(rows), 'kernel group')} ({_plural(launches, 'launch', 'launches')}), "
        f"{duration(total)} of GPU time, {_plural(findings, 'finding')}"
    )


def _first(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(kernel row, finding) that would save the most time, or None."""
    best = [(r, f) for r in rows for f in r.get("findings") or () if (f.get("time_saved_ns") or 0) > 0]
    return max(best, key=lambda rf: rf[1]["time_saved_ns"]) if best else None


def analysis_repr(kind: str, report: str | None, rows: Sequence[dict[str, Any]]) -> str:
    """``<Analysis of REPORT: groups (launches), GPU time, findings; fix first: ...>``."""
    text = f"<{kind} of {clip(report) or 'no report'}: {_totals(rows)}"
    first = _first(rows)
    if first is not None:
        row, f = first
        text += (
            f"; fix first: {f['id']} in {short_name(row['name'] or '')} "
            f"({_speedup(f.get('estimated_speedup'))}, saves {duration(f['time_saved_ns'])})"
        )
    return text + ">"


def _table(caption: str, head: Sequence[str], body: Sequence[Sequence[str]], more: str | None) -> str:
    cell = "".join
    lines = [
        '<table class="drgpu">',
        f"<caption>{html.escape(caption)}</caption>",
        "<thead><tr>" + cell(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead>",
        "<tbody>",
        *("<tr>" + cell(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body),
        "</tbody>",
    ]
    if more:
        lines.append(f'<tfoot><tr><td colspan="{len(head)}">{html.escape(more)}</td></tr></tfoot>')
    lines.append("</table>")
    return "\n".join(lines)


def _pct(x: float | None, scale: float = 1.0) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{scale * x:.1f}%"


def analysis_html(report: str | None, rows: Sequence[dict[str, Any]]) -> str:
    """The kernel groups by GPU time (at most MAX_ROWS), with each one's top finding."""
    body = []
    short = short_names([r["name"] or "" for r in rows], NAME_WIDTH)
    for r in rows[:MAX_ROWS]:
        top = (r.get("findings") or [{}])[0]
        body.append(
            [
                short[r["name"] or ""],
                str(r["kernel_id"]),
                f"{r.get('launches') or 0:,}",
                duration(r.get("total_ns")),
                _pct(r.get("time_share"), 100.0),
                r.get("grade") or "n/a",
                f"{r['limiter']} {_pct(r.get('limiter_pct'))}" if r.get("limiter") else "n/a",
                top.get("id") or "",
                duration(top.get("time_saved_ns")) if top else "",
            ]
        )
    more = f"{len(rows) - MAX_ROWS:,} more kernel groups: kernels_frame() has all" if len(rows) > MAX_ROWS else None
    return _table(
        f"drgpu analysis of {clip(report) or 'no report'}: {_totals(rows)}",
        ["kernel", "kernel_id", "launches", "time", "share", "grade", "limiter", "top finding", "saves"],
        body,
        more,
    )


def _kernel_facts(
    kernel_id: int | None, name: str, launches: int | None, total_ns: float | None, bound: str | None, grade: str | None
) -> str:
    count = _plural(launches or 0, "launch", "launches")
    return (
        f"{short_name(name or '')} (id {kernel_id}): {count}, {duration(total_ns)}, "
        f"{bound or 'n/a'}-bound, grade {grade or 'n/a'}"
    )


def kernel_repr(
    kind: str,
    kernel_id: int | None,
    name: str,
    launches: int | None,
    total_ns: float | None,
    bound: str | None,
    grade: str | None,
    findings: Sequence[FindingLine],
) -> str:
    """``<KernelAnalysis NAME (id N): launches, time, bound, grade, findings: id (high, 2.10x), ...>``."""
    text = f"<{kind} {_kernel_facts(kernel_id, name, launches, total_ns, bound, grade)}, {_plural(len(findings), 'finding')}"
    if findings:
        named = ", ".join(f"{f.id} ({f.severity}, {_speedup(f.estimated_speedup)})" for f in findings[:MAX_NAMED])
        text += ": " + named + (", …" if len(findings) > MAX_NAMED else "")
    return text + ">"


def kernel_html(
    kernel_id: int | None,
    name: str,
    launches: int | None,
    total_ns: float | None,
    bound: str | None,
    grade: str | None,
    findings: Sequence[FindingLine],
) -> str:
    """A kernel's findings (at most MAX_ROWS), best first."""
    body = [
        [
            f.id,
            f.severity,
            _speedup(f.estimated_speedup),
            duration(f.time_saved_ns),
            f.where or "",
            clip(f.title),
        ]
        for f in findings[:MAX_ROWS]
    ]
    more = f"{len(findings) - MAX_ROWS:,} more findings: findings_frame() has all" if len(findings) > MAX_ROWS else None
    return _table(
        _kernel_facts(kernel_id, name, launches, total_ns, bound, grade) + f", {_plural(len(findings), 'finding')}",
        ["finding", "severity", "speedup", "saves", "where", "title"],
        body,
        more,
    )
