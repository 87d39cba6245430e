"""No table of ``drgpu analyze``, ``list`` or ``diff`` crops at any terminal width from 40 to
250 (issue 46, item 2): every line fits the width, and every boxed table keeps its right border
on every line (rich crops a table wider than the terminal at the width, losing its border and
the ends of its cells: line numbers, estimates)."""

from __future__ import annotations

import pytest

from conftest import analysis_of, api_analysis, library_report, many_kernels_report, slow
from drgpu_py.pipeline.compare import diff, list_rows
from drgpu_py.render import RenderOptions, render
from drgpu_py.render.diff import render_diff
from drgpu_py.render.list_ import render_list_text

# The many-kernel report is read in a child process (test_text_width.py says why).
pytestmark = pytest.mark.child_reader

WIDTHS = (40, 41, 57, 60, 80, 99, 100, 104, 108, 120, 160, 200, 250)
TOP_LEFT, RIGHT = "┏┌╭┍┎", "┓┃┩┤│┘┛╮╯┐┫┨┥┦┧"


def crops(text: str, width: int) -> list[str]:
    """Where ``text`` crops at ``width``: a line wider than it, or a boxed table (a block of
    lines from one that starts with a top-left corner) whose lines do not all end with a right
    border or differ in length."""
    out = [
        f"line {i + 1} is {len(line)} wide: {line!r}" for i, line in enumerate(text.splitlines()) if len(line) > width
    ]
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if line and line[0] in TOP_LEFT:
            start = i
            block = [line]
            i += 1
            while (
                i < len(lines)
                and lines[i][:1]
                and lines[i][0] in "┃│┡┣┠├└┗╰┕┖"
                and not lines[i].startswith(("├──", "└──", "│   "))
            ):
                block.append(lines[i].rstrip())
                i += 1
            for j, b in enumerate(block):
                if b[-1] not in RIGHT or len(b) != len(block[0]):
                    out.append(f"table at line {start + 1}: line {start + j + 1} lost its border: {b!r}")
                    break
            continue
        i += 1
    return out


def _assert_fits(text: str, width: int) -> None:
    problems = crops(text, width)
    assert not problems, f"at width {width}:\n" + "\n".join(problems[:5])


@pytest.mark.parametrize("case", ["global_atomics", "smem_occupancy", "aos_gather"])
def test_analyze_tables_never_crop(case):
    for variant in ("bad", "fixed"):
        a = analysis_of(case, variant)
        for width in WIDTHS:
            _assert_fits(render(a, "text", RenderOptions(width=width)), width)


@slow
@pytest.mark.parametrize("which", ["many_kernels", "step"])
def test_analyze_of_many_kernels_never_crops(which):
    a = api_analysis(many_kernels_report() if which == "many_kernels" else library_report("step"))
    for width in WIDTHS:
        _assert_fits(render(a, "text", RenderOptions(width=width)), width)


@pytest.mark.parametrize("case", ["smem_occupancy", "global_atomics"])
def test_diff_and_list_never_crop(case):
    b, n = analysis_of(case, "bad").to_dict(), analysis_of(case, "fixed").to_dict()
    d = diff(b, n)
    rows = list_rows([b, n])
    for width in WIDTHS:
        _assert_fits(render_diff(d, "text", RenderOptions(width=width)), width)
        _assert_fits(render_list_text(rows, width), width)


def test_the_check_sees_a_cropped_table():
    table = "┏━━━┳━━━┓\n┃ a ┃ b ┃\n┡━━━╇━━━┩\n│ 1 │ 2 │\n└───┴───┘"
    assert not crops(table, 9)
    assert crops(table.replace("│ 1 │ 2 │", "│ 1 │ 2 "), 9)
    assert crops("x" * 11, 10)


@slow
def test_the_many_kernel_summary_fits_in_200_lines():
    """Issue 46, item 3: ``drgpu analyze`` of the 1,000-launch report at the width of a pipe
    (120 columns) reads in at most 200 lines (it took 239): the summary view gives each finding
    a block of lines with its advice at the full width and leaves out the lines under a tree's
    suggestions (its finding's block lists them)."""
    text = render(api_analysis(many_kernels_report()), "text", RenderOptions(width=120))
    assert len(text.splitlines()) <= 200, len(text.splitlines())
