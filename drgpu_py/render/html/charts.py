"""Inline-SVG chart geometry of a kernel group's section and of the application summary.

Contract: each function takes analysis data (a kernel group's ``KernelAnalysis`` ``ka``, its
tree, or the summary's table rows) and returns a plain dict of SVG coordinates, widths and
label strings that the templates' macros draw (_macros.html.j2); None, or a ``missing`` text,
where there is nothing to draw. ``stall_chart``: the top stall reasons; ``memory_chart``:
unit throughputs and the L1 -> L2 -> DRAM latency split; ``occupancy_chart``: occupancy and
its limiters; ``sol_view``: the speed-of-light grade, unit bars and roofline (roofline.py);
``share_chart``: the kernel groups' shares of GPU time.
"""

from __future__ import annotations

from typing import Any

from ...analysis.context import UNITS
from ...analysis.figures import share_pct
from ...analysis.verdict import useful_share
from ...analysis.tree import KEY_MEMORY_SPLIT, KEY_OCCUPANCY_LIMITER, Node
from ..dot import format_value, missing_text
from ...profile import short_names
from .common import GROUP_COLORS, OTHER_COLOR, share_text
from ..units import missing, number
from .roofline import roofline_chart
from ...analysis.ledger import part_label

GRADE_THRESHOLDS = (("okay", "grade_okay"), ("good", "grade_good"), ("excellent", "grade_excellent"))
SHARE_CHART_MAX = 15  # kernel groups drawn in the summary's time-share chart
CHART_NAME_W = 32  # characters of a kernel's short name in that chart (summary.SHORT_NAME_W: in the table)


def stall_chart(tree: Node) -> dict | None:
    rows = _reason_rows(tree)
    if not rows:
        return None
    rows.sort(key=lambda r: -r["value"])
    rows = rows[:10]
    label_w, bar_w, row_h, top = 290, 280, 24, 6
    for i, r in enumerate(rows):
        r["y"] = top + i * row_h
        r["w"] = max(1.0, bar_w * r["value"] / 100.0)
        r["text"] = f"{r['value']:.1f}%"
        r["short"] = r["label"] if len(r["label"]) <= 40 else r["label"][:39] + "…"
    return {
        "rows": rows,
        "label_w": label_w,
        "bar_w": bar_w,
        "row_h": row_h,
        "width": label_w + bar_w + 70,
        "height": top * 2 + row_h * len(rows),
        "legend": _legend(rows),
    }


def _reason_rows(tree: Node) -> list[dict[str, Any]]:
    """The stall reasons with a share, each with its group's name and colour."""
    rows: list[dict[str, Any]] = []
    for g in tree.children:
        if g.kind != "group":
            continue
        color = GROUP_COLORS.get(g.attrs.get("group", ""), OTHER_COLOR)
        rows += [
            {"label": n.name, "value": float(n.value), "group": g.name, "color": color}
            for n in g.children
            if n.kind == "reason" and isinstance(n.value, (int, float)) and n.value > 0
        ]
    return rows


def _legend(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each group drawn, once, in the order of its first bar."""
    legend: list[dict[str, str]] = []
    for r in rows:
        if r["group"] not in [x["name"] for x in legend]:
            legend.append({"name": r["group"], "color": r["color"]})
    return legend


def memory_chart(ka) -> dict:
    label_w, bar_w, row_h = 120, 300, 24
    units = _unit_rows(ka)
    for i, u in enumerate(units):
        u["y"] = 6 + i * row_h
        u["w"] = 0.0 if u["value"] is None else max(1.0, bar_w * min(u["value"], 100.0) / 100.0)
    out = {
        "units": units,
        "label_w": label_w,
        "bar_w": bar_w,
        "row_h": row_h,
        "width": label_w + bar_w + 60,
        "height": 12 + row_h * len(units),
        "split": None,
        "split_missing": "",
    }
    node = ka.tree.by_key(KEY_MEMORY_SPLIT)
    if node is not None and node.kind == "missing":
        out["split_missing"] = missing_text(node)
    elif node is not None:
        out["split"] = _split_view(node)
    return out


def _unit_rows(ka) -> list[dict]:
    """Each unit's throughput (% of peak), the busiest marked."""
    k = ka.kernel
    units = []
    for key, (metric, label) in UNITS.items():
        v = k.m(metric)
        units.append(
            {
                "label": label,
                "value": None if missing(v) else float(v),
                "text": number(v, ".0f", "%"),
                "top": key == ka.top_unit,
            }
        )
    return units


def _latency_levels(node: Node) -> list[Node]:
    """The memory latency split's levels, L1 -> L2 -> DRAM: each the child with a latency."""
    levels: list[Node] = []
    cur: Node | None = node
    while cur is not None and cur.children:
        cur = next((c for c in cur.children if "latency_cycles" in c.attrs), None)
        if cur is not None:
            levels.append(cur)
    return levels


def _split_view(node: Node) -> dict | None:
    """The latency split as one bar of segments; None when no level has a share. A level's
    share can come out below zero (a residual of counters); it gets no width (an SVG width
    below zero is an error) and its number stays in the table."""
    levels = _latency_levels(node)
    total = sum(max(0.0, float(lv.value or 0.0)) for lv in levels)
    if not levels or total <= 0:
        return None
    colors = ["#74c0fc", "#4dabf7", "#1864ab"]
    x, segs, width = 0.0, [], 420.0
    for i, lv in enumerate(levels):
        w = width * max(0.0, float(lv.value or 0.0)) / total
        hit = lv.attrs.get("hit_rate_pct")
        segs.append(
            {
                "label": lv.name,
                "x": x,
                "w": w,
                "color": colors[min(i, 2)],
                "pct": 100.0 * float(lv.value or 0.0) / total,
                "share": format_value(lv),
                "hit": "" if hit is None else f"hit rate {hit:g}%",
                "latency": lv.attrs.get("latency_cycles"),
            }
        )
        x += w
    return {"segments": segs, "width": width, "share": format_value(node)}


def _occupancy_missing(node: Node | None) -> str:
    """Why there are no limiter bars: the tree's reason, else the section not collected."""
    if node is not None and node.kind == "missing":
        return missing_text(node)
    return "not collected (section Occupancy)"


def occupancy_chart(ka) -> dict:
    k = ka.kernel
    theo, ach = k.m("sm__maximum_warps_per_active_cycle_pct"), k.m("sm__warps_active.avg.pct_of_peak_sustained_active")
    out: dict[str, Any] = {
        "theoretical": number(theo, ".0f", "%"),
        "achieved": number(ach, ".0f", "%"),
        "theo_w": 0.0 if missing(theo) else 3.0 * min(theo, 100.0),
        "ach_w": 0.0 if missing(ach) else 3.0 * min(ach, 100.0),
        "limiter": "",
        "bars": [],
        "missing": "",
        "width": 480,
        "height": 0,
    }
    node = ka.tree.by_key(KEY_OCCUPANCY_LIMITER)
    if node is None or node.kind == "missing" or not isinstance(node.attrs.get("limits"), dict):
        out["missing"] = _occupancy_missing(node)
        return out
    limits = {str(name): float(v) for name, v in node.attrs["limits"].items() if not missing(v)}
    if not limits:
        out["missing"] = "not collected (section Occupancy)"
        return out
    label_w, bar_w, row_h = 130, 280, 24
    out["bars"] = _limit_bars(limits, bar_w, row_h)
    out["limiter"] = min(limits, key=limits.__getitem__)  # as analysis picks it: the fewest blocks/SM
    out.update(
        label_w=label_w, bar_w=bar_w, row_h=row_h, height=12 + row_h * len(out["bars"]), width=label_w + bar_w + 110
    )
    return out


def _limit_bars(limits: dict[str, float], bar_w: int, row_h: int) -> list[dict]:
    """Blocks per SM each resource allows, fewest first, the limiting ones marked."""
    low = min(limits.values())
    top = max(limits.values()) or 1.0
    return [
        {
            "label": name,
            "y": 6 + i * row_h,
            "w": max(1.0, bar_w * v / top),
            "text": f"{v:g} blocks/SM",
            "limit": v == low,
        }
        for i, (name, v) in enumerate(sorted(limits.items(), key=lambda kv: kv[1]))
    ]


def _pct_text(v: float) -> str:
    return f"{v:.1f}%" if v < 10 else f"{v:.0f}%"


def sol_view(ka) -> dict | None:
    """Grade badge, per-unit bars and roofline of the speed-of-light layer (analysis/sol.py);
    None when the analysis carries none (a literal analysis without a context)."""
    ctx, sol = ka.context, ka.sol
    if sol is None or ctx is None:
        return None
    d = sol.to_dict()
    th = ctx.th
    grade, label, pct = d["grade"], d["limiter_label"], d["limiter_pct"]
    badge = ""
    if grade is not None:
        badge = grade + (f" · {label} {pct:.0f}% of peak" if label and pct is not None else "")
    has_sass = ctx.df is not None and not ctx.df.empty
    return {
        "grade": grade,
        "badge": badge,
        "bars": _sol_bars(d, th),
        "roofline": roofline_chart(
            d["roofline"],
            d["flops_source"],
            has_sass,
            ka.useful.dram_bytes_essential if getattr(ka, "useful", None) is not None else None,
        ),
    }


#: Colours of the time ledger's bar: the useful time, what each finding's fix saves (in order),
#: the other time by mechanism (paler: no finding's fix saves it; work beside the limiter
#: green-grey), the rest.
LEDGER_USEFUL, LEDGER_UNEXPLAINED, LEDGER_WORK = "#2f9e44", "#adb5bd", "#8ce99a"
LEDGER_LOSSES = ("#e03131", "#f76707", "#f59f00", "#ae3ec9", "#1c7ed6", "#e64980", "#0b7285")
LEDGER_UNCLAIMED = ("#ffc9c9", "#ffd8a8", "#ffec99", "#eebefa", "#a5d8ff", "#fcc2d7", "#99e9f2")


def ledger_view(ka) -> dict | None:
    """The time ledger as one stacked bar (useful, what each finding's fix saves, the other time
    by mechanism, unexplained) and its legend; None without a ledger."""
    ledger, useful = ka.ledger, ka.useful
    if ledger is None:
        return None
    e, width = ledger.elapsed_ns, 520.0
    x, segments = 0.0, []
    for name, ns, color, why in _ledger_parts(ledger, useful):
        w = width * ns / e if e > 0 else 0.0
        segments.append({"name": name, "x": x, "w": w, "color": color, "pct": f"{share_pct(ns / e)}%", "why": why})
        x += w
    eff = useful_share(useful, ledger)
    return {
        "width": width,
        "segments": segments,
        "grade": useful.grade if useful is not None else None,
        "badge": f"{useful.grade} · {share_pct(eff)}% of the time is useful work at peak" if eff is not None else "",
    }


def _useful_part(ledger, useful) -> list[tuple[str, float, str, str]]:
    """The bar's useful part; none when the useful time is not measured (no bar of 0)."""
    if not ledger.useful_measured:
        return []
    return [("useful", ledger.useful_ns, LEDGER_USEFUL, f"useful work at peak ({part_label(useful.limiter)})")]


def _ledger_parts(ledger, useful) -> list[tuple[str, float, str, str]]:
    """(name, ns, colour, why) of each part of the bar, in order: the useful time, what each
    finding's fix saves, the other time by mechanism from half a percent, the unexplained."""
    e = ledger.elapsed_ns
    parts = _useful_part(ledger, useful)
    shown = [x for x in ledger.losses if x.ns > 0]
    for i, x in enumerate(shown):
        parts.append((x.owner, x.ns, LEDGER_LOSSES[i % len(LEDGER_LOSSES)], f"what fixing {x.owner} saves"))
    for i, a in enumerate(x for x in ledger.attributed if x.ns / e >= 0.005):
        color = LEDGER_WORK if a.work else LEDGER_UNCLAIMED[i % len(LEDGER_UNCLAIMED)]
        parts.append((a.short_label, a.ns, color, f"other time: {a.label}{_owners_text(a)}"))
    top = ledger.unexplained_top[0] if ledger.unexplained_top else None
    rest = "no mechanism matches its samples" + (f"; top stall {top['label']}" if top else "")
    parts.append(("unexplained", ledger.unexplained_ns, LEDGER_UNEXPLAINED, rest))
    return parts


def _owners_text(a) -> str:
    """The findings whose fix acts on a mechanism's time, and whether any was raised here."""
    if not a.owners:
        return ""
    return f"; the findings whose fix acts on it: {', '.join(a.owners)}" + ("" if a.raised else " (none found here)")


def _sol_bars(d: dict, th: dict) -> dict:
    units = d["units"]
    label_w, bar_w, row_h, top = 215, 300, 24, 6
    rows = []
    for i, (u, spec) in enumerate(units.items()):
        v = float(spec["pct"])
        label = str(spec["label"])
        rows.append(
            {
                "unit": u,
                "label": label,
                "short": _short_unit(label),
                "y": top + i * row_h,
                "w": max(0.0, bar_w * min(v, 100.0) / 100.0) if v > 0 else 0.0,
                "text": _pct_text(v),
                "limiter": u == d["limiter"],
                "source": spec.get("source") or "",
            }
        )
    body = top + row_h * len(rows)
    lines = _grade_lines(th, label_w, bar_w)
    return {
        "rows": rows,
        "lines": lines,
        "label_w": label_w,
        "bar_w": bar_w,
        "row_h": row_h,
        "body": body,
        "width": label_w + bar_w + 110,
        "height": body + (20 if lines else 6),
        "grade": d["grade"],
        "missing": "" if rows else "unit throughputs not collected (section SpeedOfLight)",
    }


def _short_unit(label: str) -> str:
    """A unit's label in at most 32 characters: without its parenthesis, else cut."""
    short = label if len(label) <= 32 else label.split(" (")[0]
    return short if len(short) <= 32 else short[:31] + "…"


def _grade_lines(th: dict, label_w: int, bar_w: int) -> list[dict]:
    """The grades' thresholds as vertical lines over the bars, those the thresholds set."""
    lines = []
    for grade, key in GRADE_THRESHOLDS:
        level = th.get(key)
        if level is None or missing(level):
            continue
        lines.append(
            {"grade": grade, "pct": f"{float(level):g}%", "x": label_w + bar_w * min(float(level), 100.0) / 100.0}
        )
    return lines


def share_chart(rows: list[dict]) -> dict:
    """Horizontal bars of the largest groups' share of GPU time, scaled to the largest."""
    shown = rows[:SHARE_CHART_MAX]
    labels = short_names([r["name"] for r in rows], CHART_NAME_W)
    top = max((r["share_v"] or 0.0 for r in shown), default=0.0) or 1.0
    label_w, bar_w, row_h, pad = 270, 260, 22, 4
    bars = []
    for i, r in enumerate(shown):
        v = r["share_v"] or 0.0
        w = bar_w * v / top
        bars.append(
            {
                "href": "#" + r["anchor"],
                "label": labels[r["name"]] if r["name"].strip() else r["short"],
                "text": r["share"],
                "y": pad + i * row_h,
                "w": max(1.0, w) if v > 0 else 0.0,
                "tip": _share_tip(r),
            }
        )
    return {
        "bars": bars,
        "label_w": label_w,
        "bar_w": bar_w,
        "row_h": row_h,
        "width": label_w + bar_w + 56,
        "height": 2 * pad + row_h * len(bars),
        "rest": _rest_text(rows[SHARE_CHART_MAX:]),
    }


def _share_tip(r: dict) -> str:
    return f"{r['name']}: {r['share']} of GPU time, {r['total']} µs in {r['launches']} launch" + (
        "es" if r["launches"] != 1 else ""
    )


def _rest_text(rest: list[dict]) -> str:
    """The groups the chart leaves out, and their share of GPU time ('' when none is)."""
    if not rest:
        return ""
    rest_share = sum(r["share_v"] or 0.0 for r in rest)
    return f"{len(rest)} more kernel group{'s' if len(rest) != 1 else ''}: {share_text(rest_share)} of GPU time"
