"""Reader for ncu CSV exports: the raw page (``--page raw --print-units base``), optionally
with the SASS source page (``--page source --print-source sass``).

Contract: same Profile as the .ncu-rep reader. Source-page blocks are matched to raw rows by
kernel name in order (never to another function's row); file/line come from an ``.ncu-rep``
line table (``line_report``, or ``X.ncu-rep`` beside ``X.raw.csv``) when there is one, and
the kernel notes say where line numbers came from or that there are none. ``kernel=``
selects launches before cells are converted; each picked launch gets exactly what reading
every launch gives it. Inputs that would read wrong are refused or noted, never misread.

Matching and selection: docs/performance.md; refusals and notes: docs/errors.md.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections import deque
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import pandas as pd

from ..specs import loader as data
from ..io import require_input_file
from ..errors import NoKernelsError, ReportFormatError
from ..profile import SOURCE_EXPORT_MISSING, KernelProfile, Profile, base_name, short_name
from .isolate import in_child
from .csv_text import RawStop, SourceStop, text_pieces
from .csv_text import rows as csv_rows
from ..sass.container import rep_framing_problem, rep_walk
from ..sass.isa import clean_sass
from .companions import sibling
from .frame import instruction_frame
from .gc_pause import gc_paused
from .locale_numbers import LocaleNumberError, check_locale, check_locale_page, numbers, to_number
from .native import native_stderr_captured
from .selection import KernelSelector, warn_missed_library_kernels
from .sniffing import SOURCE_PAGE, sniff


def parse_dim(s: str) -> tuple[int, int, int]:
    """'(256, 1, 1)' -> (256, 1, 1); missing parts are 1, an unreadable cell (0, 0, 0)."""
    nums = [int(x) for x in re.findall(r"\d+", re.sub(r"\.\d*", "", s or ""))]
    x, y, z = (nums + [1, 1, 1])[:3] if nums else [0, 0, 0]
    return x, y, z


_ID_COLS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
}


def read_ncu_csv(
    path: Path,
    source_csv: str | Path | None = None,
    line_report: str | Path | None = None,
    kernel: KernelSelector | str | None = None,
    launches_only: bool = False,
) -> Profile:
    """Read a raw-page export (and its source page). ``kernel``: the ``--kernel`` selector
    (text is parsed here); only the launches it picks become KernelProfiles (all of them when
    it picks none), with exactly what reading all of them would have given them.
    ``launches_only``: the raw page alone (no source page or line table is looked for)."""
    with gc_paused():
        return _read(path, source_csv, line_report, KernelSelector.of(kernel), launches_only)


def _read(path: Path, source_csv, line_report, kernel, launches_only: bool = False) -> Profile:  # noqa: C901, PLR0912, PLR0915 - one pass over the export's optional pages and columns
    notes: list[str] = []
    stop = RawStop()
    rows = csv_rows(text_pieces(path, notes), path, stop=stop, width=stop.width)
    while rows and not any(c.strip() for c in rows[0]):  # blank lines before the header
        rows.pop(0)
    header = rows[0] if rows else []
    if "Kernel Name" not in header or "ID" not in header:
        sep = next((c for c in ";\t|" if header and c in header[0]), None)
        raise ReportFormatError(
            f"{path}: not a raw-page export (no 'ID'/'Kernel Name' columns)",
            hint=f"the file is separated by {sep!r}, not commas: was it re-saved by a spreadsheet? "
            "export again with ncu -i R --csv --page raw --print-units base"
            if sep
            else None,
        )
    has_units = len(rows) > 1 and (not rows[1] or rows[1][0] == "")
    if has_units and len(rows[1]) != len(header):
        # A file cut inside its units row is a damaged export, not one without launches.
        raise ReportFormatError(
            f"{path} is truncated or edited: its units row has {len(rows[1])} of the header's {len(header)} cells",
            hint="copy or export it again: ncu -i R --csv --page raw --print-units base",
        )
    body = rows[2:] if has_units else rows[1:]
    if not any(any(c.strip() for c in r) for r in body):
        raise NoKernelsError(
            f"{path} holds no kernel launch (a header{' and units' if has_units else ''} but no data row)",
            hint="was anything profiled? check ncu's output for '==WARNING== No kernels were profiled'",
        )
    launches = [row for row in body if row and any(row)]  # one per kernel launch, in order
    for row in launches:
        if len(row) != len(header):
            raise ReportFormatError(
                f"{path}: a row has {len(row)} cells, the header {len(header)}",
                hint="the CSV may be truncated or edited",
            )
    if launches and stop.junk(launches[-1]):  # reading stopped there: the rest was not read
        raise ReportFormatError(
            f"{path}: a row is no kernel launch (its ID is {launches[-1][stop.id_col].strip()[:40]!r} "
            "and none of its cells is a number)",
            hint="the CSV may be corrupt or edited: export again with ncu -i R --csv --page raw --print-units base",
        )
    idx = {h: i for i, h in enumerate(header)}
    launches = _without_repeated_header(launches, header, rows[1] if has_units else None, idx, path, notes)
    if not launches:
        raise NoKernelsError(f"{path} holds no kernel launch (only header and units rows)")
    names = [row[idx["Kernel Name"]] for row in launches]
    picked = _pickable(kernel, header, idx, launches, names, path)
    try:
        kernels = _kernels_from_rows(header, idx, [launches[i] for i in picked], rows[1] if has_units else None)
    except LocaleNumberError as e:
        raise _locale_error(path, e) from None
    if launches_only:
        return Profile(path=str(path), format="csv", kernels=kernels, notes=notes)
    read = dict(zip(picked, kernels))  # launch position -> its KernelProfile
    if source_csv is None:
        cand = sibling(path, ".source.csv")
        if cand is not None and cand.exists() and sniff(cand) == SOURCE_PAGE:
            source_csv = cand
    # Per launch position: whether it has per-instruction rows, for those not read too: the
    # notes below and the line-table join depend on every launch, read or not.
    has_rows = _Memo(lambda pos: False)
    if source_csv is not None:
        sp = Path(source_csv)
        kind = sniff(sp)
        if kind != SOURCE_PAGE:
            raise ReportFormatError(
                f"{sp}: not a source-page CSV export",
                hint="export with: ncu -i R --csv --page source --print-source sass",
            )
        try:
            has_rows = _attach_source(names, read, _parse_source(sp), sp)
        except LocaleNumberError as e:
            raise _locale_error(sp, e) from None
        notes.append(f"per-instruction data from {sp.name}")
    else:
        notes.append("no source-page CSV: per-line attribution unavailable")
        cmd = _source_export_command(path)
        for k in kernels:
            n = k.m("smsp__pcsamp_sample_count")
            if n is not None and n > 0:
                k.notes.append(
                    f"{SOURCE_EXPORT_MISSING} ({n:,.0f} samples) but the source-page export is missing, "
                    f"so no line, SASS or slicing view: export it with `{cmd}` and pass it with "
                    "--source-csv (or put it beside the raw CSV)"
                )
    if line_report is None:
        cand = sibling(path, ".ncu-rep")
        if cand is not None and cand.exists():
            line_report = cand
    if line_report is not None:
        require_input_file(
            line_report, "an Nsight Compute report", hint="--line-report takes the .ncu-rep the CSV was exported from"
        )
    any_rows = any(has_rows[pos] for pos in range(len(launches)))
    if line_report is not None and any_rows:
        everyone = [(name, has_rows[pos], read.get(pos)) for pos, name in enumerate(names)]
        if _attach_lines(everyone, Path(line_report)):
            notes.append(f"source lines from the line table of {Path(line_report).name}")
    elif any_rows:
        for k in kernels:
            k.notes.append("SASS-only source export: no file/line information (give --line-report or --cubin)")
    return Profile(path=str(path), format="csv", kernels=kernels, notes=notes)


def _locale_error(path: Path, e: LocaleNumberError) -> ReportFormatError:
    return ReportFormatError(
        f"{path}: the number {e.cell[:40]!r} is written in a locale's format ({e.why}); ncu writes 1,234.5",
        hint="export again with ncu's --csv, not re-saved by a spreadsheet: "
        "ncu -i REPORT.ncu-rep --csv --page raw --print-units base > X.raw.csv (LC_ALL=C if ncu's own locale differs)",
    )


def _without_repeated_header(
    launches: list[list[str]],
    header: list[str],
    units: list[str] | None,
    idx: dict[str, int],
    path: Path,
    notes: list[str],
) -> list[list[str]]:
    """The launch rows without copies of the header or of the units row inside the body
    (two exports concatenated, a spreadsheet's repeated title rows): they are no launches."""
    out, skipped = [], 0
    id_col = idx["ID"]
    for row in launches:
        if row == header or (units is not None and row == units) or (row[id_col] == "" and _looks_like_units(row, idx)):
            skipped += 1
            continue
        out.append(row)
    if skipped:
        notes.append(f"{path.name}: {skipped} repeated header or units row(s) inside the file skipped (not launches)")
    return out


def _looks_like_units(row: list[str], idx: dict[str, int]) -> bool:
    """A units row: no kernel name, and its cells are unit names or empty (no digits)."""
    if row[idx["Kernel Name"]].strip():
        return False
    return not any(ch.isdigit() for c in row for ch in c if c not in ("", "%"))


def _source_export_command(path: Path) -> str:
    """The ncu command that writes the source page next to a raw-page export."""
    sib = sibling(path, "") or path.with_suffix("")
    return f"ncu -i {sib.name}.ncu-rep --csv --page source --print-source sass > {sib.name}.source.csv"


def _launch_id(cell: str) -> int:
    try:
        return int(to_number(cell))
    except (ValueError, OverflowError):
        return 0


def _pickable(
    selector: KernelSelector | None,
    header: list[str],
    idx: dict[str, int],
    launches: list[list[str]],
    names: list[str],
    path: Path,
) -> list[int]:
    """Positions of the launches ``selector`` picks, as ``select_kernels`` picks them (by
    the id, or by the pattern in the name and in the mangled name when there is one); every
    launch when there is no selector or it picks none (so that kernel selection can list
    the report's kernels). An invalid pattern is a usage error here, as in kernel selection;
    a pattern that picks none of the library kernels warns here, as kernel selection would."""
    everything = list(range(len(launches)))
    if selector is None:
        return everything
    if selector.by_id:
        ids = [_launch_id(row[idx["ID"]]) for row in launches]
        return [pos for pos, kid in enumerate(ids) if selector.picks_id(kid)] or everything
    matches = selector.name_matcher()  # an invalid pattern: a usage error, before the time budget starts
    fn_cols = [j for j, h in enumerate(header) if h == "Function Name"]
    named = [_Named(name, _mangled(row, fn_cols)) for row, name in zip(launches, names)]
    picked = [pos for pos, k in enumerate(named) if matches(k.name, k.mangled)]
    # Only the picked launches are read: kernel selection will not see the library kernels left out.
    warn_missed_library_kernels(selector, named, [named[pos] for pos in picked], path)
    return picked or everything


@dataclass(frozen=True)
class _Named:
    """A raw-page launch's names, as kernel selection reads them."""

    name: str
    mangled: str


def _mangled(row: list[str], fn_cols: list[int]) -> str:
    """The KernelProfile.mangled of a raw-page row: its last Function Name cell that is
    text (as the row's ``strings`` keep it), else ''."""
    mangled = ""
    for j in fn_cols:
        v = row[j]
        if v and v.strip().lower() not in ("n/a", "") and math.isnan(to_number(v)):
            mangled = v
    return mangled


def _kernels_from_rows(  # noqa: PLR0912 - one guarded read per optional column of the export
    header: list[str], idx: dict[str, int], rows: list[list[str]], units: list[str] | None = None
) -> list[KernelProfile]:
    """KernelProfiles of raw-page rows (each as long as the header). Cells convert column by
    column (``numbers``), as ``to_number`` would convert them one by one: a raw page has
    thousands of columns, nearly all numeric in every row."""
    if not rows:
        return []
    metric_cols = [j for j, h in enumerate(header) if h not in _ID_COLS]
    metric_names = [header[j] for j in metric_cols]
    columns = list(zip(*rows))
    for j in metric_cols:
        check_locale(columns[j])
    check_locale_page(
        [columns[j] for j in metric_cols], [units[j] if units and j < len(units) else "" for j in metric_cols]
    )
    values = [numbers(columns[j]) for j in metric_cols]
    # The columns with a non-number somewhere: where a row's text values ("strings") are.
    text_cols = [(k, j) for k, (j, col) in enumerate(zip(metric_cols, values)) if any(map(math.isnan, col))]
    canon_alts = [(canon, data.metric_aliases(canon)) for canon in data.metrics_table()["metrics"]]
    stall_alts = [(spec["counter"][0], spec["counter"][1:]) for spec in data.stall_reasons().values()]
    kernels = []
    for row, vals in zip(rows, zip(*values)):
        metrics = {h: x for h, x in zip(metric_names, vals) if x == x}  # NaN != NaN
        strings: dict[str, str] = {}
        for k, j in text_cols:
            v = row[j]
            if vals[k] != vals[k] and v and v.strip().lower() not in ("n/a", ""):
                strings[header[j]] = v
        # Canonicalise: first alias present wins (then what two others give, specs/metrics.yaml
        # ``derived``); stall counters under their first name.
        read_as: dict[str, str] = {}
        for canon, alts in canon_alts:
            if canon not in metrics:
                for alt in alts:
                    if alt in metrics:
                        metrics[canon] = metrics[alt]
                        read_as[canon] = alt
                        break
        data.derive_metrics(metrics, read_as)
        for first, alts in stall_alts:
            if first not in metrics:
                for alt in alts:
                    if alt in metrics:
                        metrics[first] = metrics[alt]

        def get(c, row=row):
            return row[idx[c]] if c in idx else ""

        cc = get("CC").strip()
        sm = metrics.get("device__attribute_multiprocessor_count", metrics.get("launch__sm_count"))
        kernels.append(
            KernelProfile(
                id=_launch_id(get("ID")),
                name=get("Kernel Name"),
                mangled=strings.get("Function Name", ""),
                device=strings.get("device__attribute_display_name", ""),
                compute_capability=cc,
                chip=data.chip_for(cc),
                sm_count=int(sm) if sm and math.isfinite(sm) and sm > 0 else None,
                grid=parse_dim(get("Grid Size")),
                block=parse_dim(get("Block Size")),
                metrics=metrics,
                metric_names=read_as,
                strings=strings,
                process=get("Process Name"),
            )
        )
    return kernels


def _parse_source(p: Path) -> list[tuple[str, list[str], list[list[str]]]]:
    """Split a source-page export into (kernel name, header, rows) blocks. A file cut
    short inside its last row (no final newline, fewer cells than its header: ``head -c``,
    an interrupted copy) is refused: its last kernel would lose instructions and samples."""
    last = [""]  # the last piece of text read

    def pieces():
        for last[0] in text_pieces(p):
            yield last[0]

    stop = SourceStop()
    rows = csv_rows(pieces(), p, stop=stop, width=stop.width)
    if stop.stopped is not None:  # reading stopped at a row that is no instruction row
        raise ReportFormatError(
            f"{p}: a row is no source-page row: {len(stop.stopped)} cells (its block's header has "
            f"{len(stop.header or [])}), no address (it begins {','.join(stop.stopped)[:40]!r})",
            hint="the CSV may be corrupt or edited: export the source page again: "
            "ncu -i R --csv --page source --print-source sass",
        )
    if rows and not last[0].endswith(("\n", "\r")):
        last = rows[-1]
        header = next(
            (rows[i + 1] for i in range(len(rows) - 2, -1, -1) if rows[i] and rows[i][0] == "Kernel Name"), None
        )
        if header is not None and last is not header and 0 < len(last) < len(header):
            raise ReportFormatError(
                f"{p} is truncated: its last row has {len(last)} of {len(header)} cells and no line end",
                hint="export the source page again: ncu -i R --csv --page source --print-source sass",
            )
    # A block starts at a "Kernel Name" row; the row after it is its header, whatever it
    # holds (even another "Kernel Name" row); its rows run to the next "Kernel Name" row.
    marks = [i for i, r in enumerate(rows) if r and r[0] == "Kernel Name"]
    blocks: list[tuple[str, list[str], list[list[str]]]] = []
    n, m = len(rows), 0
    while m < len(marks):
        i = marks[m]
        r = rows[i]
        m += 1
        while m < len(marks) and marks[m] < i + 2:
            m += 1
        end = marks[m] if m < len(marks) else n
        blocks.append(
            (r[1] if len(r) > 1 else "", rows[i + 1] if i + 1 < n else [], [row for row in rows[i + 2 : end] if row])
        )
    return blocks


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


def _attach_source(names: list[str], read: dict[int, KernelProfile], blocks, origin: Path | None = None) -> _Memo:
    """Give each read launch (``read``: position -> KernelProfile) the per-instruction table
    of its source-page block. Blocks are matched to launches by kernel name in order over
    every launch, read or not, so a launch gets the block it gets when all are read. Returns
    whether the launch at a position has per-instruction rows."""
    assigned = _assign_blocks(names, blocks)
    for pos, j in enumerate(assigned):  # the first launch (read or not) whose block lacks them
        if j is not None and not {"Address", "Source"} <= set(blocks[j][1]):
            raise ReportFormatError(
                f"{origin or 'the source-page CSV'}: no Address/Source columns in the block of {short_name(names[pos], 60)!r}",
                hint="export with --print-source sass",
            )
    spec = data.metrics_table()["instruction_columns"]
    reason_cols = {rid: s["csv"] for rid, s in data.stall_reasons().items()}
    clean = _Memo(clean_sass)  # launches of one function repeat its SASS text
    if blocks and read and all(j is None for j in assigned):
        have = ", ".join(sorted({repr(short_name(b[0], 40)) for b in blocks})[:3])
        raise ReportFormatError(
            f"{origin or 'the source-page CSV'} holds none of the raw page's kernels (it has {have})",
            hint="give the source page exported from the same report as the raw page",
        )
    for pos, k in read.items():
        j = assigned[pos]
        if j is None:
            if blocks:
                k.notes.append(
                    f"{Path(origin).name if origin else 'the source-page CSV'} has no block for this kernel: "
                    "no per-instruction data"
                )
            continue
        _, header, body = blocks[j]
        k.instructions, k.function_base = _instruction_table(header, body, spec, reason_cols, clean)
        _check_block(k, origin, last_in_file=j == len(blocks) - 1)

    def has_rows(pos: int) -> bool:
        if pos in read:
            return not read[pos].instructions.empty
        j = assigned[pos]
        if j is None:
            return False
        _, header, body = blocks[j]
        a = {h: n for n, h in enumerate(header)}["Address"]
        return any(len(r) > a and _hex(r[a]) is not None for r in body)

    return _Memo(has_rows)


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
    df = k.instructions
    where = origin.name if origin else "the source-page CSV"
    for col, metric, what in (
        ("inst_executed", "smsp__inst_executed.sum", "instructions executed"),
        ("samples", "smsp__pcsamp_sample_count", "PC samples"),
    ):
        raw = k.m(metric)
        if col not in df or raw is None or not math.isfinite(raw) or raw < 0:
            continue
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
    if last_in_file and len(df):
        last = str(df["sass"].iloc[-1]).split()
        if last and last[0] not in ("NOP", "BRA", "EXIT"):
            k.notes.append(
                f"{where} may be truncated: the block of this kernel, the file's last, ends at "
                f"'{' '.join(last)[:40]}', not the BRA/NOP padding every function ends with"
            )


class _Memo(dict):
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


def _instruction_table(  # noqa: PLR0912 - one guarded read per optional column of the export
    header: list[str], body: list[list[str]], spec: dict, reason_cols: dict, clean
) -> tuple[pd.DataFrame, int | None]:
    """The per-instruction table of one source-page block (rows keyed by Address; a PC
    that repeats keeps its last row's values) and the function's base PC."""
    hidx = {h: n for n, h in enumerate(header)}
    a, src = hidx["Address"], hidx["Source"]
    pcs, sass, rows = [], {}, []
    for r in body:
        if len(r) <= a:
            continue
        pc = _hex(r[a])
        if pc is None:
            continue
        pcs.append(pc)
        sass[pc] = clean[r[src]]
        rows.append(r)
    cols: dict[str, dict[int, float]] = {}
    if rows and min(map(len, rows)) >= len(header):
        # Every row has every column: resolve each column's name once and convert all the
        # cells wanted in one pass (row-major; column m of w is every w-th value from m).
        wanted = [(canon, s.get("csv", [])) for canon, s in spec.items()]
        wanted += [(f"stall_{rid}", names) for rid, names in reason_cols.items()]
        found = [
            (canon, hidx[c])
            for canon, csv_names in wanted
            for c in [next((c for c in csv_names if c in hidx), None)]
            if c is not None
        ]
        if found:
            pick = operator.itemgetter(*[j for _, j in found])
            cells = [pick(r) for r in rows] if len(found) > 1 else [(pick(r),) for r in rows]
            flat = list(chain.from_iterable(cells))
            check_locale(flat)
            vals = numbers(flat)
            # A cell that is not a finite number (n/a, inf) counts as not counted, as ncu's
            # own blank cells do.
            vals = [x if math.isfinite(x) else 0.0 for x in vals]
            w = len(found)
            for m, (canon, _) in enumerate(found):
                cols.setdefault(canon, {}).update(zip(pcs, vals[m::w]))
    else:
        # Ragged rows: a column's name resolves per row, to the first one that row has.
        for pc, r in zip(pcs, rows):
            for canon, s in spec.items():
                for c in s.get("csv", []):
                    if c in hidx and hidx[c] < len(r):
                        cols.setdefault(canon, {})[pc] = _finite_or_zero(to_number(r[hidx[c]]))
                        break
            for rid, names in reason_cols.items():
                for c in names:
                    if c in hidx and hidx[c] < len(r):
                        cols.setdefault(f"stall_{rid}", {})[pc] = _finite_or_zero(to_number(r[hidx[c]]))
                        break
    base = min(pcs) if pcs else None
    return instruction_frame(pcs, cols, sass, {}, base), base


def _finite_or_zero(x: float) -> float:
    return x if math.isfinite(x) else 0.0


def _line_tables(rep: Path, wanted, matches: list) -> tuple[list, list]:
    """read_line_table and the matches ``wanted`` computed, both returned from the child
    process that reads the report (ncu_report may crash on a damaged one)."""
    from .ncu_rep import read_line_table

    return read_line_table(rep, wanted=wanted), matches


def _attach_lines(launches: list[tuple[str, bool, KernelProfile | None]], rep: Path) -> bool:
    """Annotate CSV kernels with file/line from an .ncu-rep line table, matched by kernel
    name and function offset (the report and the CSV may come from different processes, so
    absolute PCs can differ; offsets within the function do not).

    ``launches``: every launch of the raw page in order, as (kernel name, whether it has
    per-instruction rows, its KernelProfile or None when it was not read). Tables are
    matched over all of them, by name alone, so a read launch gets the table it gets when
    all are read; only the tables of read launches are then read from the report."""
    kernels = [k for _, _, k in launches if k is not None]
    matches: list[int | None] = []

    def wanted(names: list[str]) -> list[int]:
        named = [n for n, name in enumerate(names) if name]  # a damaged report yields launches with no name
        matches[:] = _match_tables(launches, [names[n] for n in named])
        return [named[m] for m, (_, _, k) in zip(matches, launches) if m is not None and k is not None]

    walk = rep_walk(rep)
    # Damage the reader refuses in a report (a zero tail ncu_report would load whole, bytes
    # appended that it would pass over) leaves a line table no more trustworthy.
    if walk.refusable_at is not None:
        for k in kernels:
            k.notes.append(f"line table of {rep.name} unreadable ({walk.problem}); no line numbers")
        return False
    try:
        with native_stderr_captured():
            tables, matches[:] = in_child(_line_tables, rep, wanted, matches, what=str(rep))
    except (ReportFormatError, OSError) as e:
        for k in kernels:
            k.notes.append(f"line table of {rep.name} unreadable: {getattr(e, 'message', None) or e}; no line numbers")
        return False
    tables = [t for t in tables if t[0]]
    if not tables:
        why = rep_framing_problem(rep) or "no kernel launch could be read"
        for k in kernels:
            k.notes.append(f"line table of {rep.name} unreadable ({why}); no line numbers")
        return False
    for (_, has_rows, kern), match in zip(launches, matches):
        if kern is None or not has_rows:
            continue
        if match is None:
            kern.notes.append(f"{rep.name} has no kernel named like this one: no line numbers")
            continue
        _, by_offset, source_text = tables[match]
        df = kern.instructions
        ok = [by_offset.get(int(o)) for o in df["offset"]]
        sass_mismatch = sum(
            1 for o, s in zip(df["offset"], df["sass"]) if o in by_offset and by_offset[o][2] and by_offset[o][2] != s
        )
        if sass_mismatch > len(df) // 10:
            kern.notes.append(
                f"{rep.name}: SASS differs from the CSV's at {sass_mismatch} offsets; line numbers not used"
            )
            continue
        df["file"] = pd.Series([t[0] if t else None for t in ok], index=df.index, dtype=object)
        df["line"] = [t[1] if t else None for t in ok]
        df["line"] = df["line"].astype("Int64")
        kern.source_text = source_text
    return True


def _match_tables(launches: list[tuple[str, bool, KernelProfile | None]], table_names: list[str]) -> list[int | None]:
    """The line table (index into ``table_names``) of each launch with per-instruction rows:
    the first unused table of the same name; else, when the report and the CSV hold as many
    launches, the table at the launch's position if that table is unused; else none."""
    used: set[int] = set()
    same_count = len(table_names) == len(launches)
    normalised = [_normalised(name) for name in table_names]
    out: list[int | None] = []
    for pos, (kname, has_rows, _) in enumerate(launches):
        match = None
        if has_rows:
            want = _normalised(kname)
            match = next((i for i, name in enumerate(normalised) if i not in used and name == want), None)
            if match is None and same_count and pos not in used:
                match = pos
            if match is not None:
                used.add(match)
        out.append(match)
    return out


@functools.lru_cache(maxsize=4096)
def _normalised(name: str) -> str:
    """A kernel name as both spell it: the .ncu-rep spells template arguments with casts
    ('<(int)0>'), the CSV without (``match_name``)."""
    return match_name(name or "")
