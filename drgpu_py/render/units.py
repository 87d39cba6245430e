"""Numbers as every renderer writes them: one home for units and "not measured".

Contract: pure functions of a value (``None`` or NaN: not measured, written ``none``/"n/a")
to text; tree node values through :func:`format_value`; durations in microseconds through
:func:`us` (with the unit) or :func:`microseconds` (a table cell under a "µs" heading).
"""

from __future__ import annotations

import math


def missing(v) -> bool:
    """Not measured: None, or NaN where a float still carries it."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def number(v, spec: str = ".1f", suffix: str = "", none: str = "n/a") -> str:
    """``v`` in the format ``spec`` followed by ``suffix``; ``none`` when not measured."""
    return none if missing(v) else f"{format(v, spec)}{suffix}"


def microseconds(ns, spec: str = ",.1f", suffix: str = "") -> str:
    """A duration given in ns, written in µs (``spec``) followed by ``suffix``."""
    return "n/a" if missing(ns) else f"{format(ns / 1000, spec)}{suffix}"


#: The unit every renderer writes microseconds in (analyze, diff and list alike).
MICROSECONDS = "µs"


def us(ns, spec: str = ",.1f", none: str = "n/a") -> str:
    """A duration given in ns, written in µs (``spec``) with its unit: '190.4 µs'."""
    return none if missing(ns) else f"{format(ns / 1000, spec)} {MICROSECONDS}"


def duration(ns) -> str:
    """A duration given in ns, in the largest of ms, µs and ns that keeps it >= 1."""
    if missing(ns):
        return "n/a"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} {MICROSECONDS}"
    return f"{ns:.0f} ns"


_TIME_STEPS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"))


def format_value(node) -> str:
    """A tree node's value with its unit, as users read it ('' when it has none): shares
    with one decimal, speedups with two, durations in ns/µs/ms/s, counts with thousands
    separators, other values to four significant digits, never in exponent notation."""
    v = node.value
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if not isinstance(v, (int, float)):
        return f"{v} {node.unit}".strip()
    if node.unit == "%":
        return f"{v:.1f}%"
    if node.unit == "x":
        return f"{v:.2f}x"
    if node.unit == "ns":
        for scale, unit in _TIME_STEPS:
            if abs(v) >= scale:
                return f"{v / scale:,.2f} {unit}"
    return f"{format_number(v)} {node.unit}".strip()


def format_number(v: float) -> str:
    """Counts with thousands separators, other values to four significant digits (small
    ones fixed-point), never in exponent notation."""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if float(v).is_integer() or abs(v) >= 1000:
        return f"{v:,.0f}"
    if v != 0 and abs(v) < 1e-3:
        return f"{v:.6f}".rstrip("0")
    return f"{v:.4g}"
