"""Reprs, notebook HTML and frames of analyses that no report makes: hostile names, many
kernels, no kernels (a saved analysis built from its dict, as Analysis.load returns it)."""

from __future__ import annotations

import pandas as pd

from drgpu_py.analysis import display
from drgpu_py.analysis.saved import SavedAnalysis

HOSTILE = "<script>alert('x')</script>&" + "T" * 5000


def _doc(kernels: int, name: str = HOSTILE) -> dict:
    """A saved analysis of ``kernels`` kernels named ``name``, each with one finding."""
    finding = {
        "id": "<b>bad-id</b>",
        "severity": "high",
        "title": "<i>title</i>",
        "estimated_speedup": 2.0,
        "estimate_capped": False,
        "advice": "",
        "locations": [{"file": "/src/<k>.cu", "line": 7, "share": 1.0, "sass": "LDG", "pc_offset": 16}],
    }
    summary = [
        {
            "kernel_id": i,
            "name": name,
            "launches": 2,
            "launch_ids": [i, i + kernels],
            "total_ns": 2000.0,
            "mean_ns": 1000.0,
            "time_share": 1 / kernels,
            "bound": "memory",
            "grade": "poor",
            "limiter": "dram",
            "limiter_pct": 10.0,
            "findings": [
                {
                    "id": finding["id"],
                    "severity": "high",
                    "estimated_speedup": 2.0,
                    "time_saved_ns": 1000.0,
                    "where": "<k>.cu:7",
                }
            ],
        }
        for i in range(kernels)
    ]
    kernel = {"name": name, "launches": 2, "total_duration_ns": 2000.0, "bound": "memory", "findings": [finding]}
    return {
        "tool": "drgpu",
        "report": "/reports/<img src=x>.ncu-rep",
        "summary": summary,
        "priorities": [],
        "kernels": [{**kernel, "id": i} for i in range(kernels)],
    }


def test_html_escapes_every_text_and_stays_small():
    analysis = SavedAnalysis.from_dict(_doc(1000))
    for obj in (analysis, analysis.kernels[0]):
        text = obj._repr_html_()
        assert "<script>" not in text and "<b>" not in text and "<i>" not in text and "<img" not in text
        assert "&lt;script&gt;" in text or "&lt;b&gt;bad-id&lt;/b&gt;" in text
        assert len(text) < 4000, len(text)
    body = analysis._repr_html_().split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr>") == display.MAX_ROWS
    assert "990 more kernel groups" in analysis._repr_html_()


def test_reprs_stay_short_for_long_names_and_many_kernels():
    analysis = SavedAnalysis.from_dict(_doc(1000))
    assert len(repr(analysis)) < 300 and len(repr(analysis.kernels[0])) < 300
    assert "1,000 kernel groups (2,000 launches)" in repr(analysis)
    assert "2.00 ms of GPU time" in repr(analysis)


def test_frames_of_an_empty_analysis_keep_their_columns_and_dtypes():
    empty = SavedAnalysis.from_dict({"tool": "drgpu", "summary": [], "kernels": []})
    full = SavedAnalysis.from_dict(_doc(2))
    for name in ("kernels_frame", "findings_frame", "locations_frame", "stalls_frame", "stall_lines_frame"):
        got, want = getattr(empty, name)(), getattr(full, name)()
        assert len(got) == 0 and list(got.columns) == list(want.columns), name
        pd.testing.assert_series_equal(got.dtypes, want.dtypes, obj=name)
    ff = empty.findings_frame()
    assert isinstance(ff.severity.dtype, pd.CategoricalDtype) and ff.severity.dtype.ordered
    assert empty.locations_frame().line.dtype == "Int64"
