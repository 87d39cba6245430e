"""drgpu's metric names against ncu's own catalogue of each chip it has constants for.

tests/data/ncu_metrics/CHIP.txt.gz: the metric base names that ``ncu --query-metrics --chips
CHIP`` printed (ncu 2025.3.1, one name per line). Launch attributes, device attributes,
derived metrics, PC-sampling counters and the metrics ncu's sections compute (the Occupancy
section's theoretical occupancy) are not in that listing and are not checked."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from drgpu_py.specs import loader as data
from drgpu_py.analysis.tree import Node
from drgpu_py.render.dot import missing_text

HERE = Path(__file__).resolve().parents[1] / "data" / "ncu_metrics"
NOT_LISTED = (
    "launch__",
    "device__",
    "derived__",
    "smsp__pcsamp",
    "profiler__",
    "sm__maximum_warps_per_active_cycle_pct",
)


def _catalogue(chip: str) -> set[str]:
    with gzip.open(HERE / f"{chip}.txt.gz", "rt") as fh:
        return {line.strip() for line in fh if line.strip()}


def _base(name: str) -> str:
    # ncu lists counters without their rollup (.sum/.avg/...) and sub-metric suffixes.
    return name.split(".", 1)[0]


def _entries():
    table = data.metrics_table()
    for name, spec in table["metrics"].items():
        if not name.startswith(NOT_LISTED):
            yield f"metric {name}", data.metric_aliases(name), spec
    for rid, spec in table["stall_reasons"].items():
        yield f"stall reason {rid}", spec["counter"], spec


def test_every_chip_with_constants_has_a_catalogue():
    assert sorted(p.name.split(".")[0] for p in HERE.glob("*.txt.gz")) == data.known_chips()


@pytest.mark.parametrize("chip", data.known_chips())
def test_names_exist_on_the_chip_unless_declared_unavailable(chip):
    names = _catalogue(chip)
    assert len(names) > 1000  # a real listing, not an empty file
    wrong = []
    for what, aliases, spec in _entries():
        present = any(_base(a) in names for a in aliases)
        declared = chip in spec.get("unavailable_on", [])
        if present == declared:  # missing and undeclared, or declared but present
            wrong.append(f"{what}: {'declared unavailable but present' if declared else 'no alias in the catalogue'}")
    assert not wrong, f"{chip}: " + "; ".join(wrong)


def test_unavailable_metrics_say_so_instead_of_asking_for_a_section():
    name = "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active"
    assert data.metric_unavailable(name, "gb202") and not data.metric_unavailable(name, "gh100")
    assert not data.metric_unavailable(name, None)
    assert data.metric_unavailable("smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio", "gb100")
    node = Node(
        "Shared pipe",
        None,
        "%",
        "missing",
        attrs={"metric": name, "section": "ComputeWorkloadAnalysis", "unavailable_on": "gb202"},
    )
    assert missing_text(node) == "not available on gb202"
    node.attrs.pop("unavailable_on")
    assert missing_text(node) == "not collected (section ComputeWorkloadAnalysis)"


def test_unavailable_on_must_name_known_chips(monkeypatch):
    from drgpu_py.errors import DataFileError

    with pytest.raises(DataFileError, match="unavailable_on"):
        data._check_chips({"unavailable_on": ["gx999"]}, "metric x", set(data.known_chips()))
