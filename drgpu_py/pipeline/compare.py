"""Compare analyses: a one-row-per-launch listing of several reports, and the difference
between a baseline and a new report.

Contract: both work on the analysis JSON contract read into typed objects
(:class:`~drgpu_py.analysis.saved.SavedAnalysis`), so an input is a report or a JSON file
``drgpu analyze -f json`` or ``drgpu merge`` wrote. :func:`list_rows` (one row per launch;
:func:`sort_rows` sorts and cuts), :func:`diff` (the ``drgpu diff --format json`` dict) and
:func:`regressions` (what ``--fail-on-regression`` fails on; :func:`nothing_compared` when
the diff compared no kernel at all) are pure and take
SavedAnalysis objects or their dicts; only :func:`load` and :func:`launch_rows` (a report's
launches as its reader lists them: listing never analyzes) read files. Tree nodes are found by
their stable key (analysis.tree.KEY_*), never by their label; kernels with different
function names are never paired unless ``--pair`` says so.

Matching rules and what is compared: docs/compare.md. Renderers: drgpu_py.render.list_, .diff.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..version import __version__
from ..specs.output_schema import SCHEMA_VERSION
from ..errors import NothingComparedError, UsageError
from ..profile import KernelProfile, Profile, base_name, rounded, signature
from ..readers import select_kernels
from ..analysis import tree as t
from ..analysis.findings import Finding, severity_rank
from ..analysis.saved import SavedAnalysis, SavedKernel, load_analysis_json

#: Relative duration change below which a kernel counts as unchanged: run-to-run noise of
#: profiled durations is a few percent.
NOISE = 0.02
SORT_KEYS = ("duration", "stall", "name")


#: The tree nodes the diff compares, by stable key: the memory levels under the memory
#: latency split, and the occupancy figures (by their name in the diff).
MEMORY_LEVELS = (t.KEY_MEMORY_L1, t.KEY_MEMORY_L2, t.KEY_MEMORY_DRAM)
OCCUPANCY = (("theoretical", t.KEY_OCCUPANCY_THEORETICAL), ("achieved", t.KEY_OCCUPANCY_ACHIEVED))


def _saved(a: SavedAnalysis | dict) -> SavedAnalysis:
    return a if isinstance(a, SavedAnalysis) else SavedAnalysis.from_dict(a)


# ---- loading ---------------------------------------------------------------------------
def is_analysis_json(path: str | Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return False
    return head.lstrip().startswith(b"{")


def load(path: str | Path, *, kernel: str | None = None, thresholds: dict | None = None, progress=None) -> dict:
    """The analysis dict of a report, or of a drgpu analysis JSON file; ``kernel`` selects
    launches with :func:`drgpu_py.readers.select_kernels` semantics in both cases.
    ``SavedAnalysis.from_dict`` (or ``load_saved``) makes it typed. ``progress(done, total)``:
    called as the kernels of a large JSON file are checked (``load_analysis_json``)."""
    from ..io import require_input_file
    from ..readers.compressed import compressed_twin

    p = Path(path)
    if compressed_twin(p) is None:  # else the report is read from PATH.xz beside it (readers.open_report)
        p = require_input_file(p)
        if is_analysis_json(p):
            d = load_analysis_json(p, progress=progress)
            return select(d, kernel)
    from . import analyze_reports

    return analyze_reports([p], kernel=kernel, thresholds=thresholds).to_dict()


def select(analysis: dict, selector: str | None) -> dict:
    """Keep the kernels of an analysis dict that ``selector`` picks (as for reports)."""
    shim = Profile(
        path=analysis.get("report", "?"),
        format="json",
        kernels=[
            KernelProfile(id=k.get("id", i), name=k.get("name", ""), mangled=k.get("mangled") or "")
            for i, k in enumerate(analysis["kernels"])
        ],
    )
    picked = {id(k) for k in select_kernels(shim, selector).kernels}
    keep = [k for k, s in zip(analysis["kernels"], shim.kernels) if id(s) in picked]
    return {**analysis, "kernels": keep}


def load_saved(path: str | Path, *, kernel: str | None = None, thresholds: dict | None = None) -> SavedAnalysis:
    """:func:`load`, typed."""
    return SavedAnalysis.from_dict(load(path, kernel=kernel, thresholds=thresholds))


# ---- list ------------------------------------------------------------------------------
def _label(analysis: SavedAnalysis) -> str:
    rep = str(analysis.report if analysis.report is not None else "?")
    return " + ".join(Path(r).name for r in rep.split(" + "))


def launch_rows(path: str | Path, *, kernel=None, progress=None) -> list[dict]:
    """The rows of ``drgpu list`` for one input, without analyzing anything: a report's
    launches as the reader lists them (``readers.list_launches``: names, ids, grid, block and
    duration; stall cycles, bound and top finding None), or the kernels of a drgpu analysis
    JSON file with all their fields (``list_rows``). ``kernel``: a launch id, id range or name
    pattern, as for reports; ``progress`` as for ``load``."""
    from ..io import require_input_file
    from ..readers import KernelSelector, list_launches

    p = require_input_file(path)
    if is_analysis_json(p):
        return list_rows([select(load_analysis_json(p, progress=progress), kernel)])
    selector = KernelSelector.of(kernel)
    profile = select_kernels(list_launches(p, kernel=selector), selector)
    return [
        {
            "report": p.name,
            "id": k.id,
            "name": k.name,
            "duration_ns": rounded(k.duration_ns, 4),
            "grid": list(k.grid),
            "block": list(k.block),
            "stall_cycle_pct": None,
            "bound": None,
            "top_finding": None,
            "top_severity": None,
            "top_speedup": None,
        }
        for k in profile.kernels
    ]


def list_rows(analyses: list[SavedAnalysis] | list[dict]) -> list[dict]:
    """The rows of ``drgpu list`` for analyses: one per kernel (launch or group) each holds."""
    rows = []
    for a in map(_saved, analyses):
        label = _label(a)
        for k in a.kernels:
            top = k.findings[0] if k.findings else None
            rows.append(
                {
                    "report": label,
                    "id": k.id,
                    "name": k.name,
                    "duration_ns": k.duration_ns,
                    "grid": k.grid,
                    "block": k.block,
                    "stall_cycle_pct": k.stall_cycle_pct,
                    "bound": k.bound,
                    "top_finding": top.id if top else None,
                    "top_severity": top.severity if top else None,
                    "top_speedup": top.estimated_speedup if top else None,
                }
            )
    return rows


def _check_sort(by: str | None, top: int | None) -> None:
    if by is not None and by not in SORT_KEYS:
        raise UsageError(f"--sort {by!r}: expected one of {', '.join(SORT_KEYS)}")
    if top is not None and top < 1:
        raise UsageError("--top must be at least 1")


def sort_rows(rows: list[dict], by: str | None = None, top: int | None = None) -> list[dict]:
    _check_sort(by, top)
    out = list(rows)
    # Missing numbers sort last whatever the direction.
    if by == "duration":
        out.sort(key=lambda r: (r["duration_ns"] is None, -(r["duration_ns"] or 0.0)))
    elif by == "stall":
        out.sort(key=lambda r: (r["stall_cycle_pct"] is None, -(r["stall_cycle_pct"] or 0.0)))
    elif by == "name":
        out.sort(key=lambda r: (r["name"], r["report"], r["id"]))
    return out[:top] if top else out


# ---- kernel matching ---------------------------------------------------------------------


def _parse_pair(p: str) -> tuple[re.Pattern, re.Pattern]:
    if "=" not in p:
        raise UsageError(f"--pair expects BASE_REGEX=NEW_REGEX, got {p!r}")
    b, n = p.split("=", 1)
    try:
        return re.compile(b), re.compile(n)
    except re.error as e:
        raise UsageError(f"--pair {p!r}: not a valid regular expression: {e}") from e


def _name(k: SavedKernel | dict) -> str:
    return k.name if isinstance(k, SavedKernel) else k["name"]


def match_kernels(base: list, new: list, pairs: list[str] | None = None):
    """Return ([(base kernel, new kernel, how)], unmatched base, unmatched new) for lists of
    SavedKernel (or kernel dicts). ``how`` is 'pair', 'name' or 'function name'. Kernels whose
    function names differ are paired only by ``pairs``: pairing two unrelated kernels would
    report findings "resolved" that were not."""
    left_b, left_n = list(base), list(new)
    matched: list[tuple] = []

    def take(kb, kn, how):
        matched.append((kb, kn, how))
        left_b.remove(kb)
        left_n.remove(kn)

    for p in pairs or []:
        rb, rn = _parse_pair(p)
        for kb, kn in list(zip([k for k in left_b if rb.search(_name(k))], [k for k in left_n if rn.search(_name(k))])):
            take(kb, kn, "pair")
    _match_by_key(_name, "name", left_b, left_n, take)
    _match_by_key(lambda k: base_name(_name(k)), "function name", left_b, left_n, take)
    matched.sort(key=lambda t: base.index(t[0]))
    return matched, left_b, left_n


def _match_by_key(key, how: str, left_b: list, left_n: list, take) -> None:
    """Pair the kernels left whose ``key`` agrees, in launch order (i-th with i-th)."""
    groups_n: dict[str, list] = {}
    for k in left_n:
        groups_n.setdefault(key(k), []).append(k)
    for kb in list(left_b):
        cands = groups_n.get(key(kb))
        if cands:
            take(kb, cands.pop(0), how)


# ---- diff --------------------------------------------------------------------------------
def _delta(b, n, nd: int = 4) -> dict:
    d = None if b is None or n is None else round(n - b, nd)
    return {"base": b, "new": n, "delta": d}


def _tree_parts(k: SavedKernel) -> dict:
    tree = k.tree
    has_stalls = tree is not None and tree.attrs.get("stall_source", "none") != "none"
    reasons, groups = _stall_nodes(tree)
    return {
        "has_stalls": has_stalls,
        "reasons": reasons,
        "groups": groups,
        "memory": _memory_nodes(k),
        "occupancy": {name: _value_of(k.node(key)) for name, key in OCCUPANCY},
    }


def _stall_nodes(tree: t.Node | None) -> tuple[dict, dict]:
    """(name, value) of the tree's stall reasons and of its stall groups with a value."""
    reasons, groups = {}, {}
    for n in tree.walk() if tree is not None else ():
        if n.kind == "reason" and "reason" in n.attrs:
            reasons[n.attrs["reason"]] = (n.name, n.value)
        elif n.kind == "group" and "group" in n.attrs and n.value is not None:
            groups[n.attrs["group"]] = (n.name, n.value)
    return reasons, groups


def _memory_nodes(k: SavedKernel) -> dict:
    """(name, share, hit rate) of each level of the memory latency split the tree has."""
    split = k.node(t.KEY_MEMORY_SPLIT)
    if split is None or split.kind == "missing":
        return {}
    memory = {}
    for key in MEMORY_LEVELS:
        n = split.by_key(key)
        if n is not None:
            memory[key] = (n.name, n.value, n.attrs.get("hit_rate_pct"))
    return memory


def _value_of(n: t.Node | None) -> float | None:
    """A keyed node's value; None when the tree lacks it or says it is missing."""
    return n.value if n is not None and n.kind != "missing" else None


def stall_cycles(k: SavedKernel) -> float | None:
    """A kernel's stall cycles: SM active cycles times the stall-cycle ratio (issue cycles
    lost against the ideal IPC, per SM); None when either is missing (e.g. an older baseline)."""
    act, pct = k.sm_active_cycles, k.stall_cycle_pct
    return None if act is None or pct is None else act * pct / 100.0


def _of(total: float | None, share: float | None) -> float | None:
    return None if total is None or share is None else round(total * share / 100.0, 1)


def _shares(b: dict, n: dict, key: str, b_ok: bool, n_ok: bool, b_total=None, n_total=None) -> list[dict]:
    """Rows for every id present on either side; an absent id is 0 where that side has stall
    data (the tree leaves out zero reasons), None where it has none. ``stall_cycles``: the
    share of each side's stall cycles, in cycles."""
    out = []
    for rid in dict.fromkeys(list(b) + list(n)):
        label = (b[rid] if rid in b else n[rid])[0]
        bv = b[rid][1] if rid in b else (0.0 if b_ok else None)
        nv = n[rid][1] if rid in n else (0.0 if n_ok else None)
        out.append(
            {
                key: rid,
                "label": label,
                **_delta(bv, nv, 2),
                "stall_cycles": _delta(_of(b_total, bv), _of(n_total, nv), 1),
            }
        )
    out.sort(key=lambda r: -max(abs(r["base"] or 0.0), abs(r["new"] or 0.0)))
    return out


def _finding_brief(f: Finding) -> dict:
    loc = f.locations[0] if f.locations else None
    file = loc.get("file") if loc else None
    where = f"{Path(file).name}:{loc['line']}" if loc and file else None
    return {
        "id": f.id,
        "title": f.title,
        "severity": f.severity,
        "estimated_speedup": f.estimated_speedup,
        "stall_share": f.stall_share,
        "location": where,
    }


def _findings(b: list[Finding], n: list[Finding]) -> dict:
    nb = {f.id: f for f in b}
    nn = {f.id: f for f in n}
    return {
        "resolved": [_finding_brief(nb[i]) for i in nb if i not in nn],
        "persisting": [_persisting(fid, nb[fid], nn[fid]) for fid in nb if fid in nn],
        "new": [_finding_brief(nn[i]) for i in nn if i not in nb],
    }


def _severity_change(before: str, after: str) -> str:
    if severity_rank(after) < severity_rank(before):
        return "worse"
    if severity_rank(after) > severity_rank(before):
        return "better"
    return "unchanged"


def _persisting(fid: str, b: Finding, n: Finding) -> dict:
    fb, fn = _finding_brief(b), _finding_brief(n)
    return {
        "id": fid,
        "title": fn["title"],
        "base": fb,
        "new": fn,
        "severity_change": _severity_change(fb["severity"], fn["severity"]),
        "speedup_delta": round(fn["estimated_speedup"] - fb["estimated_speedup"], 3),
    }


def _ident(k: SavedKernel) -> dict:
    return {"id": k.id, "name": k.name, "duration_ns": k.duration_ns}


def _verdict(speedup: float | None) -> str:
    """Faster or slower beyond the noise, else unchanged; unknown without both durations."""
    if speedup is None:
        return "unknown"
    if speedup >= 1 + NOISE:
        return "faster"
    if speedup <= 1 / (1 + NOISE):
        return "slower"
    return "unchanged"


def _rounded(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def _memory_rows(mb: dict, mn: dict) -> list[dict]:
    """The memory levels either side's split has, base -> new."""
    memory = []
    for key in MEMORY_LEVELS:
        lb, vb, hb = mb.get(key, (None, None, None))
        ln, vn, hn = mn.get(key, (None, None, None))
        if vb is None and vn is None:
            continue
        memory.append({"level": ln or lb, **_delta(vb, vn, 2), "hit_rate_pct": {"base": hb, "new": hn}})
    return memory


def kernel_diff(kb: SavedKernel | dict, kn: SavedKernel | dict, how: str) -> dict:
    kb, kn = (k if isinstance(k, SavedKernel) else SavedKernel.from_dict(k) for k in (kb, kn))
    db, dn = kb.duration_ns, kn.duration_ns
    speedup = db / dn if db and dn else None
    change_pct = round((dn - db) / db * 100.0, 2) if db and dn else None
    tb, tn = _tree_parts(kb), _tree_parts(kn)
    sb, sn = stall_cycles(kb), stall_cycles(kn)
    found = _findings(kb.findings, kn.findings)
    # What the base's analysis promised for what the change resolved, beside what it measured.
    estimated = max((f["estimated_speedup"] for f in found["resolved"]), default=None)
    return {
        "base": _ident(kb),
        "new": _ident(kn),
        "match": how,
        "duration_ns": _delta(db, dn, 1),
        "speedup": None if speedup is None else round(speedup, 4),
        "duration_change_pct": change_pct,
        "verdict": _verdict(speedup),
        "estimated_speedup": estimated,
        "elapsed_cycles": _delta(kb.elapsed_cycles, kn.elapsed_cycles, 1),
        "stall_cycle_pct": _delta(kb.stall_cycle_pct, kn.stall_cycle_pct, 2),
        "stall_cycles": _delta(_rounded(sb, 1), _rounded(sn, 1), 1),
        "achieved_ipc": _delta(kb.achieved_ipc, kn.achieved_ipc, 3),
        "bound": {"base": kb.bound, "new": kn.bound},
        "top_unit": {"base": kb.top_unit, "new": kn.top_unit},
        "groups": _shares(tb["groups"], tn["groups"], "group", tb["has_stalls"], tn["has_stalls"], sb, sn),
        "reasons": _shares(tb["reasons"], tn["reasons"], "reason", tb["has_stalls"], tn["has_stalls"], sb, sn),
        "memory": _memory_rows(tb["memory"], tn["memory"]),
        "occupancy": {name: _delta(tb["occupancy"][name], tn["occupancy"][name], 2) for name, _ in OCCUPANCY},
        "findings": found,
    }


def diff(base: SavedAnalysis | dict, new: SavedAnalysis | dict, pairs: list[str] | None = None) -> dict:
    """The difference between two analyses (see the module docstring)."""
    base, new = _saved(base), _saved(new)
    matched, ub, un = match_kernels(base.kernels, new.kernels, pairs)
    kernels = [kernel_diff(kb, kn, how) for kb, kn, how in matched]
    return {
        "tool": "drgpu",
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "kind": "diff",
        "base": {"report": base.report, "kernels": len(base.kernels)},
        "new": {"report": new.report, "kernels": len(new.kernels)},
        "summary": _diff_summary(kernels, len(ub) + len(un)),
        "kernels": kernels,
        "unmatched": {"base": [_ident(k) for k in ub], "new": [_ident(k) for k in un]},
        "notes": _diff_notes(kernels),
    }


def _diff_summary(kernels: list[dict], unmatched: int) -> dict:
    """The matched kernels' total durations, speedup (only when every one has both
    durations) and findings resolved and new."""
    tb, tn = _total_duration(kernels, "base"), _total_duration(kernels, "new")
    return {
        "matched": len(kernels),
        "duration_ns": _delta(tb if kernels else None, tn if kernels else None, 1),
        "speedup": _total_speedup(kernels, tb, tn),
        "unmatched": unmatched,
        "resolved": _findings_count(kernels, "resolved"),
        "new": _findings_count(kernels, "new"),
        "faster": _verdict_count(kernels, "faster"),
        "slower": _verdict_count(kernels, "slower"),
    }


def _total_duration(kernels: list[dict], side: str) -> float:
    return sum(k["duration_ns"][side] or 0.0 for k in kernels)


def _total_speedup(kernels: list[dict], tb: float, tn: float) -> float | None:
    """The total's speedup, only when every matched kernel has both durations."""
    complete = all(k["duration_ns"]["base"] and k["duration_ns"]["new"] for k in kernels)
    return round(tb / tn, 4) if kernels and complete and tn > 0 else None


def _findings_count(kernels: list[dict], which: str) -> int:
    return sum(len(k["findings"][which]) for k in kernels)


def _verdict_count(kernels: list[dict], verdict: str) -> int:
    return sum(k["verdict"] == verdict for k in kernels)


def _diff_notes(kernels: list[dict]) -> list[str]:
    """No kernel matched, or kernels paired by function name though their names differ."""
    notes = []
    if not kernels:
        notes.append(
            "no matching kernel: no kernel name of the base is in the new report (nothing is compared, "
            "nothing resolved); pair kernels on purpose with --pair BASE_REGEX=NEW_REGEX"
        )
    for k in kernels:
        if k["match"] == "function name" and k["base"]["name"] != k["new"]["name"]:
            notes.append(f"paired by {k['match']}: {k['base']['name']}  ->  {k['new']['name']}")
    return notes


def regressions(d: dict) -> list[str]:
    """What ``diff --fail-on-regression`` fails on: a matched kernel slower beyond the noise,
    a new high or medium finding, or a persisting finding whose severity rose."""
    out = []
    for k in d["kernels"]:
        name = k["new"]["name"]
        if k["verdict"] == "slower":
            out.append(f"{name} is slower ({k['speedup']:.2f}x)")
        out.extend(
            f"new {x['severity']} finding {x['id']} in {name}"
            for x in k["findings"]["new"]
            if x["severity"] in ("high", "medium")
        )
        out.extend(
            f"{x['id']} in {name} rose to {x['new']['severity']}"
            for x in k["findings"]["persisting"]
            if x["severity_change"] == "worse"
        )
    return out


#: Kernel names a message lists for each side before "and N more".
NAMES_SHOWN = 5


def _names(kernels: list[dict]) -> str:
    """The distinct names (without parameters) of ``kernels``, the first NAMES_SHOWN of them."""
    names = list(dict.fromkeys(signature(k["name"]) for k in kernels))
    more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
    return ", ".join(names[:NAMES_SHOWN]) + more if names else "none"


def nothing_compared(d: dict) -> NothingComparedError | None:
    """The error ``--fail-on-regression`` ends with when the diff matched no kernel (a kernel
    renamed, a baseline of another program), else None: a check that compared nothing has
    found no regression because it looked at nothing, so it must not pass. The message names
    the kernels of each side; with one each, the hint gives the ``--pair`` that pairs them."""
    if d["kernels"]:
        return None
    base, new = d["unmatched"]["base"], d["unmatched"]["new"]
    hint = "pair kernels whose names differ with --pair BASE_REGEX=NEW_REGEX"
    pairable = {base_name(k["name"]) for k in base}, {base_name(k["name"]) for k in new}
    if all(len(names) == 1 for names in pairable):
        (b,), (n,) = pairable
        hint += f", here --pair {shlex.quote(f'{re.escape(b)}={re.escape(n)}')}"
    return NothingComparedError(
        f"no kernel matched, so nothing was compared: base kernels {_names(base)}; new kernels {_names(new)}",
        hint=hint,
    )


__all__ = [
    "load",
    "load_saved",
    "load_analysis_json",
    "select",
    "list_rows",
    "sort_rows",
    "regressions",
    "nothing_compared",
    "match_kernels",
    "kernel_diff",
    "diff",
    "stall_cycles",
    "NOISE",
    "SORT_KEYS",
]
