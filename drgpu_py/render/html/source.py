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


def source_view(ka, anchor: str) -> dict:  # noqa: C901, PLR0912, PLR0915 - one optional block per source-view column, in output order
    k = ka.kernel
    df = k.instructions
    labels, groups = _reason_meta()
    out: dict[str, Any] = {"files": [], "hotspots": [], "note": ""}
    if df.empty or "sass" not in df:
        out["note"] = "This report has no per-instruction data (collect the SourceCounters section)."
        return out
    stall_cols = [c for c in df.columns if c.startswith("stall_") and c != "stall_selected"]
    total = float(df[stall_cols].to_numpy().sum()) if stall_cols else 0.0
    if total <= 0:
        out["note"] = (
            "No PC sampling in this report: per-line stalls are unavailable (collect the SourceCounters section)."
        )
        return out
    where: dict[tuple, list[str]] = {}
    # (file, line) -> finding id -> the share of the finding's stall samples slicing blames on
    # the line; the heat bar is the line's own (sampled) share: the page labels which is which.
    blamed: dict[tuple, dict[str, float]] = {}
    marks: dict[int, list[str]] = {}
    for f in ka.findings:
        for loc in f.locations:
            if (
                loc.get("file")
                and loc.get("line") is not None
                and f.id not in where.get((loc["file"], int(loc["line"])), [])
            ):
                where.setdefault((loc["file"], int(loc["line"])), []).append(f.id)
                blamed.setdefault((loc["file"], int(loc["line"])), {})[f.id] = float(loc.get("share", 0.0))
            if loc.get("pc_offset") is not None and f.id not in marks.get(int(loc["pc_offset"]), []):
                marks.setdefault(int(loc["pc_offset"]), []).append(f.id)
    lined = df[df["file"].notna() & df["line"].notna()] if "file" in df and "line" in df else df.iloc[0:0]
    if lined.empty:
        # No line table: rank the SASS itself.
        d = df.assign(_stalls=df[stall_cols].sum(axis=1)).sort_values("_stalls", ascending=False)
        d = d[d["_stalls"] > 0].head(SASS_HOTSPOTS_MAX)
        for _, r in d.iterrows():
            out["hotspots"].append(
                {
                    "offset": f"+0x{int(r['offset']):04x}",
                    "sass": str(r["sass"]),
                    "share": 100.0 * float(r["_stalls"]) / total,
                    "segments": _breakdown(r[stall_cols], stall_cols, labels, groups),
                }
            )
        out["note"] = (
            "The report has no source-line information: hot SASS instructions are shown instead (compile with -lineinfo)."
        )
        return out
    lined = lined.assign(line=lined["line"].astype(int))
    by_line = lined.groupby(["file", "line"])
    per_line = by_line[stall_cols].sum()
    line_tot = per_line.sum(axis=1).sort_values(ascending=False)
    hot = line_tot[line_tot / total >= HOT_LINE_MIN_SHARE].head(HOT_LINES_MAX)
    if len(hot) < 3:
        hot = line_tot[line_tot > 0].head(3)
    files: dict[str, dict[int, float]] = {}
    for (f, ln), v in hot.items():
        files.setdefault(f, {})[int(ln)] = float(v)
    # A finding's line is where the blamer puts the cause, often not where warps wait: show it
    # expanded like a hot line even when its own stall share is small.
    for f, ln in where:
        if (f, ln) in line_tot.index:
            files.setdefault(f, {}).setdefault(ln, float(line_tot.loc[(f, ln)]))
    for f in sorted(files, key=lambda x: -sum(files[x].values())):
        text = k.source_text.get(f)
        hot_lines = files[f]
        if text:
            show: set[int] = set()
            for ln in hot_lines:
                show.update(range(max(1, ln - CONTEXT_LINES), min(len(text), ln + CONTEXT_LINES) + 1))
            numbers = sorted(show | set(hot_lines))
        else:
            numbers = sorted(hot_lines)
        rows, prev = [], None
        for ln in numbers:
            if prev is not None and ln > prev + 1:
                rows.append({"gap": True})
            prev = ln
            code = text[ln - 1].rstrip("\n") if text and 1 <= ln <= len(text) else ""
            row = {"gap": False, "no": ln, "code": code, "hot": ln in hot_lines, "id": source_id(anchor, f, ln)}
            if ln in hot_lines:
                sass, more = _sass_rows(by_line.get_group((f, ln)), stall_cols, labels, groups, marks)
                row.update(
                    share=100.0 * hot_lines[ln] / total,
                    samples=f"{hot_lines[ln]:,.0f}",
                    segments=_breakdown(per_line.loc[(f, ln)], stall_cols, labels, groups),
                    sass=sass,
                    sass_more=more,
                    findings=where.get((f, ln), []),
                    blamed=[
                        {"id": fid, "share": f"{100.0 * share:.0f}%"} for fid, share in blamed.get((f, ln), {}).items()
                    ],
                )
            rows.append(row)
        out["files"].append(
            {
                "path": f,
                "name": str(f).rsplit("/", 1)[-1],
                "rows": rows,
                "share": 100.0 * sum(hot_lines.values()) / total,
                "has_text": bool(text),
            }
        )
    if not any(fv["has_text"] for fv in out["files"]):
        out["note"] = (
            "Source text was not imported into the report (profile with --import-source yes): line numbers and SASS only."
        )
    return out


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
