"""Graphviz rendering: every sample report as DOT (and SVG/PNG where Graphviz's ``dot`` is
installed), DrGPU's visual language on a literal tree (folding by subtree total, highlight
path, missing nodes, suggestion colour, memory chain), escaping of hostile labels through
the graphviz library's quoting, one cluster per kernel, and the CLI's fallback that writes
the ``.dot`` source when ``dot`` is missing."""

from __future__ import annotations

import html
import re
import shutil
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest
from typer.testing import CliRunner

from conftest import CASES, analysis_of, report_path, sample_param, slow
from drgpu_py.analysis import Analysis, KernelAnalysis
from drgpu_py.analysis.findings import Finding
from drgpu_py.analysis.tree import Node
from drgpu_py.errors import ToolNotFoundError
from drgpu_py.profile import KernelProfile, Profile
from drgpu_py.render import RenderOptions, infer_format, render
from drgpu_py.render import dot as dotmod

HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz 'dot' is not installed (apt-get install graphviz)")
SAMPLES = [(c, v) for c in CASES for v in ("bad", "fixed")]
HOSTILE = [
    '<script>alert("x")</script>',
    "say \"hi\" & 'bye'",
    "{braces} -> [edge] ;",
    "back\\slash \\n \\l \\N",
    'trailing quote"',
    "ends with backslash\\",
]


# ---- a tiny DOT lexer: every string closed, braces balanced; yields the decoded strings ----
def quoted_at(source: str, i: int) -> tuple[str, int]:
    """The DOT string starting at ``source[i] == '"'``: its text (with \\" undone) and end."""
    j, buf = i + 1, []
    while True:
        if j >= len(source):
            raise AssertionError(f"unterminated string at {i}")
        if source[j] == "\\" and j + 1 < len(source):
            buf.append(source[j : j + 2])
            j += 2
            continue
        if source[j] == '"':
            return "".join(buf).replace('\\"', '"'), j + 1
        buf.append(source[j])
        j += 1


def dot_strings(source: str) -> list[str]:
    out, depth, i = [], 0, 0
    while i < len(source):
        ch = source[i]
        if ch == '"':
            text, i = quoted_at(source, i)
            out.append(text)
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            assert depth >= 0, "unbalanced braces"
        i += 1
    assert depth == 0, "unbalanced braces"
    return out


def _split(s: str) -> list[str]:
    """A plain DOT label as the lines Graphviz shows: \\n, \\l, \\r end lines, \\X is X."""
    lines, cur, i = [], [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            if nxt in "nlr":
                lines.append("".join(cur))
                cur = []
            else:
                cur.append(nxt)
            i += 2
            continue
        cur.append(s[i])
        i += 1
    lines.append("".join(cur))
    return [ln for ln in lines if ln]


def svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


# ---- literal inputs ----------------------------------------------------------------------------
def literal_analysis(names=None, n_kernels: int = 1) -> Analysis:
    names = names or HOSTILE
    kernels = []
    for kid in range(n_kernels):
        root = Node(
            "Stall cycles",
            80.0,
            "%",
            "root",
            attrs={
                "achieved_ipc": 0.8,
                "ideal_ipc": 4.0,
                "top_unit": "DRAM",
                "top_unit_pct": 91.0,
                "bound": "memory",
                "highlight": True,
            },
        )
        mem = root.add(Node(names[0], 60.0, "%", "group", attrs={"group": "memory", "highlight": True}))
        reason = mem.add(Node(names[1], 55.0, "%", "reason", attrs={"reason": "long_scoreboard"}))
        reason.add(
            Node(
                "k.cu:7",
                100.0,
                "%",
                "line",
                attrs={
                    "file": "/src/k.cu",
                    "line": 7,
                    "share": 1.0,
                    "sass": "LDG.E R2, desc[UR4][R2.64]",
                    "code": names[2],
                },
            )
        )
        split = mem.add(Node("Memory latency split", 55.0, "%", "metric"))
        l1 = split.add(Node("L1 hits", 5.0, "%", "metric", attrs={"hit_rate_pct": 10.0, "latency_cycles": 33}))
        l2 = l1.add(Node("L2 hits", 10.0, "%", "metric", attrs={"hit_rate_pct": 20.0, "latency_cycles": 260}))
        l2.add(Node("DRAM", 40.0, "%", "metric", attrs={"latency_cycles": 600}))
        sug = mem.add(
            Node(
                names[3],
                2.5,
                "x",
                "suggestion",
                attrs={"id": "global-uncoalesced", "severity": "high", "advice": names[4], "highlight": True},
            )
        )
        sug.add(
            Node("k.cu:5", 100.0, "%", "line", attrs={"file": "/src/k.cu", "line": 5, "share": 1.0, "sass": names[5]})
        )
        small = root.add(Node("Tiny group", 1.0, "%", "group", attrs={"group": "constant"}))
        small.add(Node("IMC miss", 1.0, "%", "reason"))
        deep = root.add(Node("Small group, big grandchild", 1.0, "%", "group", attrs={"group": "instruction"}))
        deep.add(Node("Pipe utilisation", None, "", "metric")).add(Node("FMA", 30.0, "%", "metric"))
        root.add(Node("Warp stall reasons", None, "%", "missing", attrs={"section": "WarpStateStats"}))
        occ = root.add(Node("Occupancy", None, "", "group", attrs={"group": "occupancy"}))
        occ.add(
            Node("Limiter", None, "", "missing", attrs={"section": "Occupancy", "metric": "launch__occupancy_limit_*"})
        )
        occ.add(Node("Achieved occupancy", 50.0, "%", "metric"))
        k = KernelProfile(
            id=kid,
            name=f'void k<float, {kid}>(const T&) "q" {names[0]}',
            device="GPU <x>",
            grid=(4, 1, 1),
            block=(128, 1, 1),
            metrics={"gpu__time_duration.sum": 1000.0 * (kid + 1)},
        )
        f = Finding(
            id="global-uncoalesced",
            title=names[3],
            severity="high",
            stall_share=0.5,
            estimated_speedup=2.5,
            advice=names[4],
            locations=[
                {
                    "file": "/src/k.cu",
                    "line": 5,
                    "share": 1.0,
                    "sass": names[5],
                    "code": names[2],
                    "inlined_from": {"file": "/inc/h<T>.hpp", "line": 3},
                }
            ],
            group="memory",
        )
        kernels.append(
            KernelAnalysis(
                kernel=k,
                tree=root,
                findings=[f],
                bound="memory",
                stall_cycle_pct=80.0,
                achieved_ipc=0.8,
                top_unit="dram",
                top_unit_pct=91.0,
                slicing={},
                notes=[names[2]],
            )
        )
    return Analysis(profile=Profile(path="lit.ncu-rep", format="ncu-rep"), kernels=kernels)


def node_lines(source: str) -> dict[str, list[str]]:
    """node id -> label lines, from DOT source written by build_graph."""
    out = {}
    for m in re.finditer(r"^\s*(k\d+n\d+) \[label=", source, re.M):
        if source[m.end()] == '"':
            out[m.group(1)] = _split(quoted_at(source, m.end())[0])
        else:  # a bare identifier label
            out[m.group(1)] = [re.match(r"[^\s\]]+", source[m.end() :]).group(0)]
    return out


def _attrs(source: str, nid: str) -> str:
    m = re.search(rf"^\s*{nid} \[(.*)\]$", source, re.M)
    return m.group(1) if m else ""


# ---- samples ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case,variant", [sample_param(c, v) for c, v in SAMPLES])
def test_sample_dot(case, variant):
    a = analysis_of(case, variant)
    src = render(a, "dot", RenderOptions())
    strings = dot_strings(src)
    labels = "\n".join(line for s in strings for line in _split(s))
    ka = a.kernels[0]
    assert src.lstrip().startswith("digraph")
    assert "Stall cycles" in labels
    for f in ka.findings:
        assert f.id in labels, f.id
    # The kernel name (templates like `void relax<(bool)0>(...)`) reaches the label literally.
    assert ka.kernel.name in labels
    assert "<" not in ka.kernel.name or f"<{ka.kernel.name}" not in src  # never an HTML-like label
    if ka.findings and ka.findings[0].severity != "low":
        assert f'color="{dotmod.HIGHLIGHT}"' in src


#: PNG goes through the same DOT and the same Graphviz layout as SVG; only its rasterising
#: (about 0.3 s a tree) is extra, so a few samples check it, and every sample checks SVG.
PNG_SAMPLES = 4


@slow
@needs_dot
def test_samples_svg_png():
    png_for = set(SAMPLES[:: max(1, len(SAMPLES) // PNG_SAMPLES)][:PNG_SAMPLES])

    def one(cv):
        a = analysis_of(*cv)
        return cv, render(a, "svg", RenderOptions()), render(a, "png", RenderOptions()) if cv in png_for else None

    analyses = [(cv, analysis_of(*cv)) for cv in SAMPLES]  # analyze serially (cached), lay out in parallel
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, [cv for cv, _ in analyses]))
    for (case, variant), svg, png in results:
        ka = analysis_of(case, variant).kernels[0]
        texts = svg_texts(svg)
        joined = "\n".join(texts)
        assert any(t.startswith("Stall cycles") for t in texts), case
        for f in ka.findings:
            assert any(f.id in t for t in texts), (case, f.id)
        assert ka.kernel.name in joined
        if "<" in ka.kernel.name:
            assert html.escape(ka.kernel.name, quote=False) in svg
        if png is not None:
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert sum(1 for *_, png in results if png is not None) == PNG_SAMPLES


# ---- visual language on a literal tree ---------------------------------------------------------------
def test_fold_highlight_missing_chain_suggestion():
    a = literal_analysis(names=["Device memory", "Long scoreboard", "x = a[i];", "Uncoalesced access", "advice", "LDG"])
    src = render(a, "dot", RenderOptions(fold_share=0.02))
    nodes = node_lines(src)
    flat = {nid: " | ".join(lines) for nid, lines in nodes.items()}
    text = "\n".join(flat.values())
    # Folded by its own subtree total (1%); kept when a grandchild is large (30%).
    assert "Tiny group" not in text
    assert "Small group, big grandchild" in text
    assert re.search(r"1 folded \(each below 2%\)", text)
    assert "Warp stall reasons | not collected (section WarpStateStats)" in text
    # A box of leaf metrics (here Occupancy) lists them, missing ones included.
    assert "Occupancy | Limiter: not collected (section Occupancy) | Achieved occupancy: 50.0%" in text
    root = next(n for n, t in flat.items() if t.startswith("Stall cycles 80.0%"))
    assert "busiest unit: DRAM 91%" in flat[root] and "bound: memory" in flat[root]
    # Highlight: root -> group -> suggestion drawn thick and orange, other nodes not.
    hl = {n for n in flat if f'color="{dotmod.HIGHLIGHT}"' in _attrs(src, n)}
    assert {n for n in hl} == {
        n for n, t in flat.items() if t.startswith(("Stall cycles", "Device memory", "➜ Uncoalesced"))
    }
    hl_edges = re.findall(rf'^\s*(k0n\d+) -> (k0n\d+) \[color="{dotmod.HIGHLIGHT}"', src, re.M)
    assert len(hl_edges) == 2 and all(a in hl and b in hl for a, b in hl_edges)
    sug = next(n for n, t in flat.items() if t.startswith("➜"))
    assert "global-uncoalesced · high · est. 2.50x speedup" in flat[sug]
    assert dotmod.STYLE["suggestion"]["fillcolor"] in _attrs(src, sug)
    # The memory chain L1 -> L2 -> DRAM, drawn as misses.
    chain = [next(n for n, t in flat.items() if t.startswith(p)) for p in ("L1 hits", "L2 hits", "DRAM 40.0%")]
    for up, down in zip(chain, chain[1:]):
        assert re.search(rf"^\s*{up} -> {down} \[label=\" misses\"", src, re.M)
    assert "hit rate 10%, ~33 cycles" in flat[chain[0]]
    # Nothing folded at fold 0.
    assert "Tiny group" in " ".join(
        " ".join(v) for v in node_lines(render(a, "dot", RenderOptions(fold_share=0))).values()
    )


def test_hostile_labels_are_quoted_not_interpreted():
    a = literal_analysis()
    src = render(a, "dot", RenderOptions(fold_share=0))
    lines = [ln for s in dot_strings(src) for ln in _split(s)]
    for name in HOSTILE[:4]:
        assert any(name in ln for ln in lines), name
    # The SASS of a suggestion line is not drawn; the code text ending in a backslash is.
    assert not re.search(r"label=<", src), "no HTML-like label may be produced"
    if HAVE_DOT:
        texts = svg_texts(render(a, "svg", RenderOptions(fold_share=0)))
        joined = "\n".join(texts)
        for name in HOSTILE[:4]:
            assert name in joined, name
        assert 'void k<float, 0>(const T&) "q" ' + HOSTILE[0] in joined


def test_one_cluster_per_kernel():
    a = literal_analysis(names=["G", "R", "code", "S", "adv", "SASS"], n_kernels=3)
    src = render(a, "dot", RenderOptions())
    assert len(re.findall(r"subgraph cluster_k\d+ \{", src)) == 3
    labels = [ln for s in dot_strings(src) for ln in _split(s)]
    for i in range(3):
        assert any(ln.startswith(f"void k<float, {i}>") for ln in labels)
    if HAVE_DOT:
        assert len([t for t in svg_texts(render(a, "svg", RenderOptions())) if t.startswith("Stall cycles")]) == 3


def test_formats_registered():
    assert infer_format("x.dot") == "dot" and infer_format("x.gv") == "dot"
    assert infer_format("x.SVG") == "svg" and infer_format("x.png") == "png"


# ---- missing Graphviz ---------------------------------------------------------------------------------
def test_svg_without_dot_raises_tool_not_found(monkeypatch):
    monkeypatch.setattr(dotmod.shutil, "which", lambda name: None)
    a = literal_analysis(names=["G", "R", "code", "S", "adv", "SASS"])
    for fmt in ("svg", "png"):
        with pytest.raises(ToolNotFoundError) as e:
            render(a, fmt, RenderOptions())
        assert "Graphviz" in e.value.hint and e.value.exit_code == 7
    assert render(a, "dot", RenderOptions()).startswith("digraph")


def test_cli_writes_dot_beside_when_dot_missing(monkeypatch, tmp_path):
    from drgpu_py.cli import app

    monkeypatch.setattr(dotmod.shutil, "which", lambda name: None)
    out = tmp_path / "tree.svg"
    res = CliRunner().invoke(app, ["analyze", str(report_path("aos_gather", "bad")), "-o", str(out)])
    assert res.exit_code == 7, res.output
    assert not out.exists()
    dot_file = tmp_path / "tree.dot"
    assert dot_file.read_text().startswith("digraph")
    msg = " ".join(res.output.split())
    assert f"dot -Tsvg {dot_file} -o {out}" in msg


@needs_dot
def test_cli_svg_png_dot(tmp_path):
    from drgpu_py.cli import app

    rep = str(report_path("aos_gather", "bad"))
    for ext in ("dot", "svg", "png"):
        out = tmp_path / f"t.{ext}"
        res = CliRunner().invoke(app, ["analyze", rep, "-o", str(out)])
        assert res.exit_code == 0, res.output
        assert out.stat().st_size > 500
    assert any("global-uncoalesced" in t for t in svg_texts((tmp_path / "t.svg").read_text()))
    res = CliRunner().invoke(app, ["analyze", rep, "--format", "dot"])
    assert res.exit_code == 0 and res.output.startswith("digraph")
