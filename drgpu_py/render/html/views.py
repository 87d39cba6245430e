"""Per-kernel-group view model: everything one kernel section of the page shows, as plain
data for the kernel head in report.html.j2 and the body in kernel_body.html.j2.

Contract: ``kernel_view(i, ka, analysis, options, with_svg, inline_tree) -> dict``: anchor
``k{i}``, launch summary, findings, charts (charts.py), performance model, analysis tree,
Graphviz SVG (only ``with_svg``) and source view (source.py). With ``inline_tree`` False the
tree and the hot lines' detail come as JSON instead (``tree_json`` with the short keys of
TREE_KEYS, rows' ``detail_json``), which report.js turns into the same DOM when opened.
"""

from __future__ import annotations

import re

from markupsafe import Markup

from ...analysis import groups
from ...analysis.figures import pct
from ...analysis.tree import Node, location_text
from .. import RenderOptions
from ..dot import format_value, is_chain, missing_text, svg_for
from .charts import ledger_view, memory_chart, occupancy_chart, sol_view, stall_chart
from .common import bytes_text, unix_newlines, script_json
from ..quiet import (
    CAUSES_BASE,
    ROOT_BASE,
    SHOW_ALL_HINT,
    Worth,
    changes_nothing,
    hidden_findings_text,
    model_error_text,
    split_shown,
    worth_of,
)
from ..units import duration, missing, number
from .source import lazy_source, source_view, source_id

TREE_KEYS = {
    "name": "n",
    "value": "v",
    "kind": "k",
    "chain": "c",
    "bar": "b",
    "highlight": "h",
    "open": "o",
    "detail": "d",
    "code": "cd",
    "sass": "s",
    "href": "hr",
    "severity": "sev",
    "sid": "id",
    "children": "ch",
    "folded": "f",
    "fold_note": "fn",
}  # the lazy tree's JSON keys (report.js reads them)


def _evidence_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_evidence_value(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_evidence_value(x)}" for k, x in v.items())
    return str(v)


def _tree_view(
    n: Node,
    fold: float,
    anchor: str,
    src_ids: set[str],
    depth: int = 0,
    worth: Worth | None = None,
    sev: dict[str, str] | None = None,
) -> dict:
    worth = worth or Worth()
    sev = sev or {}
    shown, folded = split_shown(n, fold)
    # Suggestions under the --hide-below estimate and lines at 0% are left out, counted in a
    # leaf of their own (text does the same).
    shown, hidden = worth.split_nodes(shown)
    a = n.attrs
    view = {
        "name": n.name,
        "value": format_value(n),
        "kind": n.kind,
        "chain": is_chain(n),
        "bar": _bar(n),
        "highlight": bool(a.get("highlight")),
        "open": depth == 0 or bool(a.get("highlight")),
        "detail": "",
        "code": "",
        "sass": "",
        "href": "",
        "severity": _severity_shown(n, sev),
        "sid": a.get("id", "") if n.kind == "suggestion" else "",
        "children": [_tree_view(c, fold, anchor, src_ids, depth + 1, worth, sev) for c in shown]
        + ([_hidden_leaf(worth, hidden)] if hidden else []),
        "folded": [_tree_view(c, fold, anchor, src_ids, depth + 1, worth, sev) for c in folded],
        "fold_note": f"{len(folded)} below {fold * 100:g}% of stall cycles" if folded else "",
    }
    _add_detail(view, n, anchor, src_ids)
    return view


def _bar(n: Node) -> float | None:
    """A share's bar (0 to 100). The root's % is of the issue slots, its causes' of the stall
    cycles: no bar at the root, whose bar would read as the parent of longer ones (its value
    and detail name the bases)."""
    share_kind = n.kind in ("group", "reason", "line") or (is_chain(n) and n.unit == "%")
    if not (share_kind and n.unit == "%" and isinstance(n.value, (int, float))):
        return None
    return max(0.0, min(100.0, float(n.value)))


def _severity_shown(n: Node, sev: dict[str, str]) -> str:
    """A suggestion's severity in the whole run where ``sev`` has it, else the node's own."""
    if n.kind == "suggestion":
        return sev.get(str(n.attrs.get("id")), n.attrs.get("severity", ""))
    return n.attrs.get("severity", "")


def _add_detail(view: dict, n: Node, anchor: str, src_ids: set[str]) -> None:
    """What a node's kind adds: the root's bases and measures, why a metric is missing, a
    line's code and link, a suggestion's advice, a memory level's hit rate and latency."""
    a = n.attrs
    if n.kind == "root":
        _add_root_detail(view, a)
    elif n.kind == "missing":
        view["detail"] = missing_text(n)
    elif n.kind == "line":
        view["code"] = a.get("code") or ""
        view["sass"] = a.get("sass") or ""
        sid = source_id(anchor, a.get("file"), a.get("line"))
        view["href"] = "#" + sid if sid in src_ids else ""
    elif n.kind == "suggestion":
        view["detail"] = a.get("advice", "")
    elif "latency_cycles" in a:
        hit = f"hit rate {a['hit_rate_pct']:g}%, " if a.get("hit_rate_pct") is not None else ""
        view["detail"] = f"{hit}~{a['latency_cycles']} cycles"


def _add_root_detail(view: dict, a: dict) -> None:
    if view["value"]:
        view["value"] = f"{view['value']} {ROOT_BASE}"
    bits = [CAUSES_BASE]
    if a.get("achieved_ipc") is not None:
        bits.append(f"IPC {a['achieved_ipc']:g} of {a.get('ideal_ipc', '?')}")
    if a.get("top_unit"):
        bits.append(
            f"busiest unit {a.get('top_unit_label') or a['top_unit']} {number(a.get('top_unit_pct'), '.0f', '%')}"
        )
    if a.get("bound"):
        bits.append(f"{a['bound']} bound")
    view["detail"] = " · ".join(bits)


def _hidden_leaf(worth: Worth, hidden: list[Node]) -> dict:
    """A leaf that says how many suggestions and lines a node's children left out."""
    phrase = worth.hidden_phrase(sum(c.kind == "suggestion" for c in hidden), sum(c.kind == "line" for c in hidden))
    return {
        "name": f"{phrase} ({SHOW_ALL_HINT})",
        "value": "",
        "kind": "hidden",
        "chain": False,
        "bar": None,
        "highlight": False,
        "open": False,
        "detail": "",
        "code": "",
        "sass": "",
        "href": "",
        "severity": "",
        "sid": "",
        "children": [],
        "folded": [],
        "fold_note": "",
    }


def _tree_compact(view: dict) -> dict:
    """A tree view with short keys and its empty fields left out (report.js builds the DOM)."""
    out = {}
    for key, short in TREE_KEYS.items():
        v = view[key]
        if key in ("children", "folded"):
            v = [_tree_compact(c) for c in v]
        if v or (key == "bar" and v is not None):
            out[short] = v
    return out


def _findings_view(
    ka, anchor: str, src_ids: set[str], worth: Worth | None = None, sev: dict[str, str] | None = None
) -> tuple[list[dict], str]:
    """The findings worth reading (render/quiet.py, Worth), each with its source lines that do
    not read 0%, and the line that says what was left out ('' when nothing was). ``sev``: the
    severities the badges show by finding id (in a report of several kernel groups, the one in
    the whole run; the kernel's own in the badge's title)."""
    worth = worth or Worth()
    sev = sev or {}
    out = []
    shown, hidden = worth.split_findings(ka.findings)
    for i, f in enumerate(shown, 1):
        places, left = worth.split_locations(f.locations[:5])
        locs = [_location_view(loc, anchor, src_ids) for loc in places]
        out.append(
            {
                "rank": i,
                "anchor": f"{anchor}-f{i}",
                "id": f.id,
                "title": f.title,
                "severity": sev.get(f.id, f.severity),
                "severity_title": _severity_title(f, sev),
                "speedup": f.speedup_text(),
                "share": f"{100.0 * f.stall_share:.0f}%",
                "share_w": max(0.0, min(100.0, 100.0 * f.stall_share)),
                "advice": f.advice,
                "evidence": [{"key": str(kk), "value": _evidence_value(v)} for kk, v in (f.evidence or {}).items()],
                "locations": locs,
                "notes": list(f.notes),
                "model": f.speedup_model,
                "hidden": worth.hidden_phrase(lines=len(left)),
            }
        )
    return out, hidden_findings_text(worth, hidden)


def _severity_title(f, sev: dict[str, str]) -> str:
    if f.id not in sev:
        return f"in this kernel: {f.severity}"
    return f"in the whole run: {sev[f.id]} (by the GPU time its fix saves); in this kernel: {f.severity}"


def _location_view(loc: dict, anchor: str, src_ids: set[str]) -> dict:
    """A finding's source line: where, its share, what it was inlined from, its code and the
    lines it stalled at, linked to the source view where that shows the line."""
    sid = source_id(anchor, loc.get("file"), loc.get("line"))
    stalled = ", ".join(location_text(s) for s in loc.get("stalled_at", []) or [])
    inl = loc.get("inlined_from")
    return {
        "where": location_text(loc),
        "share": f"{100.0 * float(loc.get('share', 0.0)):.0f}%",
        "inlined": location_text(inl) if isinstance(inl, dict) and inl.get("file") else "",
        "code": loc.get("code") or "",
        "sass": loc.get("sass") or "",
        "stalled_at": stalled,
        "href": "#" + sid if sid in src_ids else "",
    }


def _clean_svg(svg: str, anchor: str) -> Markup:
    """Graphviz's SVG, made fit to inline: no XML prolog, doctype or comments, and ids
    prefixed per kernel so several graphs can share one page. Graphviz escapes label text."""
    svg = svg[svg.find("<svg") :]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\bid="', f'id="{anchor}-', svg)
    return Markup(svg.strip())


def _model_view(ka) -> dict | None:
    """The static performance model's summary (analysis/perfmodel/): bottleneck, predicted
    against measured cycles, its terms, the hot loops and the what-if changes."""
    d = ka.model_summary()
    if not d.get("available"):
        return {"available": False, "reason": d.get("reason")}
    top = max(d["terms"].values()) if d["terms"] else 0.0
    terms = [
        {"name": t, "cycles": v, "pct": 100.0 * v / top if top > 0 else 0.0}
        for t, v in sorted(d["terms"].items(), key=lambda kv: -kv[1])
    ]
    return {
        **d,
        "term_rows": terms,
        # The prediction is shown only with its error, after the measurement (render/quiet.py).
        "model_text": model_error_text(d.get("predicted_cycles"), d.get("measured_cycles")),
        "what_if": [w for w in d.get("what_if") or () if not changes_nothing(w)],
    }


def _busiest_unit(ka) -> str:
    """The speed-of-light limiter, as the badge says, else the tree's busiest unit."""
    sol = ka.sol
    if sol is not None and sol.limiter is not None:
        top_label, top_pct = sol.labels.get(sol.limiter, sol.limiter), sol.limiter_pct
    else:
        top_label, top_pct = ka.tree.attrs.get("top_unit_label"), ka.top_unit_pct
    return (
        f"{top_label or 'not measured'}"
        + ("" if missing(top_pct) or not top_label else f" at {pct(top_pct)}% of peak")
        + (f" (speed of light: {sol.grade})" if sol is not None and sol.grade else "")
    )


def _launch_summary(ka) -> list[tuple[str, str]]:
    """The kernel head's table: device, duration, launch shape, resources, occupancy, IPC."""
    k = ka.kernel
    ach, theo = k.m("sm__warps_active.avg.pct_of_peak_sustained_active"), k.m("sm__maximum_warps_per_active_cycle_pct")
    return [
        ("Device", k.device or "unknown"),
        ("Duration", duration(k.duration_ns)),
        (
            "Grid × block",
            f"{'×'.join(map(str, k.grid))} × {'×'.join(map(str, k.block))}" if k.shape_measured else "not measured",
        ),
        ("Registers / thread", number(k.m("launch__registers_per_thread"), ".0f")),
        ("Shared memory / block", bytes_text(k.m("launch__shared_mem_per_block"))),
        ("Occupancy (achieved / theoretical)", f"{number(ach, '.0f', '%')} / {number(theo, '.0f', '%')}"),
        (
            "IPC (achieved / ideal)",
            f"{number(ka.achieved_ipc, '.2f')} / {ka.tree.attrs.get('ideal_ipc', 'n/a')}"
            if ka.achieved_ipc is not None
            else "not measured",
        ),
        ("Busiest unit", _busiest_unit(ka)),
    ]


def _run_severities(analysis, kid: int) -> dict[str, str]:
    """In a report of several kernel groups the badges give a finding's severity in the whole
    run (groups.application_severity: it follows the GPU time the fix saves); none in one."""
    if len(analysis.kernels) <= 1:
        return {}
    return {fid: s for (k, fid), s in groups.application_severities(analysis.summary()).items() if k == kid}


def _arch_text(k) -> str:
    """Compute capability and SM count, those known."""
    parts = (f"cc {k.compute_capability}" if k.compute_capability else "", f"{k.sm_count} SMs" if k.sm_count else "")
    return " · ".join(x for x in parts if x)


def _source_ids(source: dict) -> set[str]:
    """The ids of the source view's lines (gaps apart): where findings and tree lines link."""
    return {r["id"] for fv in source["files"] for r in fv["rows"] if not r["gap"]}


def _top_finding(ka) -> dict | None:
    if not ka.findings:
        return None
    top = ka.findings[0]
    return {"id": top.id, "title": top.title, "speedup": top.speedup_text(), "severity": top.severity}


def kernel_view(i: int, ka, analysis, options: RenderOptions, with_svg: bool, inline_tree: bool = True) -> dict:
    k = ka.kernel
    anchor = f"k{i}"
    source = source_view(ka, anchor)
    if not inline_tree:
        lazy_source(source)
    src_ids = _source_ids(source)
    svg = None
    if with_svg:
        svg = _clean_svg(svg_for(analysis, options, kernels=[ka]), anchor)
    worth = worth_of(options)
    sev = _run_severities(analysis, k.id)
    tree = _tree_view(ka.tree, options.fold_share, anchor, src_ids, worth=worth, sev=sev)
    findings, hidden = _findings_view(ka, anchor, src_ids, worth, sev)
    return {
        "anchor": anchor,
        "id": k.id,
        "name": unix_newlines(k.name),
        "launches": k.launch_count,
        "arch": _arch_text(k),
        "mangled": k.mangled if k.mangled and k.mangled != k.name else "",
        "duration_ns": None if missing(k.duration_ns) else float(k.duration_ns),
        "duration": duration(k.duration_ns),
        "verdict": ka.verdict,
        "bound": ka.bound,
        "stall_pct": number(ka.stall_cycle_pct, ".1f", "%", none="not measured"),
        "stall_w": 0.0 if missing(ka.stall_cycle_pct) else max(0.0, min(100.0, float(ka.stall_cycle_pct))),
        "summary": [{"key": a, "value": b} for a, b in _launch_summary(ka)],
        "top": _top_finding(ka),
        "findings": findings,
        "hidden": hidden,
        "stalls": stall_chart(ka.tree),
        "stall_source": ka.tree.attrs.get("stall_source", ""),
        "memory": memory_chart(ka),
        "occupancy": occupancy_chart(ka),
        "sol": sol_view(ka),
        "ledger": ledger_view(ka),
        "model": _model_view(ka),
        "tree": tree if inline_tree else None,
        "tree_json": None if inline_tree else script_json(_tree_compact(tree)),
        "svg": svg,
        "source": source,
        "notes": list(ka.notes),  # page.render_html keeps the group's own, says the shared once
        "shared_notes": 0,
        "slicing": ka.slicing,
    }
