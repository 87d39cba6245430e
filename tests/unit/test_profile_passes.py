"""Two-pass profiling's pure parts: when a profile takes two runs, which kernels the second run
takes (the share rule), its filter, the split of the metric set, and the join of the two
reports launch by launch (drgpu_py.ncu.passes, drgpu_py.readers.passes)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from drgpu_py.errors import UsageError
from drgpu_py.ncu import passes as two
from drgpu_py.ncu.session import ProfileRequest
from drgpu_py.profile import KernelProfile, Profile
from drgpu_py.readers.passes import join_passes
from drgpu_py.specs import metric_sets as msets

DURATION = "gpu__time_duration.sum"


def _req(**kw) -> ProfileRequest:
    return replace(ProfileRequest(app=["/bin/echo"], output_dir=Path("/tmp/x"), stem="app"), **kw)


def _second() -> msets.Selection:
    ms = msets.load_metric_set("gh100")
    return ms.split(ms.selection())[1]


# ------------------------------------------------------------------------------ how many runs
def test_one_pass_is_one_run_whatever_the_request():
    assert two.plan_passes("1", _req(launch_skip=3), _second())[0] == 1


def test_two_passes_and_auto_take_two_runs_of_a_plain_request():
    assert two.plan_passes("2", _req(), _second())[0] == 2
    assert two.plan_passes("auto", _req(launch_count=5), _second())[0] == 2


@pytest.mark.parametrize(
    "kw",
    [{"launch_skip": 2}, {"replay_mode": "range"}, {"replay_mode": "app-range"}, {"rank_var": "OMPI_COMM_WORLD_RANK"}],
)
def test_a_request_whose_runs_cannot_be_joined_refuses_two_and_falls_back_under_auto(kw):
    with pytest.raises(UsageError, match="--passes 2 cannot be used"):
        two.plan_passes("2", _req(**kw), _second())
    runs, why = two.plan_passes("auto", _req(**kw), _second())
    assert runs == 1 and "one run" in why


def test_auto_takes_one_launch_in_one_run_but_two_is_honoured():
    runs, why = two.plan_passes("auto", _req(launch_count=1), _second())
    assert runs == 1 and "--launch-count 1" in why
    assert two.plan_passes("2", _req(launch_count=1), _second())[0] == 2


def test_a_set_with_nothing_left_for_a_second_run_is_one_run():
    empty = msets.Selection(sections=[], metrics=[], groups=[], expected=[])
    assert two.plan_passes("auto", _req(), empty)[0] == 1
    with pytest.raises(UsageError):
        two.plan_passes("2", _req(), empty)


def test_unknown_mode_and_share_out_of_range_are_usage_errors():
    with pytest.raises(UsageError):
        two.plan_passes("3", _req(), _second())
    for share in (0.0, -0.1, 1.5):
        with pytest.raises(UsageError, match="--focus-share"):
            two.check_focus_share(share)


# ------------------------------------------------------------------------------ the share rule
def _times(*pairs) -> list[two.KernelTime]:
    return [two.KernelTime(key=k, name=k, launches=1, time_ns=t) for k, t in pairs]


def test_focus_takes_the_longest_kernels_until_the_share_is_reached():
    times = _times(("a", 20.0), ("b", 100.0), ("c", 30.0), ("d", 50.0))  # total 200
    assert [t.key for t in two.focus(times, 0.8)] == ["b", "d", "c"]  # 100, 150 < 160, then 180
    assert [t.key for t in two.focus(times, 0.5)] == ["b"]  # 100 reaches 100
    assert [t.key for t in two.focus(times, 0.51)] == ["b", "d"]
    assert {t.key for t in two.focus(times, 1.0)} == {"a", "b", "c", "d"}


def test_focus_breaks_ties_by_first_launch_and_skips_unmeasured_kernels():
    times = _times(("x", None), ("p", 10.0), ("q", 10.0))
    assert [t.key for t in two.focus(times, 0.5)] == ["p"]
    assert "x" not in {t.key for t in two.focus(times, 1.0)}


def test_without_any_duration_every_kernel_is_in_focus():
    times = _times(("a", None), ("b", None))
    assert [t.key for t in two.focus(times, 0.8)] == ["a", "b"]


def _launch(kid: int, mangled: str, dur: float | None, **metrics) -> KernelProfile:
    m = dict(metrics)
    if dur is not None:
        m[DURATION] = dur
    return KernelProfile(id=kid, name=mangled.strip("_Z"), mangled=mangled, metrics=m)


def test_kernel_times_sum_each_kernels_launches_by_mangled_name():
    p = Profile(
        path="p1",
        format="ncu-rep",
        kernels=[_launch(0, "_Z1a", 5.0), _launch(1, "_Z1b", None), _launch(2, "_Z1a", 7.0), _launch(3, "_Z1b", None)],
    )
    got = {t.key: (t.launches, t.time_ns) for t in two.kernel_times(p)}
    assert got == {"_Z1a": (2, 12.0), "_Z1b": (2, None)}


# ------------------------------------------------------------------------------ the second run's filter
def test_focus_regex_matches_exactly_the_chosen_names():
    chosen = [two.KernelTime("_Z3fooPf", "foo", 2, 1.0), two.KernelTime("k.v$1", "k", 1, 1.0)]
    rx = re.compile(two.focus_regex(chosen))
    assert rx.search("_Z3fooPf") and rx.search("k.v$1")
    assert not rx.search("_Z3fooPfi") and not rx.search("x_Z3fooPf") and not rx.search("kxv$1")


def test_second_request_takes_the_focus_launches_by_mangled_name_without_source():
    chosen = [two.KernelTime("_Z1a", "a", 3, 9.0), two.KernelTime("_Z1b", "b", 2, 4.0)]
    req = _req(kernel="a|b|c", kernel_name_base="function", launch_count=40, nvtx_include=["step/"])
    r2 = two.second_request(req, chosen, "app.pass2")
    assert (r2.kernel_name_base, r2.launch_count, r2.launch_skip, r2.import_source) == ("mangled", 5, None, False)
    assert r2.kernel == two.focus_regex(chosen) and r2.stem == "app.pass2"
    assert r2.nvtx_include == ["step/"]  # the first run's other filters stay


def test_dry_run_placeholder_count_follows_the_kernel_filter():
    argv = ["ncu", "--kernel-name-base", "mangled", "-k", "regex:<FOCUS_KERNELS>", "-o", "x", "app"]
    assert two.with_count_placeholder(argv)[5:7] == ["-c", two.FOCUS_COUNT_PLACEHOLDER]


# ------------------------------------------------------------------------------ the metric set's split
@pytest.mark.parametrize("chip", ["base", "gh100", "tu102"])
def test_split_divides_the_selection_without_loss_or_overlap(chip):
    ms = msets.load_metric_set(chip)
    sel = ms.selection(add_metrics=["dram__bytes_read.sum"])
    first, second = ms.split(sel)
    assert set(first.groups) == {g for g in sel.groups if ms.groups[g].first_pass} and first.groups
    assert sorted(first.metrics + second.metrics) == sorted(sel.metrics)
    assert sorted(first.sections + second.sections) == sorted(sel.sections)
    assert sorted(first.expected + second.expected) == sorted(sel.expected)
    assert "dram__bytes_read.sum" in second.metrics  # what the user adds goes to the focus kernels
    assert "gpu__time_duration.sum" in first.metrics  # the share rule needs every launch's duration


# ------------------------------------------------------------------------------ the join
def _frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({"pc": list(range(n)), "inst_executed": [1.0] * n})


def test_join_gives_focus_launches_both_runs_metrics_and_leaves_the_rest_unmeasured():
    a0 = replace(_launch(0, "_Z1a", 10.0, shared=1.0), instructions=_frame(3))
    b0 = replace(_launch(1, "_Z1b", 2.0), instructions=_frame(2))
    a1 = replace(_launch(2, "_Z1a", 11.0), instructions=_frame(3))
    first = Profile(path="r.pass1", format="ncu-rep", kernels=[a0, b0, a1])
    second = Profile(
        path="r.pass2",
        format="ncu-rep",
        kernels=[
            _launch(0, "_Z1a", 99.0, **{"sm__throughput.avg.pct_of_peak_sustained_elapsed": 40.0, "shared": 5.0}),
            _launch(1, "_Z1a", 98.0, **{"sm__throughput.avg.pct_of_peak_sustained_elapsed": 41.0}),
            _launch(2, "_Z1c", 1.0),  # no counterpart in the first run
        ],
    )
    joined = join_passes(first, second, "OUTSIDE")
    assert [k.id for k in joined.kernels] == [0, 1, 2]
    ja0, jb0, ja1 = joined.kernels
    assert ja0.m("sm__throughput.avg.pct_of_peak_sustained_elapsed") == 40.0
    assert ja1.m("sm__throughput.avg.pct_of_peak_sustained_elapsed") == 41.0  # the second launch joins the second
    assert ja0.m(DURATION) == 10.0 and ja0.m("shared") == 1.0  # a name both hold keeps the first run's value
    assert len(ja0.instructions) == 3  # per-instruction data from the first run
    assert jb0.m("sm__throughput.avg.pct_of_peak_sustained_elapsed") is None  # not measured, not a stand-in
    assert "OUTSIDE" in jb0.notes and "OUTSIDE" not in ja0.notes
    assert any("1 launch(es) of the second pass have no counterpart" in n for n in joined.notes)
    assert first.kernels[0].metrics == {DURATION: 10.0, "shared": 1.0}  # inputs untouched


def test_join_takes_from_the_second_report_only_the_focus_kernels():
    first = Profile(path="p1", format="ncu-rep", kernels=[_launch(0, "_Z1a", 1.0), _launch(1, "_Z1b", 2.0)])
    second = Profile(
        path="p2", format="ncu-rep", kernels=[_launch(0, "_Z1a", 1.0, x=1.0), _launch(1, "_Z1b", 2.0, x=2.0)]
    )
    ja, jb = join_passes(first, second, "OUTSIDE", focus={"_Z1b"}).kernels
    assert ja.m("x") is None and "OUTSIDE" in ja.notes
    assert jb.m("x") == 2.0 and "OUTSIDE" not in jb.notes


SAMPLE = Path(__file__).resolve().parents[2] / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"


def test_joined_analysis_equals_one_run_in_focus_and_notes_what_was_not_checked_outside():
    from drgpu_py.pipeline import analyze_read_profile
    from drgpu_py.readers import open_report

    ms = msets.load_metric_set("gh100")
    second_only = set(ms.split(ms.selection())[1].metrics)
    whole = open_report(SAMPLE)
    # what a first run collects: the report without the second run's metrics
    cheap = Profile(
        path="r.pass1",
        format="ncu-rep",
        kernels=[
            replace(k, metrics={n: v for n, v in k.metrics.items() if n not in second_only}) for k in whole.kernels
        ],
    )
    one_run = analyze_read_profile(whole).kernels[0]
    inside = analyze_read_profile(join_passes(cheap, whole, "OUTSIDE", {k.mangled for k in whole.kernels})).kernels[0]
    outside = analyze_read_profile(join_passes(cheap, whole, "OUTSIDE", set())).kernels[0]
    assert one_run.findings  # the sample has a finding to lose
    assert [(f.id, f.estimated_speedup) for f in inside.findings] == [
        (f.id, f.estimated_speedup) for f in one_run.findings
    ]
    assert "OUTSIDE" in outside.notes
    lost = {f.id for f in one_run.findings} - {f.id for f in outside.findings}
    assert lost and all(any(n.startswith(f"{fid} not evaluated fully") for n in outside.notes) for fid in lost)


def test_analyze_joins_a_two_pass_pair_and_merges_other_reports_as_before():
    from drgpu_py.pipeline import passes_pair

    assert passes_pair([Path("d/app.pass1.ncu-rep"), Path("d/app.pass2.ncu-rep.xz")])
    assert not passes_pair([Path("d/app.pass2.ncu-rep"), Path("d/app.pass1.ncu-rep")])
    assert not passes_pair([Path("d/app.pass1.ncu-rep"), Path("d/other.pass2.ncu-rep")])
    assert not passes_pair([Path("d/r0.ncu-rep"), Path("d/r1.ncu-rep")])
