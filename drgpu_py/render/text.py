"""Terminal renderer (rich): per kernel a header, the stall tree (folded below the fold
share) and the top findings with their advice, source lines and notes, then the notes several
kernels share, once, and those of the kernels whose trees are not shown (render/quiet.py: what
the readable formats leave out or say once). Works without a terminal (plain text into a
string) for files and pipes."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.panel import Panel
from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..analysis.groups import application_severities
from ..analysis.figures import pct, speedup
from ..analysis.tree import Node
from ..io import visible
from ..profile import short_name, short_names
from . import format_value, register
from .quiet import (
    CAUSES_BASE,
    ROOT_BASE,
    Worth,
    hidden_findings_text,
    kernels_phrase,
    model_error_text,
    split_notes,
    split_shown,
    worth_of,
)
from .units import microseconds, us

SEV_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def escape(text) -> str:
    """Text for rich: markup escaped, control and bidi characters made visible
    (drgpu_py.io.visible: ESC starts terminal sequences)."""
    return _markup_escape(visible(text))


#: How the header and tree say a value the report does not measure (never a guess, never 'None').
NOT_MEASURED = "not measured"


def _label(n: Node, sev: dict[str, str] | None = None) -> str:
    """A tree node as a line; ``sev``: the severities shown for suggestions, by finding id
    (their severity in the whole run, in a report of several kernels)."""
    val = format_value(n)
    name = escape(str(n.name))
    if n.kind == "missing":
        return _missing_label(n, name)
    if n.kind == "line":
        code = n.attrs.get("code") or n.attrs.get("sass") or ""
        return f"[cyan]{name}[/cyan] {val}  [dim]{escape(code[:70])}[/dim]"
    if n.kind == "suggestion":
        return _suggestion_label(n, name, val, sev)
    return _value_label(n, name, val)


def _missing_label(n: Node, name: str) -> str:
    """Why a metric is missing: the GPU lacks it, the report's ncu is too old, or its section
    was not collected."""
    if n.attrs.get("unavailable_on"):
        return f"[dim]{name}: not available on {escape(str(n.attrs['unavailable_on']))}[/dim]"
    if n.attrs.get("ncu_since"):
        since = escape(str(n.attrs["ncu_since"]))
        return f"[dim]{name}: not in this report's ncu (re-profile with ncu >= {since})[/dim]"
    return f"[dim]{name}: not collected (add section {escape(str(n.attrs.get('section', '?')))})[/dim]"


def _suggestion_label(n: Node, name: str, val: str, sev: dict[str, str] | None) -> str:
    sev_shown = (sev or {}).get(str(n.attrs.get("id")), n.attrs.get("severity", "low"))
    if n.attrs.get("estimate_capped"):
        val = f"≥{val} (capped)"
    return f"[{SEV_STYLE[sev_shown]}]→ {name} (est. {val} speedup, {sev_shown})[/{SEV_STYLE[sev_shown]}]"


def _value_label(n: Node, name: str, val: str) -> str:
    """The root, a group, a cause or a metric: its name and value."""
    style = "bold" if n.kind in ("root", "group") else ""
    mark = "★ " if n.attrs.get("highlight") else ""
    if n.kind == "root" and not val:
        val = NOT_MEASURED  # the stall cycles: never a blank read as none
    text = f"{mark}{name}" + (f": {val}" if val else "")
    if n.kind == "root" and val != NOT_MEASURED:
        # The root's % is of the issue slots, its causes' of the stall cycles: said, so that a
        # cause at 57% under a root at 26% is not read as a child larger than its parent.
        text += f" {ROOT_BASE} ({CAUSES_BASE})"
    text = f"[{style}]{text}[/{style}]" if style else text
    if n.attrs.get("group") == "model":
        text += _model_text(n)
    return text


def _model_text(n: Node) -> str:
    """The measurement first; the model's prediction after it, dimmed, only with its error."""
    measured, predicted = n.attrs.get("measured_cycles"), n.attrs.get("predicted_cycles")
    model = model_error_text(predicted, measured)
    if model is None:
        return ""
    return f": measured {measured:,.0f} cycles [dim]({model})[/dim]"


def _add(
    tree: Tree,
    node: Node,
    fold: float,
    depth: int,
    compact: bool = False,
    worth: Worth | None = None,
    sev: dict[str, str] | None = None,
) -> None:
    worth = worth or Worth()
    shown, folded = split_shown(node, fold)
    # Suggestions under the --hide-below estimate and lines that read 0% are left out, counted.
    shown, hidden = worth.split_nodes(shown)
    for c in shown:
        if compact and _summary_leaves_out(c):
            continue  # the summary view keeps causes, lines and suggestions; -k ID shows all
        sub = tree.add(_label(c, sev))
        if depth < 5 and not (compact and _summary_keeps_closed(c)):
            _add(sub, c, fold, depth + 1, compact, worth, sev)
    _add_left_out(tree, folded, hidden, fold, worth)


def _add_left_out(tree: Tree, folded: list[Node], hidden: list[Node], fold: float, worth: Worth) -> None:
    """Count the children folded below the fold share and those not worth reading."""
    if folded:
        tree.add(f"[dim]({len(folded)} below {fold * 100:.0f}% folded)[/dim]")
    if hidden:
        phrase = worth.hidden_phrase(sum(c.kind == "suggestion" for c in hidden), sum(c.kind == "line" for c in hidden))
        tree.add(f"[dim]({phrase})[/dim]")


def _summary_leaves_out(c: Node) -> bool:
    """Metrics, missing metrics and groups without a value are left out of the summary view."""
    if c.kind in ("metric", "missing"):
        return True
    return c.kind == "group" and c.value is None and c.attrs.get("group") != "speed_of_light"


def _summary_keeps_closed(c: Node) -> bool:
    """The summary view leaves out a suggestion's lines (its finding's block below lists
    them) and the speed-of-light group's units."""
    return c.attrs.get("group") == "speed_of_light" or c.kind == "suggestion"


#: Summary rows shown (JSON and HTML list all).
SUMMARY_ROWS = 15
#: Kernel names in the summary table get the room its other columns leave, up to NAME_MOST
#: characters; the table gives way to one block of lines per kernel when less than NAME_LEAST
#: (or the longest short name, when shorter) would be left.
NAME_MOST, NAME_LEAST = 60, 24


def _sol_text(r: dict) -> str:
    return f"{r['grade']} ({r['limiter']} {pct(r['limiter_pct'])}%)" if r["grade"] else "n/a"


def _app_severity(f: dict) -> str:
    """A summary or priority finding's severity in the whole run (its own in older saves)."""
    return f.get("application_severity") or f["severity"]


def _top_finding(r: dict, worth: Worth) -> dict | None:
    """A summary row's finding that saves most time, of those worth reading (None: none)."""
    return next((f for f in r["findings"] if worth.finding(f["estimated_speedup"])), None)


def _summary_cells(r: dict, worth: Worth) -> dict[str, str]:
    """A summary row's cells as text, by column (the kernel name apart)."""
    top = _top_finding(r, worth)
    return {
        "id": str(r["kernel_id"]),
        "launches": str(r["launches"]),
        "total µs": microseconds(r["total_ns"]),
        "share": "n/a" if r["time_share"] is None else f"{100 * r['time_share']:.1f}%",
        "speed of light": _sol_text(r),
        "top finding": top["id"] if top else "-",
        "saves µs": microseconds(top["time_saved_ns"]) if top else "-",
    }


def render_summary(analysis, options, console: Console) -> None:
    """The application view: kernel groups by GPU time, then the fixes that save most time.

    Every column is shown at any width, and numbers, ids and grades are never cut or split:
    kernel names are shortened to the room the other columns leave (``short_names``: different
    names stay different; the ids are in the table and the trees below give the full names).
    Where less than NAME_LEAST characters would be left for names, each kernel is a block of
    lines instead of a table row."""
    rows = analysis.summary()
    worth = worth_of(options)
    names = [r["name"] for r in rows]
    short = _summary_rows(rows, names, worth, console)
    dominant = analysis.dominant()
    if dominant is not None:
        _look_first(dominant, console)
    first = [p for p in analysis.priorities() if worth.finding(p["estimated_speedup"])][:5]
    if first:
        # A line each: names as long as half the width allows (at least the table's).
        short = short_names(names, max(min(NAME_MOST, console.width // 2), max(map(len, short.values()))))
        _fix_first(first, short, _finding_notes(analysis), console)
    console.print()


def _summary_rows(rows: list[dict], names: list[str], worth, console: Console) -> dict:
    """The summary's rows as a table, or as blocks of lines where names would not fit or rich
    would crop the table; the short names used."""
    shown = rows[:SUMMARY_ROWS]
    title = f"Kernels by GPU time ({sum(r['launches'] for r in rows)} launches, {len(rows)} kernels)"
    cells = [_summary_cells(r, worth) for r in shown]
    room = _name_room(console, cells)
    if _names_fit(names, room):
        short = short_names(names, min(NAME_MOST, room))
        tab = _summary_table(shown, cells, title, short, len(rows), worth)
        if table_fits(console, tab):
            console.print(tab)
            return short
    # Too narrow for names, or a table rich would crop: the blocks, names as wide as they allow.
    short = short_names(names, max(NAME_LEAST, min(NAME_MOST, console.width - _block_indent(cells))))
    _summary_blocks(shown, cells, title, short, len(rows), console, worth)
    return short


def _name_room(console: Console, cells: list[dict[str, str]]) -> int:
    """The width the summary table's other columns leave its kernel names."""
    natural = {c: max([len(c)] + [len(x[c]) for x in cells]) for c in cells[0]} if cells else {}
    # A rich table with a box: 3 characters a column (padding and rule) and 1 more.
    return console.width - (3 * (len(natural) + 1) + 1) - sum(natural.values())


def _names_fit(names: list[str], room: int) -> bool:
    """Whether ``room`` holds the kernel names: NAME_LEAST characters (or the longest short
    name, when shorter), and the column's header."""
    least = min(NAME_LEAST, max((len(n) for n in short_names(names, NAME_LEAST).values()), default=0))
    return room >= max(least, len("kernel"))


def _summary_table(
    shown: list[dict], cells: list[dict[str, str]], title: str, short: dict, total: int, worth: Worth
) -> Table:
    tab = Table(title=title, expand=False)
    for col in ("id", "kernel", "launches", "total µs", "share", "speed of light", "top finding", "saves µs"):
        right = col in ("launches", "total µs", "share", "saves µs")
        tab.add_column(col, no_wrap=True, justify="right" if right else "left")
    for r, x in zip(shown, cells):
        top = _top_finding(r, worth)
        tab.add_row(
            x["id"],
            escape(short[r["name"]]),
            x["launches"],
            x["total µs"],
            x["share"],
            x["speed of light"],
            f"[{SEV_STYLE[_app_severity(top)]}]{top['id']}[/]" if top else "-",
            x["saves µs"],
        )
    if total > SUMMARY_ROWS:
        tab.caption = f"{total - SUMMARY_ROWS} more kernels below (JSON and HTML list all)"
    return tab


def _fix_first(first: list[dict], short: dict, notes: dict[tuple[int, str], list[str]], console: Console) -> None:
    """The fixes that save most time, a line each, their notes under them."""
    console.print("[bold]Fix first[/bold] (time saved in the profiled run: µs, share of the GPU time, severity):")
    for i, f in enumerate(first, 1):
        # Wrapped between words under its own text (a hanging indent past the number).
        _hanging(console, f"  {i}. ", _fix_text(f, short))
        # The finding's notes under it (a header line is inlined code, why the estimate is
        # lower than alone), wrapped to the width.
        for n in notes.get((f["kernel_id"], f["id"]), ()):
            _indented(console, f"[dim]note: {escape(n)}[/dim]", len(f"  {i}. "))


def _look_first(d: dict, console: Console) -> None:
    """The kernel that holds most of the time, named before the fixes: why, and what to collect."""
    collect = f"; collect: {d['collect']}" if d.get("collect") else ""
    _hanging(
        console,
        "Look first at ",
        f"{escape(short_name(d['name']))} (id {d['kernel_id']}): {escape(d['why'])}{escape(collect)}",
    )


def _fix_text(f: dict, short: dict) -> str:
    where = f" at {escape(f['where'])}" if f.get("where") else ""
    sev = _app_severity(f)
    share = f.get("saved_share")
    weight = f"{100 * share:.1f}%, " if isinstance(share, (int, float)) else ""
    return (
        f"{escape(f['id'])} in {escape(short.get(f['name']) or short_name(f['name']))} (id {f['kernel_id']}){where}: "
        f"{us(f['time_saved_ns'])} ({weight}[{SEV_STYLE[sev]}]{sev}[/]), "
        f"est. {'≥' if f.get('estimate_capped') else ''}{speedup(f['estimated_speedup'])}"
    )


def _finding_notes(analysis) -> dict[tuple[int, str], list[str]]:
    """Each finding's notes by (kernel id, finding id), as the summary's rows name them."""
    return {(ka.kernel.id, f.id): list(f.notes) for ka in analysis.kernels for f in ka.findings}


def _block_indent(cells: list[dict]) -> int:
    return max((len(x["id"]) for x in cells), default=1) + 2


def _summary_blocks(
    shown: list[dict], cells: list[dict], title: str, short: dict, total: int, console, worth: Worth
) -> None:
    """The summary on a narrow terminal: per kernel its id and name on one line, then its
    numbers, grade and top finding on lines of their own (wrapped between words)."""
    indent = _block_indent(cells)
    console.print(f"[bold]{title}[/bold]")
    for r, x in zip(shown, cells):
        top = _top_finding(r, worth)
        console.print(f"{x['id']:<{indent}}[bold]{escape(short[r['name']])}[/bold]", overflow="fold")
        finding = (
            f"top finding: [{SEV_STYLE[_app_severity(top)]}]{top['id']}[/], saves {x['saves µs']} µs"
            if top
            else "top finding: none"
        )
        launches = f"{x['launches']} launch{'es' if r['launches'] != 1 else ''}"
        for line in (
            f"{launches}, {x['total µs']} µs total, {x['share']} of GPU time",
            f"speed of light: {x['speed of light']}",
            finding,
        ):
            _indented(console, line, indent)
    if total > len(shown):
        console.print(f"[dim]{total - len(shown)} more kernels below (JSON and HTML list all)[/dim]")


def busyness_text(ka) -> str:
    """The header's detail line: how busy the kernel keeps the GPU (bound, stall cycles, IPC,
    the busiest unit as the speed of light grades it). A detail under the verdict, never a
    verdict: a unit kept busy by waste reads busy. Each value the report lacks reads
    "not measured"."""
    bound = f"{ka.bound} bound" if ka.bound else f"bound {NOT_MEASURED}"
    stalls = f"{ka.stall_cycle_pct:.1f}%" if ka.stall_cycle_pct is not None else NOT_MEASURED
    return f"{bound} · stall cycles {stalls} · {_ipc_text(ka)} · {_busiest_text(ka)}"


def _ipc_text(ka) -> str:
    """'IPC 1.12 of 4', or 'IPC not measured'."""
    if ka.achieved_ipc is None:
        return f"IPC {NOT_MEASURED}"
    ideal = ka.tree.attrs.get("ideal_ipc")
    return f"IPC {ka.achieved_ipc:.2f}" + (f" of {ideal:g}" if isinstance(ideal, (int, float)) else "")


def _busiest_text(ka) -> str:
    """The busiest unit as the speed of light grades it (as the tree's speed-of-light node and
    the HTML say it), or 'busiest unit: not measured'."""
    a, sol = ka.tree.attrs, ka.sol
    if sol is not None and sol.limiter is not None:
        unit, unit_pct = sol.labels.get(sol.limiter, sol.limiter), sol.limiter_pct
    else:
        unit, unit_pct = a.get("top_unit_label"), a.get("top_unit_pct")
    if not unit:
        return f"busiest unit: {NOT_MEASURED}"
    busiest = f"busiest unit: {unit}" + (f" at {pct(unit_pct)}% of peak" if unit_pct is not None else "")
    return busiest + (f" (speed of light: {a['sol_grade']})" if a.get("sol_grade") else "")


def render_console(analysis, options, console: Console) -> None:
    worth = worth_of(options)
    compact = len(analysis.kernels) > 1
    app = application_severities(analysis.summary()) if compact else {}
    shown = analysis.kernels
    if compact:
        render_summary(analysis, options, console)
        shown = _top_kernels(analysis, options.top_kernels, console)
    # Notes over every kernel of the analysis: one that several carry is said once, after the
    # kernels; a kernel's own notes follow its findings, or, for a kernel whose tree is not
    # shown, come in a block of their own at the end (JSON keeps every kernel's notes whole).
    notes = split_notes(analysis.kernels)
    own_of = {id(ka): own for ka, own in zip(analysis.kernels, notes.own)}
    for ka in shown:
        # In a report of several kernels a finding's severity is that of the time its fix saves
        # in the whole run (groups.application_severity); JSON keeps the kernel's own.
        sev = _kernel_severities(app, ka.kernel.id) if compact else {}
        _render_kernel(ka, own_of[id(ka)], options, console, worth, sev, compact)
    _shared_notes(notes.shared, len(analysis.kernels), console)
    shown_ids = {id(ka) for ka in shown}
    _unshown_notes([(ka.kernel.id, own_of[id(ka)]) for ka in analysis.kernels if id(ka) not in shown_ids], console)


def _kernel_severities(app: dict[tuple[int, str], str], kid: int) -> dict[str, str]:
    """A kernel's findings' severities in the whole run, by finding id."""
    return {fid: s for (k, fid), s in app.items() if k == kid}


def _top_kernels(analysis, n: int, console: Console) -> list:
    """The kernels whose trees are shown: the ``n`` with the most GPU time (--top), all with 0."""
    if not n or len(analysis.kernels) <= n:
        return analysis.kernels
    order = [r["kernel_id"] for r in analysis.summary()][:n]
    by_id = {ka.kernel.id: ka for ka in analysis.kernels}
    console.print(
        f"[dim]Trees of the {n} kernels with the most GPU time follow (--top N for more, "
        "--top 0 for all; -k ID for one).[/dim]\n"
    )
    return [by_id[i] for i in order]


def _kernel_head(ka) -> str:
    """A kernel's panel: its name and id, verdict, device, duration and launch shape, time
    ledger and how busy it keeps the GPU."""
    k = ka.kernel
    dur = us(k.duration_ns, ".1f", none=f"duration {NOT_MEASURED}")
    group = f"  [{k.launch_count} launches, mean shown]" if k.has("drgpu__group_launches") else ""
    shape = f"grid {tuple(k.grid)} block {tuple(k.block)}" if k.shape_measured else f"grid and block {NOT_MEASURED}"
    head = (
        f"[bold]{escape(k.name)}[/bold]  (id {k.id}){group}\n"
        f"[bold]verdict:[/bold] {escape(ka.verdict)}\n"
        f"{escape(k.device or 'unknown device')} cc {escape(k.compute_capability or '?')}  "
        f"{dur}  {shape}"
    )
    if not k.measured:
        return head  # its verdict says nothing is measured; no line of values follows
    if ka.ledger is not None:
        head += f"\ntime: {escape(ka.ledger.text())}"
    return head + f"\n[dim]{escape(busyness_text(ka))}[/dim]"


def _render_kernel(
    ka, own_notes: list[str], options, console: Console, worth: Worth, sev: dict[str, str], compact: bool
) -> None:
    """A kernel's panel, tree, findings and own notes."""
    console.print(Panel(_kernel_head(ka), expand=False))
    if not ka.kernel.measured:  # nothing to draw: the note says what to do
        for n in own_notes:
            console.print(f"[dim]note: {escape(n)}[/dim]")
        console.print()
        return
    t = Tree(_label(ka.tree))
    # The summary view of several kernels keeps causes and suggestions; a kernel without
    # stall data has none, so it shows whole what its report holds (occupancy, launch alone).
    _add(t, ka.tree, options.fold_share, 0, compact and ka.stall_cycle_pct is not None, worth, sev)
    console.print(t)
    # Findings under the --hide-below estimate (a larger fix's time, or too little to
    # matter) and their lines at 0% are left out, named and counted; JSON keeps them whole.
    shown_findings, hidden = worth.split_findings(ka.findings)
    lines_hidden = (
        _findings(shown_findings[: options.top_findings], console, worth, sev, blocks=compact) if shown_findings else 0
    )
    left = hidden_findings_text(worth, hidden, lines_hidden)
    if left:
        console.print(f"[dim]{escape(left)}[/dim]")
    if not ka.findings:
        console.print("[green]No findings above the thresholds.[/green]")
    for n in own_notes:
        console.print(f"[dim]note: {escape(n)}[/dim]")
    console.print()


def _shared_notes(shared: list[tuple[str, list[int]]], kernels: int, console: Console) -> None:
    """A note several kernels carry word for word (what the report lacks, how slicing ran),
    said once after the kernels; JSON keeps it in each kernel's notes."""
    if not shared:
        return
    console.print("[bold]Notes[/bold] (each on several kernels):")
    for n, ids in shared:
        where = kernels_phrase(ids, kernels, every=f"all {kernels} kernels")
        console.print(f"[dim]note ({where}): {escape(n)}[/dim]")
    console.print()


def _unshown_notes(kernels: list[tuple[int, list[str]]], console: Console) -> None:
    """The own notes of the kernels whose trees are not shown (--top), each with its id."""
    if not any(own for _, own in kernels):
        return
    console.print("[bold]Notes[/bold] on kernels whose trees are not shown (-k ID shows one):")
    for kid, own in kernels:
        for n in own:
            console.print(f"[dim]note (id {kid}): {escape(n)}[/dim]")
    console.print()


#: Least width of the findings table's finding and where columns: below it, each finding is a
#: block of lines.
FINDING_LEAST = 20


def _where(f, worth: Worth) -> tuple[list[str], int]:
    """A finding's first three source lines worth reading, and how many of those three read 0%."""
    shown, hidden = worth.split_locations(f.locations[:3])
    return [
        f"{escape(str(loc.get('file') or 'SASS').rsplit('/', 1)[-1])}:{loc.get('line') or hex(loc.get('pc_offset', 0))} "
        f"({loc['share'] * 100:.0f}%) {escape((loc.get('code') or loc.get('sass') or '')[:50])}"
        for loc in shown
    ], len(hidden)


def _wheres(shown: list, worth: Worth) -> tuple[list[list[str]], int]:
    """Each finding's source lines worth reading, and how many at 0% were left out in all."""
    placed = [_where(f, worth) for f in shown]
    return [w for w, _ in placed], sum(n for _, n in placed)


def _findings(
    shown: list, console: Console, worth: Worth, sev: dict[str, str] | None = None, blocks: bool = False
) -> int:
    """A kernel's findings: a table, or where its finding and where columns would be narrower
    than their longest word (an id, a file:line) or FINDING_LEAST, one block of lines each, so
    that ids and numbers are never split. ``sev``: the severities to show by finding id (in a
    report of several kernels, in the whole run). ``blocks``: blocks of lines at any width (a
    report of several kernels: the advice at the full width keeps its many sections short).
    Returns how many source lines at 0% it left out."""
    severity = {f.id: (sev or {}).get(f.id, f.severity) for f in shown}
    title = "Findings (best first; severity in the whole run)" if sev else "Findings (best first)"
    wheres, lines_hidden = _wheres(shown, worth)
    ids = max(FINDING_LEAST, *(len(f.id) for f in shown))
    places = max(FINDING_LEAST, _place_width(wheres))
    # A boxed table of 5 columns: 3 characters a column (padding and rule) and 1 more.
    tab = None
    if not blocks and console.width >= 16 + _fixed_width(shown, severity) + ids + places:
        tab = _findings_table(shown, wheres, severity, title, ids, places)
    # A table rich cannot fit (a long word in a note or a line of code) would be cropped at the
    # width, its border and the ends of its cells lost: the blocks below instead.
    if tab is not None and table_fits(console, tab):
        console.print(tab)
    else:
        _findings_blocks(shown, wheres, severity, title, console)
    return lines_hidden


def _fixed_width(shown: list, severity: dict[str, str]) -> int:
    """The width of the findings table's columns that never wrap: #, severity, est. speedup."""
    return (
        len(str(len(shown)))
        + max(len("severity"), *(len(severity[f.id]) for f in shown))
        + max(len("est. speedup"), *(len(f.speedup_text()) for f in shown))
    )


def _place_width(wheres: list[list[str]]) -> int:
    """The longest file:line of the findings' locations (1 when there is none)."""
    return max((len(w.split(" ", 1)[0]) for ws in wheres for w in ws), default=1)


def _findings_table(
    shown: list, wheres: list[list[str]], severity: dict[str, str], title: str, id_least: int, where_least: int
) -> Table:
    """The findings as a boxed table of 5 columns (its finding and where columns at least
    ``id_least`` and ``where_least`` wide, so ids and file:line are never split)."""
    tab = Table(title=title, show_lines=True, expand=False)
    for col in ("#", "finding", "severity", "est. speedup", "where"):
        least = {"finding": id_least, "where": where_least}.get(col)
        tab.add_column(col, no_wrap=col in ("#", "severity", "est. speedup"), overflow="fold", min_width=least)
    for i, (f, where) in enumerate(zip(shown, wheres), 1):
        tab.add_row(
            str(i),
            f"[bold]{f.id}[/bold]\n{escape(f.title)}\n[dim]{escape(f.advice)}[/dim]"
            + "".join(f"\n[dim]note: {escape(n)}[/dim]" for n in f.notes),
            f"[{SEV_STYLE[severity[f.id]]}]{severity[f.id]}[/]",
            f.speedup_text(),
            "\n".join(where) or "-",
        )
    return tab


def _findings_blocks(
    shown: list, wheres: list[list[str]], severity: dict[str, str], title: str, console: Console
) -> None:
    """The findings as one block of lines each: id, severity and estimate, then the title,
    advice, locations and notes indented."""
    console.print(f"[bold]Findings[/bold] {title.removeprefix('Findings ')}")
    indent = len(str(len(shown))) + 2
    for i, (f, where) in enumerate(zip(shown, wheres), 1):
        console.print(
            f"{f'{i}.':<{indent}}[bold]{f.id}[/bold]  [{SEV_STYLE[severity[f.id]]}]{severity[f.id]}[/]  est. {f.speedup_text()}"
        )
        for line in (escape(f.title), f"[dim]{escape(f.advice)}[/dim]"):
            _indented(console, line, indent)
        for w in where:
            # A file name too long for the indented line starts at the margin: its line number stays whole.
            _indented(console, w, indent if len(w.split(" ", 1)[0]) <= console.width - indent else 0)
        for n in f.notes:
            _indented(console, f"[dim]note: {escape(n)}[/dim]", indent)


def table_fits(console: Console, table: Table) -> bool:
    """Whether ``table`` renders within the console's width (rich renders a table whose
    columns cannot shrink enough wider than that, and printing crops it)."""
    lines = Segment.split_lines(console.render(table, console.options))
    return all(Segment.get_line_length(line) <= console.width for line in lines)


def _hanging(console: Console, lead: str, markup: str) -> None:
    """``lead`` then ``markup`` wrapped between words, its further lines under its first."""
    lines = Text.from_markup(markup).wrap(console, max(1, console.width - len(lead)))
    for j, line in enumerate(lines):
        line.rstrip()
        console.print(Text(lead if j == 0 else " " * len(lead)) + line, soft_wrap=True)


def _indented(console: Console, markup: str, indent: int) -> None:
    """``markup`` wrapped between words to the width left after ``indent`` spaces, each line
    indented (no padding after the text)."""
    for line in Text.from_markup(markup).wrap(console, max(1, console.width - indent)):
        line.rstrip()
        console.print(Text(" " * indent) + line, soft_wrap=True)


@register("text", (".txt",))
def render_text(analysis, options) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=options.width, color_system=None, force_terminal=False, highlight=False)
    render_console(analysis, options, console)
    return buf.getvalue()
