"""What a report lacks that a finding's detector reads is said in the kernel's notes, never
dropped in silence (analysis/coverage.py): reports of ``ncu --set full`` lack nothing; the
same report without the SM and L1 unit throughputs (what ``drgpu profile``'s default set left
out before issue 33) names them for the findings its detectors made."""

from __future__ import annotations

from drgpu_py.analysis import analyze
from drgpu_py.readers import open_report

from conftest import analysis_of, report_path

L1 = "l1tex__throughput.avg.pct_of_peak_sustained_elapsed"
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"


def _coverage_notes(kernel_analysis) -> list[str]:
    return [n for n in kernel_analysis.notes if "not evaluated fully" in n]


def _without_unit_throughputs(case: str):
    prof = open_report(report_path(case, "bad"))
    for k in prof.kernels:
        del k.metrics[L1], k.metrics[SM]
    return analyze(prof).kernels[0]


def test_full_set_reports_get_no_coverage_note():
    for case in ("rowwalk_sum", "smem_stride", "global_atomics", "local_hist"):
        for variant in ("bad", "fixed"):
            ka = analysis_of(case, variant).kernels[0]
            assert not _coverage_notes(ka), (case, variant, ka.notes)


def test_a_finding_dropped_for_want_of_a_metric_is_named():
    """rowwalk_sum: global-uncoalesced at 3.3x with the full set; without L1's throughput its
    traffic term is empty, the estimate falls below the reporting floor and the finding goes.
    The note says so and how to collect what is missing."""
    assert analysis_of("rowwalk_sum", "bad").kernels[0].findings[0].id == "global-uncoalesced"
    ka = _without_unit_throughputs("rowwalk_sum")
    assert "global-uncoalesced" not in {f.id for f in ka.findings}
    # The report has the sections' other metrics: the note names the two metrics, not their
    # sections (specs/loader.reprofile_advice).
    assert _coverage_notes(ka) == [
        f"global-uncoalesced not evaluated fully: the report lacks {L1}, {SM} (collected by drgpu profile's "
        "default set, or ncu --metrics naming them)"
    ]


def test_a_finding_reported_without_a_metric_is_named_too():
    """smem_stride: shared-bank-conflict is still found, at less than half its full-set
    estimate; the note names it."""
    ka = _without_unit_throughputs("smem_stride")
    assert ka.findings[0].id == "shared-bank-conflict"
    assert ka.findings[0].estimated_speedup < analysis_of("smem_stride", "bad").kernels[0].findings[0].estimated_speedup
    (note,) = _coverage_notes(ka)
    assert note.startswith("shared-bank-conflict not evaluated fully: the report lacks ") and L1 in note
