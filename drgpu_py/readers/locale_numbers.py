"""Numbers in ncu's CSV cells: ncu writes ``1,234.5`` (a thousands comma, a decimal point).

Contract: ``to_number`` and ``numbers`` read a cell (a column) by ncu's rule, missing
markers (``n/a``, ``''``) as NaN, and never raise. ``check_locale`` (one column) and
``check_locale_page`` (a whole raw page) raise :class:`LocaleNumberError` for cells written
in another locale's format (``1.234,5``, ``0,5``, ``1'234``), which ncu's rule would read 10
to 1,000 times off: such a file is refused, never misread.
"""

from __future__ import annotations

import math
import re

__all__ = ["LocaleNumberError", "check_locale", "check_locale_page", "numbers", "to_number"]

_NUMBER_START = frozenset("0123456789+-. ")


def to_number(v) -> float:
    """ncu CSV numbers carry thousands separators; 'n/a' and '' are missing (NaN)."""
    if type(v) is str and v[:1] in _NUMBER_START:
        # Most cells are numbers: float() of the text without separators gives what the
        # cleanup below gives (it ignores surrounding whitespace too, and none of the missing
        # markers starts like a number), and a CSV holds millions of cells.
        try:
            return float(v.replace(",", "") if "," in v else v)
        except ValueError:
            return math.nan
    if v is None:
        return math.nan
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip().replace(",", "")
    if not s or s.lower() in ("n/a", "nan", "-", "none"):
        return math.nan
    try:
        return float(s)
    except ValueError:
        return math.nan


class LocaleNumberError(ValueError):
    """A cell holds a number written in a locale's format (``1.234,5``, ``0,5``,
    ``1'234.56``, ``1 234``): ncu writes ``1,234.5``. Read with ncu's rule it would be
    10 to 1,000 times off, so the reader refuses the file (it names the cell);
    ``check_locale`` raises it."""

    def __init__(self, cell: str, why: str | None = None):
        super().__init__(cell)
        self.cell = cell
        self.why = why or "a decimal comma, or digits grouped by an apostrophe or a space"

    def __reduce__(self):
        return type(self), (self.cell, self.why)


#: A comma that is no thousands separator of ncu's (not followed by exactly three digits,
#: or after a decimal point in the same cell): a decimal comma. Cells are joined by
#: newlines, so a match never spans two cells.
_BAD_COMMA = re.compile(r",(?!\d{3}(?!\d))|\.\d*,")
#: Digit groups joined by an apostrophe or a (no-break, thin) space: Swiss and French
#: thousands separators, which float() refuses and ncu never writes.
_LOCALE_GROUPS = re.compile(r"^\s*[-+]?\d{1,3}(?:['\u2019\u00a0\u202f\u2009 ]\d{3})+(?:[.,]\d*)?\s*$")


def numbers(cells) -> list[float]:
    """``to_number`` of each text cell, the same values, for a whole column at once.

    ``to_number`` of a string is ``float`` of it without its thousands separators, or NaN
    where that fails (float() ignores surrounding whitespace as ``str.strip`` does, and the
    missing markers either fail or are NaN). A column of numbers, the usual case, thus
    converts in one C-level ``map(float, ...)``; a column with any other cell falls back to
    ``to_number`` cell by cell (and so does anything but text: join refuses it)."""
    try:
        if "," in "".join(cells):
            cells = [c.replace(",", "") for c in cells]
        return list(map(float, cells))
    except (ValueError, TypeError):
        return [to_number(c) for c in cells]


def check_locale(cells) -> None:
    """Raise LocaleNumberError for the first cell that is a number in a locale's format (a
    decimal comma, or digit groups joined by an apostrophe or a space): read by ncu's rule
    (``numbers``) it would be 10x off or missing. Text cells (a name with commas) pass. One
    regular-expression scan over the joined column; cells are checked one by one only when
    it finds something."""
    try:
        joined = "\n".join(cells)
    except TypeError:
        return
    if "," in joined and _BAD_COMMA.search(joined):
        for c in cells:
            if _decimal_comma(c):
                raise LocaleNumberError(c.strip())
    if _GROUP_SEP.search(joined):
        for c in cells:
            if _LOCALE_GROUPS.match(c):
                raise LocaleNumberError(c.strip())


def _decimal_comma(c: str) -> bool:
    """A number cell with a comma ncu's thousands grouping does not explain."""
    return "," in c and bool(_NUMBERLIKE.fullmatch(c)) and bool(_BAD_COMMA.search(c))


#: Number cells ncu never writes: a comma after a leading 0 or after four digits ('0,500',
#: '1234,567': ncu groups thousands from the first digit), two thousands dots ('1.234.567').
_NOT_NCU = re.compile(
    r"^\s*[-+]?(?:0,\d{3}|\d{4,},\d{3}|\d{1,3}(?:\.\d{3}){2,})\s*$",
    re.M,
)
#: A decimal point as ncu writes it: followed by one, two, or four and more digits (a
#: thousands dot has exactly three after it), or after ncu's thousands comma ('1,234.5').
_NCU_POINT = re.compile(r"^\s*[-+]?\d[\d,]*\.(?:\d{1,2}|\d{4,})\s*$|\d,\d{3}\.\d", re.M)
#: '94.912': ncu's 94.912, or a thousands dot (94912); ncu writes at most two decimals.
_DOT_GROUPS = re.compile(r"^\s*[-+]?\d{1,3}(?:\.\d{3})+\s*$", re.M)
#: '94,912': ncu's 94912, or a decimal comma with three decimals (94.912).
_COMMA_GROUPS = re.compile(r"^\s*[-+]?\d{1,3}(?:,\d{3})+\s*$")
_RESAVED = (
    "as a spreadsheet set to a German (or similar) locale re-saves it; read by ncu's rule, values are 1,000 times off"
)


def check_locale_page(columns, units=None) -> None:
    """Raise LocaleNumberError when the number cells of a raw page, taken together, show a
    locale's format that ``check_locale`` cannot tell from one cell: a re-save with three
    fixed decimals ('94,912' for 94.912, '0,000') or thousands dots on whole numbers
    ('94.912' for 94912). Refused when a cell is one ncu never writes ('0,500', '1234,567',
    '1.234.567'); when the page has no decimal point as ncu writes it ('12.5': every ncu
    export has many) and a cell with a dot before three digits; or when it has none and a
    percentage (units row '%') reads 1,000 % or more by ncu's rule ('94,912' %)."""
    joined = _page_text(columns)
    if "," not in joined and "." not in joined:
        return
    bad = _NOT_NCU.search(joined)
    if bad:
        raise LocaleNumberError(bad.group(0).strip(), f"a number ncu never writes, {_RESAVED}")
    if _NCU_POINT.search(joined):
        return
    dots = _DOT_GROUPS.search(joined)
    if dots:
        raise LocaleNumberError(
            dots.group(0).strip(),
            f"no number in the file has a decimal point as ncu writes it (12.5): thousands dots, {_RESAVED}",
        )
    for col, unit in zip(columns, units or ()):
        if unit == "%":
            _check_percentages(col)


def _page_text(columns) -> str:
    """The page's text cells, a line each."""
    return "\n".join([c for col in columns for c in col if isinstance(c, str) and c])


def _check_percentages(col) -> None:
    """A percentage column of a page without ncu's decimal point: a cell of comma-grouped
    digits reads 1,000 % or more by ncu's rule, a decimal comma."""
    cell = next((c for c in col if isinstance(c, str) and _COMMA_GROUPS.match(c)), None)
    if cell is not None:
        raise LocaleNumberError(
            cell.strip(),
            f"a percentage of {to_number(cell):,.0f} % by ncu's rule and no decimal point in the file: "
            f"a decimal comma, {_RESAVED}",
        )


#: A cell made of digits, separators and a sign: a number, whatever its locale.
_NUMBERLIKE = re.compile(r"\s*[-+]?[\d.,]*\d[\d.,]*\s*")
#: A digit, an apostrophe or a (no-break, thin) space, a digit: a locale's digit grouping.
_GROUP_SEP = re.compile(r"\d['\u2019\u00a0\u202f\u2009 ]\d")
