"""The kernel's verdict (issue 46, item 1): one line first in every header (text, HTML, DOT,
JSON ``verdict``), saying how far the kernel is from its useful-work peak, what holds the time
and what to fix; how busy a unit is comes under it as a detail, and the header has one useful
figure, written by one formatter."""

from __future__ import annotations

import json
import re

from conftest import analysis_of
from drgpu_py.analysis.figures import pct, share_pct, speedup
from drgpu_py.analysis.tree import location_text
from drgpu_py.analysis.verdict import useful_share
from drgpu_py.render import RenderOptions, render


def _header(text: str) -> list[str]:
    """The first kernel's header panel, its lines without the box."""
    lines = text[: text.index("╰")].splitlines()[1:]
    return [ln.strip("│ ").rstrip() for ln in lines]


def test_the_verdict_comes_first_and_says_what_to_fix():
    a = analysis_of("global_atomics", "bad")
    ka = a.kernels[0]
    top = ka.findings[0]
    expected = (
        f"{share_pct(useful_share(ka.useful, ka.ledger))}% of useful-work peak (DRAM at ideal width); "
        f"{top.id} holds {share_pct(top.time_share)}% of the time: fix {location_text(top.locations[0])} "
        f"(est. {'≥' if top.estimate_capped else ''}{speedup(top.estimated_speedup)})"
    )
    assert ka.verdict == expected
    assert ka.verdict.startswith("1% of useful-work peak") and "atomic-contention holds 98% of the time" in ka.verdict
    head = _header(render(a, "text", RenderOptions(width=250)))
    assert head[1] == f"verdict: {expected}", head
    # No second grade line: busyness is a detail line, and one "useful" figure.
    assert not any(ln.startswith(("speed of light:", "useful work:", "bound:")) for ln in head), head
    assert f"busiest unit: L2 cache at {pct(ka.sol.limiter_pct)}% of peak (speed of light: poor)" in head[-1]
    useful = [m for ln in head for m in re.findall(r"(\d+)% of useful-work peak|useful (\d+)%", ln)]
    assert {x or y for x, y in useful} == {"1"}, useful
    doc = json.loads(render(a, "json"))
    assert doc["kernels"][0]["verdict"] == expected
    assert f"verdict: {expected}" in render(a, "dot")
    assert f"<strong>verdict:</strong> {expected}" in render(a, "html")


def test_a_kernel_near_its_useful_work_peak_has_little_to_gain():
    ka = analysis_of("double_literal", "fixed").kernels[0]
    assert ka.verdict.endswith(": little to gain"), ka.verdict
    assert ka.verdict.startswith(f"at {share_pct(useful_share(ka.useful, ka.ledger))}% of useful-work peak")


def test_the_header_and_time_line_print_one_useful_figure():
    """A fix that removes work counted useful (slow-math's powf) once printed 'useful 23% (of
    37% counted useful ...)' under 'useful work: poor (37% ...)': now the one figure is the
    verdict's, and the line says how much of it a fix removes."""
    ka = analysis_of("gravity_powf", "bad").kernels[0]
    figure = share_pct(useful_share(ka.useful, ka.ledger))
    assert ka.verdict.startswith(f"{figure}% of useful-work peak")
    assert ka.ledger.text().startswith(f"useful {figure}% (")
    assert "counted useful" not in ka.ledger.text()
