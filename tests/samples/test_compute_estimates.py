"""The compute-side estimators' mechanisms, checked on the real sample reports: what a fix
changes that the estimate must see (not the estimated number itself)."""

from __future__ import annotations

from conftest import analysis_of


def _finding(case: str, fid: str, variant: str = "bad"):
    k = analysis_of(case, variant).kernels[0]
    return next((f for f in k.findings if f.id == fid), None)


def test_a_float_version_keeps_the_issue_slots_of_the_double_code():
    """fp64-conversion: a float version issues an instruction in place of each double one,
    so where warps wait for the issue slot (not_selected: kde_exp's double exp routine keeps
    the issue slots two-thirds busy) that wait stays; only the pipe and latency waits go. In
    double_literal and osc_dtparam, issue-light, the double code's waits alone cover the time."""
    kde = analysis_of("kde_exp", "bad").kernels[0]
    ctx = kde.context
    fp64 = ctx.pcs_where(lambda i: i.is_fp64() or i.is_f2f64())
    not_selected = sum(ctx.samples_at(fp64, ("not_selected",)).values()) / ctx.samples_total
    f = _finding("kde_exp", "fp64-conversion")
    assert not_selected > 0.2
    assert f.evidence["removed_sample_share"] < 0.8 and f.stall_share > 0.9
    for case in ("double_literal", "osc_dtparam"):
        assert _finding(case, "fp64-conversion").evidence["removed_sample_share"] == 1.0, case
