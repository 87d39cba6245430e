"""Reader for ncu CSV exports.

Input: the raw page (``ncu -i R --csv --page raw --print-units base``: a header row of metric
names, a row of units, then one row per kernel launch; numbers carry thousands separators),
optionally with the source page (``--page source --print-source sass``: per kernel a
``"Kernel Name",NAME`` line, a header, and one row per SASS instruction keyed by its address).

Contract: same Profile as the .ncu-rep reader. Source-page blocks are matched to raw rows by
kernel name in order. The SASS-only source page has no file/line: those come from an
``.ncu-rep`` line table (``line_report``, or ``X.ncu-rep`` beside ``X.raw.csv``) when one is
available, and the kernel notes say where line numbers came from or that there are none.
"""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import pandas as pd

from .. import data
from ..errors import InputError, NoKernelsError, ReportFormatError
from ..model import KernelProfile, Profile
from .common import (clean_sass, instruction_frame, native_stderr_captured, parse_dim, rep_framing_problem,
                     sniff, to_number)

_ID_COLS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC"}


def _read_text(p: Path, notes: list[str] | None = None) -> str:
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(f"{p}: cannot read ({e.strerror})") from e
    # Kernel names and sources are arbitrary bytes; undecodable ones must not stop the analysis.
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        if notes is not None:
            notes.append(f"{p.name} is not valid UTF-8: undecodable bytes shown as \ufffd")
    return text.lstrip("\ufeff")


def _rows(text: str, origin: Path) -> list[list[str]]:
    try:
        return list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise ReportFormatError(f"{origin}: malformed CSV ({e})") from e


def read_ncu_csv(path: Path, source_csv: str | Path | None = None,
                 line_report: str | Path | None = None) -> Profile:
    notes: list[str] = []
    rows = _rows(_read_text(path, notes), path)
    while rows and not any(c.strip() for c in rows[0]):  # blank lines before the header
        rows.pop(0)
    header = rows[0] if rows else []
    if "Kernel Name" not in header or "ID" not in header:
        sep = next((c for c in ";\t|" if header and c in header[0]), None)
        raise ReportFormatError(f"{path}: not a raw-page export (no 'ID'/'Kernel Name' columns)",
                                hint=f"the file is separated by {sep!r}, not commas: was it re-saved by a spreadsheet? "
                                     "export again with ncu -i R --csv --page raw --print-units base" if sep else None)
    has_units = len(rows) > 1 and (not rows[1] or rows[1][0] == "")
    body = rows[2:] if has_units else rows[1:]
    if not any(any(c.strip() for c in r) for r in body):
        raise NoKernelsError(f"{path} holds no kernel launch (a header{' and units' if has_units else ''} but no data row)",
                             hint="was anything profiled? check ncu's output for '==WARNING== No kernels were profiled'")
    idx = {h: i for i, h in enumerate(header)}
    kernels = []
    for row in body:
        if not row or all(not c for c in row):
            continue
        if len(row) != len(header):
            raise ReportFormatError(f"{path}: a row has {len(row)} cells, the header {len(header)}",
                                    hint="the CSV may be truncated or edited")
        kernels.append(_kernel_from_row(header, idx, row))
    if source_csv is None:
        cand = _sibling(path, ".source.csv")
        if cand is not None and cand.exists() and sniff(cand) == "csv-source":
            source_csv = cand
    if source_csv is not None:
        sp = Path(source_csv)
        kind = sniff(sp)
        if kind != "csv-source":
            raise ReportFormatError(f"{sp}: not a source-page CSV export",
                                    hint="export with: ncu -i R --csv --page source --print-source sass")
        _attach_source(kernels, _parse_source(sp), sp)
        notes.append(f"per-instruction data from {sp.name}")
    else:
        notes.append("no source-page CSV: per-line attribution unavailable")
    if line_report is None:
        cand = _sibling(path, ".ncu-rep")
        if cand is not None and cand.exists():
            line_report = cand
    if line_report is not None and not Path(line_report).is_file():
        raise InputError(f"{line_report}: no such file" if not Path(line_report).exists()
                         else f"{line_report} is not a file", hint="--line-report takes the .ncu-rep the CSV was exported from")
    if line_report is not None and any(not k.instructions.empty for k in kernels):
        if _attach_lines(kernels, Path(line_report)):
            notes.append(f"source lines from the line table of {Path(line_report).name}")
    elif any(not k.instructions.empty for k in kernels):
        for k in kernels:
            k.notes.append("SASS-only source export: no file/line information (give --line-report or --cubin)")
    return Profile(path=str(path), format="csv", kernels=kernels, notes=notes)


def _sibling(path: Path, suffix: str) -> Path | None:
    name = path.name
    for ext in (".raw.csv", ".csv"):
        if name.endswith(ext):
            return path.with_name(name[: -len(ext)] + suffix)
    return None


def _kernel_from_row(header: list[str], idx: dict[str, int], row: list[str]) -> KernelProfile:
    metrics: dict[str, float] = {}
    strings: dict[str, str] = {}
    for h, v in zip(header, row):
        if h in _ID_COLS:
            continue
        x = to_number(v)
        if math.isnan(x):
            if v and v.strip().lower() not in ("n/a", ""):
                strings[h] = v
            continue
        metrics[h] = x
    # Canonicalise: first alias present wins; stall counters under their first name.
    for canon in data.metrics_table()["metrics"]:
        if canon not in metrics:
            for alt in data.metric_aliases(canon):
                if alt in metrics:
                    metrics[canon] = metrics[alt]
                    break
    for spec in data.stall_reasons().values():
        first = spec["counter"][0]
        if first not in metrics:
            for alt in spec["counter"][1:]:
                if alt in metrics:
                    metrics[first] = metrics[alt]
    get = lambda c: row[idx[c]] if c in idx else ""
    cc = get("CC").strip()
    try:
        kid = int(to_number(get("ID")))
    except (ValueError, OverflowError):
        kid = 0
    sm = metrics.get("device__attribute_multiprocessor_count", metrics.get("launch__sm_count"))
    return KernelProfile(
        id=kid, name=get("Kernel Name"), mangled=strings.get("Function Name", ""),
        device=strings.get("device__attribute_display_name", ""), compute_capability=cc,
        chip=data.chip_for(cc), sm_count=int(sm) if sm and math.isfinite(sm) and sm > 0 else None,
        grid=parse_dim(get("Grid Size")), block=parse_dim(get("Block Size")),
        metrics=metrics, strings=strings, process=get("Process Name"))


def _parse_source(p: Path) -> list[tuple[str, list[str], list[list[str]]]]:
    """Split a source-page export into (kernel name, header, rows) blocks."""
    rows = _rows(_read_text(p), p)
    blocks: list[tuple[str, list[str], list[list[str]]]] = []
    i = 0
    while i < len(rows):
        r = rows[i]
        if r and r[0] == "Kernel Name":
            name = r[1] if len(r) > 1 else ""
            header = rows[i + 1] if i + 1 < len(rows) else []
            body = []
            i += 2
            while i < len(rows) and not (rows[i] and rows[i][0] == "Kernel Name"):
                if rows[i]:
                    body.append(rows[i])
                i += 1
            blocks.append((name, header, body))
        else:
            i += 1
    return blocks


def _attach_source(kernels: list[KernelProfile], blocks, origin: Path | None = None) -> None:
    used = [False] * len(blocks)
    spec = data.metrics_table()["instruction_columns"]
    reason_cols = {rid: s["csv"] for rid, s in data.stall_reasons().items()}
    for k in kernels:
        j = next((j for j, b in enumerate(blocks) if not used[j] and b[0] == k.name), None)
        if j is None:
            j = next((j for j, b in enumerate(blocks) if not used[j]), None)
        if j is None:
            continue
        used[j] = True
        _, header, body = blocks[j]
        hidx = {h: n for n, h in enumerate(header)}
        if "Address" not in hidx or "Source" not in hidx:
            raise ReportFormatError(f"{origin or 'the source-page CSV'}: no Address/Source columns in the block of {_short(k.name)}",
                                    hint="export with --print-source sass")
        pcs, sass = [], {}
        cols: dict[str, dict[int, float]] = {}
        for r in body:
            if len(r) <= hidx["Address"]:
                continue
            try:
                pc = int(r[hidx["Address"]], 16)
            except ValueError:
                continue
            pcs.append(pc)
            sass[pc] = clean_sass(r[hidx["Source"]])
            for canon, s in spec.items():
                for c in s.get("csv", []):
                    if c in hidx and hidx[c] < len(r):
                        cols.setdefault(canon, {})[pc] = _zero_nan(to_number(r[hidx[c]]))
                        break
            for rid, names in reason_cols.items():
                for c in names:
                    if c in hidx and hidx[c] < len(r):
                        cols.setdefault(f"stall_{rid}", {})[pc] = _zero_nan(to_number(r[hidx[c]]))
                        break
        base = min(pcs) if pcs else None
        k.instructions = instruction_frame(pcs, cols, sass, {}, base)
        k.function_base = base


def _short(name: str, n: int = 60) -> str:
    """A kernel name cut for messages: names can be 10,000 characters of templates."""
    return repr(name if len(name) <= n else name[: n - 3] + "...")


def _zero_nan(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def _attach_lines(kernels: list[KernelProfile], rep: Path) -> bool:
    """Annotate CSV kernels with file/line from an .ncu-rep line table, matched by kernel
    name and function offset (the report and the CSV may come from different processes, so
    absolute PCs can differ; offsets within the function do not)."""
    from .ncu_rep import read_line_table
    try:
        with native_stderr_captured():
            tables = read_line_table(rep)
    except (ReportFormatError, OSError) as e:
        for k in kernels:
            k.notes.append(f"line table of {rep.name} unreadable: {getattr(e, 'message', None) or e}; no line numbers")
        return False
    tables = [t for t in tables if t[0]]  # a damaged report yields launches with no name
    if not tables:
        why = rep_framing_problem(rep) or "no kernel launch could be read"
        for k in kernels:
            k.notes.append(f"line table of {rep.name} unreadable ({why}); no line numbers")
        return False
    used: set[int] = set()
    same_count = len(tables) == len(kernels)
    for pos, k in enumerate(kernels):
        if k.instructions.empty:
            continue
        match = next((i for i, (name, _, _) in enumerate(tables) if i not in used and _same_kernel(name, k.name)), None)
        if match is None and same_count and pos not in used:
            match = pos
        if match is None:
            k.notes.append(f"{rep.name} has no kernel named like this one: no line numbers")
            continue
        used.add(match)
        _, by_offset, source_text = tables[match]
        df = k.instructions
        ok = [by_offset.get(int(o)) for o in df["offset"]]
        sass_mismatch = sum(1 for o, s in zip(df["offset"], df["sass"]) if o in by_offset and by_offset[o][2] and by_offset[o][2] != s)
        if sass_mismatch > len(df) // 10:
            k.notes.append(f"{rep.name}: SASS differs from the CSV's at {sass_mismatch} offsets; line numbers not used")
            continue
        df["file"] = pd.Series([t[0] if t else None for t in ok], index=df.index, dtype=object)
        df["line"] = [t[1] if t else None for t in ok]
        df["line"] = df["line"].astype("Int64")
        k.source_text = source_text
    return True


_CAST = re.compile(r"\((?:unsigned |signed )?(?:int|bool|long|char|short|unsigned|long long)\)")


def _same_kernel(a: str, b: str) -> bool:
    """The .ncu-rep spells template arguments with casts ('<(int)0>'), the CSV without."""
    norm = lambda s: re.sub(r"\s+", "", _CAST.sub("", s or ""))
    return norm(a) == norm(b)
