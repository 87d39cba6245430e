"""The source page of an ncu CSV export (``--page source --print-source sass``): its blocks,
one per kernel launch, matched to the raw page's launches and turned into per-instruction
tables.

Contract: ``parse_source(path)`` splits the page into (kernel name, header, rows) blocks and
refuses a file cut short or holding rows that are no instruction rows; ``attach_source``
gives each read launch the table of its block, matched by kernel name in order over every
launch (never another function's block), refusing a block that cannot be its launch's.
``match_name`` spells a kernel name as both CSV pages agree on it. Nothing here reads the raw
page or a line table (:mod:`drgpu_py.readers.ncu_csv` does).
"""

from __future__ import annotations

import math
import operator
import re
from collections import deque
from itertools import chain
from pathlib import Path

import pandas as pd

from ..specs import loader as data
from ..errors import ReportFormatError
from ..profile import KernelProfile, base_name, short_name
from ..sass.isa import clean_sass
from .csv_text import SourceStop, text_pieces
from .csv_text import rows as csv_rows
from .frame import instruction_frame
from .locale_numbers import check_locale, numbers, to_number


def parse_source(p: Path) -> list[tuple[str, list[str], list[list[str]]]]:
    """Split a source-page export into (kernel name, header, rows) blocks. A file cut
    short inside its last row (no final newline, fewer cells than its header: ``head -c``,
    an interrupted copy) is refused: its last kernel would lose instructions and samples."""
    last = [""]  # the last piece of text read

    def pieces():
        for last[0] in text_pieces(p):
            yield last[0]

    stop = SourceStop()
    rows = csv_rows(pieces(), p, stop=stop, width=stop.width)
    _refuse_stopped_source(stop, p)
    if rows and not last[0].endswith(("\n", "\r")):
        _refuse_cut_last_row(rows, p)
    return _source_blocks(rows)


def _refuse_stopped_source(stop: SourceStop, p: Path) -> None:
    """Reading stopped at a row that is no instruction row."""
    if stop.stopped is None:
        return
    raise ReportFormatError(
        f"{p}: a row is no source-page row: {len(stop.stopped)} cells (its block's header has "
        f"{len(stop.header or [])}), no address (it begins {','.join(stop.stopped)[:40]!r})",
        hint="the CSV may be corrupt or edited: export the source page again: "
        "ncu -i R --csv --page source --print-source sass",
    )


def _refuse_cut_last_row(rows: list[list[str]], p: Path) -> None:
    """The file ends without a line end: refuse it when its last row is shorter than its
    block's header."""
    last = rows[-1]
    header = next((rows[i + 1] for i in range(len(rows) - 2, -1, -1) if rows[i] and rows[i][0] == "Kernel Name"), None)
    if header is not None and last is not header and 0 < len(last) < len(header):
        raise ReportFormatError(
            f"{p} is truncated: its last row has {len(last)} of {len(header)} cells and no line end",
            hint="export the source page again: ncu -i R --csv --page source --print-source sass",
        )


def _source_blocks(rows: list[list[str]]) -> list[tuple[str, list[str], list[list[str]]]]:
    """A block starts at a "Kernel Name" row; the row after it is its header, whatever it
    holds (even another "Kernel Name" row); its rows run to the next "Kernel Name" row."""
    marks = [i for i, r in enumerate(rows) if r and r[0] == "Kernel Name"]
    blocks: list[tuple[str, list[str], list[list[str]]]] = []
    m = 0
    while m < len(marks):
        i = marks[m]
        m = _next_block_start(marks, m + 1, i)
        end = marks[m] if m < len(marks) else len(rows)
        blocks.append(_source_block(rows, i, end))
    return blocks


def _next_block_start(marks: list[int], m: int, start: int) -> int:
    """The first of ``marks[m:]`` that starts a block: a "Kernel Name" row right after the
    block starting at ``start`` is that block's header, not a block."""
    while m < len(marks) and marks[m] < start + 2:
        m += 1
    return m


def _source_block(rows: list[list[str]], start: int, end: int) -> tuple[str, list[str], list[list[str]]]:
    """(kernel name, header, non-empty rows) of the block from row ``start`` to ``end``."""
    r = rows[start]
    header = rows[start + 1] if start + 1 < len(rows) else []
    return r[1] if len(r) > 1 else "", header, [row for row in rows[start + 2 : end] if row]


# A C-style cast before a template value: '(int)64', '(unsigned long)7', '(Foo::Bar)3'. The
# one definition in this module: ``match_name`` and ``_normalised`` look it up when called.
_CAST = re.compile(r"\((?:(?:unsigned|signed|long|short|const)\s+)*[A-Za-z_][\w:]*\)(?=[-\w.])")
_SPACE = re.compile(r"\s+")


def match_name(name: str) -> str:
    """A kernel name as both CSV pages can agree on it: the source page spells template
    values with casts ('poly_chain<(int)64>'), the raw page without ('poly_chain<64>')."""
    return _SPACE.sub("", _CAST.sub("", name))


def _assign_blocks(names: list[str], blocks) -> list[int | None]:
    """The source-page block of each launch: the first unused block of its kernel name
    (compared as ``match_name`` spells it), else the first unused block of the same function
    (an overload or template the pages spell differently), else none. Never another
    function's block: its SASS would be charged to the wrong kernel."""
    queues: dict[str, deque[int]] = {}
    by_base: dict[str, deque[int]] = {}
    for j, b in enumerate(blocks):
        queues.setdefault(match_name(b[0]), deque()).append(j)
        by_base.setdefault(base_name(b[0]), deque()).append(j)
    used = [False] * len(blocks)
    out: list[int | None] = []
    for name in names:
        pick: int | None = None
        for q in (queues.get(match_name(name)), by_base.get(base_name(name))):
            # The used blocks of a queue are all at its front: blocks are taken in order.
            while q and used[q[0]]:
                q.popleft()
            if q:
                pick = q.popleft()
                break
        if pick is not None:
            used[pick] = True
        out.append(pick)
    return out


def attach_source(names: list[str], read: dict[int, KernelProfile], blocks, origin: Path | None = None) -> Memo:
    """Give each read launch (``read``: position -> KernelProfile) the per-instruction table
    of its source-page block. Blocks are matched to launches by kernel name in order over
    every launch, read or not, so a launch gets the block it gets when all are read. Returns
    whether the launch at a position has per-instruction rows."""
    assigned = _assign_blocks(names, blocks)
    _refuse_blocks_without_columns(names, blocks, assigned, origin)
    spec = data.metrics_table()["instruction_columns"]
    reason_cols = {rid: s["csv"] for rid, s in data.stall_reasons().items()}
    clean = Memo(clean_sass)  # launches of one function repeat its SASS text
    if blocks and read and all(j is None for j in assigned):
        have = ", ".join(sorted({repr(short_name(b[0], 40)) for b in blocks})[:3])
        raise ReportFormatError(
            f"{origin or 'the source-page CSV'} holds none of the raw page's kernels (it has {have})",
            hint="give the source page exported from the same report as the raw page",
        )
    for pos, k in read.items():
        j = assigned[pos]
        if j is None:
            _note_no_block(k, blocks, origin)
            continue
        _, header, body = blocks[j]
        k.instructions, k.function_base = _instruction_table(header, body, spec, reason_cols, clean)
        _check_block(k, origin, last_in_file=j == len(blocks) - 1)

    def has_rows(pos: int) -> bool:
        if pos in read:
            return not read[pos].instructions.empty
        j = assigned[pos]
        return j is not None and _block_has_rows(blocks[j])

    return Memo(has_rows)


def _refuse_blocks_without_columns(names: list[str], blocks, assigned: list[int | None], origin: Path | None) -> None:
    """Refuse at the first launch (read or not) whose block lacks the Address/Source columns."""
    for pos, j in enumerate(assigned):
        if j is not None and not {"Address", "Source"} <= set(blocks[j][1]):
            raise ReportFormatError(
                f"{origin or 'the source-page CSV'}: no Address/Source columns in the block of {short_name(names[pos], 60)!r}",
                hint="export with --print-source sass",
            )


def _note_no_block(k: KernelProfile, blocks, origin: Path | None) -> None:
    if blocks:
        k.notes.append(
            f"{Path(origin).name if origin else 'the source-page CSV'} has no block for this kernel: "
            "no per-instruction data"
        )


def _block_has_rows(block: tuple[str, list[str], list[list[str]]]) -> bool:
    """Whether a block (not read) has a row with a readable address."""
    _, header, body = block
    a = {h: n for n, h in enumerate(header)}["Address"]
    return any(len(r) > a and _hex(r[a]) is not None for r in body)


#: Slack when comparing a source-page block's totals with the raw page's: instructions
#: executed agree to the count (ncu sums the same counter; a few percent allows for rounding
#: in exports with units). PC samples do not: the per-PC samples and
#: smsp__pcsamp_sample_count of one real export differ by 2.3 % (benchmarks/data
#: many_kernels, poly_chain<64>: 1,019 vs 996), so a block is refused on samples only when it
#: holds a quarter more than its launch (another report's block differs by far more).
_TOTALS_SLACK = 0.02
_SAMPLES_SLACK = 0.25


def _check_block(k: KernelProfile, origin: Path | None, last_in_file: bool) -> None:
    """Refuse a block that cannot be this launch's: it counts more instructions executed or
    more PC samples than the raw page's launch (another kernel, another run or report).
    Fewer is possible for a true block (code outside the function, such as the driver's
    for a system fence, is counted on the raw page only), so it is a note; and the last
    block of the file not ending in the function's closing BRA/NOP padding is noted as a
    possibly truncated export."""
    where = origin.name if origin else "the source-page CSV"
    for col, metric, what in (
        ("inst_executed", "smsp__inst_executed.sum", "instructions executed"),
        ("samples", "smsp__pcsamp_sample_count", "PC samples"),
    ):
        _check_block_total(k, col, metric, what, where)
    if last_in_file:
        _note_unpadded_end(k, where)


def _check_block_total(k: KernelProfile, col: str, metric: str, what: str, where: str) -> None:
    """Compare one of the block's column totals with the raw page's launch counter."""
    df = k.instructions
    raw = k.m(metric)
    if col not in df or raw is None or not math.isfinite(raw) or raw < 0:
        return
    block = float(df[col].sum())
    if block > raw * (1 + (_SAMPLES_SLACK if col == "samples" else _TOTALS_SLACK)) + 1:
        raise ReportFormatError(
            f"{where}: the block of {short_name(k.name, 60)!r} counts {block:,.0f} {what}, the raw page's launch {k.id} "
            f"{raw:,.0f}: the two exports are not of the same report",
            hint="export both pages from one report: ncu -i R --csv --page raw --print-units base, and "
            "ncu -i R --csv --page source --print-source sass",
        )
    if col == "inst_executed" and raw > 0 and block < raw * (1 - _TOTALS_SLACK):
        k.notes.append(
            f"{where}: the block of this kernel counts {block:,.0f} instructions executed, the raw page "
            f"{raw:,.0f} ({block / raw:.0%}): code outside the function ran, or the source page is "
            "from another run or cut short; per-line shares cover only the block"
        )


def _note_unpadded_end(k: KernelProfile, where: str) -> None:
    """The file's last block not ending in the function's closing BRA/NOP padding may be cut."""
    df = k.instructions
    if not len(df):
        return
    last = str(df["sass"].iloc[-1]).split()
    if last and last[0] not in ("NOP", "BRA", "EXIT"):
        k.notes.append(
            f"{where} may be truncated: the block of this kernel, the file's last, ends at "
            f"'{' '.join(last)[:40]}', not the BRA/NOP padding every function ends with"
        )


class Memo(dict):
    """``memo[x]``: ``fn(x)``, computed once, when first asked."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def __missing__(self, key):
        self[key] = v = self.fn(key)
        return v


#: A PC is a GPU virtual address (49 to 57 bits today); the per-instruction table keys
#: them as int64, so an address at or over 2^63 (or below 0) is no address: its row is
#: skipped as rows with unreadable addresses are.
_PC_LIMIT = 1 << 63


def _hex(text: str) -> int | None:
    try:
        pc = int(text, 16)
    except ValueError:
        return None
    return pc if 0 <= pc < _PC_LIMIT else None


def _instruction_table(
    header: list[str], body: list[list[str]], spec: dict, reason_cols: dict, clean
) -> tuple[pd.DataFrame, int | None]:
    """The per-instruction table of one source-page block (rows keyed by Address; a PC
    that repeats keeps its last row's values) and the function's base PC."""
    hidx = {h: n for n, h in enumerate(header)}
    pcs, sass, rows = _addressed_rows(body, hidx["Address"], hidx["Source"], clean)
    # The columns wanted, by their canonical name, with the CSV names to try for each.
    wanted = [(canon, s.get("csv", [])) for canon, s in spec.items()]
    wanted += [(f"stall_{rid}", names) for rid, names in reason_cols.items()]
    if rows and min(map(len, rows)) >= len(header):
        cols = _columns_of_full_rows(hidx, rows, pcs, wanted)
    else:
        cols = _columns_of_ragged_rows(hidx, rows, pcs, wanted)
    base = min(pcs) if pcs else None
    return instruction_frame(pcs, cols, sass, {}, base), base


def _addressed_rows(
    body: list[list[str]], a: int, src: int, clean
) -> tuple[list[int], dict[int, str], list[list[str]]]:
    """The PCs, SASS text by PC, and rows of the block's rows with a readable address."""
    pcs, sass, rows = [], {}, []
    for r in body:
        pc = _hex(r[a]) if len(r) > a else None
        if pc is None:
            continue
        pcs.append(pc)
        sass[pc] = clean[r[src]]
        rows.append(r)
    return pcs, sass, rows


def _columns_of_full_rows(
    hidx: dict[str, int], rows: list[list[str]], pcs: list[int], wanted: list[tuple[str, list[str]]]
) -> dict[str, dict[int, float]]:
    """Every row has every column: resolve each column's name once and convert all the
    cells wanted in one pass (row-major; column m of w is every w-th value from m)."""
    found = _resolved_columns(hidx, wanted)
    cols: dict[str, dict[int, float]] = {}
    if not found:
        return cols
    pick = operator.itemgetter(*[j for _, j in found])
    cells = [pick(r) for r in rows] if len(found) > 1 else [(pick(r),) for r in rows]
    flat = list(chain.from_iterable(cells))
    check_locale(flat)
    # A cell that is not a finite number (n/a, inf) counts as not counted, as ncu's own
    # blank cells do.
    vals = [_finite_or_zero(x) for x in numbers(flat)]
    w = len(found)
    for m, (canon, _) in enumerate(found):
        cols.setdefault(canon, {}).update(zip(pcs, vals[m::w]))
    return cols


def _resolved_columns(hidx: dict[str, int], wanted: list[tuple[str, list[str]]]) -> list[tuple[str, int]]:
    """(canonical name, column) of each wanted column the header has, by its first CSV name
    there."""
    return [
        (canon, hidx[c])
        for canon, csv_names in wanted
        for c in [next((c for c in csv_names if c in hidx), None)]
        if c is not None
    ]


def _columns_of_ragged_rows(
    hidx: dict[str, int], rows: list[list[str]], pcs: list[int], wanted: list[tuple[str, list[str]]]
) -> dict[str, dict[int, float]]:
    """Ragged rows: a column's name resolves per row, to the first one that row has."""
    cols: dict[str, dict[int, float]] = {}
    for pc, r in zip(pcs, rows):
        for canon, csv_names in wanted:
            j = next((hidx[c] for c in csv_names if c in hidx and hidx[c] < len(r)), None)
            if j is not None:
                cols.setdefault(canon, {})[pc] = _finite_or_zero(to_number(r[j]))
    return cols


def _finite_or_zero(x: float) -> float:
    return x if math.isfinite(x) else 0.0
