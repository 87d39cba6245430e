"""repeated-pass on real reports: which loads read again what an earlier pass read, and
which look alike and do not.

* ho3_rowsoftmax_32t: the three-pass row softmax (max, sum of exp, write) reads each row in
  three passes separated by warp shuffles: the sum and write passes' loads (lines 27 and 31)
  are the repeated ones. The row is 512 bytes per warp and the later reads hit L1, so their
  samples stay under the threshold: the finding is found and not raised (the sample's
  measured fix is its block size).
* Loads that look alike and are one pass: an unrolled loop and its remainder (one source line
  compiled twice: dot_atomic), a GEMM's first tile and the prefetches in its k loop (the same
  indices, 256 times as many loads: ho3_regcap_spill), loads at several lines of one pass
  with no exchange between them (naive_transpose).
"""

from __future__ import annotations

import pytest

from conftest import report_path
from drgpu_py.analysis import AnalysisOptions, analyze as analyze_profile
from drgpu_py.analysis.context import KernelContext
from drgpu_py.analysis.detectors.memory import repeated_pass
from drgpu_py.readers import open_report
from drgpu_py.specs import loader


def _context(case: str, variant: str = "bad") -> KernelContext:
    kernel = open_report(report_path(case, variant)).kernels[0]
    return KernelContext.build(kernel, loader.thresholds())


def _lines(ctx: KernelContext, pcs: list[int]) -> set[int]:
    return {int(ctx.df.loc[pc, "line"]) for pc in pcs}


def test_three_pass_softmax_repeats_two_passes():
    ctx = _context("ho3_rowsoftmax_32t")
    assert ctx.cfg is not None
    later, passes = repeated_pass._later_passes(ctx, ctx.cfg)
    assert passes == 3
    assert _lines(ctx, later) == {27, 31}


def test_later_passes_served_by_l1_are_not_raised():
    ctx = _context("ho3_rowsoftmax_32t")
    assert ctx.cfg is not None
    later, _ = repeated_pass._later_passes(ctx, ctx.cfg)
    share, _ = repeated_pass.cost_share(ctx, later, None, ("long_scoreboard", "short_scoreboard"))
    assert 0 < share < ctx.th["repeated_pass_share"]
    analysis = analyze_profile(open_report(report_path("ho3_rowsoftmax_32t", "bad")))
    assert all(f.id != "repeated-pass" for k in analysis.kernels for f in k.findings)


def test_raised_below_a_lower_threshold_with_its_passes_and_limit():
    """The same kernel with the threshold under its share: raised, with the passes in its
    advice and an estimate at its own limit (removing every later-pass sample)."""
    options = AnalysisOptions(thresholds=loader.thresholds({"repeated_pass_share": 0.01}))
    analysis = analyze_profile(open_report(report_path("ho3_rowsoftmax_32t", "bad")), options)
    found = [f for k in analysis.kernels for f in k.findings if f.id == "repeated-pass"]
    assert len(found) == 1
    f = found[0]
    assert f.evidence["passes"] == 3 and f.evidence["repeated_loads"] == 8
    assert "3 passes" in f.advice
    assert f.estimated_speedup_alone <= f.evidence["mechanism_limit"]["value"] + 1e-3
    assert {loc["line"] for loc in f.locations} <= {27, 31}


@pytest.mark.parametrize(
    "case",
    ["dot_atomic", "ho3_regcap_spill", "naive_transpose", "conv7_rolled", "ho4_fir128_window"],
)
def test_one_pass_loads_are_not_repeats(case):
    ctx = _context(case)
    assert ctx.cfg is not None
    assert repeated_pass._later_passes(ctx, ctx.cfg) == ([], 1)
