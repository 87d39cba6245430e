"""Diff renderers: ``drgpu diff``'s dict (drgpu_py.pipeline.compare.diff; the JSON contract
is drgpu_py/specs/schema/diff.schema.json) as text, JSON or HTML (``templates/diff.html.j2``,
autoescaped); report text never carries a raw control character into any of them
(drgpu_py.io.visible, document_text). Registered in ``REGISTRIES["diff"]``; ``diff_format_for`` maps an output file
name to a format.

The text fits ``RenderOptions.width`` (COLUMNS, else the terminal, else 120: render.text_width)
as the other text outputs do: a line too long wraps between words under its value column,
kernel names in a heading are shortened (``profile.short_names``: different names stay
different; the JSON has them whole), and a share table wraps its labels, or, where the numbers
leave too little room for them, becomes a block of lines per row. Numbers are never split."""

from __future__ import annotations

import functools
import re
import textwrap
from pathlib import Path

from ..errors import DataFileError, UsageError
from ..io import document_text, visible
from ..profile import short_names
from . import REGISTRIES, RenderOptions, format_for, register
from ..analysis.figures import speedup
from .units import number, us

#: Kernel names in a heading keep at least this many characters (the text summary's least).
NAME_LEAST = 24
#: A share table's label column wraps to no fewer characters than this; with less room left by
#: the number columns, each row becomes a block of lines.
LABEL_LEAST = 16
#: Where a wrapped line goes on: under the value column of "  duration        ..." lines.
VALUE_COLUMN = 18


def _pp(v) -> str:
    return "" if v is None else f"{v:+.1f} pp"


def _cyc(v) -> str:
    return "n/a" if v is None else f"{v:,.0f}"


def _dcyc(v) -> str:
    return "n/a" if v is None else f"{v:+,.0f}"


def _speed(v) -> str:
    return speedup(v)


#: A number and its unit ("94.91 µs", "-20.7 pp") stay on one line when a line wraps.
_UNIT = re.compile(r"(?<=\d) (?=(?:µs|ms|pp)\b)")
_JOIN = "\xa0"  # no break point for textwrap; back to a space once the line is wrapped


def _fit(line: str, width: int, hang: int) -> list[str]:
    """``line`` whole when it fits ``width``, else wrapped between words (a number with its
    unit one word), the lines after the first indented by ``hang`` (at most half the width);
    only a word longer than a whole line (a path) is cut."""
    if len(line) <= width:
        return [line]
    joined = _JOIN not in line
    lines = textwrap.wrap(
        _UNIT.sub(_JOIN, line) if joined else line,
        width,
        subsequent_indent=" " * min(hang, width // 2),
        break_on_hyphens=False,
        break_long_words=True,
    )
    return [piece.replace(_JOIN, " ") for piece in lines] if joined else lines


def _shown(name: str, room: int) -> str:
    """A kernel name as it fits ``room`` characters: whole, else shortened (at least NAME_LEAST)."""
    return name if len(name) <= room else short_names([name], max(NAME_LEAST, room))[name]


def _heading(k: dict, width: int) -> list[str]:
    """``== BASE  ->  NEW  (ids; match)``: the names whole on one line, else whole on a line
    each, else shortened to share one line, else shortened on a line each; the ids after them,
    or on a line of their own."""
    names = list(dict.fromkeys(visible(k[side]["name"], one_line=True) for side in ("base", "new")))
    tail = f"(base id {k['base']['id']}, new id {k['new']['id']}; matched by {k['match']})"
    each = (width - 3 - 6 * (len(names) - 1)) // len(names)
    if len("== " + "  ->  ".join(names)) <= width:
        lines = ["== " + "  ->  ".join(names)]
    elif max(map(len, names)) <= width - 6 or each < NAME_LEAST:
        lines = ["== " + _shown(names[0], width - 3)] + ["   -> " + _shown(n, width - 6) for n in names[1:]]
    else:
        short = short_names(names, each)
        lines = ["== " + "  ->  ".join(short[n] for n in names)]
    if len(lines[-1]) + 2 + len(tail) <= width:
        lines[-1] += "  " + tail
    else:
        lines.append("   " + tail)
    return [piece for line in lines for piece in _fit(line, width, 6)]


def render_diff_text(d: dict, width: int = 120) -> str:
    """``d`` as text, no line wider than ``width`` (the module docstring says how)."""
    out = _Lines(width)
    out.add(f"drgpu diff  base: {d['base']['report']}", VALUE_COLUMN)
    out.add(f"            new:  {d['new']['report']}", VALUE_COLUMN)
    _add_summary(out, d["summary"])
    for note in d["notes"]:
        out.add(f"note: {note}", 6)
    for k in d["kernels"]:
        _add_kernel(out, k)
    _add_unmatched(out, d["unmatched"])
    return "\n".join(out.lines) + "\n"


class _Lines:
    """The text's lines so far, each fitted to ``width``."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.lines: list[str] = []

    def add(self, line: str, hang: int) -> None:
        # Names, notes and locations come from the reports: control characters as escapes.
        self.lines.extend(_fit(visible(line, one_line=True), self.width, hang))


def _add_summary(out: _Lines, s: dict) -> None:
    if not s["matched"]:
        return
    total = f"{us(s['duration_ns']['base'], ',.2f')} -> {us(s['duration_ns']['new'], ',.2f')}"
    out.add(
        f"{s['matched']} matched kernel(s): {total}, measured speedup {_speed(s['speedup'])}; "
        f"findings resolved {s['resolved']}, new {s['new']}",
        2,
    )


def _add_kernel(out: _Lines, k: dict) -> None:
    """A matched kernel: its heading, measures, stall-share and memory tables, findings."""
    out.lines.append("")
    out.lines.extend(_heading(k, out.width))
    _add_measures(out, k)
    out.lines += _fitted_table(
        ["share of stall cycles", "base", "new", "delta", "stall cycles delta"],
        _share_rows(k),
        indent=2,
        width=out.width,
    )
    if k["memory"]:
        out.add("  memory latency split (share of stall cycles)", 4)
        out.lines += _fitted_table(
            ["level", "base", "new", "delta"],
            [[m["level"], _pct(m["base"]), _pct(m["new"]), _pp(m["delta"])] for m in k["memory"]],
            indent=4,
            width=out.width,
        )
    _add_findings(out, k["findings"])


def _pct(v) -> str:
    return number(v, ".1f", suffix="%")


def _add_measures(out: _Lines, k: dict) -> None:
    """Duration and speedup, cycles, stall share, IPC, bound and occupancy, base -> new."""
    dur = k["duration_ns"]
    change = "" if k["duration_change_pct"] is None else f" ({k['duration_change_pct']:+.1f}%)"
    out.add(
        f"  duration        {us(dur['base'], ',.2f')} -> {us(dur['new'], ',.2f')}{change}   "
        f"measured speedup {_speed(k['speedup'])}: {k['verdict']}",
        VALUE_COLUMN,
    )
    if k.get("estimated_speedup") is not None:
        out.add(
            f"  estimated       {_speed(k['estimated_speedup'])} for the resolved findings, "
            f"measured {_speed(k['speedup'])}",
            VALUE_COLUMN,
        )
    cyc = k.get("elapsed_cycles") or {}
    out.add(
        f"  elapsed cycles  {_cyc(cyc.get('base'))} -> {_cyc(cyc.get('new'))}  {_dcyc(cyc.get('delta'))}",
        VALUE_COLUMN,
    )
    sc = k["stall_cycle_pct"]
    st = k.get("stall_cycles") or {}
    out.add(
        f"  stall cycles    {_pct(sc['base'])} -> {_pct(sc['new'])}  {_pp(sc['delta'])}   "
        f"({_cyc(st.get('base'))} -> {_cyc(st.get('new'))} cycles per SM, {_dcyc(st.get('delta'))})",
        VALUE_COLUMN,
    )
    ipc = k["achieved_ipc"]
    out.add(f"  achieved IPC    {number(ipc['base'], '.3f')} -> {number(ipc['new'], '.3f')}", VALUE_COLUMN)
    out.add(
        f"  bound           {k['bound']['base']} -> {k['bound']['new']}   "
        f"(busiest unit {k['top_unit']['base']} -> {k['top_unit']['new']})",
        VALUE_COLUMN,
    )
    occ = k["occupancy"]
    out.add(
        "  occupancy       theoretical {} -> {}, achieved {} -> {}".format(
            _pct(occ["theoretical"]["base"]),
            _pct(occ["theoretical"]["new"]),
            _pct(occ["achieved"]["base"]),
            _pct(occ["achieved"]["new"]),
        ),
        VALUE_COLUMN,
    )


#: A stall group or reason under this share (pp) on both sides is left out of the share table.
_SHARE_SHOWN = 0.5


def _shown_share(e: dict) -> bool:
    return max(abs(e["base"] or 0.0), abs(e["new"] or 0.0)) >= _SHARE_SHOWN


def _share_row(e: dict, label: str) -> list[str]:
    return [label, _pct(e["base"]), _pct(e["new"]), _pp(e["delta"]), _dcyc((e.get("stall_cycles") or {}).get("delta"))]


def _share_rows(k: dict) -> list[list[str]]:
    """The stall groups that hold a share on either side, each followed by its reasons that do."""
    shares = []
    for g in k["groups"]:
        if not _shown_share(g):
            continue
        shares.append(_share_row(g, g["label"]))
        members = _group_members().get(g["group"], ())
        shares += [_share_row(r, "  " + r["label"]) for r in k["reasons"] if r["reason"] in members and _shown_share(r)]
    return shares


def _location(x: dict) -> str:
    return f", {x['location']}" if x["location"] else ""


def _add_findings(out: _Lines, f: dict) -> None:
    """The findings resolved, persisting and new."""
    if not (f["resolved"] or f["persisting"] or f["new"]):
        out.add("  findings        none on either side", VALUE_COLUMN)
    for x in f["resolved"]:
        out.add(
            f"  RESOLVED   {x['id']}: {x['title']} (was {x['severity']}, est. {_speed(x['estimated_speedup'])}"
            + _location(x)
            + ")",
            13,
        )
    for x in f["persisting"]:
        b, n = x["base"], x["new"]
        out.add(
            f"  PERSISTS   {x['id']}: {x['title']} ({b['severity']} -> {n['severity']}, "
            f"est. {_speed(b['estimated_speedup'])} -> {_speed(n['estimated_speedup'])})",
            13,
        )
    for x in f["new"]:
        out.add(
            f"  NEW        {x['id']}: {x['title']} ({x['severity']}, est. {_speed(x['estimated_speedup'])}"
            + _location(x)
            + ")",
            13,
        )


def _add_unmatched(out: _Lines, um: dict) -> None:
    """The kernels only one side has, each named as its line leaves room."""
    if not (um["base"] or um["new"]):
        return
    out.lines.append("")
    for side, other in (("base", "new"), ("new", "base")):
        for k in um[side]:
            head = f"unmatched ({side} only): id {k['id']} "
            rest = f" ({us(k['duration_ns'], ',.2f')}): no matching kernel in the {other} report"
            name = visible(k["name"], one_line=True)
            out.add(head + _shown(name, out.width - len(head) - len(rest)) + rest, 2)


def _fitted_table(headers: list[str], rows: list[list[str]], indent: int, width: int) -> list[str]:
    """``_text_table`` within ``width``: as it is when it fits; else the labels (first column)
    and the headers wrapped between words, each row's numbers on its first line; else, where
    the number columns leave less than LABEL_LEAST for the labels, a block per row: the label,
    then each number after its header."""
    headers = [visible(c, one_line=True) for c in headers]
    rows = [[visible(c, one_line=True) for c in r] for r in rows]
    lines = _text_table(headers, rows, indent)
    if max(map(len, lines)) <= width:
        return lines
    room, numbers = _label_room(headers, rows, indent, width)
    if room >= LABEL_LEAST:
        wrapped = _wrapped_rows([headers, *rows], [room, *numbers])
        lines = _text_table(wrapped[0], wrapped[1:], indent)
        if max(map(len, lines)) <= width:
            return lines
    return _row_blocks(headers, rows, indent, width)


def _label_room(headers: list[str], rows: list[list[str]], indent: int, width: int) -> tuple[int, list[int]]:
    """The room the number columns leave the labels, and those columns' widths: with the
    headers whole if the labels keep LABEL_LEAST, else with the headers wrapped."""
    for least in (len, _longest_word):
        numbers = [max([len(r[i]) for r in rows] + [least(headers[i])]) for i in range(1, len(headers))]
        room = width - indent - sum(numbers) - 3 * len(numbers)
        if room >= LABEL_LEAST:
            break
    return room, numbers


def _wrapped_rows(rows: list[list[str]], widths: list[int]) -> list[list[str]]:
    """Each row's cells wrapped to their column's width, the row as many lines as its
    tallest cell (the numbers on its first)."""
    wrapped: list[list[str]] = []
    for row in rows:
        cells = [_cell_lines(c, w) for c, w in zip(row, widths)]
        height = max(map(len, cells))
        wrapped += [[c[i] if i < len(c) else "" for c in cells] for i in range(height)]
    return wrapped


def _longest_word(text: str) -> int:
    return max(map(len, text.split()), default=0)


def _cell_lines(cell: str, width: int) -> list[str]:
    """A table cell wrapped between words to ``width``, its leading spaces (a reason under its
    group) kept on its first line and two more on the lines after."""
    lead = cell[: len(cell) - len(cell.lstrip(" "))]
    return textwrap.wrap(
        cell,
        max(1, width),
        subsequent_indent=lead + "  ",
        break_on_hyphens=False,
        break_long_words=True,
    ) or [cell]


def _row_blocks(headers: list[str], rows: list[list[str]], indent: int, width: int) -> list[str]:
    """A table too wide for the width as a block of lines per row: the table's title (its first
    header), then each row's label and its numbers, each after its header."""
    pad = " " * indent
    lines = _fit(pad + headers[0], width, indent + 2)
    for row in rows:
        lead = indent + len(row[0]) - len(row[0].lstrip(" "))
        lines += _fit(pad + row[0], width, lead + 2)
        values = [f"{h} {c}" for h, c in zip(headers[1:], row[1:]) if c]
        lines += _packed(values, width, lead + 4)
    return lines


def _packed(items: list[str], width: int, indent: int) -> list[str]:
    """``items`` on lines of ``width`` after ``indent`` spaces, two spaces apart, a line
    breaking only between items (an item longer than a line wraps alone)."""
    lines: list[str] = []
    pad = " " * min(indent, width // 2)
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += "  " + item
        else:
            lines += _fit(pad + item, width, len(pad) + 2)
    return lines


def _text_table(headers: list[str], rows: list[list[str]], indent: int) -> list[str]:
    """Lines of a plain-text table (rich, no borders): the first column left-aligned, the
    others right-aligned, every column as wide as its widest cell, so a long label moves the
    numbers instead of running into them. Tables of printable ASCII are laid out here, as
    rich lays them out (rich takes 15 ms a table, two a matched kernel: minutes for 20,000);
    tests/unit/test_list_text_fast.py checks the two agree."""
    if _plain_layout(headers, rows):
        return _plain_table(headers, rows, indent)
    return _rich_table(headers, rows, indent)


def _plain_layout(headers: list[str], rows: list[list[str]]) -> bool:
    """Whether ``_plain_table`` lays the table out as rich would: full rows of printable
    ASCII without edge spaces, and no empty column (rich pads one)."""
    lines = [headers, *rows]
    return (
        all(len(r) == len(headers) for r in rows)
        and all(c.isascii() and c.isprintable() and c == c.strip() for row in lines for c in row)
        and all(any(r[i] for r in lines) for i in range(len(headers)))
    )


def _plain_table(headers: list[str], rows: list[list[str]], indent: int) -> list[str]:
    lines = [headers, *rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(headers))]
    return [
        " " * indent + (r[0].ljust(widths[0]) + "".join("   " + c.rjust(w) for c, w in zip(r[1:], widths[1:]))).rstrip()
        for r in lines
    ]


def _rich_table(headers: list[str], rows: list[list[str]], indent: int) -> list[str]:
    import io

    from rich.console import Console
    from rich.table import Table

    t = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 0, 0, 3), header_style="")
    for i, h in enumerate(headers):
        t.add_column(h, no_wrap=True, justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*r)
    buf = io.StringIO()
    Console(file=buf, width=10_000, color_system=None, highlight=False, markup=False).print(t)
    return [" " * indent + line.rstrip() for line in buf.getvalue().splitlines()]


@functools.cache
def _group_members() -> dict[str, tuple[str, ...]]:
    from ..specs import loader as data

    return {g["id"]: tuple(g["reasons"]) for g in data.tree_shape()["groups"]}


def render_diff_html(d: dict) -> str:
    import jinja2

    from ..specs.loader import share_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(share_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        us=lambda ns: us(ns, ",.2f"),
        pct=lambda v: number(v, ".1f", suffix="%"),
        pp=_pp,
        speed=_speed,
    )
    env.globals["group_reasons"] = lambda gid: _group_members().get(gid, ())
    try:
        tpl = env.get_template("diff.html.j2")
    except jinja2.TemplateNotFound as e:
        raise DataFileError("templates/diff.html.j2 is missing from the installation") from e
    return document_text(tpl.render(d=d))


def render_diff_json(d: dict) -> str:
    from .json_ import dumps

    return dumps(d) + "\n"


# The registered renderers (``render(d, options)``), for ``render_diff``.
register("text", (".txt",), kind="diff")(lambda d, options: render_diff_text(d, options.width))
register("json", (".json",), kind="diff")(lambda d, options: render_diff_json(d))
register("html", (".html", ".htm"), kind="diff")(lambda d, options: render_diff_html(d))


def render_diff(d: dict, fmt: str, options: RenderOptions | None = None) -> str:
    """``d`` in ``fmt`` (text, json or html)."""
    spec = REGISTRIES["diff"].get(fmt)
    if spec is None:
        raise UsageError(f"unknown diff format {fmt!r}", hint="one of: " + ", ".join(REGISTRIES["diff"]))
    return spec.render(d, options or RenderOptions())


def diff_format_for(path: str | Path) -> str:
    """The diff format an output file's extension names (.txt, .json, .html or .htm)."""
    fmt = format_for(path, "diff")
    if fmt is not None:
        return fmt
    raise UsageError(
        f"cannot tell the diff format from {Path(path).name!r}", hint="use .txt, .json or .html, or give --format"
    )
