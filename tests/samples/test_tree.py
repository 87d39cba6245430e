"""The DrGPU tree: root stall-cycle ratio, cause groups, sub-trees, missing metrics, JSON."""

from __future__ import annotations

import json

import pytest

from drgpu_py.analysis import analyze
from drgpu_py.analysis.tree import Node, subtree_total
from drgpu_py.readers import open_report

from conftest import analysis_of, report_path


def test_root_is_the_stall_cycle_ratio():
    k = analysis_of("fma_chain", "bad").kernels[0]
    ipc = k.kernel.m("sm__inst_issued.avg.per_cycle_active")
    assert k.tree.kind == "root" and k.tree.unit == "%"
    assert k.tree.value == pytest.approx((4 - ipc) / 4 * 100, abs=0.01)
    assert k.tree.attrs["ideal_ipc"] == 4 and k.tree.attrs["bound"] in {"memory", "compute", "latency", "launch"}


def test_groups_hold_reasons_whose_shares_sum_to_100():
    k = analysis_of("serial_norm", "bad").kernels[0]
    groups = [c for c in k.tree.children if c.kind == "group" and c.unit == "%"]
    assert {g.name for g in groups} >= {"Device memory", "Synchronization", "Instruction issue and dependencies"}
    assert sum(g.value for g in groups) == pytest.approx(100.0, abs=0.5)
    sync = next(g for g in groups if g.name == "Synchronization")
    barrier = next(c for c in sync.children if c.kind == "reason")
    assert barrier.attrs["reason"] == "barrier" and barrier.value > 50
    assert any(c.kind == "line" for c in barrier.children)


def test_memory_latency_chain_and_suggestions():
    k = analysis_of("aos_gather", "bad").kernels[0]
    mem = next(c for c in k.tree.children if c.name == "Device memory")
    split = mem.find("Memory latency split")
    l1 = split.children[0]
    assert l1.name == "L1 hits" and l1.children[0].name == "L2 hits" and l1.children[0].children[0].name == "DRAM"
    sug = [n for n in k.tree.walk() if n.kind == "suggestion"]
    assert sug and sug[0].attrs["id"] == "global-uncoalesced" and sug[0].attrs.get("highlight")
    assert k.tree.attrs.get("highlight") and mem.attrs.get("highlight")


def test_occupancy_subtree_names_the_limiter():
    k = analysis_of("smem_occupancy", "bad").kernels[0]
    occ = next(c for c in k.tree.children if c.name == "Occupancy")
    lim = next(c for c in occ.children if c.name.startswith("Limiter"))
    assert lim.name == "Limiter: shared memory"


def test_missing_metrics_become_not_collected_nodes():
    prof = open_report(report_path("fma_chain", "bad"))
    k = prof.kernels[0]
    for name in list(k.metrics):
        if name.startswith(("l1tex__t_sector_hit_rate", "lts__t_sector_hit_rate", "launch__occupancy_limit")):
            del k.metrics[name]
    t = analyze(prof).kernels[0].tree
    missing = [n for n in t.walk() if n.kind == "missing"]
    sections = {n.attrs.get("section") for n in missing}
    assert "MemoryWorkloadAnalysis" in sections and "Occupancy" in sections
    assert all(n.value is None for n in missing)


def test_no_sampling_still_analyzes_from_counters():
    """The stall mix comes from the kernel-wide counters, and the findings the counters measure
    are raised (warp-divergence from the lanes per instruction); barrier-imbalance is not: whether
    the barrier waits are for unbalanced work needs the PC samples of the barrier regions."""
    prof = open_report(report_path("serial_norm", "bad"))
    k = prof.kernels[0]
    k.instructions = k.instructions.iloc[0:0]
    ka = analyze(prof).kernels[0]
    assert ka.tree.attrs["stall_source"] == "counters"
    ids = [f.id for f in ka.findings]
    assert "warp-divergence" in ids and "barrier-imbalance" not in ids
    assert any("no PC sampling" in n for n in ka.notes)


def test_json_contract():
    from drgpu_py.render import render

    d = json.loads(render(analysis_of("double_literal", "bad"), "json"))
    assert d["tool"] == "drgpu" and isinstance(d["version"], str) and d["report"].endswith(".ncu-rep")
    k = d["kernels"][0]
    for key, typ in (
        ("id", int),
        ("name", str),
        ("mangled", str),
        ("device", str),
        ("compute_capability", str),
        ("duration_ns", float),
        ("grid", list),
        ("block", list),
        ("bound", str),
        ("stall_cycle_pct", float),
        ("tree", dict),
        ("findings", list),
        ("slicing", dict),
    ):
        assert isinstance(k[key], typ), key
    assert k["bound"] in ("memory", "compute", "latency", "launch")
    assert set(k["tree"]) >= {"name", "value", "unit", "children"}
    f = k["findings"][0]
    assert set(f) >= {"id", "title", "severity", "stall_share", "estimated_speedup", "advice", "evidence", "locations"}
    assert set(f["locations"][0]) >= {"file", "line", "share", "sass"}
    assert k["slicing"]["source"] in ("report", "cubin") and 0 <= k["slicing"]["single_dependency_coverage"] <= 1


def test_subtree_total_keeps_large_grandchildren():
    t = Node("r", 100, "%", "root", [Node("a", 1, "%", "group", [Node("b", 40, "%", "reason")])])
    assert subtree_total(t.children[0]) == 40


def test_text_and_dot_fold_by_one_rule_and_keep_the_top_findings_path():
    # A 1% group on the top finding's path (highlighted) and a 1% group off it, folded at 2%.
    import io

    import graphviz
    from rich.console import Console
    from rich.tree import Tree

    from drgpu_py.render import dot, text

    on_path = Node(
        "Small cause on the path",
        1,
        "%",
        "group",
        attrs={"highlight": True},
        children=[Node("Fix it", 1.5, "x", "suggestion", attrs={"severity": "high"})],
    )
    off_path = Node("Small cause elsewhere", 1, "%", "group")
    root = Node("Stall cycles", 100, "%", "root", [on_path, off_path, Node("Big cause", 98, "%", "group")])
    console = Console(width=200, record=True, file=io.StringIO())
    tree = Tree("root")
    text._add(tree, root, 0.02, 0)
    console.print(tree)
    shown = console.export_text()
    g = graphviz.Digraph()
    dot._add_tree(g, root, "k0", 0.02)
    for out in (shown, g.source):
        assert "Small cause on the path" in out and "Fix it" in out and "Big cause" in out
        assert "Small cause elsewhere" not in out
    assert "(1 below 2% folded)" in shown and "1 folded (each below 2%)" in g.source
