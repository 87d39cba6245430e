"""Formatting shared by the HTML views: numbers, durations and sizes as the page writes
them, the stall groups' colours, and JSON that is safe inside a ``<script>`` element.

Contract: plain values in (numbers that may be None or NaN, strings, JSON-able data), display
strings out (``"n/a"`` for a missing number); ``_script_json`` returns ``Markup`` whose text
cannot close its script element. It imports no other module of this package: they all use it.
"""

from __future__ import annotations

import json
import math

from markupsafe import Markup

GROUP_COLORS = {
    "memory": "#1c7ed6",
    "synchronization": "#ae3ec9",
    "instruction": "#0ca678",
    "shared": "#f59f00",
    "constant": "#e64980",
    "warpgroup": "#7048e8",
}
OTHER_COLOR = "#868e96"


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


def _newlines(text: str) -> str:
    """CR and CRLF as LF: what a browser shows anyway (HTML input-stream preprocessing), made
    explicit so the page's text is the same under any HTML parser."""
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


def _share_text(share) -> str:
    """A time share (0..1) as a percentage: '41%', '3.2%', '0.04%'."""
    if _nan(share):
        return "n/a"
    v = 100.0 * share
    return f"{v:.0f}%" if v >= 10 else f"{v:.1f}%" if v >= 0.1 else f"{v:.2g}%" if v > 0 else "0%"


def _script_json(value) -> Markup:
    """``value`` as JSON for a ``<script type="application/json">``: ``<``, ``>`` and ``&`` as
    \\u escapes, so no text of the report can close the script element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))
