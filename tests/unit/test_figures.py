"""One rounding per quantity (analysis/figures.py): a live value and each stored copy of it
(4-decimal shares, the 1-decimal percentages of the summary rows and tree
attributes, 3-decimal speedups) are written alike (issue 46: DRAM read 90% in one place and
89% in another, one estimate 6.12x and 6.11x)."""

from __future__ import annotations

import random

from drgpu_py.analysis.figures import pct, share_pct, speedup


def test_a_value_and_its_stored_copies_read_alike():
    rng = random.Random(46)
    for _ in range(20_000):
        v = rng.uniform(0, 100)
        assert pct(v) == pct(round(v, 1)), v
        s = rng.uniform(0, 1)
        assert share_pct(s) == share_pct(round(s, 4)), s
        x = rng.uniform(1, 100)
        assert speedup(x) == speedup(round(x, 3)), x


def test_the_cases_of_the_issue():
    assert pct(89.46) == pct(89.5) == "90"
    assert speedup(6.1149) == speedup(6.115) == f"{6.115:.2f}x"
    assert pct(None) == share_pct(float("nan")) == speedup(None) == "n/a"
    assert pct(-0.3) == "0" and pct(99.99) == "100"
    assert (
        pct(1e300).startswith("1000000000")
        and pct(float("inf")) == "inf"
        and speedup(float("inf")) == "infx"
        and share_pct(float("-inf")) == "-inf"
    )
