"""Diff renderers: ``drgpu diff``'s dict (drgpu_py.pipeline.compare.diff; the JSON contract
is drgpu_py/specs/schema/diff.schema.json) as text, JSON or HTML (``templates/diff.html.j2``,
autoescaped); report text never carries a raw control character into any of them
(drgpu_py.io.visible, document_text). Registered in ``REGISTRIES["diff"]``; ``diff_format_for`` maps an output file
name to a format."""

from __future__ import annotations

import functools
from pathlib import Path

from ..errors import DataFileError, UsageError
from ..io import document_text, visible
from . import REGISTRIES, RenderOptions, format_for, register
from .units import number, us


def _pp(v) -> str:
    return "" if v is None else f"{v:+.1f} pp"


def _cyc(v) -> str:
    return "n/a" if v is None else f"{v:,.0f}"


def _dcyc(v) -> str:
    return "n/a" if v is None else f"{v:+,.0f}"


def _speed(v) -> str:
    return "n/a" if v is None else f"{v:.2f}x"


def render_diff_text(d: dict) -> str:  # noqa: C901, PLR0912 - one optional block per diff section, in output order
    out = [f"drgpu diff  base: {d['base']['report']}", f"            new:  {d['new']['report']}"]
    s = d["summary"]
    if s["matched"]:
        total = f"{us(s['duration_ns']['base'], ',.2f')} -> {us(s['duration_ns']['new'], ',.2f')}"
        out.append(
            f"{s['matched']} matched kernel(s): {total}, measured speedup {_speed(s['speedup'])}; "
            f"findings resolved {s['resolved']}, new {s['new']}"
        )
    for note in d["notes"]:
        out.append(f"note: {note}")
    for k in d["kernels"]:
        out.append("")
        name = (
            k["base"]["name"]
            if k["base"]["name"] == k["new"]["name"]
            else f"{k['base']['name']}  ->  {k['new']['name']}"
        )
        out.append(f"== {name}  (base id {k['base']['id']}, new id {k['new']['id']}; matched by {k['match']})")
        dur = k["duration_ns"]
        change = "" if k["duration_change_pct"] is None else f" ({k['duration_change_pct']:+.1f}%)"
        out.append(
            f"  duration        {us(dur['base'], ',.2f')} -> {us(dur['new'], ',.2f')}{change}   "
            f"measured speedup {_speed(k['speedup'])}: {k['verdict']}"
        )
        if k.get("estimated_speedup") is not None:
            out.append(
                f"  estimated       {_speed(k['estimated_speedup'])} for the resolved findings, "
                f"measured {_speed(k['speedup'])}"
            )
        cyc = k.get("elapsed_cycles") or {}
        out.append(f"  elapsed cycles  {_cyc(cyc.get('base'))} -> {_cyc(cyc.get('new'))}  {_dcyc(cyc.get('delta'))}")
        sc = k["stall_cycle_pct"]
        st = k.get("stall_cycles") or {}
        out.append(
            f"  stall cycles    {number(sc['base'], '.1f', suffix='%')} -> {number(sc['new'], '.1f', suffix='%')}  {_pp(sc['delta'])}   "
            f"({_cyc(st.get('base'))} -> {_cyc(st.get('new'))} cycles per SM, {_dcyc(st.get('delta'))})"
        )
        ipc = k["achieved_ipc"]
        out.append(f"  achieved IPC    {number(ipc['base'], '.3f')} -> {number(ipc['new'], '.3f')}")
        out.append(
            f"  bound           {k['bound']['base']} -> {k['bound']['new']}   "
            f"(busiest unit {k['top_unit']['base']} -> {k['top_unit']['new']})"
        )
        occ = k["occupancy"]
        out.append(
            "  occupancy       theoretical {} -> {}, achieved {} -> {}".format(
                number(occ["theoretical"]["base"], ".1f", suffix="%"),
                number(occ["theoretical"]["new"], ".1f", suffix="%"),
                number(occ["achieved"]["base"], ".1f", suffix="%"),
                number(occ["achieved"]["new"], ".1f", suffix="%"),
            )
        )
        shares = []
        for g in k["groups"]:
            if max(abs(g["base"] or 0.0), abs(g["new"] or 0.0)) < 0.5:
                continue
            shares.append(
                [
                    g["label"],
                    number(g["base"], ".1f", suffix="%"),
                    number(g["new"], ".1f", suffix="%"),
                    _pp(g["delta"]),
                    _dcyc((g.get("stall_cycles") or {}).get("delta")),
                ]
            )
            for r in k["reasons"]:
                if (
                    r["reason"] in _group_members().get(g["group"], ())
                    and max(abs(r["base"] or 0.0), abs(r["new"] or 0.0)) >= 0.5
                ):
                    shares.append(
                        [
                            "  " + r["label"],
                            number(r["base"], ".1f", suffix="%"),
                            number(r["new"], ".1f", suffix="%"),
                            _pp(r["delta"]),
                            _dcyc((r.get("stall_cycles") or {}).get("delta")),
                        ]
                    )
        out += _text_table(["share of stall cycles", "base", "new", "delta", "stall cycles delta"], shares, indent=2)
        if k["memory"]:
            out.append("  memory latency split (share of stall cycles)")
            out += _text_table(
                ["level", "base", "new", "delta"],
                [
                    [
                        m["level"],
                        number(m["base"], ".1f", suffix="%"),
                        number(m["new"], ".1f", suffix="%"),
                        _pp(m["delta"]),
                    ]
                    for m in k["memory"]
                ],
                indent=4,
            )
        f = k["findings"]
        if not (f["resolved"] or f["persisting"] or f["new"]):
            out.append("  findings        none on either side")
        for x in f["resolved"]:
            out.append(
                f"  RESOLVED   {x['id']}: {x['title']} (was {x['severity']}, est. {_speed(x['estimated_speedup'])}"
                + (f", {x['location']}" if x["location"] else "")
                + ")"
            )
        for x in f["persisting"]:
            b, n = x["base"], x["new"]
            out.append(
                f"  PERSISTS   {x['id']}: {x['title']} ({b['severity']} -> {n['severity']}, "
                f"est. {_speed(b['estimated_speedup'])} -> {_speed(n['estimated_speedup'])})"
            )
        for x in f["new"]:
            out.append(
                f"  NEW        {x['id']}: {x['title']} ({x['severity']}, est. {_speed(x['estimated_speedup'])}"
                + (f", {x['location']}" if x["location"] else "")
                + ")"
            )
    um = d["unmatched"]
    if um["base"] or um["new"]:
        out.append("")
        for side, other in (("base", "new"), ("new", "base")):
            for k in um[side]:
                out.append(
                    f"unmatched ({side} only): id {k['id']} {k['name']} ({us(k['duration_ns'], ',.2f')}): "
                    f"no matching kernel in the {other} report"
                )
    # Names, notes and locations come from the reports: control characters as escapes.
    return visible("\n".join(out)) + "\n"


def _text_table(headers: list[str], rows: list[list[str]], indent: int) -> list[str]:
    """Lines of a plain-text table (rich, no borders): the first column left-aligned, the
    others right-aligned, every column as wide as its widest cell, so a long label moves the
    numbers instead of running into them. Tables of printable ASCII are laid out here, as
    rich lays them out (rich takes 15 ms a table, two a matched kernel: minutes for 20,000);
    tests/unit/test_list_text_fast.py checks the two agree."""
    lines = [headers, *rows]
    if (
        all(len(r) == len(headers) for r in rows)
        and all(c.isascii() and c.isprintable() and c == c.strip() for row in lines for c in row)
        and all(any(r[i] for r in lines) for i in range(len(headers)))  # rich pads an empty column otherwise
    ):
        return _plain_table(headers, rows, indent)
    return _rich_table(headers, rows, indent)


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
register("text", (".txt",), kind="diff")(lambda d, options: render_diff_text(d))
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
