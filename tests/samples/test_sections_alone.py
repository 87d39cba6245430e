"""Unknown is not zero, in what the outputs show: reports holding one section alone.

Each report here is made at test time from the raw-page exports of real sample reports, its
metrics cut to one ncu section (a report of another set, or of ``--section NAME``): durations
alone, occupancy alone, launch statistics alone, and a launch whose profiling failed (its row
holds the identity columns only, its grid and block (0, 0, 0)). What the report does not
measure reads "not measured" in the headers (text and HTML) and null in JSON, never a guess
("latency bound", "useful 0%", "busiest unit: None", "nan"); each section present is shown;
the kernel that holds the time is named; a launch without metrics is shown as such.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from drgpu_py.analysis import analyze
from drgpu_py.readers import open_report
from drgpu_py.render import RenderOptions, render

SAMPLES = Path(__file__).resolve().parents[2] / "sample_reports"
#: Samples of different durations, whose raw CSVs are kept unpacked.
CASES = ("fma_chain", "few_blocks", "lane_branch")
IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream")
IDENTITY += ("Block Size", "Grid Size", "Device", "CC")
DURATION = "gpu__time_duration.sum"


def _durations(m: str) -> bool:
    return m.startswith("gpu__time_duration")


def _occupancy(m: str) -> bool:
    return m.startswith(("launch__occupancy", "sm__warps_active", "sm__maximum_warps")) or m in (
        "device__attribute_max_warps_per_multiprocessor",
        "device__attribute_max_registers_per_multiprocessor",
    )


def _launch_stats(m: str) -> bool:
    return (m.startswith("launch__") and not m.startswith("launch__occupancy")) or m.startswith("device__attribute")


Row = dict[str, str]


def _rows(case: str) -> tuple[dict[str, str], Row]:
    """A sample's raw page: (units by column, its one launch's row)."""
    with (SAMPLES / case / f"{case}_bad.raw.csv").open(encoding="utf-8", newline="") as fh:
        header, units, row = list(csv.reader(fh))[:3]
    return dict(zip(header, units)), dict(zip(header, row))


def _write(path: Path, rows: list[Row], units: dict[str, str], keep: Callable[[str], bool]) -> Path:
    """A raw-page export of ``rows`` (ids renumbered) holding the identity columns and the
    metrics ``keep`` keeps."""
    cols = list(IDENTITY) + sorted({c for r in rows for c in r if c not in IDENTITY and keep(c)})
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(cols)
        w.writerow([units.get(c, "") for c in cols])
        for i, r in enumerate(rows):
            w.writerow([str(i) if c == "ID" else r.get(c, "") for c in cols])
    return path


def _report(tmp_path: Path, keep: Callable[[str], bool], name: str) -> tuple[Path, list[Row]]:
    units: dict[str, str] = {}
    rows = []
    for case in CASES:
        u, r = _rows(case)
        units.update(u)
        rows.append(r)
    return _write(tmp_path / f"{name}.raw.csv", rows, units, keep), rows


def _outputs(path: Path) -> tuple[str, dict, str]:
    analysis = analyze(open_report(path))
    # Wide enough that no header line wraps, whatever the terminal running the tests.
    options = RenderOptions(width=300)
    text = render(analysis, "text", options)
    doc = json.loads(render(analysis, "json", options))
    html = render(analysis, "html", options)
    return text, doc, html


#: Words a header may not print for a value the report lacks.
GUESSES = ("latency bound", "useful 0%", "unexplained 100%", ": None", "None bound", "nan", "(0, 0, 0)")


@pytest.mark.parametrize(
    "keep", [_durations, _occupancy, _launch_stats], ids=["durations", "occupancy", "launch-statistics"]
)
def test_a_section_alone_asserts_nothing_it_does_not_measure(tmp_path, keep):
    text, doc, html = _outputs(_report(tmp_path, keep, keep.__name__)[0])
    for word in GUESSES:
        assert word not in text, (word, text)
    for k in doc["kernels"]:
        assert k["bound"] != "latency" and k["stall_cycle_pct"] is None and k["achieved_ipc"] is None, k["name"]
        assert k["ledger"] is None or k["ledger"]["useful_share"] is not None, k["ledger"]
    assert "stall cycles not measured" in text and "IPC not measured" in text and "busiest unit: not measured" in text
    assert "None bound" not in html and "bound not measured" in html


def test_durations_alone_name_the_kernel_that_holds_the_time(tmp_path):
    path, rows = _report(tmp_path, _durations, "durations")
    lead = max(rows, key=lambda r: float(r[DURATION].replace(",", "")))
    text, _, html = _outputs(path)
    # Named first (analysis.groups.dominant), with what to collect, though nothing is said of it.
    line = next(x for x in text.splitlines() if x.startswith("Look first at "))
    assert lead["Kernel Name"].split("(")[0] in line, line
    assert "collect:" in line, line
    look = html[html.index('class="look-first"') :][:2000]
    assert lead["Kernel Name"].split("(")[0] in look


def test_occupancy_alone_is_shown_for_every_kernel(tmp_path):
    """A report of several kernels shows the summary view of each tree; a kernel without stall
    data shows whole what its report holds."""
    text, doc, _ = _outputs(_report(tmp_path, _occupancy, "occupancy")[0])
    assert text.count("Achieved occupancy: ") == len(doc["kernels"]) == len(CASES), text


def test_launch_statistics_alone_are_shown_for_every_kernel(tmp_path):
    text, doc, _ = _outputs(_report(tmp_path, _launch_stats, "launch")[0])
    assert text.count("Registers per thread: ") == len(doc["kernels"]) == len(CASES), text
    assert "add section ?" not in text


def test_a_launch_without_metrics_is_shown_as_such(tmp_path):
    """Profiling of the second launch failed: its row holds its name and ids alone."""
    units, good = _rows(CASES[0])
    _, failed = _rows(CASES[1])
    failed = {c: (v if c in IDENTITY else "") for c, v in failed.items()}
    failed["Grid Size"] = failed["Block Size"] = "(0, 0, 0)"
    text, doc, html = _outputs(_write(tmp_path / "failed.raw.csv", [good, failed], units, lambda m: True))
    k = doc["kernels"][1]
    assert k["verdict"].startswith("nothing measured") and k["findings"] == [] and k["bound"] is None, k["verdict"]
    assert k["notes"][0].startswith("nothing measured: the report holds no metric value of this launch"), k["notes"]
    assert "(0, 0, 0)" not in text and "grid and block not measured" in text, text
    assert "0×0×0" not in html
    # The launch that was profiled is analyzed as before.
    assert doc["kernels"][0]["stall_cycle_pct"] is not None and doc["kernels"][0]["findings"]


def test_a_ledger_without_useful_work_measured_says_so():
    """Findings may claim time where no part of the useful work is measured (no FLOPs, DRAM
    bytes or instruction counts): the useful time is then not measured, not 0."""
    from drgpu_py.analysis.ledger import Ledger
    from drgpu_py.analysis.verdict import useful_share

    ledger = Ledger(elapsed_ns=1000.0, useful_ns=0.0, losses=[], unexplained_ns=1000.0, useful_measured=False)
    assert ledger.text().startswith("useful not measured") and "useful 0%" not in ledger.text()
    doc = ledger.to_dict()
    assert doc["useful_share"] is None and doc["useful_counted_share"] is None and doc["useful_ns"] is None
    assert useful_share(None, ledger) is None
