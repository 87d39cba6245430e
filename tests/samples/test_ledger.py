"""The time ledger (analysis/ledger.py) on the shipped samples: every nanosecond of a kernel's
elapsed time has one owner (useful work, a finding's claim, a mechanism or "unexplained"), the efficiency
grade measures useful work rather than busyness, and every output shows the ledger."""

from __future__ import annotations

import json

import pytest

from conftest import CASES, analysis_of, library_analysis, sample_params, slow, timed_speedup
from drgpu_py.analysis.figures import share_pct, speedup

RANK = {"poor": 0, "okay": 1, "good": 2, "excellent": 3}


def _ledgers():
    """Every sample's ledgers (the tests that sweep them are slow)."""
    for case in CASES:
        for variant in ("bad", "fixed"):
            yield f"{case}/{variant}", analysis_of(case, variant).kernels[0]
    for stem in ("library", "step"):
        for ka in library_analysis(stem).kernels:
            yield f"{stem}/{ka.kernel.id}", ka


@slow
def test_every_ledger_adds_up_to_the_elapsed_time():
    checked = 0
    for where, ka in _ledgers():
        ledger = ka.ledger
        if ledger is None:
            assert ka.useful is None or ka.useful.elapsed_ns is None, where
            continue
        attributed = sum(a.ns for a in ledger.attributed)
        parts = ledger.useful_ns + sum(x.ns for x in ledger.losses) + attributed + ledger.unexplained_ns
        assert parts == pytest.approx(ledger.elapsed_ns, rel=0.01), where
        assert all(a.ns > 0 and set(a.raised) <= set(a.owners) for a in ledger.attributed), where
        assert ledger.elapsed_ns == pytest.approx(ka.kernel.duration_ns, rel=1e-9), where
        for x in ledger.losses:
            assert 0.0 <= x.claimed_share <= x.wanted_share + 1e-12, (where, x)
        assert {x.owner for x in ledger.losses} == {f.id for f in ka.findings}, where
        checked += 1
    assert checked >= 2 * len(CASES)


@slow
def test_claims_never_count_time_twice():
    """Findings that want more time than useful work leaves share it: largest claim first,
    each at most what is left, so the claims never exceed the elapsed time less useful work."""
    overlapping = 0
    for where, ka in _ledgers():
        ledger = ka.ledger
        if ledger is None:
            continue
        headroom = ledger.elapsed_ns - ledger.useful_ns
        assert sum(x.ns for x in ledger.losses) <= headroom * (1 + 1e-9), where
        wanted = sum(x.wanted_share for x in ledger.losses) * ledger.elapsed_ns
        if wanted > headroom:
            overlapping += 1
            assert ledger.unexplained_ns == pytest.approx(0.0, abs=1e-6 * ledger.elapsed_ns), where
            assert not ledger.attributed, where
    assert overlapping >= 1  # the samples do have findings that overlap


@pytest.mark.parametrize("case", sample_params(c for c in CASES if timed_speedup(c) >= 1.5))
def test_a_bad_variant_with_a_large_measured_fix_grades_below_good(case):
    """A kernel whose fix measured 1.5x or more is not doing useful work at 60 % of peak,
    however busy its busiest unit is (units busy with excess sectors, conflicts, overhead)."""
    ka = analysis_of(case, "bad").kernels[0]
    assert RANK[ka.useful.grade] < RANK["good"], (case, ka.useful.to_dict())


@slow
def test_unexplained_time_is_named():
    """Wherever time is left unowned and the kernel has stall data, the ledger names the top
    stall reasons (and their lines when the report has them)."""
    for where, ka in _ledgers():
        ledger = ka.ledger
        if ledger is None or ledger.unexplained_ns <= 0 or not ka.context.reasons:
            continue
        assert ledger.unexplained_top, where
        shares = [top["stall_share"] for top in ledger.unexplained_top]
        assert shares == sorted(shares, reverse=True), where


@pytest.mark.parametrize("case", sample_params(CASES))
def test_a_bad_variant_leaves_at_most_30_percent_unexplained(case):
    """Every blamed sample of a bad variant lands with an owner (useful work, a claim or a
    mechanism of specs/attribution.yaml) or in "unexplained", which stays at most 30 % of the
    elapsed time."""
    ledger = analysis_of(case, "bad").kernels[0].ledger
    assert ledger.unexplained_ns <= 0.30 * ledger.elapsed_ns, (case, ledger.text())


def test_the_unclaimed_time_goes_to_the_mechanism_the_slice_blames():
    """hop_chains (pointer chasing, 4 lists walked one after another): the time memory-latency's
    claim leaves is mostly long-scoreboard samples the slice blames on the chasing loads, so
    "waiting for global loads" is the largest unclaimed part, owned by memory-latency (raised),
    at the line of the load. A mechanism's share shrinks by the claim of a finding that owns it:
    with the claim taken away, the same mechanism gets more."""
    from drgpu_py.analysis.attribution import attribute

    ka = analysis_of("hop_chains", "bad").kernels[0]
    ledger = ka.ledger
    top = ledger.attributed[0]
    assert top.mechanism == "global-latency" and "memory-latency" in top.raised
    assert top.top_line is not None and top.top_line["line"] is not None
    claims = {x.owner: x.ns for x in ledger.losses if x.ns > 0}
    rest = ledger.elapsed_ns - ledger.useful_ns - sum(claims.values())
    with_claims = attribute(ka.context, rest, ledger.useful_ns, ledger.elapsed_ns, claims, claims)
    without = attribute(ka.context, rest, ledger.useful_ns, ledger.elapsed_ns, {}, claims)
    share = {p.mechanism: p.ns for p in with_claims.parts}
    assert share == pytest.approx({a.mechanism: a.ns for a in ledger.attributed})
    assert {p.mechanism: p.ns for p in without.parts}["global-latency"] > share["global-latency"]


def test_every_output_shows_the_ledger(tmp_path):
    from drgpu_py.render import RenderOptions, render

    a = analysis_of("aos_gather", "bad")
    ledger = a.kernels[0].ledger
    doc = json.loads(render(a, "json"))
    k = doc["kernels"][0]
    assert k["ledger"]["useful_share"] == pytest.approx(ledger.useful_ns / ledger.elapsed_ns, abs=1e-4)
    assert k["speed_of_light"]["useful"]["grade"] == a.kernels[0].useful.grade
    assert [x["finding"] for x in k["ledger"]["losses"]] == [x.owner for x in ledger.losses]
    assert [x["mechanism"] for x in k["ledger"]["attributed"]] == [x.mechanism for x in ledger.attributed]
    text = render(a, "text", RenderOptions(width=200))
    assert f"time: {ledger.text()}" in text and f"verdict: {a.kernels[0].verdict}" in text
    assert "Where the time goes" in render(a, "html")
    assert "time: useful" in render(a, "dot")


@slow
def test_every_estimate_is_what_its_ledger_share_implies():
    """A finding's estimate is elapsed / (elapsed - the time the ledger gives it): the share
    its text states and its estimate agree; where the ledger gave it less than its own bounded
    estimate wanted, the ``ledger`` bound names the cut."""
    checked = cut = 0
    for where, ka in _ledgers():
        ledger = ka.ledger
        if ledger is None:
            assert all(f.time_share is None for f in ka.findings), where
            continue
        entries = {x.owner: x for x in ledger.losses}
        for f in ka.findings:
            entry = entries[f.id]
            assert f.time_share == pytest.approx(entry.claimed_share, abs=1e-12), (where, f.id)
            assert f.estimated_speedup == pytest.approx(1.0 / (1.0 - f.time_share), rel=1e-6), (where, f.id)
            assert f"{share_pct(f.time_share)}% of the time" in f.speedup_text(), (
                where,
                f.id,
            )  # one rounding (figures.py)
            if entry.claimed_share < entry.wanted_share - 1e-9:
                cut += 1
                assert f.bounded_by == "ledger", (where, f.id)
                assert f.bounds[-1]["kind"] == "ledger" and f.bounds[-1]["why"] in " ".join(f.notes), (where, f.id)
            else:
                assert f.bounded_by != "ledger", (where, f.id)
            checked += 1
    assert checked >= len(CASES) and cut >= 1


@slow
def test_severity_follows_the_estimate_on_any_grade():
    """A finding's severity is its settled estimate's, whatever the speed-of-light grade: a
    loss worth 1.25x or more is high on a kernel graded excellent on its busiest unit too."""
    from drgpu_py.analysis.findings import severity_of

    high_on_busy = 0
    for where, ka in _ledgers():
        for f in ka.findings:
            assert f.severity == severity_of(f.estimated_speedup, ka.context.th), (where, f.id)
            if f.severity == "high" and ka.sol is not None and RANK.get(ka.sol.grade or "", -1) >= RANK["good"]:
                high_on_busy += 1
    assert high_on_busy >= 1  # aos_gather/bad: DRAM 'excellent', uncoalesced high


def _held_out() -> dict:
    from conftest import SAMPLES, load_yaml

    return load_yaml(SAMPLES / "heldout.yaml")["held_out"]


@pytest.mark.parametrize("case", sample_params(sorted(_held_out())))
def test_held_out_ledgers_add_up(case):
    """The held-out pairs (sample_reports/heldout.yaml) judge the frozen estimators and are
    reported apart (docs/calibration.md); here only the bookkeeping is checked: the bad
    variant's ledger adds up, every finding's estimate is its ledger share, and the expected
    finding is a catalogue id."""
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report
    from drgpu_py.specs import loader as data

    from conftest import SAMPLES

    spec = _held_out()[case]
    assert spec["finding"] in {f["id"] for f in data.findings_catalogue()["findings"]}
    a = analyze(open_report(SAMPLES / case / f"{case}_bad.ncu-rep"))
    ka = next(k for k in a.kernels if spec["kernels"]["bad"] in (k.kernel.name or ""))
    ledger = ka.ledger
    parts = ledger.useful_ns + sum(x.ns for x in ledger.losses) + sum(a.ns for a in ledger.attributed)
    assert parts + ledger.unexplained_ns == pytest.approx(ledger.elapsed_ns, rel=0.01)
    for f in ka.findings:
        assert f.estimated_speedup == pytest.approx(1.0 / (1.0 - f.time_share), rel=1e-6), f.id


def test_an_advice_that_quotes_the_estimate_quotes_the_settled_one():
    """Where the ledger gives a finding less time than its change alone would remove, the
    estimate it reports is the settled one, and an advice written around the estimate ("about
    1.50x, then limited by ...") says that number too: text and estimate never disagree."""
    import yaml

    from conftest import ROOT

    held_out: set[str] = set()
    for path in (ROOT / "sample_reports").glob("heldout*.yaml"):
        held_out |= set(yaml.safe_load(path.read_text(encoding="utf-8"))["held_out"])
    analyses = list(_ledgers()) + [(case, analysis_of(case, "bad").kernels[0]) for case in sorted(held_out)]
    quoting = cut = 0
    for where, ka in analyses:
        for f in ka.findings:
            if f.advice_template is None or "{estimate" not in f.advice_template[0]:
                continue
            quoting += 1
            cut += f.bounded_by == "ledger"
            assert speedup(f.estimated_speedup) in f.advice, (where, f.id, f.advice)  # as the column reads
    assert quoting >= 10, quoting


def test_a_finding_cut_by_a_larger_claim_quotes_its_settled_estimate():
    """few_blocks' grid-too-small quotes its estimate ("about 21.13x"); a larger claim settled
    ahead of it (a made-up finding asking for nearly all the time) leaves it less, and its
    advice then quotes what it is left, the estimate it reports."""
    from dataclasses import replace

    from drgpu_py.analysis.settle import settle

    ka = analysis_of("few_blocks", "bad").kernels[0]
    grid = next(f for f in ka.findings if f.id == "grid-too-small")
    assert speedup(grid.estimated_speedup) in grid.advice
    larger = replace(grid, id="memory-latency", estimated_speedup=200.0, advice="", advice_template=None)
    settled, _ = settle(ka.context, ka.useful, [larger, replace(grid, bounded_by=None)])
    cut = next(f for f in settled if f.id == "grid-too-small")
    assert cut.bounded_by == "ledger" and cut.estimated_speedup < grid.estimated_speedup
    assert speedup(cut.estimated_speedup) in cut.advice and speedup(grid.estimated_speedup) not in cut.advice
