"""`drgpu diff` and `drgpu list` on the real bad/fixed sample pairs: the planted finding is
resolved, the measured speedup comes from the two reports' durations, shares and occupancy
are the trees' values; kernel matching, rendering (text, JSON, HTML) and the CLI."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from drgpu_py.analysis.figures import speedup
from drgpu_py.cli import app
from drgpu_py.pipeline.compare import NOISE, diff, list_rows, load, match_kernels, nothing_compared, sort_rows
from drgpu_py.profile import base_name
from drgpu_py.render import RenderOptions
from drgpu_py.render.diff import _group_members, render_diff
from drgpu_py.render.units import us
from drgpu_py.render.list_ import render_list_text
from drgpu_py.errors import ReportFormatError, UsageError

from conftest import analysis_of, cases_for, manifest, report_path

runner = CliRunner()


def _pair(case):
    return analysis_of(case, "bad"), analysis_of(case, "fixed")


@pytest.mark.parametrize("case", cases_for(("raised", "fixed_quiet")))
def test_diff_names_the_fixed_finding_resolved_and_the_measured_speedup(case):
    bad, fixed = _pair(case)
    names = (bad.kernels[0].kernel.name, fixed.kernels[0].kernel.name)
    # A renamed kernel (scale_keys_aos -> scale_keys_soa) is compared only when paired on purpose.
    pairs = None if base_name(names[0]) == base_name(names[1]) else [f"^{re.escape(names[0])}$=^{re.escape(names[1])}$"]
    d = diff(bad.to_dict(), fixed.to_dict(), pairs=pairs)
    assert d["kind"] == "diff" and d["summary"]["matched"] == 1
    assert not d["unmatched"]["base"] and not d["unmatched"]["new"]
    k = d["kernels"][0]
    expected = bad.kernels[0].kernel.duration_ns / fixed.kernels[0].kernel.duration_ns
    assert k["speedup"] == pytest.approx(expected, rel=1e-4)
    assert d["summary"]["speedup"] == pytest.approx(expected, rel=1e-4)
    assert k["verdict"] == (
        "faster" if expected >= 1 + NOISE else "slower" if expected <= 1 / (1 + NOISE) else "unchanged"
    )
    # Resolved, persisting and new are the two analyses' findings compared by id.
    got = k["findings"]
    bad_ids, fixed_ids = {f.id for f in bad.kernels[0].findings}, {f.id for f in fixed.kernels[0].findings}
    assert {f["id"] for f in got["resolved"]} == bad_ids - fixed_ids
    assert {f["id"] for f in got["persisting"]} == bad_ids & fixed_ids
    assert {f["id"] for f in got["new"]} == fixed_ids - bad_ids
    # The planted finding is resolved (samples where it is not raised, or persists in the fixed
    # variant, are strict expected failures with the manifest's reason).
    planted = manifest()[case]["finding"]
    resolved_ids = [f["id"] for f in got["resolved"]]
    assert planted in resolved_ids, (planted, resolved_ids)
    assert k["match"] == ("name" if names[0] == names[1] else "function name" if pairs is None else "pair")
    # The base's estimate for what was resolved, beside the measured speedup.
    resolved = [f["estimated_speedup"] for f in got["resolved"]]
    assert k["estimated_speedup"] == (max(resolved) if resolved else None)
    text = render_diff(d, "text")
    for fid in resolved_ids:
        assert re.search(rf"RESOLVED\s+{re.escape(fid)}", text)
    assert f"measured speedup {speedup(expected)}" in text  # one rounding (analysis/figures.py)


def test_swapped_diff_calls_the_finding_new_and_the_kernel_slower():
    bad, fixed = _pair("smem_occupancy")
    d = diff(fixed.to_dict(), bad.to_dict())
    k = d["kernels"][0]
    assert k["speedup"] == pytest.approx(
        fixed.kernels[0].kernel.duration_ns / bad.kernels[0].kernel.duration_ns, rel=1e-4
    )
    assert k["verdict"] == "slower"
    assert "occupancy-limited" in [f["id"] for f in k["findings"]["new"]]
    assert k["duration_change_pct"] > 0


def test_diff_values_are_the_trees_values():
    bad, fixed = _pair("smem_occupancy")
    k = diff(bad.to_dict(), fixed.to_dict())["kernels"][0]
    kb, kf = bad.kernels[0].kernel, fixed.kernels[0].kernel
    occ = k["occupancy"]
    assert occ["theoretical"]["base"] == pytest.approx(kb.m("sm__maximum_warps_per_active_cycle_pct"), abs=1e-3)
    assert occ["theoretical"]["new"] == pytest.approx(kf.m("sm__maximum_warps_per_active_cycle_pct"), abs=1e-3)
    assert occ["achieved"]["delta"] == pytest.approx(occ["achieved"]["new"] - occ["achieved"]["base"], abs=1e-3)
    assert k["stall_cycle_pct"]["base"] == pytest.approx(bad.kernels[0].stall_cycle_pct, abs=1e-2)
    # Stall reason shares cover all stall cycles on each side; groups are sums of their reasons.
    for side in ("base", "new"):
        assert sum(r[side] for r in k["reasons"]) == pytest.approx(100.0, abs=0.5)
    mem = {m["level"]: m for m in k["memory"]}
    split = bad.kernels[0].tree.find("Memory latency split")
    assert [mem[lv]["base"] for lv in ("L1 hits", "L2 hits", "DRAM")] == [
        split.find(lv).value for lv in ("L1 hits", "L2 hits", "DRAM")
    ]
    persist = {f["id"]: f for f in k["findings"]["persisting"]}
    for f in fixed.kernels[0].findings:
        if f.id in persist:
            assert persist[f.id]["new"]["estimated_speedup"] == pytest.approx(f.estimated_speedup, abs=1e-3)


def test_report_against_itself_is_unchanged():
    a = analysis_of("reload_rate", "bad").to_dict()
    k = diff(a, a)["kernels"][0]
    assert k["speedup"] == 1.0 and k["verdict"] == "unchanged"
    assert not k["findings"]["resolved"] and not k["findings"]["new"]
    assert [f["id"] for f in k["findings"]["persisting"]] == [f["id"] for f in a["kernels"][0]["findings"]]
    assert all(f["severity_change"] == "unchanged" and f["speedup_delta"] == 0 for f in k["findings"]["persisting"])
    assert all(r["delta"] == 0 for r in k["reasons"])


def _k(i, name, dur=1000.0):
    return {"id": i, "name": name, "duration_ns": dur, "findings": [], "tree": {}}


def test_matching_by_name_then_launch_order_then_function_name():
    base = [_k(0, "void relax<(bool)0>(float *)"), _k(1, "init(int)"), _k(2, "init(int)", 10.0), _k(3, "gone()")]
    new = [_k(0, "init(int)"), _k(1, "void relax<(bool)1>(float *)"), _k(2, "init(int)", 20.0), _k(3, "fresh()")]
    matched, ub, un = match_kernels(base, new)
    pairs = [(b["id"], n["id"], how) for b, n, how in matched]
    assert pairs == [(0, 1, "function name"), (1, 0, "name"), (2, 2, "name")]
    assert [k["name"] for k in ub] == ["gone()"] and [k["name"] for k in un] == ["fresh()"]
    d = diff({"report": "a", "kernels": base}, {"report": "b", "kernels": new})
    assert d["unmatched"]["base"][0]["name"] == "gone()"
    assert d["kernels"][2]["speedup"] == 0.5
    assert "unmatched (base only): id 3 gone()" in render_diff(d, "text", RenderOptions(width=200))
    # An explicit pair wins; several kernels per side are never paired by elimination.
    matched, ub, un = match_kernels(base, new, pairs=["gone=fresh"])
    assert ("gone()", "fresh()", "pair") in [(b["name"], n["name"], h) for b, n, h in matched] and not ub and not un
    assert match_kernels([_k(0, "a()")], [_k(0, "b()")])[0] == []
    assert match_kernels([_k(0, "a()"), _k(1, "c()")], [_k(0, "b()"), _k(1, "d()")])[0] == []
    with pytest.raises(UsageError):
        match_kernels(base, new, pairs=["nope"])


@pytest.mark.parametrize(
    "name, expect",
    [
        ("void relax<(bool)0>(const float *, float *)", "relax"),
        ("relax<0>(const float *, float *)", "relax"),
        ("saxpy_stride(float, const float *, float *, unsigned long)", "saxpy_stride"),
        ("void ns::k<std::pair<int, int>>(T *)", "ns::k"),
        ("(anonymous namespace)::f(int)", "{anon}::f"),
        ("plain", "plain"),
    ],
)
def test_base_name(name, expect):
    assert base_name(name) == expect


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.scripts = [], 0

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        self.refs += [v for k, v in attrs if k in ("src", "href") and v and not v.startswith("#")]


def test_html_is_self_contained_and_escaped():
    bad, fixed = _pair("aos_gather")
    b, n = bad.to_dict(), fixed.to_dict()
    b["kernels"][0]["name"] = n["kernels"][0]["name"] = "evil<script>alert(1)</script>(int)"
    html = render_diff(diff(b, n), "html")
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    p = _Tags()
    p.feed(html)
    assert p.refs == [] and p.scripts == 0
    assert "global-uncoalesced" in html and "resolved" in html
    expected = bad.kernels[0].kernel.duration_ns / fixed.kernels[0].kernel.duration_ns
    assert speedup(expected) in html


def test_list_rows_sort_and_filter():
    analyses = [analysis_of(c, v).to_dict() for c in ("few_blocks", "aos_gather") for v in ("bad", "fixed")]
    rows = list_rows(analyses)
    assert len(rows) == 4
    by_dur = sort_rows(rows, "duration")
    durs = [r["duration_ns"] for r in by_dur]
    assert durs == sorted(durs, reverse=True)
    assert by_dur[0]["top_finding"] == analyses[0]["kernels"][0]["findings"][0]["id"]
    assert [r["name"] for r in sort_rows(rows, "name", top=2)] == sorted(r["name"] for r in rows)[:2]
    stalls = [r["stall_cycle_pct"] for r in sort_rows(rows, "stall")]
    assert stalls == sorted(stalls, reverse=True)
    text = render_list_text(rows, width=200)
    assert text.splitlines()[0].startswith("report") and "few_blocks_bad.ncu-rep" in text and "saxpy_stride(" in text
    narrow = render_list_text(rows, width=80)  # the analysis columns leave no room for names: a block each
    assert "top finding grid-too-small (high" in narrow and max(map(len, narrow.splitlines())) <= 80
    with pytest.raises(UsageError):
        sort_rows(rows, "speed")


def test_load_accepts_saved_analysis_json_and_refuses_others(tmp_path):
    a = analysis_of("aos_gather", "bad").to_dict()
    f = tmp_path / "base.json"
    f.write_text(json.dumps(a))
    assert load(f)["kernels"][0]["name"] == a["kernels"][0]["name"]
    assert load(f, kernel="aos")["kernels"] and load(f, kernel="0")["kernels"]
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(ReportFormatError, match="not a drgpu analysis"):
        load(tmp_path / "x.json")
    (tmp_path / "d.json").write_text(json.dumps(diff(a, a)))
    with pytest.raises(ReportFormatError, match="diff"):
        load(tmp_path / "d.json")


def test_cli_diff_formats_and_saved_baseline(tmp_path):
    bad, fixed = str(report_path("few_blocks", "bad")), str(report_path("few_blocks", "fixed"))
    r = runner.invoke(app, ["diff", bad, fixed, "-f", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert "grid-too-small" in [f["id"] for f in d["kernels"][0]["findings"]["resolved"]]
    base_json = tmp_path / "base.json"
    assert runner.invoke(app, ["analyze", bad, "-o", str(base_json)]).exit_code == 0
    r2 = runner.invoke(app, ["diff", str(base_json), fixed, "-f", "json"])
    assert r2.exit_code == 0, r2.output
    assert json.loads(r2.stdout)["kernels"][0]["speedup"] == d["kernels"][0]["speedup"]
    before = base_json.read_bytes()
    r3 = runner.invoke(app, ["diff", str(base_json), fixed, "-o", str(base_json), "--force"])
    assert r3.exit_code == 6 and "input" in r3.output and base_json.read_bytes() == before
    out = tmp_path / "d.html"
    assert runner.invoke(app, ["diff", bad, fixed, "-o", str(out)]).exit_code == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert runner.invoke(app, ["diff", bad, fixed, "-o", str(out)]).exit_code == 6
    r = runner.invoke(app, ["diff", bad, fixed, "-k", "zzz"])
    assert r.exit_code == 5
    r = runner.invoke(app, ["diff", bad, fixed, "-f", "svg"])
    assert r.exit_code == 2


def test_cli_list_plain_and_json():
    reps = [str(report_path("few_blocks", v)) for v in ("bad", "fixed")] + [str(report_path("aos_gather", "bad"))]
    # A fixed width: the table (not the narrow blocks) whatever COLUMNS the test process has.
    r = runner.invoke(app, ["list", *reps, "--sort", "duration", "--top", "2"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["report", "id", "duration_us", "grid", "block", "kernel"] and len(lines) == 3
    assert "few_blocks_bad.ncu-rep" in lines[1] and "16x1x1" in lines[1]  # listed, not analyzed
    r = runner.invoke(app, ["list", *reps, "-k", "scale_keys", "-f", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["kernels"]
    assert [row["report"] for row in rows] == ["aos_gather_bad.ncu-rep"]
    assert not math.isnan(rows[0]["duration_ns"]) and rows[0]["grid"][0] > 0
    assert runner.invoke(app, ["list", *reps, "-k", "zzz"]).exit_code == 5
    assert runner.invoke(app, ["list", *reps, "--sort", "bogus"]).exit_code == 2


def _listed_names(text: str) -> dict[str, str]:
    """Launch id -> kernel name as ``drgpu list`` shows it: the last column of a line, or the
    first line of a launch's block."""
    lines = text.splitlines()
    if lines[0].startswith("id "):
        col = lines[0].index("kernel")
        return {line.split()[0]: line[col:] for line in lines[1:]}
    return dict(line.split(None, 1) for line in lines if not line.startswith(" "))


def test_list_reads_launches_without_analyzing(monkeypatch):
    """``drgpu list`` of a report reads each launch's names, id, grid, block and duration (as
    the full reader gives them) and nothing else: the analysis never runs. Each line fits the
    width; different kernels keep different names."""
    import drgpu_py.analysis as analysis
    import drgpu_py.pipeline as pipeline
    import drgpu_py.readers as readers
    from conftest import library_report

    step = library_report("step")  # a PyTorch model step: 18 launches of 15 kernels
    full = readers.open_report(step)

    def refuse(*args, **kwargs):
        raise AssertionError("drgpu list analyzed the report")

    for module, name in [(analysis, "analyze"), (analysis, "analyze_kernel"), (pipeline, "analyze_reports")]:
        monkeypatch.setattr(module, name, refuse)
    monkeypatch.setattr(readers, "open_report", refuse)
    monkeypatch.setattr(pipeline, "open_report", refuse)
    rows = json.loads(runner.invoke(app, ["list", str(step), "-f", "json"]).stdout)["kernels"]
    assert [(r["id"], r["name"], r["grid"], r["block"]) for r in rows] == [
        (k.id, k.name, list(k.grid), list(k.block)) for k in full.kernels
    ]
    assert [r["duration_ns"] for r in rows] == pytest.approx([k.duration_ns for k in full.kernels])
    assert all(r["stall_cycle_pct"] is None and r["bound"] is None and r["top_finding"] is None for r in rows)
    for width in (60, 80, 100, 120, 200):
        monkeypatch.setenv("COLUMNS", str(width))
        r = runner.invoke(app, ["list", str(step)])
        assert r.exit_code == 0, r.output
        assert max(map(len, r.stdout.splitlines())) <= width
        shown = _listed_names(r.stdout)
        assert sorted(shown, key=int) == [str(k.id) for k in full.kernels]
        by_name = {k.name: shown[str(k.id)] for k in full.kernels}
        assert len(set(by_name.values())) == len(by_name), "different kernels, different names"


def test_list_says_which_library_kernels_a_pattern_left_out():
    """On a PyTorch step (cuBLAS nvjet_* GEMMs, cuDNN, ATen kernels and one Triton kernel), a
    pattern that picks only the Triton kernel lists it and says, in one hint line on stderr,
    which library kernels it left out; one that picks nothing names them in its error's hint."""
    from conftest import library_report

    step = str(library_report("step"))
    r = runner.invoke(app, ["list", step, "-k", "triton", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert [row["name"] for row in json.loads(r.stdout)["kernels"]] == ["triton_poi_fused_add_mul_silu_0"]
    hints = [line for line in r.stderr.splitlines() if line.startswith("drgpu: hint: ")]
    assert len(hints) == 1 and "--kernel 'triton' matched none of the 13 library kernel(s)" in hints[0], r.stderr
    assert "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT" in hints[0] and "and 8 more" in hints[0]
    for picks_a_library_kernel in ("nvjet", "triton|gemm", "17"):
        r = runner.invoke(app, ["list", step, "-k", picks_a_library_kernel, "-f", "json"])
        assert r.exit_code == 0 and "hint" not in r.stderr, (picks_a_library_kernel, r.stderr)
    r = runner.invoke(app, ["list", step, "-k", "zzz"])
    assert r.exit_code == 5 and "its library kernels (named by their library" in r.stderr, r.stderr
    assert "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT" in r.stderr


def test_diff_and_list_json_are_strict_json(tmp_path):
    """No bare NaN/Infinity in any JSON drgpu writes (diff, list, analyze): strict parsers
    (JavaScript's JSON.parse, jq) reject them."""
    import json

    def strict(text):
        return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))

    a, b = str(report_path("serial_norm", "bad")), str(report_path("aos_gather", "bad"))
    # A saved baseline whose numbers are not finite (Python's json writes NaN/Infinity).
    # (The CLI in this process: what it writes is the text a drgpu process prints.)
    base = json.loads(runner.invoke(app, ["analyze", b, "-f", "json"]).stdout)
    base["kernels"][0]["duration_ns"] = float("nan")
    base["kernels"][0]["stall_cycle_pct"] = float("inf")
    odd = tmp_path / "baseline.json"
    odd.write_text(json.dumps(base))
    for argv in (
        ["diff", str(odd), b, "-f", "json"],
        ["list", str(odd), b, "-f", "json"],
        ["diff", a, b, "-f", "json"],
        ["list", a, b, "-f", "json"],
        ["analyze", a, "-f", "json"],
        ["diff", str(report_path("fence_loop", "bad")), str(report_path("fence_loop", "fixed")), "-f", "json"],
    ):
        r = runner.invoke(app, argv)
        assert r.exit_code == 0, r.output
        strict(r.stdout)


def test_diff_of_unrelated_kernels_says_no_matching_kernel_and_resolves_nothing():
    """Two reports of different programs: nothing is paired, nothing called resolved."""
    a, b = analysis_of("few_blocks", "bad").to_dict(), analysis_of("aos_gather", "bad").to_dict()
    assert a["kernels"][0]["findings"]
    d = diff(a, b)
    assert d["summary"]["matched"] == 0 and d["summary"]["resolved"] == 0 and not d["kernels"]
    assert [k["name"] for k in d["unmatched"]["base"]] == [a["kernels"][0]["name"]]
    text = render_diff(d, "text")
    assert "no matching kernel" in text and "RESOLVED" not in text
    r = runner.invoke(app, ["diff", str(report_path("few_blocks", "bad")), str(report_path("aos_gather", "bad"))])
    assert r.exit_code == 0 and "no matching kernel" in r.stdout and "RESOLVED" not in r.stdout


def test_fail_on_regression_fails_when_nothing_was_compared(tmp_path):
    """A renamed kernel matches nothing: ``--fail-on-regression`` exits 15 (nothing-compared)
    after writing the output, naming the kernels of each side and the ``--pair`` that pairs
    them; paired, the same check compares them and passes. Without the check, a diff that
    compares nothing is no failure."""
    bad, fixed = str(report_path("aos_gather", "bad")), str(report_path("aos_gather", "fixed"))
    out = tmp_path / "d.json"
    r = runner.invoke(app, ["diff", bad, fixed, "--fail-on-regression", "-o", str(out)])
    assert r.exit_code == 15, r.output
    assert "drgpu: nothing-compared: no kernel matched" in r.output
    assert "base kernels scale_keys_aos; new kernels scale_keys_soa" in r.output
    assert "--pair scale_keys_aos=scale_keys_soa" in r.output
    assert json.loads(out.read_text())["summary"]["matched"] == 0, "the output is written first"
    paired = ["--pair", "scale_keys_aos=scale_keys_soa"]
    assert runner.invoke(app, ["diff", bad, fixed, "--fail-on-regression", *paired]).exit_code == 0
    assert runner.invoke(app, ["diff", bad, fixed]).exit_code == 0


def test_nothing_compared_names_each_side():
    def kernel(name):
        return {"id": 0, "name": name, "duration_ns": 1.0}

    matched = {"kernels": [{}], "unmatched": {"base": [], "new": []}}
    assert nothing_compared(matched) is None
    many = [kernel(f"void k{i}<(int)4>(float *)") for i in range(7)] + [kernel("void k0<(int)4>(float *)")]
    e = nothing_compared({"kernels": [], "unmatched": {"base": many, "new": [kernel("ns::f(int)")]}})
    assert e.exit_code == 15 and e.kind == "nothing-compared"
    assert e.message.endswith(
        "base kernels void k0<(int)4>, void k1<(int)4>, void k2<(int)4>, void k3<(int)4>, void k4<(int)4> "
        "and 2 more; new kernels ns::f"
    )
    assert "here --pair" not in e.hint, "several kernels on a side: no pair to suggest"
    one = nothing_compared({"kernels": [], "unmatched": {"base": [kernel("a::g<1>(x)")], "new": [kernel("h(y)")]}})
    assert one.hint.endswith("here --pair a::g=h")


def test_diff_shows_absolute_cycles_per_reason_and_estimated_vs_measured():
    bad, fixed = _pair("smem_occupancy")
    b, f = bad.to_dict(), fixed.to_dict()
    k = diff(b, f)["kernels"][0]
    kb = bad.kernels[0].kernel
    assert k["elapsed_cycles"]["base"] == pytest.approx(kb.m("gpc__cycles_elapsed.max"), rel=1e-6)
    stall_b = kb.m("sm__cycles_active.avg") * bad.kernels[0].stall_cycle_pct / 100.0
    assert k["stall_cycles"]["base"] == pytest.approx(stall_b, rel=1e-3)
    # Each reason's stall cycles are its share of the kernel's stall cycles, on both sides.
    assert sum(r["stall_cycles"]["base"] for r in k["reasons"]) == pytest.approx(stall_b, rel=0.01)
    for r in k["reasons"]:
        sc = r["stall_cycles"]
        assert sc["delta"] == pytest.approx(sc["new"] - sc["base"], abs=0.2)
    text = render_diff(diff(b, f), "text")
    assert "elapsed cycles" in text and "cycles per SM" in text
    assert (
        f"estimated       {speedup(k['estimated_speedup'])} for the resolved findings, measured {speedup(k['speedup'])}"
        in text
    )


def test_diff_text_columns_stay_aligned_with_long_labels():
    # Labels were padded to 50 characters: a longer one ran into the numbers and shifted them.
    bad, fixed = _pair("smem_occupancy")
    d = diff(bad.to_dict(), fixed.to_dict())
    g = next(g for g in d["kernels"][0]["groups"] if max(abs(g["base"] or 0), abs(g["new"] or 0)) >= 0.5)
    g["label"] = "A group label much longer than the fifty characters the old layout padded to"
    lines = render_diff(d, "text", RenderOptions(width=200)).splitlines()
    head = next(line for line in lines if "share of stall cycles" in line)
    row = next(line for line in lines if g["label"] in line)
    # the base value ends under the end of the "base" header, one or more spaces after the label
    end = head.index("base") + len("base")
    assert row[end - 1] != " " and row[end] == " ", (head, row)
    assert row[:end].rstrip().endswith("%") and g["label"] + " " in row, (head, row)


@pytest.mark.parametrize("width", [40, 60, 80, 100, 120, 200])
def test_diff_text_follows_the_width(width):
    """No line of ``drgpu diff``'s text is wider than the width (COLUMNS, as the other text
    outputs): lines wrap between words, a share table wraps its labels or becomes blocks, kernel
    names are shortened only where they cannot be whole. Numbers stay whole with their units,
    and every row of the share tables keeps its numbers."""
    bad, fixed = _pair("aos_gather")
    d = diff(bad.to_dict(), fixed.to_dict(), pairs=["scale_keys_aos=scale_keys_soa"])
    text = render_diff(d, "text", RenderOptions(width=width))
    lines = text.splitlines()
    assert max(map(len, lines)) <= width, max(lines, key=len)
    k = d["kernels"][0]
    for number in (
        speedup(k["speedup"]),
        us(k["duration_ns"]["base"], ",.2f"),
        f"{k['stall_cycle_pct']['delta']:+.1f} pp",
        *(f"{g['stall_cycles']['delta']:+,.0f}" for g in k["groups"] if max(g["base"], g["new"]) >= 0.5),
        *(f"{r['delta']:+.1f} pp" for r in k["reasons"] if max(r["base"], r["new"]) >= 0.5),
    ):
        assert any(re.search(rf"(?<![\w.,]){re.escape(number)}(?![\w.,])", line) for line in lines), number
    names = (k["base"]["name"], k["new"]["name"])
    if width >= len(max(names, key=len)) + 6:
        assert all(any(name in line for line in lines) for name in names), "whole names where they fit"
    assert "RESOLVED   global-uncoalesced:" in text


def test_cli_diff_text_follows_columns():
    bad, fixed = str(report_path("aos_gather", "bad")), str(report_path("aos_gather", "fixed"))
    for columns in ("80", "60"):
        r = runner.invoke(
            app, ["diff", bad, fixed, "--pair", "scale_keys_aos=scale_keys_soa"], env={"COLUMNS": columns}
        )
        assert r.exit_code == 0, r.output
        assert max(map(len, r.stdout.splitlines())) <= int(columns)
    wide = runner.invoke(app, ["diff", bad, fixed, "--pair", "scale_keys_aos=scale_keys_soa"], env={"COLUMNS": "200"})
    assert max(map(len, wide.stdout.splitlines())) > 120, "a wide terminal keeps the long lines"


def _walk_dicts(node: dict):
    yield node
    for c in node["children"]:
        yield from _walk_dicts(c)


def _analysis_json(a, relabel=False, keyless=False) -> dict:
    """``a``'s JSON dict, its keyed nodes' labels renamed, or without keys (older JSON)."""
    d = a.to_dict()
    for k in d["kernels"]:
        for n in _walk_dicts(k["tree"]):
            if relabel and "key" in n:
                n["name"] = "Renamed " + n["name"]
            if keyless:
                n.pop("key", None)
    return d


def _no_labels(chart: dict) -> dict:
    split = chart.get("split")
    if split is not None:
        split = {**split, "segments": [{**s, "label": None} for s in split["segments"]]}
    return {**chart, "split": split}


def test_diff_and_html_charts_find_tree_nodes_by_key_not_by_label():
    import copy
    import dataclasses

    from drgpu_py.render.html import charts

    bad, fixed = _pair("reload_rate")
    ref = diff(_analysis_json(bad), _analysis_json(fixed))["kernels"][0]
    assert len(ref["memory"]) == 3 and ref["occupancy"]["achieved"]["base"] is not None
    renamed = diff(_analysis_json(bad, relabel=True), _analysis_json(fixed, relabel=True))["kernels"][0]
    assert [m["level"] for m in renamed["memory"]] == ["Renamed " + m["level"] for m in ref["memory"]]
    assert [{**m, "level": None} for m in renamed["memory"]] == [{**m, "level": None} for m in ref["memory"]]
    assert renamed["occupancy"] == ref["occupancy"]
    # JSON written before nodes had keys is still compared by its labels.
    old = diff(_analysis_json(bad, keyless=True), _analysis_json(fixed, keyless=True))["kernels"][0]
    assert old["memory"] == ref["memory"] and old["occupancy"] == ref["occupancy"]
    # The HTML charts: the memory split and the occupancy limiter survive the renaming.
    ka = bad.kernels[0]
    tree = copy.deepcopy(ka.tree)
    for n in tree.walk():
        if n.key is not None:
            n.name = "Renamed " + n.name
    renamed_ka = dataclasses.replace(ka, tree=tree)
    for chart in (charts.memory_chart, charts.occupancy_chart):
        before, after = chart(ka), chart(renamed_ka)
        assert not before.get("missing") and not before.get("split_missing")
        assert _no_labels(after) == _no_labels(before)


@pytest.mark.parametrize("case", ["reload_rate", "fma_chain"])
def test_saved_analysis_round_trips_the_json_drgpu_writes(case, tmp_path):
    """analyze -> JSON -> Analysis.load -> JSON is the same text, and list and diff read the
    typed objects as they read the dicts."""
    from drgpu_py.analysis import Analysis
    from drgpu_py.analysis.saved import SavedAnalysis, SavedKernel
    from drgpu_py.analysis.tree import Node
    from drgpu_py.render import render

    bad, fixed = _pair(case)
    text = render(bad, "json")
    f = tmp_path / "bad.json"
    f.write_text(text, encoding="utf-8")
    saved = Analysis.load(f)
    assert isinstance(saved, SavedAnalysis) and all(isinstance(k, SavedKernel) for k in saved.kernels)
    assert isinstance(saved.kernels[0].tree, Node)
    assert [x.id for x in saved.kernels[0].findings] == [x.id for x in bad.kernels[0].findings]
    assert render(saved, "json") == text
    assert diff(saved, fixed.to_dict()) == diff(bad.to_dict(), fixed.to_dict())
    assert list_rows([saved]) == list_rows([bad.to_dict()])


def test_html_colours_a_stall_cause_by_its_cycles_not_its_share():
    """Issue 46, item 5: a cause whose share of the stall cycles rose while its cycles fell
    (the other causes fell more) reads green, not red; one whose cycles rose reads red."""
    bad, fixed = _pair("smem_occupancy")
    d = diff(bad.to_dict(), fixed.to_dict())
    k = d["kernels"][0]
    g = next(g for g in k["groups"] if (g["base"] or 0) >= 0.5)
    g.update(base=20.0, new=40.0, delta=20.0, stall_cycles={"base": 1000.0, "new": 400.0, "delta": -600.0})
    k["reasons"] = [r for r in k["reasons"] if r["reason"] not in _group_members().get(g["group"], ())]
    html = render_diff(d, "html")
    row = re.search(rf"<td>{re.escape(g['label'])}</td>.*?</tr>", html, re.S)
    assert row is not None
    assert 'class="num good"' in row.group(0) and "+20.0 pp" in row.group(0), row.group(0)
    g.update(base=40.0, new=20.0, delta=-20.0, stall_cycles={"base": 400.0, "new": 1000.0, "delta": 600.0})
    row = re.search(rf"<td>{re.escape(g['label'])}</td>.*?</tr>", render_diff(d, "html"), re.S)
    assert row is not None and 'class="num bad"' in row.group(0), row.group(0)
