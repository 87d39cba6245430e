"""Source view of a kernel group: its hot source lines with a few lines of context, each hot
line's stall breakdown and SASS, or the hot SASS instructions where the report has no line
table.

Contract: ``source_view(ka, anchor) -> dict`` returns ``{"files", "hotspots", "note"}``; each
line's ``id`` is ``source_id(anchor, file, line)``, which the tree and the findings link to.
``lazy_source(source)`` moves each hot line's detail (stall segments, SASS rows) into compact
JSON in place, for the groups whose parts report.js builds when they are opened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...specs import loader as data
from .common import GROUP_COLORS, OTHER_COLOR, script_json
from ..units import missing

HOT_LINE_MIN_SHARE = 0.01  # a source line is "hot" from 1% of the kernel's stall samples
HOT_LINES_MAX = 12
CONTEXT_LINES = 2  # source lines shown around each hot line
SASS_HOTSPOTS_MAX = 12
SASS_ROWS_MAX = 40  # SASS instructions listed under one hot source line


def _reason_meta() -> tuple[dict[str, str], dict[str, str]]:
    """(reason -> label, reason -> group id) from the data files."""
    labels = {r: s["label"] for r, s in data.stall_reasons().items()}
    groups = {r: g["id"] for g in data.tree_shape()["groups"] for r in g["reasons"]}
    return labels, groups


def source_id(anchor: str, file, line) -> str:
    if file is None or line is None or missing(line):
        return ""
    return f"{anchor}-src-{re.sub(r'[^A-Za-z0-9]+', '-', str(file).rsplit('/', 1)[-1])}-{int(line)}"


def _breakdown(values, stall_cols: list[str], labels: dict, groups: dict, limit: int = 6) -> list[dict]:
    """Top stall reasons of one row of stall samples (aligned with ``stall_cols``)."""
    vals = [float(v) for v in values]
    tot = sum(vals)
    if tot <= 0:
        return []
    out: list[dict[str, Any]] = []
    for v, col in sorted(zip(vals, stall_cols), key=lambda t: -t[0]):
        if v <= 0 or len(out) >= limit:
            break
        r = col[len("stall_") :]
        out.append(
            {
                "reason": labels.get(r, r),
                "pct": 100.0 * v / tot,
                "samples": f"{v:,.0f}",
                "color": GROUP_COLORS.get(groups.get(r, ""), OTHER_COLOR),
            }
        )
    return out


def _sass_rows(
    df: pd.DataFrame, stall_cols: list[str], labels: dict, groups: dict, marks: dict[int, list[str]]
) -> tuple[list[dict], int]:
    """The SASS of one source line in address order; an unrolled line can hold hundreds of
    instructions, so only the most-stalled ``SASS_ROWS_MAX`` are listed (and the rest counted),
    plus every instruction a finding points at (``marks``: offset -> finding ids)."""
    stalls = df[stall_cols].to_numpy(dtype=float)
    tot = stalls.sum(axis=1)
    offsets = [int(o) for o in df["offset"]]
    chosen = set(sorted(range(len(df)), key=lambda i: -tot[i])[:SASS_ROWS_MAX])
    chosen |= {i for i, o in enumerate(offsets) if o in marks}
    keep = sorted(chosen, key=lambda i: offsets[i])
    executed = df["inst_executed"].to_numpy(dtype=float) if "inst_executed" in df else None
    rows = []
    for i in keep:
        top = _breakdown(stalls[i], stall_cols, labels, groups, limit=2)
        ex = None if executed is None else executed[i]
        rows.append(
            {
                "offset": f"+0x{offsets[i]:04x}",
                "sass": str(df["sass"].iat[i]),
                "findings": marks.get(offsets[i], []),
                "executed": "" if missing(ex) else f"{ex:,.0f}",
                "stalls": f"{tot[i]:,.0f}",
                "hot": tot[i] > 0,
                "top": ", ".join(f"{b['reason'].split(' (')[0]} {b['pct']:.0f}%" for b in top),
            }
        )
    return rows, len(df) - len(keep)


@dataclass
class _Stalls:
    """What every line's stall view reads: the stall columns, the kernel's stall samples in
    all, and each reason's label and group."""

    cols: list[str]
    total: float
    labels: dict[str, str]
    groups: dict[str, str]


@dataclass
class _Places:
    """Where the findings point: (file, line) -> finding ids; (file, line) -> finding id ->
    the share of the finding's stall samples slicing blames on the line (the heat bar is the
    line's own, sampled, share: the page labels which is which); SASS offset -> finding ids."""

    where: dict[tuple, list[str]] = field(default_factory=dict)
    blamed: dict[tuple, dict[str, float]] = field(default_factory=dict)
    marks: dict[int, list[str]] = field(default_factory=dict)


def _places_of(findings) -> _Places:
    places = _Places()
    for f in findings:
        for loc in f.locations:
            _place(places, f.id, loc)
    return places


def _place(places: _Places, fid: str, loc: dict) -> None:
    """Record one location of a finding once: its source line and its SASS offset."""
    if loc.get("file") and loc.get("line") is not None:
        key = (loc["file"], int(loc["line"]))
        if fid not in places.where.get(key, []):
            places.where.setdefault(key, []).append(fid)
            places.blamed.setdefault(key, {})[fid] = float(loc.get("share", 0.0))
    if loc.get("pc_offset") is not None and fid not in places.marks.get(int(loc["pc_offset"]), []):
        places.marks.setdefault(int(loc["pc_offset"]), []).append(fid)


def _stall_columns(df: pd.DataFrame) -> list[str]:
    """The stall reasons' sample columns (``stall_selected`` is issuing, not a stall)."""
    return [c for c in df.columns if c.startswith("stall_") and c != "stall_selected"]


def _lined(df: pd.DataFrame) -> pd.DataFrame:
    """The instructions with a file and line (none without a line table)."""
    if "file" in df and "line" in df:
        return df[df["file"].notna() & df["line"].notna()]
    return df.iloc[0:0]


def source_view(ka, anchor: str) -> dict:
    k = ka.kernel
    df = k.instructions
    out: dict[str, Any] = {"files": [], "hotspots": [], "note": ""}
    if df.empty or "sass" not in df:
        out["note"] = "This report has no per-instruction data (collect the SourceCounters section)."
        return out
    stall_cols = _stall_columns(df)
    total = float(df[stall_cols].to_numpy().sum()) if stall_cols else 0.0
    if total <= 0:
        out["note"] = (
            "No PC sampling in this report: per-line stalls are unavailable (collect the SourceCounters section)."
        )
        return out
    st = _Stalls(stall_cols, total, *_reason_meta())
    places = _places_of(ka.findings)
    lined = _lined(df)
    if lined.empty:
        out["hotspots"] = _sass_hotspots(df, st)
        out["note"] = (
            "The report has no source-line information: hot SASS instructions are shown instead (compile with -lineinfo)."
        )
        return out
    lined = lined.assign(line=lined["line"].astype(int))
    by_line = lined.groupby(["file", "line"])
    per_line = by_line[stall_cols].sum()
    files = _hot_lines(per_line.sum(axis=1).sort_values(ascending=False), total, places)
    for f in sorted(files, key=lambda x: -sum(files[x].values())):
        rows = _file_rows(f, files[f], k.source_text.get(f), anchor, st, by_line, per_line, places)
        out["files"].append(
            {
                "path": f,
                "name": str(f).rsplit("/", 1)[-1],
                "rows": rows,
                "share": 100.0 * sum(files[f].values()) / total,
                "has_text": bool(k.source_text.get(f)),
            }
        )
    if not any(fv["has_text"] for fv in out["files"]):
        out["note"] = (
            "Source text was not imported into the report (profile with --import-source yes): line numbers and SASS only."
        )
    return out


def _sass_hotspots(df: pd.DataFrame, st: _Stalls) -> list[dict]:
    """No line table: the SASS itself ranked by stall samples."""
    d = df.assign(_stalls=df[st.cols].sum(axis=1)).sort_values("_stalls", ascending=False)
    d = d[d["_stalls"] > 0].head(SASS_HOTSPOTS_MAX)
    return [
        {
            "offset": f"+0x{int(r['offset']):04x}",
            "sass": str(r["sass"]),
            "share": 100.0 * float(r["_stalls"]) / st.total,
            "segments": _breakdown(r[st.cols], st.cols, st.labels, st.groups),
        }
        for _, r in d.iterrows()
    ]


def _hot_lines(line_tot: Any, total: float, places: _Places) -> dict[str, dict[int, float]]:
    """file -> line -> stall samples of the lines shown expanded: those from
    HOT_LINE_MIN_SHARE of the samples (at most HOT_LINES_MAX; else the three hottest), and
    each finding's line."""
    hot = line_tot[line_tot / total >= HOT_LINE_MIN_SHARE].head(HOT_LINES_MAX)
    if len(hot) < 3:
        hot = line_tot[line_tot > 0].head(3)
    files: dict[str, dict[int, float]] = {}
    for (f, ln), v in hot.items():
        files.setdefault(f, {})[int(ln)] = float(v)
    # A finding's line is where the blamer puts the cause, often not where warps wait: show it
    # expanded like a hot line even when its own stall share is small.
    for f, ln in places.where:
        if (f, ln) in line_tot.index:
            files.setdefault(f, {}).setdefault(ln, float(line_tot.loc[(f, ln)]))
    return files


def _shown_lines(text: list[str] | None, hot_lines: dict[int, float]) -> list[int | None]:
    """The line numbers shown of a file, in order, a None where lines are left out: the hot
    lines with CONTEXT_LINES around each when the report has the file's text."""
    if text:
        show: set[int] = set()
        for ln in hot_lines:
            show.update(range(max(1, ln - CONTEXT_LINES), min(len(text), ln + CONTEXT_LINES) + 1))
        numbers = sorted(show | set(hot_lines))
    else:
        numbers = sorted(hot_lines)
    out: list[int | None] = []
    prev = None
    for ln in numbers:
        if prev is not None and ln > prev + 1:
            out.append(None)
        prev = ln
        out.append(ln)
    return out


def _file_rows(
    f: str,
    hot_lines: dict[int, float],
    text: list[str] | None,
    anchor: str,
    st: _Stalls,
    by_line,
    per_line: pd.DataFrame,
    places: _Places,
) -> list[dict]:
    """A file's rows: each line shown, a gap where lines are left out, the hot lines with
    their detail."""
    rows = []
    for ln in _shown_lines(text, hot_lines):
        if ln is None:
            rows.append({"gap": True})
            continue
        row = _line_row(f, ln, text, anchor, hot_lines)
        if ln in hot_lines:
            sass, more = _sass_rows(by_line.get_group((f, ln)), st.cols, st.labels, st.groups, places.marks)
            row.update(_hot_detail(st, per_line.loc[(f, ln)], hot_lines[ln], places, (f, ln), sass, more))
        rows.append(row)
    return rows


def _line_row(f: str, ln: int, text: list[str] | None, anchor: str, hot_lines: dict[int, float]) -> dict:
    code = text[ln - 1].rstrip("\n") if text and 1 <= ln <= len(text) else ""
    return {"gap": False, "no": ln, "code": code, "hot": ln in hot_lines, "id": source_id(anchor, f, ln)}


def _hot_detail(
    st: _Stalls, line_stalls, samples: float, places: _Places, key: tuple, sass: list[dict], more: int
) -> dict:
    """A hot line's share, stall breakdown, SASS and the findings that point at it."""
    return dict(
        share=100.0 * samples / st.total,
        samples=f"{samples:,.0f}",
        segments=_breakdown(line_stalls, st.cols, st.labels, st.groups),
        sass=sass,
        sass_more=more,
        findings=places.where.get(key, []),
        blamed=[{"id": fid, "share": f"{100.0 * share:.0f}%"} for fid, share in places.blamed.get(key, {}).items()],
    )


def lazy_source(source: dict) -> None:
    """Move each hot line's detail (stall segments, SASS rows) into compact JSON that report.js
    draws when the line is opened; the line itself stays in the page."""
    for fv in source["files"]:
        for r in fv["rows"]:
            if r.get("hot"):
                r["detail_json"] = script_json(
                    {
                        "g": [[round(g["pct"], 1), g["color"], g["reason"]] for g in r["segments"]],
                        "r": [
                            [x["offset"], x["sass"], x["findings"], x["executed"], x["stalls"], x["top"], int(x["hot"])]
                            for x in r["sass"]
                        ],
                        "m": r["sass_more"],
                    }
                )
