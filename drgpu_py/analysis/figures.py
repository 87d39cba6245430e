"""One rounding per quantity: percentages and speedups as every output writes them.

Contract: pure functions of a number (``None`` or NaN: not measured, written ``none``). A
figure is first rounded to the precision its stored copy keeps (a percentage to 1 decimal, as
the tree's attributes keep it; a share to 4, a speedup to 3, as JSON keeps them), then
formatted: the text of a raw value and of its stored copy is the same, so that text, HTML and
DOT never show one quantity as 90% in one place and 89% in another, or one estimate as 6.12x
in one and 6.11x in another.
"""

from __future__ import annotations

import math

#: Decimals a stored copy keeps: a percentage (0-100), a share (0-1) and a speedup.
PCT_DIGITS, SHARE_DIGITS, SPEEDUP_DIGITS = 1, 4, 3


def pct(v: float | None, decimals: int = 0, none: str = "n/a") -> str:
    """A percentage given in %, without the sign ('90' for 89.46 and for its stored 89.5 alike)."""
    if v is None or math.isnan(v):
        return none
    return format(round(float(v), PCT_DIGITS), f".{decimals}f")


def share_pct(s: float | None, decimals: int = 0, none: str = "n/a") -> str:
    """A share given in 0..1, as a percentage without the sign (its JSON 4 decimals first)."""
    if s is None or math.isnan(s):
        return none
    return pct(100 * round(float(s), SHARE_DIGITS), decimals)


def speedup(x: float | None, none: str = "n/a") -> str:
    """An estimated speedup with two decimals and its 'x' (JSON's 3 decimals first)."""
    if x is None or math.isnan(x):
        return none
    return f"{round(float(x), SPEEDUP_DIGITS):.2f}x"
