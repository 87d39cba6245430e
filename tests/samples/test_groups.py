"""Kernel groups, the application summary, the findings CSV and the Python API, on real
reports: the committed 1,000-launch report (5 kernels x 200 launches) and a real PyTorch
model step (18 launches of 15 kernels)."""

from __future__ import annotations

import lzma
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT, SAMPLES, api_analysis, library_report, many_kernels_report, slow

MANY = ROOT / "benchmarks" / "data" / "many_kernels.ncu-rep.xz"
# Each in-process read of the 1,000-launch report would keep 1.4 GB (conftest.IN_PROCESS_KINDS).
pytestmark = pytest.mark.child_reader


@pytest.fixture(scope="module")
def many():
    return many_kernels_report()  # MANY decompressed once per test run


@pytest.fixture(scope="module")
def many_profile(many):
    from drgpu_py.readers import open_report

    return open_report(many)


@slow
def test_group_is_the_mean_launch_and_totals_are_the_sums(many_profile):
    from drgpu_py.analysis.groups import group_profile, total_ns

    g = group_profile(many_profile)
    assert len(many_profile.kernels) == 1000 and len(g.kernels) == 5
    for k in g.kernels:
        members = [m for m in many_profile.kernels if m.name == k.name]
        n = len(members)
        assert k.launch_count == n == 200
        assert total_ns(k) == pytest.approx(sum(m.duration_ns for m in members))
        for metric in ("smsp__inst_executed.sum", "dram__bytes_read.sum"):
            if k.has(metric):
                assert k.m(metric) * n == pytest.approx(sum(m.m(metric) for m in members), rel=1e-9), metric
        # per-instruction samples: the group's mean per PC times the launches = the sum by offset
        tot = pd.concat([m.instructions.set_index("offset")["samples"] for m in members], axis=1).sum(axis=1)
        mine = k.instructions.set_index("offset")["samples"] * n
        assert mine.sort_index().to_numpy() == pytest.approx(tot.sort_index().to_numpy())
        assert not k.has("drgpu__rank_duration_spread")  # launches are not ranks


@slow
def test_summary_ranks_by_time_and_time_saved(many):
    a = api_analysis(many)  # drgpu_py.analyze(many), shared with test_render_html
    rows = a.summary()
    assert [r["total_ns"] for r in rows] == sorted((r["total_ns"] for r in rows), reverse=True)
    assert sum(r["time_share"] for r in rows) == pytest.approx(1.0, abs=1e-3)
    for r in rows:
        for f in r["findings"]:
            assert f["time_saved_ns"] == pytest.approx(
                r["total_ns"] * (1 - 1 / f["estimated_speedup"]), rel=1e-2
            )  # speedups rounded to 3 places
    first = a.priorities()
    assert first and [f["time_saved_ns"] for f in first] == sorted((f["time_saved_ns"] for f in first), reverse=True)
    d = a.to_dict()
    assert len(d["summary"]) == 5 and d["kernels"][0]["launches"] == 200 and len(d["kernels"][0]["launch_ids"]) == 200
    # the group holding most of the time leads the priorities, or is named first
    from drgpu_py.specs import loader

    if rows[0]["time_share"] >= loader.thresholds()["dominant_share"]:
        lead = first[0]["kernel_id"] == rows[0]["kernel_id"]
        assert lead or d["dominant"]["kernel_id"] == rows[0]["kernel_id"]
        assert lead == ("dominant" not in d)


@slow
def test_per_launch_keeps_every_launch(many):
    import drgpu_py

    a = drgpu_py.analyze(many, kernel="0:20", per_launch=True)
    assert len(a.kernels) == 20 and all(r["launches"] == 1 for r in a.summary())


@slow
def test_default_terminal_output_is_short_and_opens_with_the_summary(many):
    r = subprocess.run(
        [sys.executable, "-m", "drgpu_py.cli", "analyze", str(many), "-q"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "120", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # The summary, "fix first", three kernels' trees, findings and notes: a few hundred lines,
    # not one block per launch (1,000 launches).
    assert len(lines) < 300, len(lines)
    assert "Kernels by GPU time (1000 launches, 5 kernels)" in "\n".join(lines[:3])
    assert "Fix first" in r.stdout
    assert r.stdout.count("[200 launches, mean shown]") == 3  # --top 3 trees by default
    assert ", 0% of the time" not in r.stdout


def test_a_finding_left_no_time_is_named_without_a_row():
    """global_atomics: store-drain's drain is the atomics', which atomic-contention claims first,
    so the ledger leaves it no time: named, not given a row of the findings table."""
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "drgpu_py.cli",
            "analyze",
            str(SAMPLES / "global_atomics" / "global_atomics_bad.ncu-rep"),
        ],
        capture_output=True,
        text=True,
        env={"COLUMNS": "120", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    hidden = text[text.index("under 1.02x hidden: ") :]
    assert "store-drain" in hidden[: hidden.index("--show-all")]
    assert ", 0% of the time" not in r.stdout


def test_model_step_groups_and_api_frames():
    a = api_analysis(library_report("step"))  # drgpu_py.analyze(step), shared with test_render_html
    rows = a.summary()
    assert sum(r["launches"] for r in rows) == 18 and len(rows) == 15
    kf, ff = a.kernels_frame(), a.findings_frame()
    assert list(kf["kernel_id"]) == [r["kernel_id"] for r in rows]
    assert set(ff["id"]) == {f.id for ka in a.kernels for f in ka.findings}
    assert len(ff) == sum(len(ka.findings) for ka in a.kernels)  # one row per finding
    assert (ff["time_saved_ns"] >= 0).all()
    # A notebook shows a line, not the whole analysis (a 12.6-million-character repr before).
    assert len(repr(a)) < 400 and all(len(repr(ka)) < 400 for ka in a.kernels)
    body = a._repr_html_().split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr>") == 10 and "5 more kernel groups" in a._repr_html_()  # 15 groups


def test_findings_csv_output(tmp_path):
    from drgpu_py.pipeline import analyze_reports, write_result

    a = analyze_reports([SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep"])
    out = tmp_path / "findings.csv"
    write_result(a, output=out)
    df = pd.read_csv(out)
    top = a.kernels[0].findings[0]
    first = df[df["id"] == top.id]
    assert len(first) == max(1, len(top.locations))  # one row per finding and location
    assert list(first["line"]) == [loc["line"] for loc in top.locations]
    assert first.iloc[0]["estimated_speedup"] == top.to_dict()["estimated_speedup"]  # as the JSON writes it


def test_api_doc_example_runs():
    """docs/api.md's example, run as written (from the project root)."""
    text = (ROOT / "docs" / "api.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "global-uncoalesced" in r.stdout


@slow
def test_csv_export_groups_like_the_report(tmp_path):
    """The CSV pages of the same report give the same groups: the source page spells template
    values with casts (poly_chain<(int)64>), which must not send a launch to another
    function's SASS block (and so split its group)."""
    from drgpu_py.analysis.groups import group_profile
    from drgpu_py.readers import open_report

    for stem in ("raw", "source"):
        with (
            lzma.open(ROOT / "benchmarks" / "data" / f"many_kernels.{stem}.csv.xz") as src,
            open(tmp_path / f"many_kernels.{stem}.csv", "wb") as dst,
        ):
            shutil.copyfileobj(src, dst, 1 << 20)
    g = group_profile(open_report(tmp_path / "many_kernels.raw.csv"))
    assert sorted((k.name, k.launch_count) for k in g.kernels) == sorted(
        [(n, 200) for n in {k.name for k in g.kernels}]
    )
    assert len(g.kernels) == 5
