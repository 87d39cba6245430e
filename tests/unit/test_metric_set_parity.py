"""``drgpu profile`` collects what drgpu's own analysis reads.

For every chip with a metric set (metric_sets/CHIP.yaml) and an ncu catalogue
(metric_sets/catalogues/), the default selection (``MetricSet.selection().expected``: the
explicit ``--metrics`` and what the chosen sections provide) holds every metric of
``coverage.metric_needs()`` (each finding's detector, the speed of light, the useful work and
time ledger), under its canonical name or an alias of specs/metrics.yaml; and every explicit
one exists on the chip. A metric missing there is a finding drgpu's own reports evaluate
without its evidence (issue 33: without l1tex__throughput, global-uncoalesced's traffic term is
empty; on sample_reports/rowwalk_sum the finding, 3.3x with ``--set full``, was dropped).
"""

from __future__ import annotations


import pytest

from conftest import metric_literals
from drgpu_py.analysis import coverage, ledger, sol
from drgpu_py.analysis.detectors import REGISTRY
from drgpu_py.specs import loader as data
from drgpu_py.specs import metric_sets as msets

CHIPS = [
    name
    for name in msets.available_sets()
    if name != "base" and (msets.metric_sets_dir() / "catalogues" / f"metrics_{name}.txt.xz").is_file()
]


def _collected(name: str, expected: set[str]) -> bool:
    return any(alias in expected for alias in data.metric_aliases(name))


def _needed() -> dict[str, set[str]]:
    """Metric -> who needs it, less what no ncu metric set can hold: ``drgpu__*`` metrics are
    written by drgpu itself when it merges the reports of ranks (rank-imbalance)."""
    out: dict[str, set[str]] = {}
    for who, metrics in coverage.metric_needs().items():
        for m in metrics:
            if not m.startswith("drgpu__"):
                out.setdefault(m, set()).add(who)
    return out


def test_every_supported_chip_is_checked():
    assert "gh100" in CHIPS
    assert set(CHIPS) == {name for name in msets.available_sets() if name != "base"}


@pytest.mark.parametrize("chip", CHIPS)
def test_default_set_collects_every_metric_the_analysis_reads(chip):
    sel = msets.load_metric_set(chip).selection()
    expected = set(sel.expected)
    missing = {m: sorted(who) for m, who in _needed().items() if not _collected(m, expected)}
    assert not missing, f"{chip}: the default set lacks {missing}"
    catalogue = msets.load_catalogue(chip)
    explicit = [m for m in _needed() if m in sel.metrics]
    assert not {m: msets.metric_problem(m, catalogue) for m in explicit if msets.metric_problem(m, catalogue)}


def test_derived_metrics_come_from_the_sections_that_define_them():
    """ncu computes ``derived__*`` metrics inside a section (its MetricDefinitions); they
    cannot be passed to ``--metrics``. Each one the analysis reads must therefore come from
    a section of the default set, directly or as the metric its definition reads:

    - derived__memory_l2_theoretical_sectors_global_excessive: SourceCounters defines it as
      memory_l2_theoretical_sectors_global - memory_l2_theoretical_sectors_global_ideal
      (ncu 2025.3.1); the default set collects SourceCounters and lists it under `provides`.
    - derived__local_spilling_requests: MemoryWorkloadAnalysis (not in the default set: its
      replay passes) defines it as simplify(sass__inst_executed_register_spilling); that
      metric comes with SourceCounters, and specs/metrics.yaml reads it as an alias."""
    derived = {m for m in _needed() if m.startswith("derived__")}
    assert derived == {
        "derived__memory_l2_theoretical_sectors_global_excessive",
        "derived__local_spilling_requests",
    }, "a new derived metric: say here which section defines it and how the default set gets it"
    sel = msets.load_metric_set("gh100").selection()
    assert not derived & set(sel.metrics)
    sampling = msets.load_metric_set("gh100").groups["sampling"]
    assert sampling.sections == ["SourceCounters"]
    assert "derived__memory_l2_theoretical_sectors_global_excessive" in sampling.provides
    assert data.metric_aliases("derived__local_spilling_requests")[1:] == ["sass__inst_executed_register_spilling"]
    assert "sass__inst_executed_register_spilling" in sampling.provides


def test_speed_of_light_and_ledger_declare_what_they_read():
    """Every metric named in sol.py is in SOL_METRICS or stands in for one of them; every
    metric named in ledger.py is in LEDGER_METRICS (the ledger reads the rest through the
    speed of light)."""
    assert metric_literals(sol) <= set(sol.SOL_METRICS) | set(sol.SOL_STAND_INS)
    assert set(sol.SOL_STAND_INS.values()) <= set(sol.SOL_METRICS)
    assert metric_literals(ledger) <= set(ledger.LEDGER_METRICS)


def test_needs_cover_every_finding_and_pass():
    needs = coverage.metric_needs()
    ids = [f["id"] for f in data.findings_catalogue()["findings"]]
    assert list(needs) == [*ids, coverage.SPEED_OF_LIGHT, coverage.TIME_LEDGER]
    assert needs["global-uncoalesced"] == REGISTRY["uncoalesced"].metrics
    assert "l1tex__throughput.avg.pct_of_peak_sustained_elapsed" in needs["global-uncoalesced"]
    for name, shown in coverage.EVIDENCE_ONLY.items():
        assert shown <= set(REGISTRY[name].metrics), name
