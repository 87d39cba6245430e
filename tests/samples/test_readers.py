"""Readers: .ncu-rep and CSV give the same model for the same report, joined by PC."""

from __future__ import annotations


import pandas as pd
import pytest

from drgpu_py.errors import NoKernelsError, ReportFormatError, UsageError
from drgpu_py.readers import open_report, select_kernels, sniff

from conftest import ROOT, SAMPLES, report_path

CORE = [
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "launch__registers_per_thread",
    "sm__maximum_warps_per_active_cycle_pct",
]


@pytest.mark.parametrize("case", ["aos_gather", "double_literal", "serial_norm"])
def test_rep_and_csv_agree(case):
    rep = open_report(report_path(case, "bad")).kernels[0]
    csv = open_report(report_path(case, "bad", "raw.csv")).kernels[0]
    assert rep.name == csv.name or rep.name.replace("(bool)", "") == csv.name
    assert rep.grid == csv.grid and rep.block == csv.block
    assert rep.compute_capability == csv.compute_capability == "9.0"
    assert rep.chip == csv.chip == "gh100"
    for m in CORE:
        a, b = rep.m(m), csv.m(m)
        assert a is not None, m
        # The CSV prints rounded values; the report holds full precision.
        assert b == pytest.approx(a, rel=0.01, abs=0.01), m
    # Per-instruction tables: same PCs, same SASS, same counts, same lines.
    ri, ci = rep.instructions, csv.instructions
    common = ri.index.intersection(ci.index)
    assert len(common) >= 0.9 * len(ci)
    assert (ri.loc[common, "sass"] == ci.loc[common, "sass"]).all()
    pd.testing.assert_series_equal(ri.loc[common, "inst_executed"], ci.loc[common, "inst_executed"], check_names=False)
    pd.testing.assert_series_equal(
        ri.loc[common, "stall_long_scoreboard"], ci.loc[common, "stall_long_scoreboard"], check_names=False
    )
    lines = ri.loc[common, "line"].dropna()
    assert len(lines) > 0
    assert (ci.loc[lines.index, "line"] == lines).all()


def test_instructions_are_indexed_by_pc_with_offsets():
    k = open_report(report_path("fma_chain", "bad")).kernels[0]
    df = k.instructions
    assert df.index.is_monotonic_increasing and df.index.is_unique
    assert df["offset"].iloc[0] == 0 and (df.index - df.index[0] == df["offset"]).all()
    assert df["sass"].str.contains("FFMA").any()
    # Instructions that never ran are listed too (the function's full listing).
    assert (df["inst_executed"] == 0).any()
    assert k.source_text and any(f.endswith("fma_chain.cu") for f in k.source_text)


def test_csv_without_line_source_says_so(tmp_path):
    for name in ("x.raw.csv", "x.source.csv"):
        src = report_path("fma_chain", "bad", name.split(".", 1)[1])
        (tmp_path / name).write_bytes(src.read_bytes())
    k = open_report(tmp_path / "x.raw.csv").kernels[0]
    assert k.instructions["line"].isna().all()
    assert any("no file/line" in n for n in k.notes)


def test_csv_numbers_with_thousands_separators():
    k = open_report(report_path("aos_gather", "bad", "raw.csv")).kernels[0]
    raw = (report_path("aos_gather", "bad", "raw.csv")).read_text()
    assert '"4,194,304"' in raw or ",304" in raw  # the export does carry separators
    assert k.m("launch__thread_count") == k.grid[0] * k.block[0]


def test_sniff_tells_formats_apart():
    assert sniff(report_path("aos_gather", "bad")) == "ncu-rep"
    assert sniff(report_path("aos_gather", "bad", "raw.csv")) == "csv-raw"
    assert sniff(report_path("aos_gather", "bad", "source.csv")) == "csv-source"


def test_source_csv_given_as_report_is_refused():
    with pytest.raises(ReportFormatError, match="source-page"):
        open_report(report_path("aos_gather", "bad", "source.csv"))


def test_kernel_selection():
    p = open_report(report_path("aos_gather", "bad"))
    assert select_kernels(p, "scale_keys").kernels
    assert select_kernels(p, "0").kernels
    with pytest.raises(NoKernelsError, match="matched no kernel"):
        select_kernels(p, "no_such_kernel")
    with pytest.raises(UsageError):
        select_kernels(p, "(")


# ---- what a report lacks: judged against drgpu's own metric set ---------------------------------


def _notes(path):
    return [n for k in open_report(path).kernels for n in k.notes]


def test_report_from_drgpus_earlier_set_names_what_it_lacks():
    """A rank report of an earlier `drgpu profile` (its default gh100 set then: PC samples, no
    stall counters, no SM/L1 throughput, no SM cycles) lacks what today's default set collects
    from SpeedOfLight, and the unit throughputs' note says what that changes; nothing else."""
    notes = _notes(SAMPLES / "ranks" / "precise_math.rank0.ncu-rep")
    partial = [n for n in notes if n.startswith("partial analysis")]
    assert len(partial) == 1 and "section(s) SpeedOfLight (" in partial[0], notes
    caveat = [n for n in notes if n.startswith("SM and L1 speed-of-light throughputs are not in the report")]
    assert caveat and "'latency' bound" in caveat[0] and "findings" in caveat[0]
    assert "unaffected" not in caveat[0]


def test_full_set_report_has_no_missing_data_notes():
    notes = _notes(report_path("aos_gather", "bad"))
    assert not any(n.startswith(("partial analysis", "SM and L1")) for n in notes), notes


def test_basic_set_report_names_the_sections_to_collect():
    notes = _notes(ROOT / "tests" / "data" / "bad" / "basic_set.raw.csv")
    partial = [n for n in notes if n.startswith("partial analysis")]
    assert partial and "SourceCounters" in partial[0] and "WarpStateStats" in partial[0]


def test_absurd_counter_values_analyze_without_numpy_warnings():
    """Per-PC values no counter reaches (an edited export): sums overflow to inf and cancel to
    NaN, and the analysis says so in its numbers, not in numpy warnings on stderr."""
    import warnings

    import numpy as np

    from drgpu_py.analysis import analyze

    p = open_report(report_path("aos_gather", "bad"))
    df = p.kernels[0].instructions
    col = next(c for c in df.columns if c.startswith("stall_") and df[c].sum() > 0)
    df.iloc[0, df.columns.get_loc(col)] = 1.7e308
    df.iloc[1, df.columns.get_loc(col)] = 1.7e308
    df.iloc[2, df.columns.get_loc(col)] = -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = analyze(p)
    assert res.kernels[0].tree is not None
