"""Roofline geometry of the speed-of-light view: log-log axes in whole decades, the memory
and compute roofs meeting at the ridge point, and the kernel's point with its label placed
clear of the drawn lines and the other labels.

Contract: ``roofline_chart(r, flops_source, has_sass, essential_dram_bytes) -> dict`` takes the
``roofline`` part of ``SolResult.to_dict()`` (analysis/sol.py) and the DRAM bytes the time
ledger counts as useful (analysis/ledger.py, None when unknown) and returns ``{"title",
"missing", "chart"}``: ``chart`` holds the SVG coordinates and label strings the template's
roofline macro draws, or is None with ``missing`` saying why nothing is drawn. Two points when
the kernel moves more DRAM bytes than its accesses need: the measured one, and the same work
with only the essential bytes (further right: the distance to the roof is waste, not a limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

ROOF_W, ROOF_H = 470, 300  # roofline SVG size
ROOF_PAD = {"left": 58, "right": 26, "top": 14, "bottom": 44}
ROOF_MARGIN_DECADES = 0.3  # at least this much of a decade between the data and an axis end
CHAR_W = {"tick": 5.6, "roof": 6.4, "point": 6.9}  # rough text widths per character (px), for placing labels
LABEL_LINE_H = 14


def _segment(a: tuple[float, float], b: tuple[float, float], step: float = 3.0) -> list[tuple[float, float]]:
    n = max(1, int(math.dist(a, b) / step))
    return [(a[0] + (b[0] - a[0]) * i / n, a[1] + (b[1] - a[1]) * i / n) for i in range(n + 1)]


#: How far a label's box reaches left of its x, as a share of its width, by text-anchor.
_ANCHOR_SHIFT = {"start": 0.0, "end": 1.0, "middle": 0.5}


def _centred(x: float, width: float, x0: float, x1: float) -> float:
    """A centred label's x: at the point, moved inside [x0, x1] when its box would cross one."""
    return min(max(x, x0 + width / 2), x1 - width / 2)


def _label_x(anchor: str, x: float, width: float, x0: float, x1: float) -> float:
    if anchor == "middle":
        return _centred(x, width, x0, x1)
    return x + 8 if anchor == "start" else x - 8


def _usable(box: tuple[float, float, float, float], bounds, anchor: str, x: float, y: float) -> bool:
    """A box inside ``bounds`` that, centred, does not cover its own point."""
    x0, y0, x1, y1 = bounds
    if box[0] < x0 or box[2] > x1 or box[1] < y0 or box[3] > y1:
        return False
    return not (anchor == "middle" and box[0] - 2 <= x <= box[2] + 2 and box[1] - 5 <= y <= box[3] + 5)


def _crowding(box, points: list[tuple[float, float, float]], boxes: list[tuple[float, float, float, float]]) -> float:
    """What a label's box covers: the weights of the drawn points in it, 50 for each other label it overlaps."""
    hits = sum(w for px, py, w in points if box[0] <= px <= box[2] and box[1] <= py <= box[3])
    return hits + sum(50 for b in boxes if b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3])


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
            lx = _label_x(anchor, x, width, x0, x1)
            left = lx - width * _ANCHOR_SHIFT[anchor]
            box = (left - 2, y + dy - 12, left + width + 2, y + dy + extra + 3)
            if not _usable(box, bounds, anchor, x, y):
                continue
            hits = _crowding(box, points, boxes)
            if hits == 0:
                return lx, y + dy, anchor
            if best is None or hits < best[0]:
                best = (hits, lx, y + dy, anchor)
    if best is None:
        return _centred(x, width, x0, x1), y + 18 if y + 18 < y1 else y - 10, "middle"
    return best[1], best[2], best[3]


def _rate(v: float, unit: str) -> str:
    """A rate with an SI prefix: 7.3e14 FLOP/s -> '730 TFLOP/s'."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def _tflops(v: float) -> str:
    t = v / 1e12
    return f"{t:.0f} TFLOP/s" if t >= 100 else f"{t:.1f} TFLOP/s" if t >= 1 else f"{t:.3g} TFLOP/s"


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


def _useful_intensity(r: dict, essential_dram_bytes: float | None) -> float | None:
    """FLOP per essential DRAM byte, when the essential bytes are known and at least 5 % below
    the measured ones (else the two points coincide)."""
    flops, moved = r.get("flops"), r.get("dram_bytes")
    if not (essential_dram_bytes and flops and moved) or not 0 < essential_dram_bytes < 0.95 * moved:
        return None
    ai = flops / essential_dram_bytes
    return ai if math.isfinite(ai) and ai > 0 else None


@dataclass
class _Frame:
    """The chart's log-log axes: whole decades ``x_lo``..``x_hi`` of arithmetic intensity and
    ``y_lo``..``y_hi`` of FLOP/s over a plot area ``pw`` x ``ph`` inside ROOF_PAD."""

    x_lo: int
    x_hi: int
    y_lo: int
    y_hi: int
    pw: float
    ph: float

    def px(self, x: float) -> float:
        return ROOF_PAD["left"] + (math.log10(x) - self.x_lo) / (self.x_hi - self.x_lo) * self.pw

    def py(self, y: float) -> float:
        return ROOF_PAD["top"] + (self.y_hi - math.log10(y)) / (self.y_hi - self.y_lo) * self.ph


def _frame(ai: float, fps: float, peak: float, bw: float, useful_ai: float | None) -> _Frame:
    """Axis ends whole decades at least ROOF_MARGIN_DECADES beyond the ridge, the kernel's
    points and both roofs at the left edge."""
    m = ROOF_MARGIN_DECADES
    lx = [math.log10(ai), math.log10(peak / bw)] + ([math.log10(useful_ai)] if useful_ai else [])
    x_lo, x_hi = math.floor(min(lx) - m), math.ceil(max(lx) + m)
    roof_lo = bw * 10.0**x_lo  # the memory roof at the left edge
    ly = [math.log10(fps), math.log10(peak), math.log10(roof_lo)]
    y_lo, y_hi = math.floor(min(ly) - m), math.ceil(max(ly) + m)
    pad = ROOF_PAD
    pw, ph = ROOF_W - pad["left"] - pad["right"], ROOF_H - pad["top"] - pad["bottom"]
    return _Frame(x_lo, x_hi, y_lo, y_hi, pw, ph)


def _ticks(f: _Frame) -> tuple[list[dict], list[dict]]:
    """Each decade's tick; labelled all, or every other one beyond eight decades."""
    x_step = 1 if f.x_hi - f.x_lo <= 8 else 2
    y_step = 1 if f.y_hi - f.y_lo <= 8 else 2
    xticks = [{"x": f.px(10.0**e), **_decade_label(e), "label": e % x_step == 0} for e in range(f.x_lo, f.x_hi + 1)]
    yticks = [{"y": f.py(10.0**e), **_decade_label(e), "label": e % y_step == 0} for e in range(f.y_lo, f.y_hi + 1)]
    return xticks, yticks


def _vals(r: dict, missing: list[str]) -> list[Any]:
    """The four numbers the chart needs; says in ``missing`` when one is not a positive number."""
    vals: list[Any] = [
        r.get(k) for k in ("arithmetic_intensity", "flop_per_s", "peak_flop_per_s", "peak_dram_bytes_per_s")
    ]
    if not missing and not all(isinstance(v, (int, float)) and v > 0 and math.isfinite(v) for v in vals):
        missing.append("the kernel's FLOP/s or arithmetic intensity is zero")
    return vals


def _ridge_place(ridge_x: float, ridge_w: float, right: float) -> tuple[str, float, float]:
    """(text-anchor, x, left edge) of the ridge label beside its dashed line: right of it
    when it fits, else left."""
    if ridge_x + 4 + ridge_w <= right:
        return "start", ridge_x + 4, ridge_x + 4
    return "end", ridge_x - 4, ridge_x - 4 - ridge_w


def _guide_points(roof: list[tuple[float, float]], ridge_x: float, peak_y: float, bottom: float) -> list:
    """The drawn lines as points a label should stay off: the roofs, the ridge's dashed line (lighter)."""
    points = [(*q, 1.0) for q in _segment(roof[0], roof[1]) + _segment(roof[1], roof[2])]
    return points + [(*q, 0.3) for q in _segment((ridge_x, peak_y), (ridge_x, bottom))]


def _mem_label_points(roof: list[tuple[float, float]], mem_w: float, mem_mid: tuple[float, float]) -> list:
    """The rotated DRAM label, as points 6-16 px above the middle of the memory roof."""
    mem_len = math.dist(roof[0], roof[1])
    ux, uy = (roof[1][0] - roof[0][0]) / mem_len, (roof[1][1] - roof[0][1]) / mem_len
    return [
        (mem_mid[0] + ux * t + uy * off, mem_mid[1] + uy * t - ux * off, 5.0)
        for t in range(-int(mem_w / 2), int(mem_w / 2) + 1, 3)
        for off in (6, 11, 16)
    ]


def _useful_point(x: float, y: float, useful_ai: float, fps: float, peak: float, bw: float) -> dict:
    attainable = min(peak, bw * useful_ai)
    return {
        "x": x,
        "y": y,
        "tip": f"the same work with only the DRAM bytes its accesses need at ideal width: {useful_ai:.3g} FLOP/byte, "
        f"{100 * fps / attainable:.0f}% of the attainable {_tflops(attainable)} there",
    }


def _caption(r: dict, ai: float, fps: float, peak: float, bw: float, useful_ai: float | None) -> str:
    ridge = peak / bw
    side = r.get("side") or ""
    pct = r.get("pct_of_attainable")
    return (
        f"Achieved {_tflops(fps)} at {ai:.3g} FLOP per DRAM byte; ridge point {ridge:.3g} FLOP/byte"
        + (f"; {side} side of the ridge" if side else "")
        + (
            f"; {pct:.0f}% of the attainable {_tflops(float(r['attainable_flop_per_s']))}"
            if pct is not None and r.get("attainable_flop_per_s")
            else ""
        )
        + f". Roofs: DRAM {_rate(bw, 'B/s')}, {r['precision']} peak {_tflops(peak)} at the measured clock."
        + (
            f" Open circle: the same work with only the DRAM bytes its accesses need at ideal width "
            f"({useful_ai:.3g} FLOP/byte, {100 * fps / min(peak, bw * useful_ai):.0f}% of the attainable there)."
            if useful_ai is not None
            else ""
        )
    )


def _tip(r: dict, ai: float, fps: float) -> str:
    dram = _rate(r["dram_bytes_per_s"], "B/s") if r.get("dram_bytes_per_s") else "n/a"
    return f"{_tflops(fps)} at {ai:.3g} FLOP/byte (DRAM {dram})"


def roofline_chart(
    r: dict, flops_source: str, has_sass: bool = True, essential_dram_bytes: float | None = None
) -> dict:
    """Log-log roofline geometry: x arithmetic intensity (FLOP per DRAM byte), y FLOP/s; the
    memory roof (slope = peak DRAM bytes/s) and the compute roof (peak FLOP/s) meet at the
    ridge point. Axis ends are whole decades at least ROOF_MARGIN_DECADES beyond the ridge,
    the kernel's point and both roofs at the left edge."""
    title = f"Roofline ({r['precision']})" if r.get("precision") else "Roofline"
    out = {"title": title, "missing": "", "chart": None}
    missing = _roofline_missing(r, flops_source, has_sass)
    vals = _vals(r, missing)
    if missing:
        out["missing"] = "Roofline not drawn: " + "; ".join(missing) + "."
        return out
    ai, fps, peak, bw = (float(v) for v in vals)
    ridge = peak / bw
    useful_ai = _useful_intensity(r, essential_dram_bytes)
    f = _frame(ai, fps, peak, bw, useful_ai)
    roof_lo = bw * 10.0**f.x_lo  # the memory roof at the left edge
    xticks, yticks = _ticks(f)
    roof = [(f.px(10.0**f.x_lo), f.py(roof_lo)), (f.px(ridge), f.py(peak)), (f.px(10.0**f.x_hi), f.py(peak))]
    pt_x, pt_y = f.px(ai), f.py(fps)
    pct = r.get("pct_of_attainable")
    label = [_tflops(fps)] + ([f"{pct:.0f}% of attainable"] if pct is not None else [])
    right, bottom = ROOF_PAD["left"] + f.pw, ROOF_PAD["top"] + f.ph
    # Fixed labels: the peak over the right end of the compute roof, the ridge beside its
    # dashed line at the bottom, DRAM along the memory roof when that is long enough.
    peak_label = f"peak {_rate(peak, 'FLOP/s')}"
    peak_w = CHAR_W["roof"] * len(peak_label)
    ridge_label = f"ridge {ridge:.3g} FLOP/B"
    ridge_w = CHAR_W["tick"] * len(ridge_label)
    ridge_x = f.px(ridge)
    ridge_anchor, ridge_lx, ridge_left = _ridge_place(ridge_x, ridge_w, right)
    mem_label = f"DRAM {_rate(bw, 'B/s')}"
    mem_w = CHAR_W["roof"] * len(mem_label)
    mem_show = math.dist(roof[0], roof[1]) >= mem_w + 20
    mem_mid = ((roof[0][0] + roof[1][0]) / 2, (roof[0][1] + roof[1][1]) / 2)
    points = _guide_points(roof, ridge_x, f.py(peak), bottom)
    if mem_show:
        points += _mem_label_points(roof, mem_w, mem_mid)
    if useful_ai is not None:  # the open circle and the dashed line to it: keep the label off them
        points += [(*q, 5.0) for q in _segment((pt_x, pt_y), (f.px(useful_ai), pt_y))]
    boxes = [
        (right - 4 - peak_w, f.py(peak) - 17, right - 4, f.py(peak) - 3),
        (ridge_left, bottom - 17, ridge_left + ridge_w, bottom - 3),
    ]
    label_x, label_y, anchor = _place_label(
        pt_x,
        pt_y,
        CHAR_W["point"] * max(map(len, label)),
        len(label),
        (ROOF_PAD["left"] + 2, ROOF_PAD["top"], right - 2, bottom),
        points,
        boxes,
    )
    return {
        **out,
        "chart": {
            "width": ROOF_W,
            "height": ROOF_H,
            "left": ROOF_PAD["left"],
            "top": ROOF_PAD["top"],
            "right": ROOF_PAD["left"] + f.pw,
            "bottom": ROOF_PAD["top"] + f.ph,
            "pw": f.pw,
            "ph": f.ph,
            "xticks": xticks,
            "yticks": yticks,
            "roof": " ".join(f"{x:.1f},{y:.1f}" for x, y in roof),
            "ridge_x": ridge_x,
            "ridge_y": f.py(peak),
            "ridge": ridge_label,
            "ridge_lx": ridge_lx,
            "ridge_anchor": ridge_anchor,
            "peak_label": peak_label,
            "peak_y": f.py(peak),
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
            "useful": None if useful_ai is None else _useful_point(f.px(useful_ai), pt_y, useful_ai, fps, peak, bw),
            "tip": _tip(r, ai, fps),
            "caption": _caption(r, ai, fps, peak, bw, useful_ai),
        },
    }
