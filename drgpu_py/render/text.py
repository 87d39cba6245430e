"""Terminal renderer (rich): per kernel a header, the stall tree (folded below the fold
share) and the top findings with their advice and source lines. Works without a terminal
(plain text into a string) for files and pipes."""
from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.tree import Tree

from ..analysis.tree import Node, subtree_total
from . import register

SEV_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def _label(n: Node) -> str:
    val = "" if n.value is None else (f"{n.value:.1f}{n.unit}" if n.unit in ("%", "x") else f"{n.value:g} {n.unit}".strip())
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
        return f"[{SEV_STYLE[sev]}]→ {name} (est. {val} speedup, {sev})[/{SEV_STYLE[sev]}]"
    style = "bold" if n.kind in ("root", "group") else ""
    mark = "★ " if n.attrs.get("highlight") else ""
    text = f"{mark}{name}" + (f": {val}" if val else "")
    return f"[{style}]{text}[/{style}]" if style else text


def _add(tree: Tree, node: Node, fold: float, depth: int) -> None:
    hidden = 0
    for c in node.children:
        if c.unit == "%" and c.kind in ("group", "reason") and subtree_total(c) < fold * 100:
            hidden += 1
            continue
        sub = tree.add(_label(c))
        if depth < 5:
            _add(sub, c, fold, depth + 1)
    if hidden:
        tree.add(f"[dim]({hidden} below {fold * 100:.0f}% folded)[/dim]")


def _fmt(v, spec: str) -> str:
    return "n/a" if v is None else format(v, spec)


def render_console(analysis, options, console: Console) -> None:
    for ka in analysis.kernels:
        k = ka.kernel
        d = ka.to_dict()
        dur = f"{k.duration_ns / 1000:.1f} µs" if k.duration_ns == k.duration_ns else "duration n/a"
        head = (f"[bold]{escape(k.name)}[/bold]  (id {k.id})\n{escape(k.device or 'unknown device')} cc {escape(k.compute_capability or '?')}  "
                f"{dur}  grid {tuple(k.grid)} block {tuple(k.block)}\n"
                f"bound: [bold]{ka.bound}[/bold]   stall cycles: {_fmt(d['stall_cycle_pct'], '.1f')}%   "
                f"IPC {_fmt(d['achieved_ipc'], '.2f')} of {ka.tree.attrs.get('ideal_ipc'):g}   busiest unit: {ka.tree.attrs.get('top_unit')} "
                f"{_fmt(ka.tree.attrs.get('top_unit_pct'), '.0f')}%")
        if ka.tree.attrs.get("sol_grade"):
            a = ka.tree.attrs
            head += (f"\nspeed of light: [bold]{a['sol_grade']}[/bold] ({escape(str(a['sol_limiter']))} at "
                     f"{_fmt(a.get('sol_pct'), '.0f')}% of peak)")
        console.print(Panel(head, expand=False))
        t = Tree(_label(ka.tree))
        _add(t, ka.tree, options.fold_share, 0)
        console.print(t)
        if ka.findings:
            tab = Table(title="Findings (best first)", show_lines=True, expand=False)
            for col in ("#", "finding", "severity", "est. speedup", "where"):
                tab.add_column(col)
            for i, f in enumerate(ka.findings[: options.top_findings], 1):
                where = "\n".join(f"{escape(str(l.get('file') or 'SASS').rsplit('/', 1)[-1])}:{l.get('line') or hex(l.get('pc_offset', 0))} "
                                  f"({l['share'] * 100:.0f}%) {escape((l.get('code') or l.get('sass') or '')[:50])}"
                                  for l in f.locations[:3]) or "-"
                tab.add_row(str(i), f"[bold]{f.id}[/bold]\n{escape(f.title)}\n[dim]{escape(f.advice)}[/dim]",
                            f"[{SEV_STYLE[f.severity]}]{f.severity}[/]", f"{f.estimated_speedup:.2f}x", where)
            console.print(tab)
        else:
            console.print("[green]No findings above the thresholds.[/green]")
        for n in ka.notes:
            console.print(f"[dim]note: {escape(n)}[/dim]")
        console.print()


@register("text", (".txt",))
def render_text(analysis, options) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=options.width, color_system=None, force_terminal=False, highlight=False)
    render_console(analysis, options, console)
    return buf.getvalue()
