"""Graphviz renderers: the analysis tree as a DOT graph (``dot``), and laid out by Graphviz's
``dot`` program as SVG (``svg``) or PNG (``png``).

Contract: ``build_graph(analysis, options, kernels=None) -> graphviz.Digraph``: one graph per
kernel, or a cluster per kernel when there are several. Every label passes through
``graphviz.escape`` and ``graphviz.nohtml``, so kernel names, quotes, braces and backslashes
reach the picture literally. Share nodes whose subtree total is below
``RenderOptions.fold_share`` are folded into one "N folded" node per parent. ``svg``/``png``
without the ``dot`` program raise :class:`ToolNotFoundError`; ``write_dot_fallback`` then
writes the ``.dot`` source beside the requested file.

The visual language: docs/rendering.md.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import graphviz

from ..analysis.figures import pct
from ..analysis.tree import Node
from ..errors import OutputError, ToolNotFoundError
from ..io import atomic_write
from . import RenderOptions, format_value, register  # format_value: html imports it from here
from .quiet import changes_nothing, split_shown
from .units import us

FONT = "Helvetica,Arial,sans-serif"
HIGHLIGHT = "#e8590c"
DOT_HINT = "install Graphviz (e.g. apt-get install graphviz, brew install graphviz) so that 'dot' is on PATH"

# kind -> node attributes; suggestions are green, memory-chain nodes amber, missing dashed.
STYLE = {
    "root": {
        "shape": "box",
        "style": "rounded,filled,bold",
        "fillcolor": "#1c2a3a",
        "fontcolor": "#ffffff",
        "color": "#1c2a3a",
        "fontsize": "13",
    },
    "group": {"shape": "box", "style": "rounded,filled", "fillcolor": "#d0ebff", "color": "#1971c2"},
    "reason": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e7f5ff", "color": "#74c0fc"},
    "metric": {"shape": "box", "style": "filled", "fillcolor": "#f8f9fa", "color": "#adb5bd", "fontsize": "10"},
    "chain": {"shape": "box", "style": "rounded,filled", "fillcolor": "#fff3bf", "color": "#f59f00"},
    "line": {"shape": "note", "style": "filled", "fillcolor": "#f1f3f5", "color": "#868e96", "fontsize": "10"},
    "suggestion": {"shape": "box", "style": "rounded,filled", "fillcolor": "#d3f9d8", "color": "#2b8a3e"},
    "missing": {
        "shape": "box",
        "style": "dashed",
        "fillcolor": "#ffffff",
        "color": "#adb5bd",
        "fontcolor": "#868e96",
        "fontsize": "10",
    },
    "folded": {"shape": "plaintext", "fontcolor": "#868e96", "fontsize": "9"},
}
SEVERITY_PEN = {"high": "2.5", "medium": "1.6", "low": "1"}
# Control characters (C0, DEL, C1) and bidi overrides in labels: a space (DOT labels are one line).
_CTRL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+")


# ---- helpers shared with the HTML renderer -------------------------------------------------
def is_chain(node: Node) -> bool:
    """A level of the memory latency chain (L1 hits -> L2 hits -> DRAM), or its head."""
    return "latency_cycles" in node.attrs or any("latency_cycles" in c.attrs for c in node.children)


def missing_text(node: Node) -> str:
    if node.attrs.get("unavailable_on"):
        return f"not available on {node.attrs['unavailable_on']}"
    if node.attrs.get("ncu_since"):
        return f"not in this report's ncu (re-profile with ncu >= {node.attrs['ncu_since']})"
    return f"not collected (section {node.attrs.get('section') or '?'})"


def dot_available() -> bool:
    return shutil.which("dot") is not None


# ---- graph ---------------------------------------------------------------------------------
def _clip(text: str, n: int) -> str:
    text = _CTRL.sub(" ", str(text)).strip()
    return text if len(text) <= n else text[: n - 1] + "…"


#: Characters of one label line: a kernel name of 200 KB (a template-heavy name, a hostile
#: report) made ``dot`` fail (exit 6, "Broken pipe"); the full name is in every other format.
LABEL_LINE_MAX = 500


def _label(*lines: str) -> str:
    """A plain-text label: each line escaped (backslashes, '<...>'), cut to
    ``LABEL_LINE_MAX`` characters, joined by DOT newlines."""
    cut = [ln if len(ln) <= LABEL_LINE_MAX else ln[: LABEL_LINE_MAX - 1] + "…" for ln in lines if ln]
    return graphviz.nohtml("\\n".join(graphviz.escape(_CTRL.sub(" ", ln)) for ln in cut))


def _root_label(n: Node, val: str) -> str:
    """The root's label: stall cycles, IPC, busiest unit, bound, grades and the time ledger."""
    a = n.attrs
    lines = [f"{n.name} {val}".strip()]
    if a.get("achieved_ipc") is not None:
        lines.append(
            f"IPC {a['achieved_ipc']:g} of {a.get('ideal_ipc', '?'):g}"
            if isinstance(a.get("ideal_ipc"), (int, float))
            else f"IPC {a['achieved_ipc']:g}"
        )
    # How busy a unit is: a detail (the verdict, in the graph's title, says the useful work);
    # with a speed of light, its node under the root says it, in the same words as the text.
    if not a.get("sol_grade") and a.get("top_unit"):
        lines.append(
            f"busiest unit: {a.get('top_unit_label') or a['top_unit']} {pct(a.get('top_unit_pct'), none='?')}%"
        )
    if a.get("bound"):
        lines.append(f"bound: {a['bound']}")
    if a.get("ledger"):
        lines.append(f"time: {a['ledger']}")
    return _label(*lines)


def _node_label(n: Node, kernel_name: str | None = None) -> str:
    val = format_value(n)
    a = n.attrs
    if n.kind == "root":
        return _root_label(n, val)
    if n.kind == "missing":
        return _label(_clip(n.name, 60), missing_text(n))
    if n.kind == "line":
        return _line_label(n, val)
    if n.kind == "suggestion":
        return _suggestion_label(n, val)
    if is_chain(n):
        return _label(f"{n.name} {val}".strip(), _chain_detail(a))
    if n.kind in ("group", "reason") and val:
        return _label(_clip(n.name, 60), val)
    return _label(f"{_clip(n.name, 60)}: {val}" if val else _clip(n.name, 60))


def _line_label(n: Node, val: str) -> str:
    """A source line: its place and share, then its code (or SASS)."""
    code = n.attrs.get("code") or n.attrs.get("sass") or ""
    return _label(f"{_clip(n.name, 50)}  {val}", _clip(code, 64))


def _suggestion_label(n: Node, val: str) -> str:
    a = n.attrs
    sev = a.get("severity", "low")
    if a.get("estimate_capped"):
        val = f"≥{val} (capped)"
    return _label(f"➜ {_clip(n.name, 60)}", f"{a.get('id', '')} · {sev} · est. {val} speedup")


def _chain_detail(a: dict) -> str:
    """A memory level's hit rate and latency, those known."""
    extra = []
    if a.get("hit_rate_pct") is not None:
        extra.append(f"hit rate {a['hit_rate_pct']:g}%")
    if a.get("latency_cycles") is not None:
        extra.append(f"~{a['latency_cycles']} cycles")
    return ", ".join(extra)


def _compact(n: Node) -> bool:
    """A plain container of leaf metrics (instruction mix, pipes, launch) is drawn as one
    box listing them, which keeps the picture about causes rather than counters."""
    if n.kind not in ("metric", "group") or (n.kind == "group" and n.value is not None) or is_chain(n):
        return False
    return bool(n.children) and all(c.kind in ("metric", "missing") and not c.children for c in n.children)


def _compact_label(n: Node) -> str:
    lines = [graphviz.escape(_clip(f"{n.name}: {format_value(n)}" if format_value(n) else n.name, 60)) + "\\n"]
    for c in n.children:
        if changes_nothing(c):
            continue
        text = (
            f"{c.name}: {missing_text(c)}"
            if c.kind == "missing"
            else (f"{c.name}: {format_value(c)}" if format_value(c) else c.name)
        )
        lines.append(graphviz.escape(_clip(text, 60)) + "\\l")
    return graphviz.nohtml("".join(lines))


def _add_tree(g: graphviz.Digraph, root: Node, prefix: str, fold_share: float, reverse: bool = False) -> None:
    counter = [0]

    def new_id() -> str:
        counter[0] += 1
        return f"{prefix}n{counter[0]}"

    def visit(n: Node, nid: str, depth: int) -> None:
        attrs = _node_attrs(n)
        if _compact(n):
            g.node(nid, _compact_label(n), **attrs)
            return
        g.node(nid, _node_label(n), **attrs)
        shown, folded = split_shown(n, fold_share)
        for c in reversed(shown) if reverse else shown:
            cid = new_id()
            g.edge(nid, cid, **_edge_attrs(n, c))
            visit(c, cid, depth + 1)
        if folded:
            fid = new_id()
            g.node(fid, _label(f"{len(folded)} folded (each below {fold_share * 100:g}%)"), **STYLE["folded"])
            g.edge(nid, fid, style="dotted", color="#adb5bd", arrowhead="none")

    visit(root, new_id(), 0)


def _node_attrs(n: Node) -> dict[str, str]:
    """A node's box: its kind's style, a suggestion's pen by severity, the highlighted path,
    a line's SASS as its tooltip."""
    kind = "chain" if is_chain(n) and n.kind != "missing" else n.kind
    attrs = dict(STYLE.get(kind, STYLE["metric"]))
    if n.kind == "suggestion":
        attrs["penwidth"] = SEVERITY_PEN.get(n.attrs.get("severity", "low"), "1")
    if n.attrs.get("highlight"):
        attrs.update(color=HIGHLIGHT, penwidth="3")
    if n.kind == "line" and n.attrs.get("code"):
        # Escaped as labels are: a SASS text ending in a backslash would end the DOT string.
        attrs["tooltip"] = graphviz.escape(_clip(n.attrs.get("sass") or "", 200))
    return attrs


def _edge_attrs(n: Node, c: Node) -> dict[str, str]:
    """The edge to a child: the highlighted path, a memory level's misses, a pale line to leaves."""
    if n.attrs.get("highlight") and c.attrs.get("highlight"):
        return {"color": HIGHLIGHT, "penwidth": "3"}
    if is_chain(n) and is_chain(c):
        return {"label": " misses", "fontsize": "9", "fontcolor": "#f08c00", "color": "#f59f00"}
    if c.kind in ("metric", "missing", "line", "folded"):
        return {"color": "#adb5bd"}
    return {}


def kernel_title(ka) -> str:
    k = ka.kernel
    dur = k.duration_ns
    dur_s = us(dur, ".1f", none="duration n/a") if isinstance(dur, (int, float)) else "duration n/a"
    return f"{k.name}  (id {k.id}, {dur_s})"


def build_graph(analysis, options: RenderOptions | None = None, kernels=None) -> graphviz.Digraph:
    """The analysis trees as one Digraph: the single kernel's tree, or a cluster per kernel."""
    options = options or RenderOptions()
    kernels = list(analysis.kernels if kernels is None else kernels)
    g = graphviz.Digraph(
        "drgpu",
        graph_attr={
            "rankdir": "LR",
            "nodesep": "0.12",
            "ranksep": "0.35",
            "fontname": FONT,
            "fontsize": "14",
            "labelloc": "t",
            "labeljust": "l",
            "bgcolor": "white",
            "pad": "0.2",
            "ordering": "out",
        },
        node_attr={"fontname": FONT, "fontsize": "11", "margin": "0.12,0.05"},
        edge_attr={"color": "#495057", "arrowsize": "0.6", "fontname": FONT},
    )
    if len(kernels) == 1:
        g.attr(label=_label(kernel_title(kernels[0]), f"verdict: {kernels[0].verdict}"))
        _add_tree(g, kernels[0].tree, "k0", options.fold_share)
        return g
    # Under rankdir=LR Graphviz stacks cluster contents bottom-up, so kernels and children are
    # emitted in reverse to read top-down as in the single-kernel picture.
    for i, ka in reversed(list(enumerate(kernels))):
        with g.subgraph(name=f"cluster_k{i}") as sub:
            sub.attr(label=_label(kernel_title(ka), f"verdict: {ka.verdict}"), style="rounded", color="#ced4da")
            _add_tree(sub, ka.tree, f"k{i}", options.fold_share, reverse=True)
    return g


def _pipe(graph: graphviz.Digraph, fmt: str) -> bytes:
    if not dot_available():
        raise ToolNotFoundError(f"Graphviz 'dot' is needed to render {fmt.upper()}", hint=DOT_HINT)
    try:
        return graph.pipe(format=fmt)
    except graphviz.ExecutableNotFound as e:
        raise ToolNotFoundError(f"Graphviz 'dot' is needed to render {fmt.upper()}", hint=DOT_HINT) from e
    except (graphviz.CalledProcessError, subprocess.SubprocessError) as e:
        raise OutputError(f"Graphviz 'dot' failed to lay out the tree: {e}") from e


def svg_for(analysis, options: RenderOptions | None = None, kernels=None) -> str:
    """The laid-out SVG text (requires ``dot``)."""
    return _pipe(build_graph(analysis, options, kernels), "svg").decode("utf-8")


@register("dot", (".dot", ".gv"))
def render_dot(analysis, options) -> str:
    return build_graph(analysis, options).source


@register("svg", (".svg",))
def render_svg(analysis, options) -> str:
    return svg_for(analysis, options)


@register("png", (".png",), binary=True)
def render_png(analysis, options) -> bytes:
    return _pipe(build_graph(analysis, options), "png")


def write_dot_fallback(
    analysis, output: str | Path, fmt: str, force: bool = False, options: RenderOptions | None = None
) -> Path:
    """Write the DOT source beside ``output`` (``X.svg`` -> ``X.dot``) when ``dot`` is
    missing, and return its path; the caller tells the user how to lay it out."""
    out = Path(output)
    dot_path = out.with_suffix(".dot") if out.suffix.lower() != ".dot" else out.with_name(out.name + ".dot")
    return atomic_write(dot_path, build_graph(analysis, options).source, force=force)
