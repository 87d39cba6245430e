"""The Python API in a notebook, on a real report: short reprs and small HTML tables, and
pandas frames with one row per thing (so sums are totals), the documented dtypes and joins,
equal on a live analysis and on the same analysis read back from its JSON."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import analysis_of
from drgpu_py.analysis import Analysis
from drgpu_py.errors import UsageError
from drgpu_py.profile import short_name
from drgpu_py.render.json_ import dumps

# One kernel whose top finding (barrier-imbalance) has three locations: a frame with a row per
# finding and location repeated the time saved three times (437.7 us "saved" of 190.4 us).
CASE = ("serial_norm", "bad")
#: Frames whose data the JSON holds; source_frame and metrics_frame need the report.
JSON_FRAMES = ("kernels_frame", "findings_frame", "locations_frame", "stalls_frame", "stall_lines_frame")
#: A repr is a line or two, whatever the report's size.
REPR_LIMIT = 400


@pytest.fixture(scope="module")
def live():
    return analysis_of(*CASE)


@pytest.fixture(scope="module")
def saved(live, tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "analysis.json"
    path.write_text(dumps(live.to_dict()), encoding="utf-8")
    return Analysis.load(path)


class _Printer:
    """What IPython's pretty printer gives ``_repr_pretty_`` (IPython is not a dependency)."""

    def __init__(self):
        self.texts = []

    def text(self, text):
        self.texts.append(text)


def test_analysis_is_exported_at_the_package_top(live):
    """``drgpu_py.Analysis`` is the class ``drgpu_py.analyze`` returns, listed in ``__all__``;
    importing the package alone does not load the analysis modules (a fresh interpreter)."""
    import subprocess
    import sys

    import drgpu_py
    from conftest import ROOT
    from drgpu_py import Analysis as Exported

    assert Exported is drgpu_py.Analysis is Analysis and "Analysis" in drgpu_py.__all__
    assert isinstance(live, drgpu_py.Analysis)
    with pytest.raises(AttributeError, match="no attribute 'Analyses'"):
        drgpu_py.Analyses  # noqa: B018
    code = (
        "import sys, drgpu_py; print(sorted(m for m in ('drgpu_py.analysis', 'numpy', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_reprs_are_short(live, saved):
    ka, sk = live.kernels[0], saved.kernels[0]
    objects = [live, ka, *ka.findings, ka.tree, ka.kernel, ka.context, live.profile, saved, sk, *sk.findings, sk.tree]
    long = {type(o).__name__: len(repr(o)) for o in objects if len(repr(o)) > REPR_LIMIT}
    assert not long, long
    assert repr(live).startswith("<Analysis of ") and "fix first: barrier-imbalance" in repr(live)
    assert repr(saved).replace("SavedAnalysis", "Analysis") == repr(live)
    assert repr(ka).startswith(f"<KernelAnalysis {short_name(ka.kernel.name)} (id {ka.kernel.id})")
    assert repr(sk).replace("SavedKernel", "KernelAnalysis") == repr(ka)
    for obj in (live, ka, saved, sk):
        printer = _Printer()
        obj._repr_pretty_(printer, False)
        assert printer.texts == [repr(obj)]


def test_repr_html_is_a_small_escaped_table(live, saved):
    for obj, rows in ((live, 1), (saved, 1), (live.kernels[0], 2), (saved.kernels[0], 2)):
        text = obj._repr_html_()
        assert text.startswith('<table class="drgpu">') and text.endswith("</table>"), text[:80]
        assert text.count("<tbody>") == 1 and text.split("<tbody>")[1].count("<tr>") == rows
        assert "normalize_rows&lt;(bool)0&gt;" in text and "<(bool)" not in text  # the name, escaped
        assert len(text) < 3000
    assert live._repr_html_() == saved._repr_html_()


def test_findings_frame_has_one_row_per_finding(live):
    ff, kf = live.findings_frame(), live.kernels_frame()
    assert len(ff) == sum(len(ka.findings) for ka in live.kernels)
    assert not ff.duplicated(["kernel_id", "id"]).any()
    assert max(len(f.locations) for ka in live.kernels for f in ka.findings) > 1  # what repeated rows before
    # The obvious pandas call gives a total that is at most the kernel's time.
    saved_by_kernel = ff.groupby("kernel_id").time_saved_ns.sum()
    total = kf.set_index("kernel_id").total_ns
    assert (saved_by_kernel <= total[saved_by_kernel.index]).all(), (saved_by_kernel, total)
    summary = {(r["kernel_id"], f["id"]): f["time_saved_ns"] for r in live.summary() for f in r["findings"]}
    assert dict(zip(zip(ff.kernel_id, ff.id), ff.time_saved_ns)) == summary
    assert list(kf.short_name) == [short_name(r["name"]) for r in live.summary()]


def test_locations_frame_joins_findings(live):
    ff, lf = live.findings_frame(), live.locations_frame()
    assert len(lf) == sum(len(f.locations) for ka in live.kernels for f in ka.findings)
    assert not lf.duplicated(["kernel_id", "id", "location"]).any()
    joined = lf.merge(ff, on=["kernel_id", "id"], how="left", validate="many_to_one", suffixes=("", "_finding"))
    assert joined.severity.notna().all() and len(joined) == len(lf)
    first = joined[joined.location == 0]
    assert list(first["where"]) == list(first["where_finding"])  # findings' where is location 0
    assert dict(zip(ff.id, ff.locations)) == lf.groupby("id").size().to_dict()
    top = live.kernels[0].findings[0]
    assert list(lf[lf.id == top.id].line) == [loc["line"] for loc in top.locations]


def test_frame_dtypes(live):
    ff, lf, kf = live.findings_frame(), live.locations_frame(), live.kernels_frame()
    assert isinstance(ff.severity.dtype, pd.CategoricalDtype) and ff.severity.dtype.ordered
    assert list(ff.severity.dtype.categories) == ["low", "medium", "high"]
    # severity sorts by rank, not alphabetically ("high" < "low" < "medium")
    ranked = ff.sort_values("severity", ascending=False).severity.tolist()
    assert ranked == sorted(ranked, key=["high", "medium", "low"].index)
    assert (ff.severity >= "medium").sum() == sum(f.severity != "low" for ka in live.kernels for f in ka.findings)
    for frame, column in ((lf, "line"), (live.stall_lines_frame(), "line"), (live.source_frame(), "line")):
        assert frame[column].dtype == "Int64", (column, frame[column].dtype)
    assert list(kf.grade.dtype.categories) == ["poor", "okay", "good", "excellent"] and kf.grade.dtype.ordered
    assert kf.kernel_id.dtype == "Int64" and kf.kernel.dtype == pd.StringDtype()


def test_frames_of_a_saved_analysis_equal_the_live_ones(live, saved):
    for name in JSON_FRAMES:
        got, want = getattr(saved, name)(), getattr(live, name)()
        assert len(want), name  # the comparison is of rows, not of empty frames
        pd.testing.assert_frame_equal(got, want, obj=name)
    for name in ("source_frame", "metrics_frame"):
        with pytest.raises(UsageError, match="needs the report"):
            getattr(saved, name)()


def test_stall_frames_join(live):
    sf, sl = live.stalls_frame(), live.stall_lines_frame()
    assert not sf.duplicated(["kernel_id", "reason"]).any()
    assert 99.0 <= sf.groupby("kernel_id").stall_pct.sum().max() <= 100.5  # a partition of stall cycles
    joined = sl.merge(sf, on=["kernel_id", "reason"], how="left", validate="many_to_one")
    assert joined.stall_pct.notna().all()
    assert (sl.groupby(["kernel_id", "reason"]).reason_pct.sum() <= 100.01).all()
    top = sf.loc[sf.stall_pct.idxmax()]
    assert top.reason == "barrier" and top.cause == "synchronization"


def test_source_and_metrics_frames(live):
    kernel = live.kernels[0].kernel
    table = kernel.instructions
    src = live.source_frame()
    assert not src.duplicated(["kernel_id", "file", "line"]).any()
    assert src.instructions.sum() == len(table)
    for column in ("samples", "inst_executed", "stall_barrier", "stall_long_scoreboard"):
        assert src[column].sum() == pytest.approx(table[column].sum()), column
    hot = src.loc[src.stall_barrier.idxmax()]
    assert hot.code == kernel.source_line(hot.file, int(hot.line))
    mf = live.metrics_frame()
    assert not mf.duplicated(["kernel_id", "metric"]).any()
    by_name = dict(zip(mf.metric, mf.value))
    assert by_name["gpu__time_duration.sum"] == kernel.duration_ns
    assert len(mf) == sum(not m.startswith("drgpu__") for m in kernel.metrics)
