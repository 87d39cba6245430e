"""Helpers shared by the readers: format sniffing, number parsing, SASS text cleanup, and
assembling the per-instruction table (indexed by PC) from per-column PC->value maps.

Also the damage checks for ``.ncu-rep`` files: ``ncu_report`` loads a truncated or corrupt
report without raising (it yields no launch, or a launch with no name and no metrics) and
its native code logs to file descriptor 2, so ``rep_framing_problem`` checks the file's
block framing and ``native_stderr_captured`` keeps that log out of the user's terminal.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import regex

from ..specs import loader as data
from ..io import open_input, require_input_file
from ..errors import InputError, ReportFormatError, UsageError
from ..profile import INSTRUCTION_COLUMNS

# The .ncu-rep framing walk lives in sass.container (no numpy/pandas); its names are re-exported here.
from ..sass.container import NCU_MAGIC, RepWalk, _payload_size, rep_blocks, rep_framing_problem, rep_walk  # noqa: F401
from ..sass.isa import SASS_LABEL

if TYPE_CHECKING:  # numpy and pandas load where a table is made (instruction_frame)
    import pandas as pd

#: gzip, xz, zip, zstd, bzip2: a report someone compressed before handing it over.
_COMPRESSED = (b"\x1f\x8b", b"\xfd7zXZ\x00", b"PK\x03\x04", b"\x28\xb5\x2f\xfd", b"BZh")


def sniff(p: Path) -> str:  # noqa: PLR0912 - one check per input format, most specific first
    """Return 'ncu-rep', 'csv-raw', 'csv-source', 'csv-details', 'compressed' or 'unknown'.
    Raises InputError when the path cannot be read, ReportFormatError when it is empty."""
    require_input_file(p)
    try:
        with open_input(p) as fh:  # O_NONBLOCK + fstat: a path swapped for a FIFO never blocks
            head = fh.read(4096)
            while head and not head.strip():  # leading blank lines: look past them
                more = fh.read(1 << 16)
                if not more:
                    break
                head = more.lstrip() or b" "
            while (
                b"\n" not in head and not head.startswith(NCU_MAGIC) and len(head) < 1 << 20
            ):  # a raw page's header of 2,000+ columns
                more = fh.read(1 << 16)
                if not more:
                    break
                head += more
    except PermissionError as e:
        raise InputError(f"{p}: permission denied") from e
    except OSError as e:
        raise InputError(f"{p}: cannot read ({e.strerror})") from e
    if not head.strip():
        raise ReportFormatError(
            f"{p} is empty" + (" (blank lines only)" if head else " (0 bytes)"),
            hint="the export or copy may have failed; export or profile again",
        )
    if head.startswith(NCU_MAGIC):
        return "ncu-rep"
    if any(head.startswith(m) for m in _COMPRESSED):
        return "compressed"
    text = decode_csv_bytes(head).lstrip()
    first = text.split("\n", 1)[0]
    if first.startswith('"Kernel Name",') or first.startswith("Kernel Name,"):
        return "csv-source"
    if '"Section Name"' in first and '"Metric Name"' in first:
        return "csv-details"
    if first.startswith('"ID"') or first.startswith("ID,"):
        return "csv-raw"
    # A raw page whose columns were reordered (or lost their ID): the reader says which
    # identity columns are missing.
    cells = {c.strip().strip('"') for c in first.split(",")}
    if "Kernel Name" in cells and ("ID" in cells or len(cells) > 5):
        return "csv-raw"
    return "unknown"


def decode_csv_bytes(raw: bytes) -> str:
    """The text of CSV bytes: UTF-16 or UTF-32 when a byte-order mark says so (a re-save by
    an editor), else UTF-8 with undecodable bytes shown as U+FFFD; without the mark."""
    import codecs

    for bom, enc in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            # The head of a file may end inside a character: decode what is whole.
            return codecs.getincrementaldecoder(enc)(errors="replace").decode(raw).lstrip("\ufeff")
    return raw.decode("utf-8", errors="replace").lstrip("\ufeff")


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


_SPACES = re.compile(r"\s+")


def clean_sass(text: str) -> str:
    """Normalise a SASS line: drop label annotations (`(.L_x_3)) and collapse spaces."""
    return _SPACES.sub(" ", SASS_LABEL.sub("", text or "")).strip()


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
            if "," in c and _NUMBERLIKE.fullmatch(c) and _BAD_COMMA.search(c):
                raise LocaleNumberError(c.strip())
    if _GROUP_SEP.search(joined):
        for c in cells:
            if _LOCALE_GROUPS.match(c):
                raise LocaleNumberError(c.strip())


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
    cells = [c for col in columns for c in col if isinstance(c, str) and c]
    joined = "\n".join(cells)
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


#: The most processor time a ``--kernel`` pattern may take over all of a report's kernel names. A
#: pattern with nested quantifiers (``(x|xx)+y``) takes exponential time on long names; no
#: honest pattern needs a second.
REGEX_BUDGET_S = 2.0


@dataclass(frozen=True)
class KernelSelector:
    """A ``--kernel`` selector, parsed once where it enters drgpu (the CLI, or the API's
    ``kernel=`` text) and used by every reader and by kernel selection: a launch id (``7``),
    an id range (``a:b``, either end optional, ``b`` excluded) or a regular expression
    searched in the demangled and mangled names. The pattern is compiled on first use, so an
    invalid one is reported where the selection is made (a usage error, exit 2), as before."""

    text: str
    lo: int | None = None  # id or id range: the first id picked (None: from the start)
    hi: int | None = None  # the first id not picked (None: to the end)
    by_id: bool = False

    @classmethod
    def parse(cls, text: str | None) -> KernelSelector | None:
        """None for no selector (None or empty text)."""
        if not text:
            return None
        if re.fullmatch(r"[\d:]+", text) and max(map(len, text.split(":"))) > 18:
            # No report has 10^18 launches; int() refuses over 4,300 digits (a ValueError).
            raise UsageError(
                f"--kernel {text[:40]}{'...' if len(text) > 40 else ''}: a launch id of "
                f"{max(map(len, text.split(':'))):,} digits is beyond any report's launches",
                hint="give a launch id, an id range a:b, or a name pattern",
            )
        if re.fullmatch(r"\d+", text):
            return cls(text, int(text), int(text) + 1, True)
        if re.fullmatch(r"\d*:\d*", text):
            lo, hi = text.split(":")
            return cls(text, int(lo) if lo else None, int(hi) if hi else None, True)
        return cls(text)

    @classmethod
    def of(cls, selector: KernelSelector | str | None) -> KernelSelector | None:
        """``selector`` as a KernelSelector: text is parsed, a parsed one is kept."""
        return selector if selector is None or isinstance(selector, KernelSelector) else cls.parse(selector)

    def picks_id(self, kid: int) -> bool:
        """For an id or id-range selector: is launch ``kid`` picked?"""
        return (self.lo is None or kid >= self.lo) and (self.hi is None or kid < self.hi)

    def id_filter(self):
        """A predicate on launch ids for an id or id-range selector, else None (a name
        pattern: readers that skip launches by id read them all)."""
        return self.picks_id if self.by_id else None

    @functools.cached_property
    def regex(self) -> regex.Pattern:
        return kernel_regex(self.text)

    def name_matcher(self, seconds: float = REGEX_BUDGET_S) -> Callable[[str, str | None], bool]:
        """For a name pattern: a test ``(name, mangled) -> bool`` (does the pattern occur in
        either?) whose calls share one time budget of ``seconds``: past it a usage error
        (exit 2) instead of a hang. The budget is the ``regex`` module's own timeout, so it
        holds in any thread (no signal timer); like that timeout it counts processor time,
        so on a busy machine the wait is longer than ``seconds``."""
        rx = self.regex
        deadline = time.process_time() + seconds

        def matches(name: str, mangled: str | None) -> bool:
            for text in (name, mangled):
                if not text:
                    continue
                left = deadline - time.process_time()
                try:
                    if left <= 0:
                        raise TimeoutError
                    if rx.search(text, timeout=left) is not None:
                        return True
                except TimeoutError:
                    raise UsageError(
                        f"--kernel {self.text!r} took over {seconds:g} s of processor time to match the report's kernel names",
                        hint="simplify the pattern: nested quantifiers such as (a+)+ take exponential time on long names",
                    ) from None
            return False

        return matches

    def pick(self, kernels: list) -> list:
        """The kernels (each with ``id``, ``name``, ``mangled``) this selector picks, in order."""
        if self.by_id:
            return [k for k in kernels if self.picks_id(k.id)]
        matches = self.name_matcher()
        return [k for k in kernels if matches(k.name, k.mangled)]


#: Library kernel names a hint lists before "and N more".
LIBRARY_NAMES_SHOWN = 5


def is_library_name(name: str | None, mangled: str | None = None) -> bool:
    """Whether a kernel's demangled or mangled name is a library's (findings.yaml
    ``library_kernels``: cuBLAS, cuDNN, CUTLASS, NCCL, PyTorch...)."""
    return any(rx.search(n) for rx in data.library_kernel_patterns() for n in (name, mangled) if n)


def library_names(kernels: list) -> str:
    """The distinct names of ``kernels`` (each with ``name``) for a message: short forms
    (profile.short_names), the first LIBRARY_NAMES_SHOWN and how many more."""
    from ..profile import short_names

    names = list(dict.fromkeys(k.name or "" for k in kernels))
    short = short_names(names[:LIBRARY_NAMES_SHOWN], 60)
    more = len(names) - LIBRARY_NAMES_SHOWN
    return ", ".join(short[n] for n in names[:LIBRARY_NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")


def missed_library_kernels(selector: KernelSelector | None, kernels: list, picked: list) -> list:
    """The library kernels among ``kernels`` (each with ``name``, ``mangled``) when the name
    pattern ``selector`` picked none of them (``picked``: what it picked, maybe nothing), else
    []: a pattern such as ``gemm`` reads as "the GEMMs" but misses cuBLAS's ``nvjet_*``. An
    id or id range picks by number, not by name: never a miss."""
    if selector is None or selector.by_id:
        return []
    libraries = [k for k in kernels if is_library_name(k.name, k.mangled)]
    chosen = {id(k) for k in picked}
    return [] if any(id(k) in chosen for k in libraries) else libraries


def warn_missed_library_kernels(selector: KernelSelector | None, kernels: list, picked: list, report) -> None:
    """A :class:`~drgpu_py.errors.SelectionHint` warning when ``selector`` picked some of the
    kernels of ``report`` but none of its library kernels (``missed_library_kernels``)."""
    missed = missed_library_kernels(selector, kernels, picked) if picked else []
    if selector is None or not missed:
        return
    import warnings

    from ..errors import SelectionHint

    count = len({k.name for k in missed})
    warnings.warn(
        SelectionHint(
            f"--kernel {selector.text!r} matched none of the {count} library kernel(s) of {Path(str(report)).name}: "
            f"{library_names(missed)}; libraries name their kernels their own way (cuBLAS's GEMMs are nvjet_*): "
            "add their names to the pattern to analyze them too"
        ),
        stacklevel=3,
    )


def parse_dim(s: str) -> tuple[int, int, int]:
    """'(256, 1, 1)' -> (256, 1, 1); missing parts are 1, an unreadable cell (0, 0, 0)."""
    nums = [int(x) for x in re.findall(r"\d+", re.sub(r"\.\d*", "", s or ""))]
    x, y, z = (nums + [1, 1, 1])[:3] if nums else [0, 0, 0]
    return x, y, z


def instruction_frame(
    pcs: list[int],
    columns: dict[str, dict[int, float]],
    sass: dict[int, str],
    lines: dict[int, tuple[str | None, int | None]],
    base: int | None,
) -> pd.DataFrame:
    """Build the per-instruction table. Every column is a PC->value map, so rows are joined
    by PC; PCs with no value get 0 for counters (not executed / not sampled)."""
    import numpy as np
    import pandas as pd

    pcs = sorted(set(pcs))
    index = pd.Index(pcs, name="pc", dtype="int64")
    base = pcs[0] if base is None and pcs else base
    at = [lines.get(pc, (None, None)) for pc in pcs]
    # One constructor call for all columns (in this order): assigning them one by one cost
    # more than the rest of reading a launch.
    n = len(pcs)
    cols: dict = {
        # base is None only when there are no PCs
        "offset": np.fromiter((pc - base for pc in pcs), np.int64, n) if pcs and base is not None else [],
        "sass": [sass.get(pc, "") for pc in pcs],
        # object dtype: pandas would otherwise turn the None of a PC without a line into NaN
        # (a float that is truthy and not a path).
        "file": pd.Series([t[0] for t in at], index=index, dtype=object),
        "line": pd.array([t[1] for t in at], dtype="Int64"),
    }
    for name, values in columns.items():
        cols[name] = np.fromiter(map(values.get, pcs, repeat(0.0)), float, n)  # float() of each
    for r in data.stall_reasons():
        if f"stall_{r}" not in cols:
            cols[f"stall_{r}"] = 0.0
    # Every counter column exists (0 = not executed, not sampled or not collected): the
    # detectors read them without checking, and a report may lack any of them.
    for col in INSTRUCTION_COLUMNS:
        if col not in cols:
            cols[col] = 0.0
    return pd.DataFrame(cols, index=index)


@dataclass
class FrameParts:
    """``instruction_frame``'s arguments for one launch, and the samples the reader moved
    (``profile.SAMPLES_MOVED``): a reader in a process without pandas returns these, and the
    process that analyzes builds the frame (``frame()``: the same table)."""

    pcs: list[int]
    columns: dict[str, dict[int, float]]
    sass: dict[int, str]
    lines: dict[int, tuple[str | None, int | None]]
    base: int | None
    moved: float = 0.0

    def frame(self) -> pd.DataFrame:
        return instruction_frame(self.pcs, self.columns, self.sass, self.lines, self.base)


@contextlib.contextmanager
def native_stderr_captured() -> Iterator[list[str]]:
    """Send what native code writes to file descriptor 2 into a buffer instead of the
    terminal; yields a list that holds the captured text (one string) on exit. Python's own
    ``sys.stderr`` is flushed first so nothing of ours is swallowed."""
    captured: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield captured  # no real fd 2 (embedded interpreter): nothing to capture
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            captured.append(tmp.read(1 << 16).decode("utf-8", errors="replace"))


def native_log_summary(text: str) -> str:
    """The informative line of a native log (absl/protobuf), without its prefix."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("WARNING: All log messages before absl"):
            continue
        m = re.match(r"^[EWIF]\d{4} [\d:.]+\s+\d+ [^\]]+\] (.*)$", line)
        return (m.group(1) if m else line)[:200]
    return ""


def kernel_regex(selector: str) -> regex.Pattern:
    """Compile a ``--kernel`` name pattern (the ``regex`` module, whose searches take a
    timeout; its default mode reads patterns as Python's ``re`` does); any pattern it cannot
    compile (a syntax error, a repeat count over 2^32-1, nesting too deep) is a usage error."""
    try:
        return regex.compile(selector)
    except (regex.error, OverflowError, RecursionError, ValueError) as e:
        raise UsageError(f"--kernel {selector!r} is not a valid regular expression: {e}") from e


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection meanwhile: reading an export or a saved analysis makes
    millions of objects that all live on (a 1,000-launch source page, ~150,000 row lists; a
    20,000-kernel analysis, 2,000,000 tree nodes), and each collection would walk them all
    again (a sixth to a half of the reading time). Collected as usual after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
