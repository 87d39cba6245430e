"""The notes ``analysis/coverage.py`` writes when a report lacks a metric a finding's detector
reads, on small stand-in kernels (tests/samples/test_coverage_notes.py runs them through the
analysis of a real report)."""

from __future__ import annotations

from drgpu_py.analysis import coverage
from drgpu_py.profile import KernelProfile
from drgpu_py.specs import loader as data

L1 = "l1tex__throughput.avg.pct_of_peak_sustained_elapsed"
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"


def _kernel(*without: str) -> KernelProfile:
    """A kernel whose report has every metric the analysis reads except ``without``."""
    every = {m for metrics in coverage.metric_needs().values() for m in metrics}
    return KernelProfile(id=0, name="k", metrics={m: 1.0 for m in every - set(without)})


def test_a_lacking_metric_is_named_with_where_it_is_collected():
    """The section is named when the report lacks it (none of its metrics is there); when the
    section is there, the metric itself is named (ncu --metrics): the section would not bring it."""
    assert coverage._note(["global-uncoalesced"], (L1,), KernelProfile(id=0, name="k")) == (
        f"global-uncoalesced not evaluated fully: the report lacks {L1} "
        "(collected by drgpu profile's default set, or ncu --section MemoryWorkloadAnalysis)"
    )
    notes = coverage.missing_metric_notes(_kernel(L1), ["global-uncoalesced"])
    assert notes == [
        f"global-uncoalesced not evaluated fully: the report lacks {L1} "
        "(collected by drgpu profile's default set, or ncu --metrics naming it)"
    ]


def test_findings_lacking_the_same_metrics_share_one_note():
    kernel = _kernel(L1, SM, "lts__t_sectors_srcunit_tex_op_read.sum")
    notes = coverage.missing_metric_notes(kernel, ["global-uncoalesced", "atomic-contention", "grid-too-small"])
    assert len(notes) == 2
    assert notes[0].startswith("global-uncoalesced, grid-too-small not evaluated fully: the report lacks ")
    assert f"{L1}, {SM} (" in notes[0] and "--metrics naming them)" in notes[0]
    assert notes[1].startswith("atomic-contention not evaluated fully")
    assert "lts__t_sectors_srcunit_tex_op_read.sum" in notes[1]
    alone = coverage._note(["global-uncoalesced"], (L1, SM), KernelProfile(id=0, name="k"))
    assert alone.endswith("or ncu --section MemoryWorkloadAnalysis --section SpeedOfLight)")
    sol_only = KernelProfile(id=0, name="k", metrics={m: 1.0 for m in data.section_metrics("SpeedOfLight")})
    mixed = coverage._note(["global-uncoalesced"], (L1, SM), sol_only)
    assert mixed.endswith(f"or ncu --section MemoryWorkloadAnalysis, or ncu --metrics naming {SM})")


def test_a_metric_newer_than_the_reports_ncu_asks_for_a_newer_ncu():
    """The section is in the report but an older ncu did not have the metric (specs/metrics.yaml
    ``since``): re-profiling with the same section would not bring it, a newer ncu does."""
    dim = "launch__grid_dim_x"
    dims = [f"launch__{w}_dim_{d}" for w in ("grid", "block") for d in "xyz"]
    old = KernelProfile(id=0, name="k", metrics={m: 1.0 for m in data.section_metrics("LaunchStats") if m not in dims})
    note = coverage._note(["grid-too-small"], (dim,), old)
    assert note == (
        f"grid-too-small not evaluated fully: the report lacks {dim} (collected by drgpu profile's default set); "
        f"the report's ncu predates {dim}: re-profile with ncu >= 2020.1.1"
    )
    assert "--section" not in note
    assert coverage._note(["grid-too-small"], (dim,), KernelProfile(id=0, name="k")).endswith(
        "(collected by drgpu profile's default set, or ncu --section LaunchStats)"
    )


def test_complete_reports_and_findings_that_read_nothing_get_no_note():
    assert coverage.missing_metric_notes(_kernel(), ["global-uncoalesced", "local-memory"]) == []
    # slow-math reads no kernel metric; an id of no finding is skipped
    assert coverage.missing_metric_notes(_kernel(L1), ["slow-math", "no-such-finding"]) == []


def test_evidence_and_drgpus_own_rank_metrics_are_not_lacking():
    """A metric shown only as evidence does not change the finding; drgpu__* metrics are
    written by drgpu's merge of ranks, never by ncu."""
    kernel = _kernel("derived__local_spilling_requests", "drgpu__rank_count", "drgpu__rank_duration_spread")
    assert coverage.missing_metric_notes(kernel, ["local-memory", "rank-imbalance"]) == []
    assert coverage.lacking(_kernel("smsp__inst_executed.sum"), "local-memory") == ("smsp__inst_executed.sum",)
