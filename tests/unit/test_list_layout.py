"""The text of ``drgpu list`` fits the width: one line per launch with the kernel name last,
shortened to the room the other columns leave (different names stay different), or a block
of lines per launch where that room is too small; the report column only for several
reports, the analysis columns only for rows that have them (saved analyses)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from drgpu_py.render.list_ import render_list_console, render_list_text

LONG = [
    "void at::native::vectorized_elementwise_kernel<(int)8, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char *, (unsigned long)3>>(int, T2, T3)",
    "void at::native::vectorized_elementwise_kernel<(int)8, at::native::CUDAFunctor_add<c10::Half>, "
    "std::array<char *, (unsigned long)3>>(int, T2, T3)",
    "void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2, const T1 *, T2 *)",
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
    "k" + "x" * 500 + "(int)",
]


def _row(i: int, name: str, report: str = "step.ncu-rep", finding: str | None = None) -> dict:
    return {
        "report": report,
        "id": i,
        "name": name,
        "duration_ns": 47650.5 * (i + 1),
        "grid": [4096, 1, 1],
        "block": [128, 1, 1],
        "stall_cycle_pct": 80.0 if finding else None,
        "bound": "memory" if finding else None,
        "top_finding": finding,
        "top_severity": "high" if finding else None,
        "top_speedup": 2.5 if finding else None,
    }


def _names(text: str) -> list[str]:
    lines = text.splitlines()
    if lines[0].startswith(("id ", "report ")):
        col = lines[0].index("kernel")
        return [line[col:] for line in lines[1:]]
    return [line.split(None, 1)[1] for line in lines if not line.startswith(" ")]


@pytest.mark.parametrize("width", [60, 80, 100, 120, 200])
def test_every_line_fits_and_names_stay_apart(width):
    rows = [_row(i, n) for i, n in enumerate(LONG)]
    for text in (render_list_text(rows, width), _console(rows, width)):
        assert max(map(len, text.splitlines())) <= width
        names = _names(text)
        assert len(names) == len(rows) and len(set(names)) == len(rows)
        assert all(f"{47.6505 * (i + 1):.2f}" in text for i in range(len(rows)))  # numbers whole


def _console(rows: list[dict], width: int) -> str:
    buf = io.StringIO()
    render_list_console(rows, Console(file=buf, width=width, color_system=None))
    return buf.getvalue()


def test_names_that_fit_are_shown_whole_one_line_each():
    rows = [_row(0, "saxpy(int, float, const float *, float *)"), _row(1, "histogram(int, const float *)")]
    text = render_list_text(rows, 80)
    assert text.splitlines()[0].split() == ["id", "duration_us", "grid", "block", "kernel"]
    assert _names(text) == [r["name"] for r in rows]


def test_the_report_column_is_there_for_several_reports():
    rows = [_row(0, "saxpy(int)", "a.ncu-rep"), _row(0, "saxpy(int)", "b.ncu-rep")]
    text = render_list_text(rows, 80)
    assert text.splitlines()[0].split()[:2] == ["report", "id"] and "b.ncu-rep" in text


def test_analysis_columns_come_with_saved_analyses_and_blocks_when_names_lack_room():
    rows = [_row(0, LONG[0], "a.json", "global-uncoalesced"), _row(0, LONG[1], "b.ncu-rep")]
    wide = render_list_text(rows, 250)
    assert wide.splitlines()[0].split()[:8] == [
        "report",
        "id",
        "duration_us",
        "grid",
        "block",
        "stall_%",
        "bound",
        "top",
    ]
    assert "global-uncoalesced (high, 2.50x)" in wide
    narrow = render_list_text(rows, 80)  # the other columns would leave less than NAME_LEAST
    assert not narrow.startswith("report") and max(map(len, narrow.splitlines())) <= 80
    block = narrow.split("\n0 ")[0].splitlines()
    assert block[1:] == [
        "   a.json",
        "   47.65 µs, grid 4096x1x1, block 128x1x1",
        "   stall cycles 80.0%, memory bound",
        "   top finding global-uncoalesced (high, 2.50x)",
    ]
    assert "stall" not in narrow.split("\n0 ")[1]  # a report's launch: listed, not analyzed
