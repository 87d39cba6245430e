"""List renderers: the rows of ``drgpu list`` (drgpu_py.pipeline.compare.list_rows, one per
kernel launch) as aligned text (plain, or a styled rich table on a terminal), CSV or JSON
(drgpu_py/specs/schema/list.schema.json). Registered in ``REGISTRIES["list"]``; the kernel
name comes last, shortened to the width where needed, so long names never break the columns."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..specs.output_schema import SCHEMA_VERSION
from ..version import __version__
from ..errors import UsageError
from ..io import csv_cell, visible
from ..profile import CUT, short_names
from . import REGISTRIES, RenderOptions, register
from .units import number


def _dims(d) -> str:
    return "x".join(str(x) for x in d) if d else "?"


def list_cells(r: dict) -> list[str]:
    top = f"{r['top_finding']} ({r['top_severity']}, {r['top_speedup']:.2f}x)" if r["top_finding"] else "-"
    cells = [
        r["report"],
        str(r["id"]),
        number(r["duration_ns"] / 1000 if r["duration_ns"] is not None else None, ".2f"),
        _dims(r["grid"]),
        _dims(r["block"]),
        number(r["stall_cycle_pct"], ".1f"),
        r["bound"] or "?",
        top,
        r["name"],
    ]
    return [visible(c) for c in cells]  # names from reports: control characters as escapes


LIST_HEADER = [
    "report",
    "id",
    "duration_us",
    "grid",
    "block",
    "stall_%",
    "bound",
    "top finding (est. speedup)",
    "kernel",
]


#: Columns of the analysis (LIST_HEADER positions): shown when some row has them (rows of
#: analysis JSON files; a report's launches are listed without analyzing).
ANALYSIS_COLUMNS = (5, 6, 7)
#: Characters a kernel name keeps at least on a launch's line: with less room left by the
#: other columns, each launch is a block of lines.
NAME_LEAST = 24


@dataclass
class _Layout:
    """What the text list shows: the header and cells of each launch's line (the kernel name
    last, shortened to the width where needed), or ``blocks`` when one line cannot hold them."""

    header: list[str]
    cells: list[list[str]]
    blocks: bool


def _layout(rows: list[dict], width: int) -> _Layout:
    cells = [list_cells(r) for r in rows]
    keep = _kept_columns(rows)
    header = [LIST_HEADER[i] for i in keep] + [LIST_HEADER[-1]]
    lines = [[c[i] for i in keep] for c in cells]
    names = [c[-1] for c in cells]
    shown, blocks = _shown_names(names, width - _prefix_width(header, lines), width, rows)
    return _Layout(header, [x + [n] for x, n in zip(lines, shown)], blocks=blocks)


def _shown_names(names: list[str], room: int, width: int, rows: list[dict]) -> tuple[list[str], bool]:
    """The kernel names as the room the other columns leave allows: whole where they fit,
    else shortened (different names stay different); and whether each launch becomes a
    block of lines (less than NAME_LEAST left), its name then as wide as the block allows."""
    if not names or max(map(len, names)) <= room:
        return names, False
    blocks = room < NAME_LEAST
    if blocks:
        room = max(NAME_LEAST, width - _block_indent(rows))
    short = short_names(names, room)
    return [short[n] for n in names], blocks


def _kept_columns(rows: list[dict]) -> list[int]:
    """The columns before the kernel name worth showing: the report's only with several
    reports (one is named by the command), the analysis' only when a row has them."""
    analyzed = any(r[k] is not None for r in rows for k in ("stall_cycle_pct", "bound", "top_finding"))
    one_report = len({r["report"] for r in rows}) == 1
    return [
        i
        for i in range(len(LIST_HEADER) - 1)
        if not (i == 0 and one_report) and (analyzed or i not in ANALYSIS_COLUMNS)
    ]


def _prefix_width(header: list[str], lines: list[list[str]]) -> int:
    """The width of the columns before the kernel name, each as wide as its widest cell and
    two spaces apart."""
    return sum(max([len(h)] + [len(x[j]) for x in lines]) + 2 for j, h in enumerate(header[:-1]))


def _block_indent(rows: list[dict]) -> int:
    return max((len(str(r["id"])) for r in rows), default=1) + 2


def _list_table(rows: list[dict], layout: _Layout, styled: bool):
    """The list as a rich table: every column but the kernel name is as wide as its widest
    cell (numbers are never cut); the kernel name last."""
    from rich.table import Table
    from rich.text import Text

    t = Table(box=None, show_edge=False, pad_edge=False, header_style="bold" if styled else "", padding=(0, 2, 0, 0))
    for i, head in enumerate(layout.header[:-1]):
        t.add_column(head, no_wrap=True, min_width=max([len(head)] + [len(c[i]) for c in layout.cells]))
    t.add_column(layout.header[-1], overflow="fold")
    top = layout.header.index(LIST_HEADER[7]) if LIST_HEADER[7] in layout.header else -1
    for r, c in zip(rows, layout.cells):
        style = _severity_style(r, styled)
        t.add_row(*(Text(x, style=style if i == top else "") for i, x in enumerate(c)))
    return t


def _list_blocks(rows: list[dict], layout: _Layout, console, styled: bool) -> None:
    """Each launch as a block: its id and kernel name, then its report (of several), its
    duration and shape, and what the analysis of a saved analysis found, a line each (wrapped
    between words where even that line is too long)."""
    from rich.text import Text

    indent = _block_indent(rows)
    for r, c in zip(rows, layout.cells):
        cells = dict(zip(layout.header, c))
        console.print(Text(f"{cells['id']:<{indent}}") + Text(cells["kernel"], style="bold" if styled else ""))
        for text in _block_lines(r, cells, styled):
            for line in text.wrap(console, max(1, console.width - indent)):
                line.rstrip()
                console.print(Text(" " * indent) + line, soft_wrap=True)


def _severity_style(r: dict, styled: bool) -> str:
    """The style of a launch's top finding: by its severity (high, medium), in styled output."""
    return {"high": "bold red", "medium": "yellow"}.get(r["top_severity"] or "", "") if styled else ""


def _block_lines(r: dict, cells: dict[str, str], styled: bool) -> list:
    """A launch's block after its first line: its report (of several), duration and shape,
    and what a saved analysis found."""
    from rich.text import Text

    lines = [Text(cells["report"])] if "report" in cells else []
    lines.append(Text(f"{cells['duration_us']} µs, grid {cells['grid']}, block {cells['block']}"))
    if r["stall_cycle_pct"] is not None or r["bound"] is not None:
        found = [f"stall cycles {cells['stall_%']}%"] if r["stall_cycle_pct"] is not None else []
        lines.append(Text(", ".join(found + ([f"{cells['bound']} bound"] if r["bound"] is not None else []))))
    if r["top_finding"] is not None:
        lines.append(Text("top finding ") + Text(cells[LIST_HEADER[7]], style=_severity_style(r, styled)))
    return lines


def render_list_text(rows: list[dict], width: int = 120) -> str:
    """Aligned plain text (a rich table without borders), one line per launch within
    ``width``: the kernel name last, shortened to the room the other columns leave
    (``short_names``); each launch a block of lines where less than NAME_LEAST characters
    would be left. The report column only when rows come from several reports; the analysis
    columns only when some row has them."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    layout = _layout(rows, width)
    if layout.blocks:
        _list_blocks(rows, layout, Console(file=buf, width=width, color_system=None, highlight=False), False)
        return buf.getvalue()
    widths = [max([len(h)] + [len(c[i]) for c in layout.cells]) for i, h in enumerate(layout.header)]
    if all(_plain(c) for row in layout.cells for c in row):
        return _columns([layout.header, *layout.cells], widths)
    need = sum(w + 2 for w in widths)
    Console(file=buf, width=max(width, need), color_system=None, highlight=False).print(
        _list_table(rows, layout, False)
    )
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _plain(cell: str) -> bool:
    """Printable ASCII (and the mark of a shortened name) without runs of spaces at its ends:
    one character a column, laid out by ``_columns`` exactly as rich lays it out."""
    return (cell.isascii() or cell.replace(CUT, "").isascii()) and cell.isprintable() and cell == cell.strip()


def _columns(lines: list[list[str]], widths: list[int]) -> str:
    """The plain table ``render_list_text`` gets from rich, written directly: rich takes
    about 8 ms a row (160 s for 20,000 launches); tests/unit/test_list_text_fast.py checks
    the two agree."""
    out = []
    for cells in lines:
        out.append("".join(c.ljust(w + 2) for c, w in zip(cells, widths)).rstrip())
    return "\n".join(out) + "\n"


def render_list_console(rows: list[dict], console) -> None:
    """The list on a terminal: as ``render_list_text`` lays it out at the console's width,
    with the top finding coloured by severity."""
    layout = _layout(rows, console.width)
    if layout.blocks:
        _list_blocks(rows, layout, console, True)
    else:
        console.print(_list_table(rows, layout, True))


def render_list_csv(rows: list[dict]) -> str:
    """One CSV row per launch: the JSON rows' fields, grid and block as AxBxC, each text cell
    through ``drgpu_py.io.csv_cell`` (no formulas, no control characters)."""
    import csv
    import io

    buf = io.StringIO()
    fields = [
        "report",
        "id",
        "name",
        "duration_ns",
        "grid",
        "block",
        "stall_cycle_pct",
        "bound",
        "top_finding",
        "top_severity",
        "top_speedup",
    ]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in _finite(rows):
        row = {**{k: r.get(k) for k in fields}, "grid": _dims(r.get("grid")), "block": _dims(r.get("block"))}
        w.writerow({k: csv_cell(v) for k, v in row.items()})
    return buf.getvalue()


def render_list_json(rows: list[dict]) -> str:
    from .json_ import dumps

    document = {"tool": "drgpu", "version": __version__, "schema_version": SCHEMA_VERSION, "kind": "list"}
    return dumps({**document, "kernels": rows}) + "\n"


# The registered renderers (``render(rows, options)``), for ``render_list``.
register("text", (".txt",), kind="list")(lambda rows, options: render_list_text(rows, options.width))
register("json", (".json",), kind="list")(lambda rows, options: render_list_json(rows))
register("csv", (".csv",), kind="list")(lambda rows, options: render_list_csv(rows))


def render_list(rows: list[dict], fmt: str, options: RenderOptions | None = None) -> str:
    """``rows`` in ``fmt`` (text, json or csv)."""
    spec = REGISTRIES["list"].get(fmt)
    if spec is None:
        raise UsageError(f"unknown format {fmt!r} for list", hint="one of: " + ", ".join(REGISTRIES["list"]))
    return spec.render(rows, options or RenderOptions())


def _finite(o):
    """JSON has no NaN or infinity: a value that is not a finite number is written as null."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o
