"""List renderers: the rows of ``drgpu list`` (drgpu_py.pipeline.compare.list_rows, one per
kernel launch) as aligned text (plain, or a styled rich table on a terminal), CSV or JSON
(drgpu_py/specs/schema/list.schema.json). Registered in ``REGISTRIES["list"]``; the kernel
name comes last so long names never break the columns."""

from __future__ import annotations

import math

from ..version import __version__
from ..errors import UsageError
from ..io import csv_cell, visible
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


def _list_table(rows: list[dict], styled: bool):
    """The list as a rich table: every column but the kernel name is as wide as its widest
    cell (numbers are never cut); the kernel name folds onto more lines when space is short."""
    from rich.table import Table
    from rich.text import Text

    cells = [list_cells(r) for r in rows]
    t = Table(box=None, show_edge=False, pad_edge=False, header_style="bold" if styled else "", padding=(0, 2, 0, 0))
    for i, head in enumerate(LIST_HEADER[:-1]):
        t.add_column(head, no_wrap=True, min_width=max([len(head)] + [len(c[i]) for c in cells]))
    t.add_column(LIST_HEADER[-1], overflow="fold")
    for r, c in zip(rows, cells):
        style = {"high": "bold red", "medium": "yellow"}.get(r["top_severity"] or "", "") if styled else ""
        t.add_row(*(Text(x) for x in c[:7]), Text(c[7], style=style), Text(c[8]))
    return t


def render_list_text(rows: list[dict], width: int = 120) -> str:
    """Aligned plain text (a rich table without borders), the kernel name last so long names
    never break the columns."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    # Never narrower than the cells need: piped or in a file, a row is one line whatever the
    # width (scripts split lines), numbers and names whole.
    cells = [list_cells(r) for r in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(LIST_HEADER)]
    if all(_plain(c) for row in cells for c in row):
        return _columns([LIST_HEADER, *cells], widths)
    need = sum(w + 2 for w in widths)
    Console(file=buf, width=max(width, need), color_system=None, highlight=False).print(_list_table(rows, False))
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _plain(cell: str) -> bool:
    """Printable ASCII without runs of spaces at its ends: one character a column, laid out
    by ``_columns`` exactly as rich lays it out."""
    return cell.isascii() and cell.isprintable() and cell == cell.strip()


def _columns(lines: list[list[str]], widths: list[int]) -> str:
    """The plain table ``render_list_text`` gets from rich, written directly: rich takes
    about 8 ms a row (160 s for 20,000 launches); tests/unit/test_list_text_fast.py checks
    the two agree."""
    out = []
    for cells in lines:
        out.append("".join(c.ljust(w + 2) for c, w in zip(cells, widths)).rstrip())
    return "\n".join(out) + "\n"


def render_list_console(rows: list[dict], console) -> None:
    console.print(_list_table(rows, True))


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

    return dumps({"tool": "drgpu", "version": __version__, "kind": "list", "kernels": rows}) + "\n"


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
