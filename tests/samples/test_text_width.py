"""The terminal output of reports with many kernels at any width from 60 columns: the
1,000-launch benchmark report (5 kernel groups) and a real PyTorch model step (15 groups).

In the summary every column of every row is there (a table row, or a block of lines on a
narrow terminal), each cell whole on one line: kernel ids, numbers, grades and finding ids are
never cut or split; kernel names are shortened to different texts for different names. In
the kernels' findings every finding id and estimate is whole on one line. No line is wider
than the width."""

from __future__ import annotations

import re

import pytest

from conftest import api_analysis, library_report, many_kernels_report, slow
from drgpu_py.analysis.figures import pct
from drgpu_py.render import RenderOptions, render
from drgpu_py.render.units import microseconds

# Each in-process read of the 1,000-launch report would keep 1.4 GB (conftest.IN_PROCESS_KINDS).
pytestmark = pytest.mark.child_reader

WIDTHS = (60, 80, 100, 120, 200)


@pytest.fixture(scope="module", params=[pytest.param("many_kernels", marks=slow), "step"])
def analysis(request):
    # drgpu_py.analyze of the report, shared with test_groups and test_render_html
    return api_analysis(many_kernels_report() if request.param == "many_kernels" else library_report("step"))


def _whole(cell: str, line: str) -> bool:
    """``cell`` on ``line`` with nothing of a longer word or number around it."""
    return re.search(r"(?<![\w.,%-])" + re.escape(cell) + r"(?![\w.%-]|,\d)", line) is not None


def _summary_rows(text: str) -> dict[str, list[str]]:
    """The summary's lines by kernel id: a row starts at a line whose first cell is an id (a
    table row '│ 4  │ ...' or a block's first line '4  name'); the lines up to the next row
    are its own (a table row's wrapped cells, a block's lines)."""
    rows: dict[str, list[str]] = {}
    current = None
    for line in text[: text.index("Fix first")].splitlines():
        m = re.match(r"(?:│ )?(\d+) ", line)
        if m:
            current = m.group(1)
            rows[current] = []
        if current is not None and not line.startswith("└"):
            rows[current].append(line)
    return rows


def _shown_name(lines: list[str]) -> str:
    first = lines[0]
    if first.startswith("│"):
        return first.split("│")[2].strip()
    return first.split(None, 1)[1].strip()


@pytest.mark.parametrize("width", WIDTHS)
def test_summary_keeps_every_column_whole_at_any_width(analysis, width):
    text = render(analysis, "text", RenderOptions(width=width))
    assert max(len(line) for line in text.splitlines()) <= width
    summary = analysis.summary()
    rows = _summary_rows(text)
    assert list(rows) == [str(r["kernel_id"]) for r in summary[:15]], "one row per kernel group, in order"
    for r in summary[:15]:
        lines = rows[str(r["kernel_id"])]
        cells = [str(r["launches"]), microseconds(r["total_ns"]), f"{100 * r['time_share']:.1f}%"]
        cells.append(f"{r['grade']} ({r['limiter']} {pct(r['limiter_pct'])}%)")
        top = next((f for f in r["findings"] if f["estimated_speedup"] >= 1.02), None)  # worth reading
        if top:
            cells += [top["id"], microseconds(top["time_saved_ns"])]
        for cell in cells:
            assert any(_whole(cell, line) for line in lines), (
                f"{cell!r} not whole in row {r['kernel_id']}:\n" + "\n".join(lines)
            )
    names = {_shown_name(rows[str(r["kernel_id"])]): r["name"] for r in summary[:15]}
    assert len(names) == len({r["name"] for r in summary[:15]}), "different kernels, different names on screen"


@pytest.mark.parametrize("width", WIDTHS)
def test_findings_ids_and_estimates_are_whole_at_any_width(analysis, width):
    text = render(analysis, "text", RenderOptions(width=width, top_kernels=0))
    assert max(len(line) for line in text.splitlines()) <= width
    # With --top 0 every kernel group follows the summary, in the analysis' order, each
    # opening with its header panel; its findings (a table, or blocks) after its tree.
    sections = text.split("\n╭")[1:]
    assert len(sections) == len(analysis.kernels)
    for ka, section in zip(analysis.kernels, sections):
        if not ka.findings:
            continue
        lines = section[section.index("Findings") :].splitlines() if "Findings" in section else []
        # A finding under the --hide-below estimate (1.02x) is named after the table ("1 finding
        # under 1.02x hidden: ..."), whole.
        shown = [f for f in ka.findings if f.estimated_speedup >= 1.02][:5]
        for f in shown:
            assert any(_whole(f.id, line) for line in lines), f"{f.id} not whole:\n" + "\n".join(lines)
            assert any(f.speedup_text() in line for line in lines), f.speedup_text()
        rest = section.splitlines()
        named = next((i for i, line in enumerate(rest) if re.match(r"\d+ findings? under 1\.02x", line)), None)
        for f in ka.findings:
            if f.estimated_speedup < 1.02:
                assert named is not None and any(_whole(f.id, line) for line in rest[named : named + 3]), f.id
    for p in [p for p in analysis.priorities() if p["estimated_speedup"] >= 1.02][:5]:
        assert any(re.search(rf"\d\. {re.escape(p['id'])} in(\s|$)", line) for line in text.splitlines()), p["id"]
