"""Application summary of a report with several kernel groups: the table of groups, the
time-share chart and the "fix first" list, each linked to its place in the kernel sections.

Contract: ``summary_view(analysis, kernels) -> dict | None`` takes the analysis and its kernel
views (views.kernel_view, in ``analysis.kernels`` order) and returns the summary's view data
(``rows``, ``chart``, ``fix``, ``dominant``: the kernel to look at first, counts and total
time); None for a report of one kernel group.
"""

from __future__ import annotations

from ...analysis import groups
from ...analysis.display import NAME_WIDTH
from ...profile import short_names
from ..quiet import Worth
from .charts import share_chart
from .common import unix_newlines, share_text
from ...analysis.figures import pct, speedup
from ..units import duration, missing

FIX_FIRST_MAX = 10  # findings in the summary's "fix first" list
# Characters of a kernel's short name in the summary table: as many as the terminal's summary
# and the frames give; the table scrolls inside its box in a narrow window.
SHORT_NAME_W = NAME_WIDTH


def _us(ns) -> str:
    return "n/a" if missing(ns) else f"{ns / 1e3:,.1f}"


def _sort_value(v) -> str:
    """A number as a data-value for the page's table sort ('' sorts last)."""
    return "" if missing(v) else repr(float(v))


def _speedup(row: dict) -> str:
    """A summary row's estimate, a lower bound when the model capped it (Finding.speedup_text)."""
    return ("≥" if row.get("estimate_capped") else "") + speedup(row["estimated_speedup"])


def _app_severity(f: dict) -> str:
    """A finding's severity in the whole run (groups.application_severity; its own in a
    summary saved without it): the badges of the summary and "fix first" follow the time saved."""
    return f.get("application_severity") or f["severity"]


def _row_kernels(analysis, rows: list[dict]) -> list[int]:
    """For each summary row, the index of its kernel group in ``analysis.kernels``: the first
    unused one with the row's id and name, preferring one with the row's total time (a report
    built by hand can hold two kernels with the same id and name)."""

    def total(i: int):
        t = groups.total_ns(analysis.kernels[i].kernel)
        return None if t is None else round(t, 1)

    free = list(range(len(analysis.kernels)))
    out = []
    for r in rows:
        same = [
            i
            for i in free
            if analysis.kernels[i].kernel.id == r["kernel_id"] and analysis.kernels[i].kernel.name == r["name"]
        ]
        i = next((j for j in same if total(j) == r["total_ns"]), same[0] if same else free[0])
        free.remove(i)
        out.append(i)
    return out


def summary_view(analysis, kernels: list[dict], worth: Worth | None = None) -> dict | None:
    """The application summary of a report with several kernel groups; None for one. Findings
    under the --hide-below estimate are left out of its top findings and "fix first" (the
    kernel sections leave them out too)."""
    if len(analysis.kernels) <= 1:
        return None
    worth = worth or Worth()
    rows = _summary_copy(analysis)
    total = sum(r["total_ns"] or 0.0 for r in rows)
    short = short_names([unix_newlines(r["name"]) for r in rows], SHORT_NAME_W)  # different names stay different
    table = []
    for r, i in zip(rows, _row_kernels(analysis, rows)):
        kv = kernels[i]
        _link_findings(r, kv)
        table.append(_table_row(r, kv, analysis.kernels[i].sol, short, worth))
    for t in table:
        t["sort"] = _sort_values(t)
    return {
        "rows": table,
        "chart": share_chart(table),
        "fix": _fix_first(rows, table, total, worth),
        "dominant": _look_first(analysis, table),
        "groups": len(rows),
        "launches": sum(r["launches"] for r in rows),
        "total": duration(total) if total > 0 else "n/a",
    }


def _summary_copy(analysis) -> list[dict]:
    """Copies of the analysis's summary rows: the page adds each finding's anchor and link to
    its rows, and the analysis's own summary (which JSON and text render) must not carry them."""
    return [dict(r, findings=[dict(f) for f in r["findings"]]) for r in analysis.summary()]


def _sort_values(t: dict) -> dict:
    """The keys the table's sortable columns sort by."""
    return {k: _sort_value(t[k + "_v"]) for k in ("total", "mean", "share", "limiter", "saved")}


def _link_findings(r: dict, kv: dict) -> None:
    """Where each finding of a summary row is on the page (for the "fix first" list): its
    block in the kernel's section, else the section."""
    ranks: dict[str, int] = {}
    for n, f in enumerate(kv["findings"], 1):
        ranks.setdefault(f["id"], n)
    for f in r["findings"]:
        f["anchor"] = kv["anchor"]
        f["href"] = f"#{kv['anchor']}-f{ranks[f['id']]}" if f["id"] in ranks else "#" + kv["anchor"]


def _limiter_text(r: dict, sol) -> str:
    """The unit the speed of light grades the kernel by, and its share of peak."""
    label = sol.labels.get(r["limiter"], r["limiter"]) if sol is not None and r["limiter"] else ""
    return f"{label.split(' (')[0]} {pct(r['limiter_pct'])}%" if label and r["limiter_pct"] is not None else ""


def _top_cell(top: dict | None) -> dict | None:
    if top is None:
        return None
    return {
        "id": top["id"],
        "severity": _app_severity(top),
        "kernel_severity": top["severity"],
        "href": top["href"],
        "speedup": _speedup(top),
    }


def _table_row(r: dict, kv: dict, sol, short: dict[str, str], worth: Worth) -> dict:
    """A kernel group's row of the summary table: each value as shown and as sorted."""
    top = next((f for f in r["findings"] if worth.finding(f["estimated_speedup"])), None)
    name = unix_newlines(r["name"])
    return {
        "anchor": kv["anchor"],
        "id": r["kernel_id"],
        "name": name,
        "short": short[name] if name.strip() else f"kernel {r['kernel_id']}",
        "launches": r["launches"],
        "total": _us(r["total_ns"]),
        "total_v": r["total_ns"],
        "mean": _us(r["mean_ns"]),
        "mean_v": r["mean_ns"],
        "share": share_text(r["time_share"]),
        "share_v": r["time_share"],
        "share_w": 0.0 if r["time_share"] is None else max(0.0, min(100.0, 100.0 * r["time_share"])),
        "grade": r["grade"] or "",
        "limiter": _limiter_text(r, sol),
        "limiter_v": r["limiter_pct"],
        "top": _top_cell(top),
        "saved": "" if top is None else _us(top["time_saved_ns"]),
        "saved_v": None if top is None else top["time_saved_ns"],
    }


def _look_first(analysis, table: list[dict]) -> dict | None:
    """The group holding most of the time when no finding of its own leads the priorities
    (analysis.groups.dominant), linked to its section; None otherwise."""
    d = analysis.dominant()
    if d is None:
        return None
    t = next(t for t in table if t["id"] == d["kernel_id"] and t["name"] == unix_newlines(d["name"]))
    return dict(d, href="#" + t["anchor"], short=t["short"])


def _fix_first(rows: list[dict], table: list[dict], total: float, worth: Worth) -> list[dict]:
    """The fixes that save most time, worth reading, each linked to its finding and kernel."""
    by_anchor = {t["anchor"]: t for t in table}
    worth_first = [p for p in groups.priorities(rows) if worth.finding(p["estimated_speedup"])]
    fix = []
    for n, p in enumerate(worth_first[:FIX_FIRST_MAX], 1):
        t = by_anchor[p["anchor"]]
        fix.append(
            {
                "rank": n,
                "id": p["id"],
                "severity": _app_severity(p),
                "kernel_severity": p["severity"],
                "href": p["href"],
                "kernel_href": "#" + t["anchor"],
                "kernel_id": p["kernel_id"],
                "short": t["short"],
                "name": t["name"],
                "where": p["where"] or "",
                "speedup": _speedup(p),
                "saved": _us(p["time_saved_ns"]),
                "saved_share": share_text(p["time_saved_ns"] / total) if total > 0 else "",
            }
        )
    return fix
