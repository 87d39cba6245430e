"""The frames' short names (issue 46, item 4): different kernels never share one, and each is
the form the terminal's summary would give at its widest (profile.short_names)."""

from __future__ import annotations

from conftest import library_analysis
from drgpu_py.analysis.display import NAME_WIDTH
from drgpu_py.profile import short_names


def test_kernels_and_findings_frames_keep_different_kernels_apart():
    a = library_analysis("step")  # four elementwise, three layer-norm and three nvjet kernels
    kernels = a.kernels_frame()
    pairs = kernels[["kernel", "short_name"]].drop_duplicates()
    assert pairs["short_name"].is_unique, pairs[pairs["short_name"].duplicated(keep=False)]
    expected = short_names([ka.kernel.name for ka in a.kernels], NAME_WIDTH)
    assert dict(zip(pairs["kernel"], pairs["short_name"])) == {n: expected[n] for n in pairs["kernel"]}
    findings = a.findings_frame()
    assert dict(zip(findings["kernel"], findings["short_name"])) == {n: expected[n] for n in findings["kernel"]}


def test_html_summary_names_are_the_terminals():
    """The HTML summary table names each kernel as the terminal's summary does at its widest:
    the same short names, not a narrower cut."""
    import html

    from drgpu_py.render import render
    from drgpu_py.render.html.summary import SHORT_NAME_W

    a = library_analysis("step")
    assert SHORT_NAME_W == NAME_WIDTH
    page = render(a, "html")
    expected = short_names([ka.kernel.name for ka in a.kernels], NAME_WIDTH)
    longest = max(expected.values(), key=len)
    assert len(longest) > 30
    assert html.escape(longest, quote=False) in page or longest in page
