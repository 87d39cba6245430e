"""Merging reports from several GPUs/ranks: per-PC counts are joined by function offset (not
by absolute PC or row position), metrics follow their rollup, the analysis runs on the
merged profile, and the duration spread across ranks raises ``rank-imbalance``."""

from __future__ import annotations

import copy
import json
import math

import pytest
from typer.testing import CliRunner

from drgpu_py.analysis import AnalysisOptions, analyze
from drgpu_py.cli import app
from drgpu_py.specs.loader import thresholds
from drgpu_py.errors import InputError, UsageError
from drgpu_py.readers.merge import combine, merge_profiles, rollup
from drgpu_py.readers import open_report

from conftest import analysis_of, report_path

runner = CliRunner()
COUNTER_COLS = [
    "inst_executed",
    "thread_inst_executed",
    "samples",
    "stall_long_scoreboard",
    "stall_wait",
    "stall_short_scoreboard",
    "stall_selected",
    "l2_sectors_global",
]


def _read(case="double_literal", variant="bad"):
    return open_report(report_path(case, variant))


def _other_process(profile, shift=0x7A3510, scale=3.0, seed=7):
    """The same program as another process would record it: the code loaded at another
    address (PCs shifted), rows in another order, and different counts."""
    q = copy.deepcopy(profile)
    for k in q.kernels:
        df = k.instructions.copy()
        num = [c for c in df.columns if c not in ("offset", "sass", "file", "line", "shared_nway")]
        df[num] = df[num] * scale
        df.index = df.index + shift
        k.instructions = df.sample(frac=1.0, random_state=seed)
        k.function_base = (k.function_base or 0) + shift
    return q


def test_same_report_twice_doubles_every_per_pc_count():
    p = _read()
    k0 = p.kernels[0]
    m = merge_profiles([p, _read()])
    assert len(m.kernels) == 1 and m.format == "merged"
    mk = m.kernels[0]
    df0, dfm = k0.instructions, mk.instructions
    assert list(dfm.index) == list(df0.index)  # first report's base + offset
    for col in COUNTER_COLS:
        assert (dfm[col].to_numpy() == 2 * df0[col].to_numpy()).all(), col
    assert dfm["samples"].sum() > 0 and (dfm["sass"] == df0["sass"]).all()
    # Metrics by rollup: counts add up, averages and rates stay, configuration is kept.
    assert mk.m("smsp__inst_executed.sum") == 2 * k0.m("smsp__inst_executed.sum")
    assert mk.m("sm__throughput.avg.pct_of_peak_sustained_elapsed") == pytest.approx(
        k0.m("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    )
    assert mk.m("launch__grid_size") == k0.m("launch__grid_size")
    assert mk.duration_ns == pytest.approx(k0.duration_ns)
    assert mk.m("drgpu__rank_duration_spread") == 0.0


def test_join_is_by_function_offset_not_pc_or_position():
    p = _read()
    q = _other_process(_read())
    k0, kq = p.kernels[0], q.kernels[0]
    # The test only proves something if PCs and positions really differ.
    assert not set(k0.instructions.index) & set(kq.instructions.index)
    assert list(kq.instructions["offset"]) != list(k0.instructions["offset"])
    m = merge_profiles([p, q]).kernels[0].instructions
    assert list(m["offset"]) == sorted(k0.instructions["offset"])
    by_off0 = k0.instructions.set_index("offset")
    by_offq = kq.instructions.set_index("offset")
    merged = m.set_index("offset")
    for col in COUNTER_COLS:
        expect = by_off0[col] + by_offq[col].reindex(by_off0.index)
        assert (merged[col].reindex(by_off0.index) == expect).all(), col
        assert (merged[col].reindex(by_off0.index) == 4 * by_off0[col]).all(), col
    # Rows keep the first report's address space.
    assert list(m.index) == [k0.function_base + o for o in m["offset"]]


def test_merged_analysis_keeps_the_findings_and_the_lines():
    single = analysis_of("double_literal", "bad").kernels[0]
    merged = analyze(merge_profiles([_read(), _other_process(_read())])).kernels[0]
    assert [f.id for f in merged.findings] == [f.id for f in single.findings]
    loc_s, loc_m = single.findings[0].locations[0], merged.findings[0].locations[0]
    assert (loc_m["file"], loc_m["line"]) == (loc_s["file"], loc_s["line"])
    assert any("merged from 2 of 2 reports" in n for n in merged.notes)


def test_rank_imbalance_from_duration_spread():
    p, q = _read("aos_gather"), _read("aos_gather")
    q.kernels[0].metrics["gpu__time_duration.sum"] *= 1.4
    d0, d1 = p.kernels[0].duration_ns, q.kernels[0].duration_ns
    merged = merge_profiles([p, q])
    mk = merged.kernels[0]
    mean = (d0 + d1) / 2
    assert mk.duration_ns == pytest.approx(mean)
    assert mk.m("drgpu__rank_duration_spread") == pytest.approx((d1 - d0) / mean)
    res = analyze(merged).kernels[0]
    f = next(f for f in res.findings if f.id == "rank-imbalance")
    assert f.estimated_speedup == pytest.approx(max(d0, d1) / mean, rel=1e-3)
    assert f.evidence["slowest_rank"] == "aos_gather_bad#2"
    assert f.group == "launch" and "2 merged reports" in f.advice
    # Below the threshold: no finding (an identical pair has spread 0, see above).
    th = thresholds({"rank_imbalance": 0.5})
    assert "rank-imbalance" not in [f.id for f in analyze(merged, AnalysisOptions(thresholds=th)).kernels[0].findings]


def test_launches_match_by_name_and_order_and_partial_kernels_are_noted():
    a, b = _read("aos_gather"), _read("double_literal")
    m = merge_profiles([a, b])
    assert [k.name for k in m.kernels] == [a.kernels[0].name, b.kernels[0].name]
    assert all(k.m("drgpu__rank_count") == 1 for k in m.kernels)
    assert any("not in every report" in n for n in m.notes)
    assert any("missing from 1 report" in n for n in m.kernels[0].notes)
    # Two launches of one kernel in a report join the two launches of the other, in order.
    two = copy.deepcopy(a)
    second = copy.deepcopy(two.kernels[0])
    second.metrics["gpu__time_duration.sum"] *= 2
    second.id = 1
    two.kernels.append(second)
    m2 = merge_profiles([two, copy.deepcopy(two)])
    assert len(m2.kernels) == 2
    assert m2.kernels[1].duration_ns == pytest.approx(2 * m2.kernels[0].duration_ns)


def test_different_builds_are_refused():
    bad, fixed = _read("double_literal", "bad"), _read("double_literal", "fixed")
    fixed.kernels[0].name = bad.kernels[0].name
    with pytest.raises(InputError, match="SASS differs"):
        merge_profiles([bad, fixed])
    with pytest.raises(UsageError):
        merge_profiles([bad])


@pytest.mark.parametrize(
    "name, rule",
    [
        ("smsp__inst_executed.sum", "sum"),
        ("gpu__time_duration.sum", "avg"),
        ("sm__cycles_active.avg", "avg"),
        ("gpc__cycles_elapsed.max", "max"),
        ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "avg"),
        ("smsp__thread_inst_executed_per_inst_executed.ratio", "avg"),
        ("l1tex__t_sector_hit_rate.pct", "avg"),
        ("sm__maximum_warps_per_active_cycle_pct", "avg"),
        ("launch__grid_size", "first"),
        ("device__attribute_multiprocessor_count", "first"),
        ("derived__local_spilling_requests", "sum"),
        ("smsp__pcsamp_sample_count", "sum"),
        ("TPC.TriageCompute.sm__cycles_active.avg", "avg"),
        ("FE_B.TriageCompute.gr__ctas_launched_realtime.sum", "sum"),
        ("derived__lts__lts2xbar_bytes.sum.per_second", "avg"),
        ("lts__t_sectors.min", "min"),
    ],
)
def test_rollup_rule(name, rule):
    assert rollup(name) == rule


def test_combine_skips_missing_values():
    assert combine([1.0, math.nan, 3.0], "sum") == 4.0
    assert combine([1.0, math.nan, 3.0], "avg") == 2.0
    assert combine([5.0, 2.0], "first") == 5.0
    assert math.isnan(combine([math.nan], "max"))


def test_cli_merge_and_analyze_several_reports(tmp_path):
    r = str(report_path("few_blocks", "bad"))
    out = tmp_path / "merged.json"
    res = runner.invoke(app, ["merge", r, r, "-o", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["format"] == "merged" and len(d["kernels"]) == 1
    assert d["kernels"][0]["findings"][0]["id"] == "grid-too-small"
    assert any("merged 2 reports" in n for n in d["notes"])
    res = runner.invoke(app, ["analyze", r, r, "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["format"] == "merged"
    res = runner.invoke(app, ["merge", r])
    assert res.exit_code == 2 and "at least two" in res.output


def test_two_real_ranks_merge_by_name_and_sum_their_samples():
    """The per-rank reports of one program (sample_reports/ranks: ncu's own ``%q{...}`` output
    names, one process per rank): one kernel, rank_count 2, counts summed at each offset."""
    from pathlib import Path

    ranks = Path(__file__).resolve().parents[2] / "sample_reports" / "ranks"
    r0, r1 = (open_report(ranks / f"precise_math.rank{i}.ncu-rep") for i in (0, 1))
    m = merge_profiles([r0, r1])
    assert [k.name for k in m.kernels] == [r0.kernels[0].name] == [r1.kernels[0].name]
    mk = m.kernels[0]
    assert mk.m("drgpu__rank_count") == 2
    assert mk.strings["drgpu__rank_durations"].startswith("precise_math.rank0=")
    by_off = [k.instructions.set_index("offset") for k in (r0.kernels[0], r1.kernels[0])]
    merged = mk.instructions.set_index("offset")
    assert set(merged.index) == set(by_off[0].index) | set(by_off[1].index)
    for col in ("samples", "inst_executed", "stall_long_scoreboard"):
        expect = by_off[0][col].add(by_off[1][col], fill_value=0)
        assert (merged[col].reindex(expect.index).to_numpy() == expect.to_numpy()).all(), col
    assert merged["samples"].sum() == by_off[0]["samples"].sum() + by_off[1]["samples"].sum() > 0
    d = [r.kernels[0].duration_ns for r in (r0, r1)]
    assert mk.duration_ns == pytest.approx(sum(d) / 2)
    assert mk.m("drgpu__rank_duration_spread") == pytest.approx((max(d) - min(d)) / (sum(d) / 2))
