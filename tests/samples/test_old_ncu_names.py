"""A raw-page CSV with the metric names of an older (or newer) ncu reads as the report of
ncu 2025.3.1 it was made from (specs/metrics.yaml, the versioned alias table): the SM
frequency of the SpeedOfLight charts without the elapsed-cycle counter (ncu 2020-2021), the
branch uniformity at SM level, the divergence ratio under the name ncu 2025.3.1 prefers."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

from drgpu_py.analysis import analyze
from drgpu_py.readers import open_report

from conftest import report_path

CASE = "lane_branch"  # warp-divergence: its detector reads sm__cycles_elapsed.avg and the divergence ratio
ELAPSED = "sm__cycles_elapsed.avg"
#: what the raw page has in place of each (an old name, or nothing: ``None``)
OLD_ERA = {
    "sm__cycles_elapsed.avg": None,
    "sm__cycles_elapsed.sum": None,
    "sm__cycles_elapsed.max": None,
    "sm__cycles_elapsed.min": None,
    "smsp__sass_average_branch_targets_threads_uniform.pct": "sm__sass_average_branch_targets_threads_uniform.pct",
}
NEWER = {
    "smsp__thread_inst_executed_per_inst_executed.ratio": "smsp__average_thread_inst_executed_per_inst_executed.ratio",
}


def _renamed(tmp_path: Path, names: dict[str, str | None]) -> Path:
    """The case's raw page with columns renamed (or dropped: None), its source page beside it."""
    src = report_path(CASE, "bad", "raw.csv")
    header, units, *rows = list(csv.reader(src.open(newline="", encoding="utf-8")))
    keep = [j for j, h in enumerate(header) if names.get(h, h) is not None]
    out = tmp_path / "old.raw.csv"
    with out.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow([names.get(header[j]) or header[j] for j in keep])
        for row in (units, *rows):
            w.writerow([row[j] for j in keep])
    shutil.copy(report_path(CASE, "bad", "source.csv"), tmp_path / "old.source.csv")
    return out


def _findings(analysis) -> list[tuple[str, float]]:
    return [(f.id, round(f.estimated_speedup, 3)) for f in analysis.kernels[0].findings]


def test_a_report_with_2020_2021_names_is_read_as_the_current_one(tmp_path):
    current = open_report(report_path(CASE, "bad", "raw.csv"))
    old = open_report(_renamed(tmp_path, OLD_ERA))
    k, ref = old.kernels[0], current.kernels[0]
    assert not k.has(f"{ELAPSED}.max")  # the column is gone: the value is derived
    assert math.isclose(k.m(ELAPSED), ref.m(ELAPSED), rel_tol=1e-6)
    assert k.metric_names[ELAPSED] == "sm__cycles_elapsed.avg.per_second x gpu__time_duration.sum"
    uniform = "smsp__sass_average_branch_targets_threads_uniform.pct"
    assert k.m(uniform) == ref.m(uniform) and k.metric_names[uniform] == OLD_ERA[uniform]
    assert k.sm_count == ref.sm_count == 132
    a, b = analyze(old), analyze(current)
    assert _findings(a) == _findings(b) and _findings(a)[0][0] == "warp-divergence"
    notes = a.kernels[0].notes
    assert not [n for n in notes if "lacks" in n or "--section" in n or "ncu >=" in n], notes


def test_the_newer_name_of_the_divergence_ratio_is_read(tmp_path):
    old = open_report(_renamed(tmp_path, NEWER)).kernels[0]
    ref = open_report(report_path(CASE, "bad", "raw.csv")).kernels[0]
    ((canon, newer),) = NEWER.items()
    assert old.m(canon) is not None and old.m(canon) == ref.m(canon)
    assert old.metric_names[canon] == newer and canon not in ref.metric_names
