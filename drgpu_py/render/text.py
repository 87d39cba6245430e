"""Terminal renderer (rich): per kernel a header, the stall tree (folded below the fold
share) and the top findings with their advice and source lines, then the notes several kernels
share, once (render/quiet.py: what the readable formats leave out or say once). Works without
a terminal (plain text into a string) for files and pipes."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.panel import Panel
from rich.table import Table
from rich.tree import Tree

from ..analysis.ledger import part_label
from ..analysis.tree import Node
from ..io import visible
from ..profile import short_name
from . import format_value, register
from .quiet import kernels_phrase, model_error_text, split_notes, split_shown
from .units import microseconds, us

SEV_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def escape(text) -> str:
    """Text for rich: markup escaped, control and bidi characters made visible
    (drgpu_py.io.visible: ESC starts terminal sequences)."""
    return _markup_escape(visible(text))


def _label(n: Node) -> str:
    val = format_value(n)
    name = escape(str(n.name))
    if n.kind == "missing":
        if n.attrs.get("unavailable_on"):
            return f"[dim]{name}: not available on {escape(str(n.attrs['unavailable_on']))}[/dim]"
        return f"[dim]{name}: not collected (add section {escape(str(n.attrs.get('section', '?')))})[/dim]"
    if n.kind == "line":
        code = n.attrs.get("code") or n.attrs.get("sass") or ""
        return f"[cyan]{name}[/cyan] {val}  [dim]{escape(code[:70])}[/dim]"
    if n.kind == "suggestion":
        sev = n.attrs.get("severity", "low")
        if n.attrs.get("estimate_capped"):
            val = f"≥{val} (capped)"
        return f"[{SEV_STYLE[sev]}]→ {name} (est. {val} speedup, {sev})[/{SEV_STYLE[sev]}]"
    style = "bold" if n.kind in ("root", "group") else ""
    mark = "★ " if n.attrs.get("highlight") else ""
    text = f"{mark}{name}" + (f": {val}" if val else "")
    text = f"[{style}]{text}[/{style}]" if style else text
    if n.attrs.get("group") == "model":
        # The measurement first; the model's prediction after it, dimmed, only with its error.
        measured, predicted = n.attrs.get("measured_cycles"), n.attrs.get("predicted_cycles")
        model = model_error_text(predicted, measured)
        if model is not None:
            text += f": measured {measured:,.0f} cycles [dim]({model})[/dim]"
    return text


def _add(tree: Tree, node: Node, fold: float, depth: int, compact: bool = False) -> None:
    shown, folded = split_shown(node, fold)
    for c in shown:
        if compact and (
            c.kind in ("metric", "missing")
            or (c.kind == "group" and c.value is None and c.attrs.get("group") != "speed_of_light")
        ):
            continue  # the summary view keeps causes, lines and suggestions; -k ID shows all
        sub = tree.add(_label(c))
        if depth < 5 and not (compact and c.attrs.get("group") == "speed_of_light"):
            _add(sub, c, fold, depth + 1, compact)
    if folded:
        tree.add(f"[dim]({len(folded)} below {fold * 100:.0f}% folded)[/dim]")


def _fmt(v, spec: str) -> str:
    return "n/a" if v is None else format(v, spec)


def render_summary(analysis, options, console: Console) -> None:
    """The application view: kernel groups by GPU time, then the fixes that save most time."""
    rows = analysis.summary()
    tab = Table(
        title=f"Kernels by GPU time ({sum(r['launches'] for r in rows)} launches, {len(rows)} kernels)", expand=False
    )
    numeric = ("id", "launches", "total µs", "share", "saves µs")
    for col in ("id", "kernel", "launches", "total µs", "share", "speed of light", "top finding", "saves µs"):
        # Numbers are never folded or cut: only the names and labels give way to a narrow width.
        tab.add_column(
            col,
            overflow="fold",
            min_width=30 if col == "kernel" else None,
            no_wrap=col in numeric,
            justify="right" if col in numeric[1:] else "left",
        )
    for r in rows[:15]:
        top = r["findings"][0] if r["findings"] else None
        sol = f"{r['grade']} ({r['limiter']} {r['limiter_pct']:.0f}%)" if r["grade"] else "n/a"
        tab.add_row(
            str(r["kernel_id"]),
            escape(short_name(r["name"], 40)),
            str(r["launches"]),
            microseconds(r["total_ns"]),
            "n/a" if r["time_share"] is None else f"{100 * r['time_share']:.1f}%",
            sol,
            f"[{SEV_STYLE[top['severity']]}]{top['id']}[/]" if top else "-",
            microseconds(top["time_saved_ns"]) if top else "-",
        )
    if len(rows) > 15:
        tab.caption = f"{len(rows) - 15} more kernels below (JSON and HTML list all)"
    console.print(tab)
    first = analysis.priorities(5)
    if first:
        console.print("[bold]Fix first[/bold] (time saved in the profiled run):")
        for i, f in enumerate(first, 1):
            where = f" at {escape(f['where'])}" if f.get("where") else ""
            console.print(
                f"  {i}. {escape(f['id'])} in {escape(short_name(f['name']))} (id {f['kernel_id']}){where}: "
                f"{us(f['time_saved_ns'])}, est. {'≥' if f.get('estimate_capped') else ''}{f['estimated_speedup']:.2f}x"
            )
    console.print()


def render_console(analysis, options, console: Console) -> None:
    shown = analysis.kernels
    compact = len(analysis.kernels) > 1
    if compact:
        render_summary(analysis, options, console)
        n = options.top_kernels
        if n and len(analysis.kernels) > n:
            order = [r["kernel_id"] for r in analysis.summary()][:n]
            by_id = {ka.kernel.id: ka for ka in analysis.kernels}
            shown = [by_id[i] for i in order]
            console.print(
                f"[dim]Trees of the {n} kernels with the most GPU time follow (--top N for more, "
                "--top 0 for all; -k ID for one kernel's whole tree).[/dim]\n"
            )
    notes = split_notes(shown)
    for ka, own_notes in zip(shown, notes.own):
        k = ka.kernel
        d = ka.to_dict()
        dur = us(k.duration_ns, ".1f", none="duration n/a")
        launches = ka.kernel.m("drgpu__group_launches")
        group = f"  [{int(launches)} launches, mean shown]" if launches == launches else ""
        head = (
            f"[bold]{escape(k.name)}[/bold]  (id {k.id}){group}\n{escape(k.device or 'unknown device')} cc {escape(k.compute_capability or '?')}  "
            f"{dur}  grid {tuple(k.grid)} block {tuple(k.block)}\n"
            f"bound: [bold]{ka.bound}[/bold]   stall cycles: {_fmt(d['stall_cycle_pct'], '.1f')}%   "
            f"IPC {_fmt(d['achieved_ipc'], '.2f')} of {ka.tree.attrs.get('ideal_ipc'):g}   busiest unit: {ka.tree.attrs.get('top_unit_label')} "
            f"{_fmt(ka.tree.attrs.get('top_unit_pct'), '.0f')}%"
        )
        if ka.tree.attrs.get("sol_grade"):
            a = ka.tree.attrs
            head += (
                f"\nspeed of light: [bold]{a['sol_grade']}[/bold] ({escape(str(a.get('sol_limiter_label')))} at "
                f"{_fmt(a.get('sol_pct'), '.0f')}% of peak)"
            )
        useful = ka.useful
        if useful is not None and useful.efficiency_pct is not None:
            head += (
                f"\nuseful work: [bold]{useful.grade}[/bold] ({useful.efficiency_pct:.0f}% of the time at peak, "
                f"{part_label(useful.limiter)})"
            )
        if ka.ledger is not None:
            head += f"\ntime: {escape(ka.ledger.text())}"
        console.print(Panel(head, expand=False))
        t = Tree(_label(ka.tree))
        _add(t, ka.tree, options.fold_share, 0, compact)
        console.print(t)
        if ka.findings:
            tab = Table(title="Findings (best first)", show_lines=True, expand=False)
            for col in ("#", "finding", "severity", "est. speedup", "where"):
                tab.add_column(col, no_wrap=col in ("#", "severity", "est. speedup"), overflow="fold")
            for i, f in enumerate(ka.findings[: options.top_findings], 1):
                where = (
                    "\n".join(
                        f"{escape(str(loc.get('file') or 'SASS').rsplit('/', 1)[-1])}:{loc.get('line') or hex(loc.get('pc_offset', 0))} "
                        f"({loc['share'] * 100:.0f}%) {escape((loc.get('code') or loc.get('sass') or '')[:50])}"
                        for loc in f.locations[:3]
                    )
                    or "-"
                )
                tab.add_row(
                    str(i),
                    f"[bold]{f.id}[/bold]\n{escape(f.title)}\n[dim]{escape(f.advice)}[/dim]",
                    f"[{SEV_STYLE[f.severity]}]{f.severity}[/]",
                    f.speedup_text(),
                    where,
                )
            console.print(tab)
        else:
            console.print("[green]No findings above the thresholds.[/green]")
        for n in own_notes:
            console.print(f"[dim]note: {escape(n)}[/dim]")
        console.print()
    _shared_notes(notes.shared, len(shown), console)


def _shared_notes(shared: list[tuple[str, list[int]]], kernels: int, console: Console) -> None:
    """A note several kernels carry word for word (what the report lacks, how slicing ran),
    said once after the kernels it is about; JSON keeps it in each kernel's notes."""
    if not shared:
        return
    console.print("[bold]Notes[/bold] (each on several kernels above):")
    for n, ids in shared:
        where = kernels_phrase(ids, kernels, every=f"all {kernels} kernels")
        console.print(f"[dim]note ({where}): {escape(n)}[/dim]")
    console.print()


@register("text", (".txt",))
def render_text(analysis, options) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=options.width, color_system=None, force_terminal=False, highlight=False)
    render_console(analysis, options, console)
    return buf.getvalue()
