"""Reader for ncu CSV exports: the raw page (``--page raw --print-units base``), optionally
with the SASS source page (``--page source --print-source sass``).

Contract: same Profile as the .ncu-rep reader. Source-page blocks are matched to raw rows by
kernel name in order (never to another function's row); file/line come from an ``.ncu-rep``
line table (``line_report``, or ``X.ncu-rep`` beside ``X.raw.csv``) when there is one, and
the kernel notes say where line numbers came from or that there are none. ``kernel=``
selects launches before cells are converted; each picked launch gets exactly what reading
every launch gives it. Inputs that would read wrong are refused or noted, never misread.

The source page's blocks and per-instruction tables: :mod:`drgpu_py.readers.source_page`.
Matching and selection: docs/performance.md; refusals and notes: docs/errors.md.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..specs import loader as data
from ..io import require_input_file
from ..errors import NoKernelsError, ReportFormatError
from ..profile import SOURCE_EXPORT_MISSING, KernelProfile, Profile
from .isolate import in_child
from .csv_text import RawStop, text_pieces
from .csv_text import rows as csv_rows
from ..sass.container import rep_framing_problem, rep_walk
from .companions import sibling
from .gc_pause import gc_paused
from .locale_numbers import LocaleNumberError, check_locale, check_locale_page, numbers, to_number
from .native import native_stderr_captured
from .selection import KernelSelector, warn_missed_library_kernels
from .sniffing import SOURCE_PAGE, sniff
from .source_page import Memo, attach_source, match_name, parse_source


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


def _read(path: Path, source_csv, line_report, kernel, launches_only: bool = False) -> Profile:
    notes: list[str] = []
    header, units, launches = _raw_rows(path, notes)
    idx = {h: i for i, h in enumerate(header)}
    launches = _without_repeated_header(launches, header, units, idx, path, notes)
    if not launches:
        raise NoKernelsError(f"{path} holds no kernel launch (only header and units rows)")
    names = [row[idx["Kernel Name"]] for row in launches]
    picked = _pickable(kernel, header, idx, launches, names, path)
    try:
        kernels = _kernels_from_rows(header, idx, [launches[i] for i in picked], units)
    except LocaleNumberError as e:
        raise _locale_error(path, e) from None
    if launches_only:
        return Profile(path=str(path), format="csv", kernels=kernels, notes=notes)
    read = dict(zip(picked, kernels))  # launch position -> its KernelProfile
    # Per launch position: whether it has per-instruction rows, for those not read too: the
    # notes below and the line-table join depend on every launch, read or not.
    has_rows = _read_source_page(path, source_csv, names, read, notes)
    _read_line_table(path, line_report, names, read, has_rows, notes)
    return Profile(path=str(path), format="csv", kernels=kernels, notes=notes)


def _raw_rows(path: Path, notes: list[str]) -> tuple[list[str], list[str] | None, list[list[str]]]:
    """The raw page's header, its units row (None when the export has none) and its launch
    rows (one per kernel launch, in order), each checked as long as the header."""
    stop = RawStop()
    rows = csv_rows(text_pieces(path, notes), path, stop=stop, width=stop.width)
    while rows and not any(c.strip() for c in rows[0]):  # blank lines before the header
        rows.pop(0)
    header = rows[0] if rows else []
    _check_raw_header(header, path)
    units = _units_row(rows, header, path)
    body = rows[1:] if units is None else rows[2:]
    _refuse_empty_body(body, units is not None, path)
    launches = [row for row in body if row and any(row)]
    _check_launch_rows(launches, header, stop, path)
    return header, units, launches


def _refuse_empty_body(body: list[list[str]], has_units: bool, path: Path) -> None:
    if not any(any(c.strip() for c in r) for r in body):
        raise NoKernelsError(
            f"{path} holds no kernel launch (a header{' and units' if has_units else ''} but no data row)",
            hint="was anything profiled? check ncu's output for '==WARNING== No kernels were profiled'",
        )


def _check_raw_header(header: list[str], path: Path) -> None:
    """Refuse a file without the raw page's ID and Kernel Name columns, telling a file a
    spreadsheet re-saved with another separator."""
    if "Kernel Name" in header and "ID" in header:
        return
    sep = next((c for c in ";\t|" if header and c in header[0]), None)
    raise ReportFormatError(
        f"{path}: not a raw-page export (no 'ID'/'Kernel Name' columns)",
        hint=f"the file is separated by {sep!r}, not commas: was it re-saved by a spreadsheet? "
        "export again with ncu -i R --csv --page raw --print-units base"
        if sep
        else None,
    )


def _units_row(rows: list[list[str]], header: list[str], path: Path) -> list[str] | None:
    """The units row (``--print-units``: the row after the header, its first cell empty)."""
    if len(rows) < 2 or (rows[1] and rows[1][0] != ""):
        return None
    if len(rows[1]) != len(header):
        # A file cut inside its units row is a damaged export, not one without launches.
        raise ReportFormatError(
            f"{path} is truncated or edited: its units row has {len(rows[1])} of the header's {len(header)} cells",
            hint="copy or export it again: ncu -i R --csv --page raw --print-units base",
        )
    return rows[1]


def _check_launch_rows(launches: list[list[str]], header: list[str], stop: RawStop, path: Path) -> None:
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


def _read_source_page(
    path: Path, source_csv, names: list[str], read: dict[int, KernelProfile], notes: list[str]
) -> Memo:
    """Attach the source page (given, or ``X.source.csv`` beside ``X.raw.csv``) to the read
    launches; returns whether the launch at a position has per-instruction rows."""
    if source_csv is None:
        source_csv = _sibling_source_page(path)
    if source_csv is None:
        notes.append("no source-page CSV: per-line attribution unavailable")
        _note_missing_source_page(path, read.values())
        return Memo(lambda pos: False)
    sp = Path(source_csv)
    if sniff(sp) != SOURCE_PAGE:
        raise ReportFormatError(
            f"{sp}: not a source-page CSV export",
            hint="export with: ncu -i R --csv --page source --print-source sass",
        )
    try:
        has_rows = attach_source(names, read, parse_source(sp), sp)
    except LocaleNumberError as e:
        raise _locale_error(sp, e) from None
    notes.append(f"per-instruction data from {sp.name}")
    return has_rows


def _sibling_source_page(path: Path) -> Path | None:
    cand = sibling(path, ".source.csv")
    if cand is not None and cand.exists() and sniff(cand) == SOURCE_PAGE:
        return cand
    return None


def _note_missing_source_page(path: Path, kernels: Iterable[KernelProfile]) -> None:
    """Kernels with PC samples but no source page: say how to export it."""
    cmd = _source_export_command(path)
    for k in kernels:
        n = k.m("smsp__pcsamp_sample_count")
        if n is not None and n > 0:
            k.notes.append(
                f"{SOURCE_EXPORT_MISSING} ({n:,.0f} samples) but the source-page export is missing, "
                f"so no line, SASS or slicing view: export it with `{cmd}` and pass it with "
                "--source-csv (or put it beside the raw CSV)"
            )


def _read_line_table(
    path: Path, line_report, names: list[str], read: dict[int, KernelProfile], has_rows: Memo, notes: list[str]
) -> None:
    """File and line numbers from the line table of ``line_report`` (given, or ``X.ncu-rep``
    beside ``X.raw.csv``), or a note on each kernel that there are none."""
    if line_report is None:
        line_report = _sibling_report(path)
    if line_report is not None:
        require_input_file(
            line_report, "an Nsight Compute report", hint="--line-report takes the .ncu-rep the CSV was exported from"
        )
    if not any(has_rows[pos] for pos in range(len(names))):
        return
    if line_report is None:
        for k in read.values():
            k.notes.append("SASS-only source export: no file/line information (give --line-report or --cubin)")
        return
    everyone = [(name, has_rows[pos], read.get(pos)) for pos, name in enumerate(names)]
    if _attach_lines(everyone, Path(line_report)):
        notes.append(f"source lines from the line table of {Path(line_report).name}")


def _sibling_report(path: Path) -> Path | None:
    cand = sibling(path, ".ncu-rep")
    return cand if cand is not None and cand.exists() else None


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
        return _picked_by_id(selector, idx, launches) or everything
    return _picked_by_name(selector, header, launches, names, path) or everything


def _picked_by_id(selector: KernelSelector, idx: dict[str, int], launches: list[list[str]]) -> list[int]:
    ids = [_launch_id(row[idx["ID"]]) for row in launches]
    return [pos for pos, kid in enumerate(ids) if selector.picks_id(kid)]


def _picked_by_name(
    selector: KernelSelector, header: list[str], launches: list[list[str]], names: list[str], path: Path
) -> list[int]:
    """The launches the selector's pattern picks, by the name and the mangled name."""
    matches = selector.name_matcher()  # an invalid pattern: a usage error, before the time budget starts
    fn_cols = [j for j, h in enumerate(header) if h == "Function Name"]
    named = [_Named(name, _mangled(row, fn_cols)) for row, name in zip(launches, names)]
    picked = [pos for pos, k in enumerate(named) if matches(k.name, k.mangled)]
    # Only the picked launches are read: kernel selection will not see the library kernels left out.
    warn_missed_library_kernels(selector, named, [named[pos] for pos in picked], path)
    return picked


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


def _kernels_from_rows(
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
    _check_columns_locale(columns, metric_cols, units)
    values = [numbers(columns[j]) for j in metric_cols]
    text_cols = _text_columns(metric_cols, values)
    canon_alts, stall_alts = _metric_alternatives()
    kernels = []
    for row, vals in zip(rows, zip(*values)):
        metrics = {h: x for h, x in zip(metric_names, vals) if x == x}  # NaN != NaN
        strings = _row_strings(header, row, vals, text_cols)
        # Canonicalise: first alias present wins (then what two others give, specs/metrics.yaml
        # ``derived``); stall counters under their first name.
        read_as = _canonicalised(metrics, canon_alts)
        data.derive_metrics(metrics, read_as)
        _stalls_under_first_name(metrics, stall_alts)
        kernels.append(_kernel_of_row(row, idx, metrics, strings, read_as))
    return kernels


def _metric_alternatives() -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """The other names of each canonical metric (specs/metrics.yaml) and of each stall
    counter (its first name, then the others)."""
    canon_alts = [(canon, data.metric_aliases(canon)) for canon in data.metrics_table()["metrics"]]
    stall_alts = [(spec["counter"][0], spec["counter"][1:]) for spec in data.stall_reasons().values()]
    return canon_alts, stall_alts


def _text_columns(metric_cols: list[int], values: list[list[float]]) -> list[tuple[int, int]]:
    """The columns with a non-number somewhere, as (position among the metric columns,
    position in the row): where a row's text values ("strings") are."""
    return [(k, j) for k, (j, col) in enumerate(zip(metric_cols, values)) if any(map(math.isnan, col))]


def _check_columns_locale(columns: list[tuple[str, ...]], metric_cols: list[int], units: list[str] | None) -> None:
    """Refuse numbers written in a locale's format, column by column and over the page."""
    for j in metric_cols:
        check_locale(columns[j])
    check_locale_page(
        [columns[j] for j in metric_cols], [units[j] if units and j < len(units) else "" for j in metric_cols]
    )


def _row_strings(
    header: list[str], row: list[str], vals: tuple[float, ...], text_cols: list[tuple[int, int]]
) -> dict[str, str]:
    """A row's text values: its cells in the columns that hold text that are no number."""
    return {header[j]: row[j] for k, j in text_cols if vals[k] != vals[k] and _is_text(row[j])}  # NaN != NaN


def _stalls_under_first_name(metrics: dict[str, float], stall_alts: list[tuple[str, list[str]]]) -> None:
    """A stall counter absent under its first name takes the value of its other names
    present, the last of them winning (as it always has here)."""
    for first, alts in stall_alts:
        if first in metrics:
            continue
        for alt in alts:
            if alt in metrics:
                metrics[first] = metrics[alt]


def _is_text(cell: str) -> bool:
    """A cell that says something (ncu writes n/a for a value it has none of)."""
    return bool(cell) and cell.strip().lower() not in ("n/a", "")


def _canonicalised(metrics: dict[str, float], alternatives: list[tuple[str, list[str]]]) -> dict[str, str]:
    """Give each name its first alternative present in ``metrics`` when the name itself is
    absent; returns {name: alternative it was read as}."""
    read_as: dict[str, str] = {}
    for canon, alts in alternatives:
        if canon in metrics:
            continue
        alt = next((alt for alt in alts if alt in metrics), None)
        if alt is not None:
            metrics[canon] = metrics[alt]
            read_as[canon] = alt
    return read_as


def _sm_count(metrics: dict[str, float]) -> int | None:
    sm = metrics.get("device__attribute_multiprocessor_count", metrics.get("launch__sm_count"))
    return int(sm) if sm and math.isfinite(sm) and sm > 0 else None


def _kernel_of_row(
    row: list[str], idx: dict[str, int], metrics: dict[str, float], strings: dict[str, str], read_as: dict[str, str]
) -> KernelProfile:
    def get(c):
        return row[idx[c]] if c in idx else ""

    cc = get("CC").strip()
    return KernelProfile(
        id=_launch_id(get("ID")),
        name=get("Kernel Name"),
        mangled=strings.get("Function Name", ""),
        device=strings.get("device__attribute_display_name", ""),
        compute_capability=cc,
        chip=data.chip_for(cc),
        sm_count=_sm_count(metrics),
        grid=parse_dim(get("Grid Size")),
        block=parse_dim(get("Block Size")),
        metrics=metrics,
        metric_names=read_as,
        strings=strings,
        process=get("Process Name"),
    )


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
        return _no_line_numbers(kernels, f"line table of {rep.name} unreadable ({walk.problem}); no line numbers")
    try:
        with native_stderr_captured():
            tables, matches[:] = in_child(_line_tables, rep, wanted, matches, what=str(rep))
    except (ReportFormatError, OSError) as e:
        why = getattr(e, "message", None) or e
        return _no_line_numbers(kernels, f"line table of {rep.name} unreadable: {why}; no line numbers")
    tables = [t for t in tables if t[0]]
    if not tables:
        why = rep_framing_problem(rep) or "no kernel launch could be read"
        return _no_line_numbers(kernels, f"line table of {rep.name} unreadable ({why}); no line numbers")
    _apply_line_tables(launches, matches, tables, rep)
    return True


def _apply_line_tables(
    launches: list[tuple[str, bool, KernelProfile | None]], matches: list[int | None], tables: list, rep: Path
) -> None:
    """Each read launch with per-instruction rows gets the line table it matched, or a note."""
    for (_, has_rows, kern), match in zip(launches, matches):
        if kern is None or not has_rows:
            continue
        if match is None:
            kern.notes.append(f"{rep.name} has no kernel named like this one: no line numbers")
            continue
        _apply_line_table(kern, tables[match], rep)


def _no_line_numbers(kernels: list[KernelProfile], note: str) -> bool:
    """Say on every kernel why there are no line numbers; False: no line table was used."""
    for k in kernels:
        k.notes.append(note)
    return False


#: Past this share of a function's offsets with other SASS in the report than in the CSV,
#: the report's line table is of another build: its line numbers are not used.
_SASS_MISMATCH_SHARE = 10  # one in ten


def _sass_mismatches(df: pd.DataFrame, by_offset: dict) -> int:
    """How many offsets the table gives other SASS text than the CSV's (when it gives any)."""
    return sum(
        1 for o, s in zip(df["offset"], df["sass"]) if o in by_offset and by_offset[o][2] and by_offset[o][2] != s
    )


def _apply_line_table(kern: KernelProfile, table, rep: Path) -> None:
    """Give a kernel's instructions the file and line of the table's entry at their offset."""
    _, by_offset, source_text = table
    df = kern.instructions
    ok = [by_offset.get(int(o)) for o in df["offset"]]
    sass_mismatch = _sass_mismatches(df, by_offset)
    if sass_mismatch > len(df) // _SASS_MISMATCH_SHARE:
        kern.notes.append(f"{rep.name}: SASS differs from the CSV's at {sass_mismatch} offsets; line numbers not used")
        return
    df["file"] = pd.Series([t[0] if t else None for t in ok], index=df.index, dtype=object)
    df["line"] = [t[1] if t else None for t in ok]
    df["line"] = df["line"].astype("Int64")
    kern.source_text = source_text


def _match_tables(launches: list[tuple[str, bool, KernelProfile | None]], table_names: list[str]) -> list[int | None]:
    """The line table (index into ``table_names``) of each launch with per-instruction rows:
    the first unused table of the same name; else, when the report and the CSV hold as many
    launches, the table at the launch's position if that table is unused; else none."""
    used: set[int] = set()
    same_count = len(table_names) == len(launches)
    normalised = [_normalised(name) for name in table_names]
    out: list[int | None] = []
    for pos, (kname, has_rows, _) in enumerate(launches):
        match = _table_for(pos, _normalised(kname), normalised, used, same_count) if has_rows else None
        if match is not None:
            used.add(match)
        out.append(match)
    return out


def _table_for(pos: int, want: str, normalised: list[str], used: set[int], same_count: bool) -> int | None:
    """The first unused table named ``want``; else the unused table at position ``pos``
    when the report and the CSV hold as many launches."""
    match = next((i for i, name in enumerate(normalised) if i not in used and name == want), None)
    if match is None and same_count and pos not in used:
        return pos
    return match


@functools.lru_cache(maxsize=4096)
def _normalised(name: str) -> str:
    """A kernel name as both spell it: the .ncu-rep spells template arguments with casts
    ('<(int)0>'), the CSV without (``match_name``)."""
    return match_name(name or "")
