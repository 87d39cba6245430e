"""One rounding per quantity: percentages and speedups as every output writes them.

Contract: pure functions of a number (``None`` or NaN: not measured, written ``none``). A
figure is first rounded to the least precision a stored copy keeps, then written: a
percentage to 1 decimal (as the summary rows and the tree's attributes keep it) and a share to
4 (as JSON keeps it), halves rounded up; a speedup to 3 (as JSON keeps it), then as Python
writes it, as the advice that quotes it does. The text of a live value and of each stored copy
is the same (a renderer that reads the saved JSON or a summary row and one that reads the
analysis agree), so that no output shows one quantity as 90% in one place and 89% in another,
or one estimate as 6.12x in one and 6.11x in another. The price: a percentage within 0.05 of a
half is written as the half rounds (64.46% reads 65%; a share, within 0.005 of a half), and
JSON's 2-decimal copy of a percentage can read 1 apart from it within 0.005 of such a value.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

#: Decimals the stored copies keep: a percentage (0-100), a share (0-1) and a speedup.
PCT_DIGITS, SHARE_DIGITS, SPEEDUP_DIGITS = 1, 4, 3


def _half_up(v: float, kept: int, decimals: int) -> str:
    """``v`` rounded to ``kept`` decimals, then written with ``decimals``, halves up (an
    infinite value as 'inf'; one too large for a half to matter as it is)."""
    if math.isinf(v) or abs(v) >= 1e15:
        return format(v, f".{decimals}f")
    exact = Decimal(repr(round(v, kept))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return str(exact + 0)  # + 0: no "-0"


def pct(v: float | None, decimals: int = 0, none: str = "n/a") -> str:
    """A percentage given in %, without the sign ('65' for 64.46 and its stored 64.5 alike)."""
    if v is None or math.isnan(v):
        return none
    return _half_up(float(v), PCT_DIGITS, decimals)


def share_pct(s: float | None, decimals: int = 0, none: str = "n/a") -> str:
    """A share given in 0..1, as a percentage without the sign (its JSON 4 decimals first)."""
    if s is None or math.isnan(s):
        return none
    return _half_up(100 * round(float(s), SHARE_DIGITS), SHARE_DIGITS - 2, decimals)


def speedup(x: float | None, none: str = "n/a") -> str:
    """An estimated speedup with two decimals and its 'x' (JSON's 3 decimals first, then as
    Python formats them: as an advice that quotes the estimate writes it, ``quoted``)."""
    if x is None or math.isnan(x):
        return none
    return f"{quoted(float(x)):.2f}x"


def quoted(x: float) -> float:
    """A speedup as texts quote it, formatted with ``.2f``: JSON's 3 decimals."""
    return round(x, SPEEDUP_DIGITS) if math.isfinite(x) else x
