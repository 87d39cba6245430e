"""HTML renderer: one self-contained report file (CSS, JS and charts inline, nothing fetched).

Contract: ``render_html(analysis, options) -> str``, built from the shipped Jinja2 templates
(``data.share_dir("templates")``) with autoescaping on: kernel names, source text and SASS
are always escaped. The only markup inserted unescaped is Graphviz's SVG (which escapes its
labels), the JSON of lazily drawn parts (``_script_json``: ``<``, ``>``, ``&`` escaped) and
packed groups (the template's own escaped output, gzip + base64). ``unpack_page`` gives a
packed page as its script leaves it. This module computes plain view data (numbers,
strings, chart geometry); the templates only lay it out.

What the page shows, lazy and packed groups and their sizes: docs/rendering.md.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import os
import re
from functools import cache
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from ..version import __version__
from ..analysis import groups
from ..specs import loader as data
from ..analysis.context import UNITS
from ..analysis.tree import KEY_MEMORY_SPLIT, KEY_OCCUPANCY_LIMITER, Node, location_text, split_folded
from . import RenderOptions, register
from .dot import dot_available, format_value, is_chain, missing_text, svg_for
from .text import short_name

GROUP_COLORS = {
    "memory": "#1c7ed6",
    "synchronization": "#ae3ec9",
    "instruction": "#0ca678",
    "shared": "#f59f00",
    "constant": "#e64980",
    "warpgroup": "#7048e8",
}
OTHER_COLOR = "#868e96"
HOT_LINE_MIN_SHARE = 0.01  # a source line is "hot" from 1% of the kernel's stall samples
HOT_LINES_MAX = 12
CONTEXT_LINES = 2  # source lines shown around each hot line
SASS_HOTSPOTS_MAX = 12
SASS_ROWS_MAX = 40  # SASS instructions listed under one hot source line
GRAPH_KERNELS_MAX = 10  # kernel groups (by GPU time) drawn as a Graphviz picture: about 50 KB each;
# the others keep the outline tree (a report of 140 kernels was 17 MB)
TREE_KEYS = {
    "name": "n",
    "value": "v",
    "kind": "k",
    "chain": "c",
    "bar": "b",
    "highlight": "h",
    "open": "o",
    "detail": "d",
    "code": "cd",
    "sass": "s",
    "href": "hr",
    "severity": "sev",
    "sid": "id",
    "children": "ch",
    "folded": "f",
    "fold_note": "fn",
}  # the lazy tree's JSON keys (report.js reads them)
SHARE_CHART_MAX = 15  # kernel groups drawn in the summary's time-share chart
FIX_FIRST_MAX = 10  # findings in the summary's "fix first" list
SHORT_NAME_W = 30  # characters of a kernel's short name in the summary table
CHART_NAME_W = 32  # ... and in its time-share chart


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data.share_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


# ---- formatting ------------------------------------------------------------------------------
def _nan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _num(v, spec: str = ".1f", suffix: str = "") -> str:
    return "n/a" if _nan(v) else f"{format(v, spec)}{suffix}"


def _duration(ns) -> str:
    if _nan(ns):
        return "n/a"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def _bytes(v) -> str:
    if _nan(v):
        return "n/a"
    return f"{v / 1024:.1f} KiB" if v >= 1024 else f"{v:.0f} B"


def _evidence_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_evidence_value(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_evidence_value(x)}" for k, x in v.items())
    return str(v)


def _newlines(text: str) -> str:
    """CR and CRLF as LF: what a browser shows anyway (HTML input-stream preprocessing), made
    explicit so the page's text is the same under any HTML parser."""
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


def _reason_meta() -> tuple[dict[str, str], dict[str, str]]:
    """(reason -> label, reason -> group id) from the data files."""
    labels = {r: s["label"] for r, s in data.stall_reasons().items()}
    groups = {r: g["id"] for g in data.tree_shape()["groups"] for r in g["reasons"]}
    return labels, groups


# ---- tree ------------------------------------------------------------------------------------
def _tree_view(n: Node, fold: float, anchor: str, src_ids: set[str], depth: int = 0) -> dict:
    shown, folded = split_folded(n, fold)
    a = n.attrs
    share_kind = n.kind in ("root", "group", "reason", "line") or (is_chain(n) and n.unit == "%")
    bar = float(n.value) if share_kind and n.unit == "%" and isinstance(n.value, (int, float)) else None
    view = {
        "name": n.name,
        "value": format_value(n),
        "kind": n.kind,
        "chain": is_chain(n),
        "bar": None if bar is None else max(0.0, min(100.0, bar)),
        "highlight": bool(a.get("highlight")),
        "open": depth == 0 or bool(a.get("highlight")),
        "detail": "",
        "code": "",
        "sass": "",
        "href": "",
        "severity": a.get("severity", ""),
        "sid": a.get("id", "") if n.kind == "suggestion" else "",
        "children": [_tree_view(c, fold, anchor, src_ids, depth + 1) for c in shown],
        "folded": [_tree_view(c, fold, anchor, src_ids, depth + 1) for c in folded],
        "fold_note": f"{len(folded)} below {fold * 100:g}% of stall cycles" if folded else "",
    }
    if n.kind == "root":
        bits = []
        if a.get("achieved_ipc") is not None:
            bits.append(f"IPC {a['achieved_ipc']:g} of {a.get('ideal_ipc', '?')}")
        if a.get("top_unit"):
            bits.append(
                f"busiest unit {a.get('top_unit_label') or a['top_unit']} {_num(a.get('top_unit_pct'), '.0f', '%')}"
            )
        if a.get("bound"):
            bits.append(f"{a['bound']} bound")
        view["detail"] = " · ".join(bits)
    elif n.kind == "missing":
        view["detail"] = missing_text(n)
    elif n.kind == "line":
        view["code"] = a.get("code") or ""
        view["sass"] = a.get("sass") or ""
        sid = _src_id(anchor, a.get("file"), a.get("line"))
        view["href"] = "#" + sid if sid in src_ids else ""
    elif n.kind == "suggestion":
        view["detail"] = a.get("advice", "")
    elif "latency_cycles" in a:
        hit = f"hit rate {a['hit_rate_pct']:g}%, " if a.get("hit_rate_pct") is not None else ""
        view["detail"] = f"{hit}~{a['latency_cycles']} cycles"
    return view


def _tree_compact(view: dict) -> dict:
    """A tree view with short keys and its empty fields left out (report.js builds the DOM)."""
    out = {}
    for key, short in TREE_KEYS.items():
        v = view[key]
        if key in ("children", "folded"):
            v = [_tree_compact(c) for c in v]
        if v or (key == "bar" and v is not None):
            out[short] = v
    return out


def _script_json(value) -> Markup:
    """``value`` as JSON for a ``<script type="application/json">``: ``<``, ``>`` and ``&`` as
    \\u escapes, so no text of the report can close the script element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))


# ---- charts (inline SVG geometry) ------------------------------------------------------------
def _stall_chart(tree: Node) -> dict | None:
    rows: list[dict[str, Any]] = []
    for g in tree.children:
        if g.kind != "group":
            continue
        for n in g.children:
            if n.kind == "reason" and isinstance(n.value, (int, float)) and n.value > 0:
                rows.append(
                    {
                        "label": n.name,
                        "value": float(n.value),
                        "group": g.name,
                        "color": GROUP_COLORS.get(g.attrs.get("group", ""), OTHER_COLOR),
                    }
                )
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
    legend: list[dict[str, str]] = []
    for r in rows:
        if r["group"] not in [x["name"] for x in legend]:
            legend.append({"name": r["group"], "color": r["color"]})
    return {
        "rows": rows,
        "label_w": label_w,
        "bar_w": bar_w,
        "row_h": row_h,
        "width": label_w + bar_w + 70,
        "height": top * 2 + row_h * len(rows),
        "legend": legend,
    }


def _memory_chart(ka) -> dict:
    k = ka.kernel
    units = []
    for key, (metric, label) in UNITS.items():
        v = k.m(metric)
        units.append(
            {
                "label": label,
                "value": None if _nan(v) else float(v),
                "text": _num(v, ".0f", "%"),
                "top": key == ka.top_unit,
            }
        )
    label_w, bar_w, row_h = 120, 300, 24
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
        levels, cur = [], node
        colors = ["#74c0fc", "#4dabf7", "#1864ab"]
        while cur.children:
            cur = next((c for c in cur.children if "latency_cycles" in c.attrs), None)
            if cur is None:
                break
            levels.append(cur)
        # A level's share can come out below zero (a residual of counters); it gets no width
        # (an SVG width below zero is an error) and its number stays in the table.
        total = sum(max(0.0, float(lv.value or 0.0)) for lv in levels)
        if levels and total > 0:
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
            out["split"] = {"segments": segs, "width": width, "share": format_value(node)}
    return out


def _occupancy_chart(ka) -> dict:
    k = ka.kernel
    theo, ach = k.m("sm__maximum_warps_per_active_cycle_pct"), k.m("sm__warps_active.avg.pct_of_peak_sustained_active")
    out: dict[str, Any] = {
        "theoretical": _num(theo, ".0f", "%"),
        "achieved": _num(ach, ".0f", "%"),
        "theo_w": 0.0 if _nan(theo) else 3.0 * min(theo, 100.0),
        "ach_w": 0.0 if _nan(ach) else 3.0 * min(ach, 100.0),
        "limiter": "",
        "bars": [],
        "missing": "",
        "width": 480,
        "height": 0,
    }
    node = ka.tree.by_key(KEY_OCCUPANCY_LIMITER)
    if node is None or node.kind == "missing" or not isinstance(node.attrs.get("limits"), dict):
        out["missing"] = (
            missing_text(node) if node is not None and node.kind == "missing" else "not collected (section Occupancy)"
        )
        return out
    limits = {str(name): float(v) for name, v in node.attrs["limits"].items() if not _nan(v)}
    if not limits:
        out["missing"] = "not collected (section Occupancy)"
        return out
    low = min(limits.values())
    top = max(limits.values()) or 1.0
    label_w, bar_w, row_h = 130, 280, 24
    for i, (name, v) in enumerate(sorted(limits.items(), key=lambda kv: kv[1])):
        out["bars"].append(
            {
                "label": name,
                "y": 6 + i * row_h,
                "w": max(1.0, bar_w * v / top),
                "text": f"{v:g} blocks/SM",
                "limit": v == low,
            }
        )
    out["limiter"] = min(limits, key=limits.__getitem__)  # as analysis picks it: the fewest blocks/SM
    out.update(
        label_w=label_w, bar_w=bar_w, row_h=row_h, height=12 + row_h * len(out["bars"]), width=label_w + bar_w + 110
    )
    return out


# ---- speed of light ---------------------------------------------------------------------------
GRADE_THRESHOLDS = (("okay", "grade_okay"), ("good", "grade_good"), ("excellent", "grade_excellent"))
ROOF_W, ROOF_H = 470, 300  # roofline SVG size
ROOF_PAD = {"left": 58, "right": 26, "top": 14, "bottom": 44}
ROOF_MARGIN_DECADES = 0.3  # at least this much of a decade between the data and an axis end
CHAR_W = {"tick": 5.6, "roof": 6.4, "point": 6.9}  # rough text widths per character (px), for placing labels
LABEL_LINE_H = 14


def _segment(a: tuple[float, float], b: tuple[float, float], step: float = 3.0) -> list[tuple[float, float]]:
    n = max(1, int(math.dist(a, b) / step))
    return [(a[0] + (b[0] - a[0]) * i / n, a[1] + (b[1] - a[1]) * i / n) for i in range(n + 1)]


def _place_label(
    x: float,
    y: float,
    width: float,
    lines: int,
    bounds: tuple[float, float, float, float],
    points: list[tuple[float, float, float]],
    boxes: list[tuple[float, float, float, float]],
) -> tuple[float, float, str]:
    """(x, first baseline y, text-anchor) of a label of ``width`` px and ``lines`` lines
    (LABEL_LINE_H apart) beside the point (x, y): the first of
    right/left/centred, below/above, near/farther that stays inside ``bounds`` and clear of
    the drawn lines and labels (``points``: x, y, weight) and other labels (``boxes``); the
    least crowded one otherwise (text over text costs most, over a dashed guide least)."""
    x0, y0, x1, y1 = bounds
    best = None
    extra = LABEL_LINE_H * (lines - 1)
    for dy in (14, -8 - extra, 28, -22 - extra):
        for anchor in ("start", "end", "middle"):
            lx = (
                x + 8
                if anchor == "start"
                else x - 8
                if anchor == "end"
                else min(max(x, x0 + width / 2), x1 - width / 2)
            )
            left = lx if anchor == "start" else lx - width if anchor == "end" else lx - width / 2
            box = (left - 2, y + dy - 12, left + width + 2, y + dy + extra + 3)
            if box[0] < x0 or box[2] > x1 or box[1] < y0 or box[3] > y1:
                continue
            if anchor == "middle" and box[0] - 2 <= x <= box[2] + 2 and box[1] - 5 <= y <= box[3] + 5:
                continue
            hits = sum(w for px, py, w in points if box[0] <= px <= box[2] and box[1] <= py <= box[3])
            hits += sum(50 for b in boxes if b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3])
            if hits == 0:
                return lx, y + dy, anchor
            if best is None or hits < best[0]:
                best = (hits, lx, y + dy, anchor)
    if best is None:
        return min(max(x, x0 + width / 2), x1 - width / 2), y + 18 if y + 18 < y1 else y - 10, "middle"
    return best[1], best[2], best[3]


def _pct_text(v: float) -> str:
    return f"{v:.1f}%" if v < 10 else f"{v:.0f}%"


def _rate(v: float, unit: str) -> str:
    """A rate with an SI prefix: 7.3e14 FLOP/s -> '730 TFLOP/s'."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def _tflops(v: float) -> str:
    t = v / 1e12
    return f"{t:.0f} TFLOP/s" if t >= 100 else f"{t:.1f} TFLOP/s" if t >= 1 else f"{t:.3g} TFLOP/s"


def _sol_view(ka) -> dict | None:
    """Grade badge, per-unit bars and roofline of the speed-of-light layer (analysis/sol.py);
    None when the analysis carries none (a literal analysis without a context)."""
    ctx = ka.context
    sol = getattr(ctx, "sol", None)
    if sol is None:
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
        "roofline": _roofline(d["roofline"], d["flops_source"], has_sass),
    }


def _sol_bars(d: dict, th: dict) -> dict:
    units = d["units"]
    label_w, bar_w, row_h, top = 215, 300, 24, 6
    rows = []
    for i, (u, spec) in enumerate(units.items()):
        v = float(spec["pct"])
        label = str(spec["label"])
        short = label if len(label) <= 32 else label.split(" (")[0]
        short = short if len(short) <= 32 else short[:31] + "…"
        rows.append(
            {
                "unit": u,
                "label": label,
                "short": short,
                "y": top + i * row_h,
                "w": max(0.0, bar_w * min(v, 100.0) / 100.0) if v > 0 else 0.0,
                "text": _pct_text(v),
                "limiter": u == d["limiter"],
                "source": spec.get("source") or "",
            }
        )
    body = top + row_h * len(rows)
    lines = []
    for grade, key in GRADE_THRESHOLDS:
        level = th.get(key)
        if level is None or _nan(level):
            continue
        lines.append(
            {"grade": grade, "pct": f"{float(level):g}%", "x": label_w + bar_w * min(float(level), 100.0) / 100.0}
        )
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


def _roofline_missing(r: dict, flops_source: str, has_sass: bool) -> list[str]:
    missing = []
    if r["precision"] is None:
        if flops_source != "none":
            missing.append(f"no FLOPs: the floating-point work counted ({flops_source}) is zero")
        elif has_sass:
            missing.append(
                "no FLOPs: the report has no FLOP counters and the kernel's SASS executes no floating-point math"
            )
        else:
            missing.append("no FLOPs: the report has neither FLOP counters nor per-instruction SASS counts")
    elif r["flop_per_s"] is None:
        missing.append("no kernel duration (gpu__time_duration.sum), so no FLOP/s")
    if r["precision"] is not None and r["arithmetic_intensity"] is None:
        missing.append("no DRAM traffic measured (dram__bytes.sum), so no arithmetic intensity")
    if r["precision"] is not None and r["peak_flop_per_s"] is None:
        missing.append(
            f"no peak FLOP/s for {r['precision']} on this GPU (needs the SM clock and the architecture's peak)"
        )
    if r["peak_dram_bytes_per_s"] is None:
        missing.append("no peak DRAM bandwidth (dram__bytes.sum.peak_sustained)")
    return missing


def _decade_label(e: int) -> dict:
    return {"base": "10", "exp": str(e).replace("-", "−")}


def _roofline(r: dict, flops_source: str, has_sass: bool = True) -> dict:
    """Log-log roofline geometry: x arithmetic intensity (FLOP per DRAM byte), y FLOP/s; the
    memory roof (slope = peak DRAM bytes/s) and the compute roof (peak FLOP/s) meet at the
    ridge point. Axis ends are whole decades at least ROOF_MARGIN_DECADES beyond the ridge,
    the kernel's point and both roofs at the left edge."""
    title = f"Roofline ({r['precision']})" if r.get("precision") else "Roofline"
    out = {"title": title, "missing": "", "chart": None}
    missing = _roofline_missing(r, flops_source, has_sass)
    vals: list[Any] = [
        r.get(k) for k in ("arithmetic_intensity", "flop_per_s", "peak_flop_per_s", "peak_dram_bytes_per_s")
    ]
    if not missing and not all(isinstance(v, (int, float)) and v > 0 and math.isfinite(v) for v in vals):
        missing.append("the kernel's FLOP/s or arithmetic intensity is zero")
    if missing:
        out["missing"] = "Roofline not drawn: " + "; ".join(missing) + "."
        return out
    ai, fps, peak, bw = (float(v) for v in vals)
    ridge = peak / bw
    m = ROOF_MARGIN_DECADES
    lx = [math.log10(ai), math.log10(ridge)]
    x_lo, x_hi = math.floor(min(lx) - m), math.ceil(max(lx) + m)
    roof_lo = bw * 10.0**x_lo  # the memory roof at the left edge
    ly = [math.log10(fps), math.log10(peak), math.log10(roof_lo)]
    y_lo, y_hi = math.floor(min(ly) - m), math.ceil(max(ly) + m)
    pad = ROOF_PAD
    pw, ph = ROOF_W - pad["left"] - pad["right"], ROOF_H - pad["top"] - pad["bottom"]

    def px(x: float) -> float:
        return pad["left"] + (math.log10(x) - x_lo) / (x_hi - x_lo) * pw

    def py(y: float) -> float:
        return pad["top"] + (y_hi - math.log10(y)) / (y_hi - y_lo) * ph

    x_step = 1 if x_hi - x_lo <= 8 else 2
    y_step = 1 if y_hi - y_lo <= 8 else 2
    xticks = [{"x": px(10.0**e), **_decade_label(e), "label": e % x_step == 0} for e in range(x_lo, x_hi + 1)]
    yticks = [{"y": py(10.0**e), **_decade_label(e), "label": e % y_step == 0} for e in range(y_lo, y_hi + 1)]
    roof = [(px(10.0**x_lo), py(roof_lo)), (px(ridge), py(peak)), (px(10.0**x_hi), py(peak))]
    pt_x, pt_y = px(ai), py(fps)
    pct = r.get("pct_of_attainable")
    label = [_tflops(fps)] + ([f"{pct:.0f}% of attainable"] if pct is not None else [])
    right, bottom = pad["left"] + pw, pad["top"] + ph
    # Fixed labels: the peak over the right end of the compute roof, the ridge beside its
    # dashed line at the bottom, DRAM along the memory roof when that is long enough.
    peak_label = f"peak {_rate(peak, 'FLOP/s')}"
    peak_w = CHAR_W["roof"] * len(peak_label)
    ridge_label = f"ridge {ridge:.3g} FLOP/B"
    ridge_w = CHAR_W["tick"] * len(ridge_label)
    ridge_x = px(ridge)
    ridge_anchor = "start" if ridge_x + 4 + ridge_w <= right else "end"
    ridge_lx = ridge_x + 4 if ridge_anchor == "start" else ridge_x - 4
    ridge_left = ridge_lx if ridge_anchor == "start" else ridge_lx - ridge_w
    mem_label = f"DRAM {_rate(bw, 'B/s')}"
    mem_w = CHAR_W["roof"] * len(mem_label)
    mem_len = math.dist(roof[0], roof[1])
    mem_show = mem_len >= mem_w + 20
    mem_mid = ((roof[0][0] + roof[1][0]) / 2, (roof[0][1] + roof[1][1]) / 2)
    points = [(*q, 1.0) for q in _segment(roof[0], roof[1]) + _segment(roof[1], roof[2])]
    points += [(*q, 0.3) for q in _segment((ridge_x, py(peak)), (ridge_x, bottom))]
    if mem_show:  # the rotated DRAM label, as points 6-16 px above the middle of the memory roof
        ux, uy = (roof[1][0] - roof[0][0]) / mem_len, (roof[1][1] - roof[0][1]) / mem_len
        for t in range(-int(mem_w / 2), int(mem_w / 2) + 1, 3):
            for off in (6, 11, 16):
                points.append((mem_mid[0] + ux * t + uy * off, mem_mid[1] + uy * t - ux * off, 5.0))
    boxes = [
        (right - 4 - peak_w, py(peak) - 17, right - 4, py(peak) - 3),
        (ridge_left, bottom - 17, ridge_left + ridge_w, bottom - 3),
    ]
    label_x, label_y, anchor = _place_label(
        pt_x,
        pt_y,
        CHAR_W["point"] * max(map(len, label)),
        len(label),
        (pad["left"] + 2, pad["top"], right - 2, bottom),
        points,
        boxes,
    )
    side = r.get("side") or ""
    return {
        **out,
        "chart": {
            "width": ROOF_W,
            "height": ROOF_H,
            "left": pad["left"],
            "top": pad["top"],
            "right": pad["left"] + pw,
            "bottom": pad["top"] + ph,
            "pw": pw,
            "ph": ph,
            "xticks": xticks,
            "yticks": yticks,
            "roof": " ".join(f"{x:.1f},{y:.1f}" for x, y in roof),
            "ridge_x": ridge_x,
            "ridge_y": py(peak),
            "ridge": ridge_label,
            "ridge_lx": ridge_lx,
            "ridge_anchor": ridge_anchor,
            "peak_label": peak_label,
            "peak_y": py(peak),
            "mem_label": mem_label,
            "mem_x": mem_mid[0],
            "mem_y": mem_mid[1],
            "mem_show": mem_show,
            "mem_angle": math.degrees(math.atan2(roof[1][1] - roof[0][1], roof[1][0] - roof[0][0])),
            "pt_x": pt_x,
            "pt_y": pt_y,
            "label": label,
            "line_h": LABEL_LINE_H,
            "label_x": label_x,
            "label_y": label_y,
            "anchor": anchor,
            "tip": f"{_tflops(fps)} at {ai:.3g} FLOP/byte (DRAM {_rate(r['dram_bytes_per_s'], 'B/s') if r.get('dram_bytes_per_s') else 'n/a'})",
            "caption": f"Achieved {_tflops(fps)} at {ai:.3g} FLOP per DRAM byte; ridge point {ridge:.3g} FLOP/byte"
            + (f"; {side} side of the ridge" if side else "")
            + (
                f"; {pct:.0f}% of the attainable {_tflops(float(r['attainable_flop_per_s']))}"
                if pct is not None and r.get("attainable_flop_per_s")
                else ""
            )
            + f". Roofs: DRAM {_rate(bw, 'B/s')}, {r['precision']} peak {_tflops(peak)} at the measured clock.",
        },
    }


# ---- source view -----------------------------------------------------------------------------
def _src_id(anchor: str, file, line) -> str:
    if file is None or line is None or _nan(line):
        return ""
    return f"{anchor}-src-{re.sub(r'[^A-Za-z0-9]+', '-', str(file).rsplit('/', 1)[-1])}-{int(line)}"


def _breakdown(values, stall_cols: list[str], labels: dict, groups: dict, limit: int = 6) -> list[dict]:
    """Top stall reasons of one row of stall samples (aligned with ``stall_cols``)."""
    vals = [float(v) for v in values]
    tot = sum(vals)
    if tot <= 0:
        return []
    out: list[dict[str, Any]] = []
    for v, col in sorted(zip(vals, stall_cols), key=lambda t: -t[0]):
        if v <= 0 or len(out) >= limit:
            break
        r = col[len("stall_") :]
        out.append(
            {
                "reason": labels.get(r, r),
                "pct": 100.0 * v / tot,
                "samples": f"{v:,.0f}",
                "color": GROUP_COLORS.get(groups.get(r, ""), OTHER_COLOR),
            }
        )
    return out


def _sass_rows(
    df: pd.DataFrame, stall_cols: list[str], labels: dict, groups: dict, marks: dict[int, list[str]]
) -> tuple[list[dict], int]:
    """The SASS of one source line in address order; an unrolled line can hold hundreds of
    instructions, so only the most-stalled ``SASS_ROWS_MAX`` are listed (and the rest counted),
    plus every instruction a finding points at (``marks``: offset -> finding ids)."""
    stalls = df[stall_cols].to_numpy(dtype=float)
    tot = stalls.sum(axis=1)
    offsets = [int(o) for o in df["offset"]]
    chosen = set(sorted(range(len(df)), key=lambda i: -tot[i])[:SASS_ROWS_MAX])
    chosen |= {i for i, o in enumerate(offsets) if o in marks}
    keep = sorted(chosen, key=lambda i: offsets[i])
    executed = df["inst_executed"].to_numpy(dtype=float) if "inst_executed" in df else None
    rows = []
    for i in keep:
        top = _breakdown(stalls[i], stall_cols, labels, groups, limit=2)
        ex = None if executed is None else executed[i]
        rows.append(
            {
                "offset": f"+0x{offsets[i]:04x}",
                "sass": str(df["sass"].iat[i]),
                "findings": marks.get(offsets[i], []),
                "executed": "" if _nan(ex) else f"{ex:,.0f}",
                "stalls": f"{tot[i]:,.0f}",
                "hot": tot[i] > 0,
                "top": ", ".join(f"{b['reason'].split(' (')[0]} {b['pct']:.0f}%" for b in top),
            }
        )
    return rows, len(df) - len(keep)


def _source_view(ka, anchor: str) -> dict:  # noqa: C901 - one optional block per source-view column, in output order
    k = ka.kernel
    df = k.instructions
    labels, groups = _reason_meta()
    out: dict[str, Any] = {"files": [], "hotspots": [], "note": ""}
    if df.empty or "sass" not in df:
        out["note"] = "This report has no per-instruction data (collect the SourceCounters section)."
        return out
    stall_cols = [c for c in df.columns if c.startswith("stall_") and c != "stall_selected"]
    total = float(df[stall_cols].to_numpy().sum()) if stall_cols else 0.0
    if total <= 0:
        out["note"] = (
            "No PC sampling in this report: per-line stalls are unavailable (collect the SourceCounters section)."
        )
        return out
    where: dict[tuple, list[str]] = {}
    marks: dict[int, list[str]] = {}
    for f in ka.findings:
        for loc in f.locations:
            if (
                loc.get("file")
                and loc.get("line") is not None
                and f.id not in where.get((loc["file"], int(loc["line"])), [])
            ):
                where.setdefault((loc["file"], int(loc["line"])), []).append(f.id)
            if loc.get("pc_offset") is not None and f.id not in marks.get(int(loc["pc_offset"]), []):
                marks.setdefault(int(loc["pc_offset"]), []).append(f.id)
    lined = df[df["file"].notna() & df["line"].notna()] if "file" in df and "line" in df else df.iloc[0:0]
    if lined.empty:
        # No line table: rank the SASS itself.
        d = df.assign(_stalls=df[stall_cols].sum(axis=1)).sort_values("_stalls", ascending=False)
        d = d[d["_stalls"] > 0].head(SASS_HOTSPOTS_MAX)
        for _, r in d.iterrows():
            out["hotspots"].append(
                {
                    "offset": f"+0x{int(r['offset']):04x}",
                    "sass": str(r["sass"]),
                    "share": 100.0 * float(r["_stalls"]) / total,
                    "segments": _breakdown(r[stall_cols], stall_cols, labels, groups),
                }
            )
        out["note"] = (
            "The report has no source-line information: hot SASS instructions are shown instead (compile with -lineinfo)."
        )
        return out
    lined = lined.assign(line=lined["line"].astype(int))
    by_line = lined.groupby(["file", "line"])
    per_line = by_line[stall_cols].sum()
    line_tot = per_line.sum(axis=1).sort_values(ascending=False)
    hot = line_tot[line_tot / total >= HOT_LINE_MIN_SHARE].head(HOT_LINES_MAX)
    if len(hot) < 3:
        hot = line_tot[line_tot > 0].head(3)
    files: dict[str, dict[int, float]] = {}
    for (f, ln), v in hot.items():
        files.setdefault(f, {})[int(ln)] = float(v)
    # A finding's line is where the blamer puts the cause, often not where warps wait: show it
    # expanded like a hot line even when its own stall share is small.
    for f, ln in where:
        if (f, ln) in line_tot.index:
            files.setdefault(f, {}).setdefault(ln, float(line_tot.loc[(f, ln)]))
    for f in sorted(files, key=lambda x: -sum(files[x].values())):
        text = k.source_text.get(f)
        hot_lines = files[f]
        if text:
            show: set[int] = set()
            for ln in hot_lines:
                show.update(range(max(1, ln - CONTEXT_LINES), min(len(text), ln + CONTEXT_LINES) + 1))
            numbers = sorted(show | set(hot_lines))
        else:
            numbers = sorted(hot_lines)
        rows, prev = [], None
        for ln in numbers:
            if prev is not None and ln > prev + 1:
                rows.append({"gap": True})
            prev = ln
            code = text[ln - 1].rstrip("\n") if text and 1 <= ln <= len(text) else ""
            row = {"gap": False, "no": ln, "code": code, "hot": ln in hot_lines, "id": _src_id(anchor, f, ln)}
            if ln in hot_lines:
                sass, more = _sass_rows(by_line.get_group((f, ln)), stall_cols, labels, groups, marks)
                row.update(
                    share=100.0 * hot_lines[ln] / total,
                    samples=f"{hot_lines[ln]:,.0f}",
                    segments=_breakdown(per_line.loc[(f, ln)], stall_cols, labels, groups),
                    sass=sass,
                    sass_more=more,
                    findings=where.get((f, ln), []),
                )
            rows.append(row)
        out["files"].append(
            {
                "path": f,
                "name": str(f).rsplit("/", 1)[-1],
                "rows": rows,
                "share": 100.0 * sum(hot_lines.values()) / total,
                "has_text": bool(text),
            }
        )
    if not any(fv["has_text"] for fv in out["files"]):
        out["note"] = (
            "Source text was not imported into the report (profile with --import-source yes): line numbers and SASS only."
        )
    return out


def _speedup(row: dict) -> str:
    """A summary row's estimate, a lower bound when the model capped it (Finding.speedup_text)."""
    return ("≥" if row.get("estimate_capped") else "") + f"{row['estimated_speedup']:.2f}x"


# ---- kernel ----------------------------------------------------------------------------------
def _findings_view(ka, anchor: str, src_ids: set[str]) -> list[dict]:
    out = []
    for i, f in enumerate(ka.findings, 1):
        locs = []
        for loc in f.locations[:5]:
            sid = _src_id(anchor, loc.get("file"), loc.get("line"))
            stalled = ", ".join(location_text(s) for s in loc.get("stalled_at", []) or [])
            inl = loc.get("inlined_from")
            locs.append(
                {
                    "where": location_text(loc),
                    "share": f"{100.0 * float(loc.get('share', 0.0)):.0f}%",
                    "inlined": location_text(inl) if isinstance(inl, dict) and inl.get("file") else "",
                    "code": loc.get("code") or "",
                    "sass": loc.get("sass") or "",
                    "stalled_at": stalled,
                    "href": "#" + sid if sid in src_ids else "",
                }
            )
        out.append(
            {
                "rank": i,
                "anchor": f"{anchor}-f{i}",
                "id": f.id,
                "title": f.title,
                "severity": f.severity,
                "speedup": f.speedup_text(),
                "share": f"{100.0 * f.stall_share:.0f}%",
                "share_w": max(0.0, min(100.0, 100.0 * f.stall_share)),
                "advice": f.advice,
                "evidence": [{"key": str(kk), "value": _evidence_value(v)} for kk, v in (f.evidence or {}).items()],
                "locations": locs,
                "notes": list(f.notes),
                "model": f.speedup_model,
            }
        )
    return out


def _clean_svg(svg: str, anchor: str) -> Markup:
    """Graphviz's SVG, made fit to inline: no XML prolog, doctype or comments, and ids
    prefixed per kernel so several graphs can share one page. Graphviz escapes label text."""
    svg = svg[svg.find("<svg") :]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\bid="', f'id="{anchor}-', svg)
    return Markup(svg.strip())


def _model_view(ka) -> dict | None:
    """The static performance model's summary (analysis/perfmodel.py): bottleneck, predicted
    against measured cycles, its terms, the hot loops and the what-if changes."""
    d = ka._model()
    if not d.get("available"):
        return {"available": False, "reason": d.get("reason")}
    top = max(d["terms"].values()) if d["terms"] else 0.0
    terms = [
        {"name": t, "cycles": v, "pct": 100.0 * v / top if top > 0 else 0.0}
        for t, v in sorted(d["terms"].items(), key=lambda kv: -kv[1])
    ]
    return {**d, "term_rows": terms, "error_pct": None if d.get("error") is None else 100.0 * d["error"]}


def _lazy_source(source: dict) -> None:
    """Move each hot line's detail (stall segments, SASS rows) into compact JSON that report.js
    draws when the line is opened; the line itself stays in the page."""
    for fv in source["files"]:
        for r in fv["rows"]:
            if r.get("hot"):
                r["detail_json"] = _script_json(
                    {
                        "g": [[round(g["pct"], 1), g["color"], g["reason"]] for g in r["segments"]],
                        "r": [
                            [x["offset"], x["sass"], x["findings"], x["executed"], x["stalls"], x["top"], int(x["hot"])]
                            for x in r["sass"]
                        ],
                        "m": r["sass_more"],
                    }
                )


def _kernel_view(i: int, ka, analysis, options: RenderOptions, with_svg: bool, inline_tree: bool = True) -> dict:
    k = ka.kernel
    anchor = f"k{i}"
    source = _source_view(ka, anchor)
    if not inline_tree:
        _lazy_source(source)
    src_ids = {r["id"] for fv in source["files"] for r in fv["rows"] if not r["gap"]}
    ach, theo = k.m("sm__warps_active.avg.pct_of_peak_sustained_active"), k.m("sm__maximum_warps_per_active_cycle_pct")
    sol = ka.sol
    if sol is not None and sol.limiter is not None:  # the speed-of-light limiter, as the badge says
        top_label, top_pct = sol.labels.get(sol.limiter, sol.limiter), sol.limiter_pct
    else:
        top_label, top_pct = ka.tree.attrs.get("top_unit_label"), ka.top_unit_pct
    summary = [
        ("Device", k.device or "unknown"),
        ("Duration", _duration(k.duration_ns)),
        ("Grid × block", f"{'×'.join(map(str, k.grid))} × {'×'.join(map(str, k.block))}"),
        ("Registers / thread", _num(k.m("launch__registers_per_thread"), ".0f")),
        ("Shared memory / block", _bytes(k.m("launch__shared_mem_per_block"))),
        ("Occupancy (achieved / theoretical)", f"{_num(ach, '.0f', '%')} / {_num(theo, '.0f', '%')}"),
        ("IPC (achieved / ideal)", f"{_num(ka.achieved_ipc, '.2f')} / {ka.tree.attrs.get('ideal_ipc', 'n/a')}"),
        ("Busiest unit", f"{top_label or 'n/a'}" + ("" if _nan(top_pct) else f" at {top_pct:.0f}% of peak")),
    ]
    svg = None
    if with_svg:
        svg = _clean_svg(svg_for(analysis, options, kernels=[ka]), anchor)
    top = ka.findings[0] if ka.findings else None
    tree = _tree_view(ka.tree, options.fold_share, anchor, src_ids)
    return {
        "anchor": anchor,
        "id": k.id,
        "name": _newlines(k.name),
        "launches": groups.launches(k),
        "arch": " · ".join(
            x
            for x in (
                f"cc {k.compute_capability}" if k.compute_capability else "",
                f"{k.sm_count} SMs" if k.sm_count else "",
            )
            if x
        ),
        "mangled": k.mangled if k.mangled and k.mangled != k.name else "",
        "duration_ns": None if _nan(k.duration_ns) else float(k.duration_ns),
        "duration": _duration(k.duration_ns),
        "bound": ka.bound,
        "stall_pct": _num(ka.stall_cycle_pct, ".1f", "%"),
        "stall_w": 0.0 if _nan(ka.stall_cycle_pct) else max(0.0, min(100.0, float(ka.stall_cycle_pct))),
        "summary": [{"key": a, "value": b} for a, b in summary],
        "top": {"id": top.id, "title": top.title, "speedup": top.speedup_text(), "severity": top.severity}
        if top
        else None,
        "findings": _findings_view(ka, anchor, src_ids),
        "stalls": _stall_chart(ka.tree),
        "stall_source": ka.tree.attrs.get("stall_source", ""),
        "memory": _memory_chart(ka),
        "occupancy": _occupancy_chart(ka),
        "sol": _sol_view(ka),
        "model": _model_view(ka),
        "tree": tree if inline_tree else None,
        "tree_json": None if inline_tree else _script_json(_tree_compact(tree)),
        "svg": svg,
        "source": source,
        "notes": list(ka.notes),
        "slicing": ka.slicing,
    }


# ---- application summary (several kernel groups) ----------------------------------------------
def _us(ns) -> str:
    return "n/a" if _nan(ns) else f"{ns / 1e3:,.1f}"


def _share_text(share) -> str:
    """A time share (0..1) as a percentage: '41%', '3.2%', '0.04%'."""
    if _nan(share):
        return "n/a"
    v = 100.0 * share
    return f"{v:.0f}%" if v >= 10 else f"{v:.1f}%" if v >= 0.1 else f"{v:.2g}%" if v > 0 else "0%"


def _sort_value(v) -> str:
    """A number as a data-value for the page's table sort ('' sorts last)."""
    return "" if _nan(v) else repr(float(v))


def _row_kernels(analysis, rows: list[dict]) -> list[int]:
    """For each summary row, the index of its kernel group in ``analysis.kernels``: the first
    unused one with the row's id and name, preferring one with the row's total time (a report
    built by hand can hold two kernels with the same id and name)."""

    def total(i: int):
        t = groups.total_ns(analysis.kernels[i].kernel)
        return None if _nan(t) else round(t, 1)

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


def _share_chart(rows: list[dict]) -> dict:
    """Horizontal bars of the largest groups' share of GPU time, scaled to the largest."""
    shown = rows[:SHARE_CHART_MAX]
    top = max((r["share_v"] or 0.0 for r in shown), default=0.0) or 1.0
    label_w, bar_w, row_h, pad = 270, 260, 22, 4
    bars = []
    for i, r in enumerate(shown):
        v = r["share_v"] or 0.0
        w = bar_w * v / top
        bars.append(
            {
                "href": "#" + r["anchor"],
                "label": short_name(r["name"], CHART_NAME_W) or r["short"][:CHART_NAME_W],
                "text": r["share"],
                "y": pad + i * row_h,
                "w": max(1.0, w) if v > 0 else 0.0,
                "tip": f"{r['name']}: {r['share']} of GPU time, {r['total']} µs in {r['launches']} launch"
                + ("es" if r["launches"] != 1 else ""),
            }
        )
    rest = rows[SHARE_CHART_MAX:]
    rest_share = sum(r["share_v"] or 0.0 for r in rest)
    return {
        "bars": bars,
        "label_w": label_w,
        "bar_w": bar_w,
        "row_h": row_h,
        "width": label_w + bar_w + 56,
        "height": 2 * pad + row_h * len(bars),
        "rest": f"{len(rest)} more kernel group{'s' if len(rest) != 1 else ''}: {_share_text(rest_share)} of GPU time"
        if rest
        else "",
    }


def _summary_view(analysis, kernels: list[dict]) -> dict | None:
    """The application summary of a report with several kernel groups; None for one."""
    if len(analysis.kernels) <= 1:
        return None
    rows = analysis.summary()
    total = sum(r["total_ns"] or 0.0 for r in rows)
    table = []
    for r, i in zip(rows, _row_kernels(analysis, rows)):
        kv, ka = kernels[i], analysis.kernels[i]
        sol = ka.sol
        ranks: dict[str, int] = {}
        for n, f in enumerate(kv["findings"], 1):
            ranks.setdefault(f["id"], n)
        for f in r["findings"]:  # where each finding is on the page (for the "fix first" list)
            f["anchor"] = kv["anchor"]
            f["href"] = f"#{kv['anchor']}-f{ranks[f['id']]}" if f["id"] in ranks else "#" + kv["anchor"]
        label = sol.labels.get(r["limiter"], r["limiter"]) if sol is not None and r["limiter"] else ""
        limiter = f"{label.split(' (')[0]} {r['limiter_pct']:.0f}%" if label and r["limiter_pct"] is not None else ""
        top = r["findings"][0] if r["findings"] else None
        name = _newlines(r["name"])
        table.append(
            {
                "anchor": kv["anchor"],
                "id": r["kernel_id"],
                "name": name,
                "short": short_name(name, SHORT_NAME_W) or name.strip()[:SHORT_NAME_W] or f"kernel {r['kernel_id']}",
                "launches": r["launches"],
                "total": _us(r["total_ns"]),
                "total_v": r["total_ns"],
                "mean": _us(r["mean_ns"]),
                "mean_v": r["mean_ns"],
                "share": _share_text(r["time_share"]),
                "share_v": r["time_share"],
                "share_w": 0.0 if r["time_share"] is None else max(0.0, min(100.0, 100.0 * r["time_share"])),
                "grade": r["grade"] or "",
                "limiter": limiter,
                "limiter_v": r["limiter_pct"],
                "top": None
                if top is None
                else {"id": top["id"], "severity": top["severity"], "href": top["href"], "speedup": _speedup(top)},
                "saved": "" if top is None else _us(top["time_saved_ns"]),
                "saved_v": None if top is None else top["time_saved_ns"],
            }
        )
    for t in table:
        t["sort"] = {k: _sort_value(t[k + "_v"]) for k in ("total", "mean", "share", "limiter", "saved")}
    by_anchor = {t["anchor"]: t for t in table}
    fix = []
    for n, p in enumerate(groups.priorities(rows, FIX_FIRST_MAX), 1):
        t = by_anchor[p["anchor"]]
        fix.append(
            {
                "rank": n,
                "id": p["id"],
                "severity": p["severity"],
                "href": p["href"],
                "kernel_href": "#" + t["anchor"],
                "kernel_id": p["kernel_id"],
                "short": t["short"],
                "name": t["name"],
                "where": p["where"] or "",
                "speedup": _speedup(p),
                "saved": _us(p["time_saved_ns"]),
                "saved_share": _share_text(p["time_saved_ns"] / total) if total > 0 else "",
            }
        )
    launches = sum(r["launches"] for r in rows)
    return {
        "rows": table,
        "chart": _share_chart(table),
        "fix": fix,
        "groups": len(rows),
        "launches": launches,
        "total": _duration(total) if total > 0 else "n/a",
    }


def _body_parts(kv: dict, **context) -> list[str]:
    """A kernel's body (kernel_body.html.j2) as the markup of each of its blocks, in order."""
    tmpl = _env().get_template("kernel_body.html.j2")
    ctx = tmpl.new_context({"kv": kv, "m": _env().get_template("_macros.html.j2").module, **context})
    return ["".join(tmpl.blocks[name](ctx)) for name in tmpl.blocks]


def _pack(parts: list[list[str]]) -> str:
    """The kernel bodies (each a list of block markups) as gzip-compressed JSON, base64 (no
    ``<``, ``>`` or ``&``, so it cannot close its script element): one array per block over
    all groups, the body of group i the concatenation of the arrays' i-th strings. Deflate
    looks back only 32 KB, so like parts side by side (every group's charts, then every tree)
    compress better: on a 139-group report the 7.3 MB of bodies gave 0.63 MB this way, 1.14
    MB group after group in one stream, 1.24 MB one stream per group. ``mtime=0``: the same
    page every run."""
    columns = [list(col) for col in zip(*parts)]
    raw = json.dumps(columns, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


_PACKED_RE = re.compile(r'<script type="application/octet-stream" id="packed-bodies">([A-Za-z0-9+/=]*)</script>')
_PLACEHOLDER_RE = re.compile(r'<div class="packed" data-packed="(\d+)"[^>]*>.*?</div>', re.S)


def packed_bodies(doc: str) -> list[str]:
    """The kernel bodies a page carries packed (``[]`` for a page that has none)."""
    m = _PACKED_RE.search(doc)
    if not m:
        return []
    return ["".join(p) for p in zip(*json.loads(gzip.decompress(base64.b64decode(m[1])).decode("utf-8")))]


def unpack_page(doc: str) -> str:
    """The page as it reads once its script has unpacked every kernel group (report.js puts
    each body in place of its placeholder, as this does); a page without packed groups as is."""
    bodies = packed_bodies(doc)
    if not bodies:
        return doc
    doc = _PACKED_RE.sub("", doc)
    return _PLACEHOLDER_RE.sub(lambda m: bodies[int(m[1])], doc)


@register("html", (".html", ".htm"))
def render_html(analysis, options) -> str:
    options = options or RenderOptions()
    with_svg = dot_available()
    times = [
        (ka.kernel.duration_ns if not _nan(ka.kernel.duration_ns) else 0.0) * groups.launches(ka.kernel)
        for ka in analysis.kernels
    ]
    order = sorted(range(len(times)), key=lambda i: -times[i])
    drawn = set(order[:GRAPH_KERNELS_MAX])
    # The same heaviest groups get their outline tree and hot lines' SASS as HTML; the others
    # carry them as JSON that report.js turns into the same DOM when opened (~1/3 the bytes).
    kernels = [
        _kernel_view(i, ka, analysis, options, with_svg and i in drawn, i in drawn)
        for i, ka in enumerate(analysis.kernels)
    ]
    report = str(analysis.profile.path or "")
    fold = f"{options.fold_share * 100:g}%"
    # Past GRAPH_KERNELS_MAX groups, each group's charts, model, tree and source lines (nine
    # tenths of its bytes) travel packed; its head and findings stay in the page, so every link
    # of the summary has its target. report.js unpacks the heaviest groups at once, the others
    # as they come near the window or a link points into them.
    pack = len(kernels) > GRAPH_KERNELS_MAX
    bodies: list[list[str]] = []
    for i, kv in enumerate(kernels):
        kv["graph_omitted"] = with_svg and i not in drawn
        kv["packed"], kv["eager"] = None, False
        if pack:
            kv["packed"], kv["eager"] = len(bodies), i in drawn
            bodies.append(_body_parts(kv, fold=fold, graph_max=GRAPH_KERNELS_MAX, report=report))
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            title=os.path.basename(report) or "drgpu report",
            report=report,
            fmt=analysis.profile.format,
            version=__version__,
            notes=list(analysis.profile.notes),
            kernels=kernels,
            summary=_summary_view(analysis, kernels),
            launches=sum(kv["launches"] for kv in kernels),
            fold=fold,
            with_svg=with_svg,
            graph_max=GRAPH_KERNELS_MAX,
            packed=_pack(bodies) if bodies else "",
        )
    )
