"""Formatting shared by the HTML views: numbers, durations and sizes as the page writes
them, the stall groups' colours, and JSON that is safe inside a ``<script>`` element.

Contract: plain values in (numbers that may be None or NaN, strings, JSON-able data), display
strings out (``"n/a"`` for a missing number); ``script_json`` returns ``Markup`` whose text
cannot close its script element. It imports no other module of this package: they all use it.
"""

from __future__ import annotations

import json

from markupsafe import Markup

from ..units import missing

GROUP_COLORS = {
    "memory": "#1c7ed6",
    "synchronization": "#ae3ec9",
    "instruction": "#0ca678",
    "shared": "#f59f00",
    "constant": "#e64980",
    "warpgroup": "#7048e8",
}
OTHER_COLOR = "#868e96"


def bytes_text(v) -> str:
    if missing(v):
        return "n/a"
    return f"{v / 1024:.1f} KiB" if v >= 1024 else f"{v:.0f} B"


def unix_newlines(text: str) -> str:
    """CR and CRLF as LF: what a browser shows anyway (HTML input-stream preprocessing), made
    explicit so the page's text is the same under any HTML parser."""
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


def share_text(share) -> str:
    """A time share (0..1) as a percentage: '41%', '3.2%', '0.04%'."""
    if missing(share):
        return "n/a"
    v = 100.0 * share
    return f"{v:.0f}%" if v >= 10 else f"{v:.1f}%" if v >= 0.1 else f"{v:.2g}%" if v > 0 else "0%"


def script_json(value) -> Markup:
    """``value`` as JSON for a ``<script type="application/json">``: ``<``, ``>`` and ``&`` as
    \\u escapes, so no text of the report can close the script element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))
