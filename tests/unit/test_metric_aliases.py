"""The versioned alias table of specs/metrics.yaml (names of a metric across ncu versions and
chips, the version that introduced it, what it is derived from), its schema, its loader, and
the re-profile advice built on it: a section is named only when the report lacks it; a
metric its section holds only in a later ncu asks for that ncu."""

from __future__ import annotations

import math

import pytest

from drgpu_py.analysis.tree import Node
from drgpu_py.errors import DataFileError
from drgpu_py.profile import KernelProfile
from drgpu_py.readers.sections import note_missing_sections
from drgpu_py.profile import Profile
from drgpu_py.render.dot import missing_text
from drgpu_py.specs import loader as data

DIV = "smsp__thread_inst_executed_per_inst_executed.ratio"


def _metrics_doc() -> dict:
    return data._parse((data.resources.files("drgpu_py.specs") / "metrics.yaml").read_text(), "metrics")


def test_the_shipped_table_matches_its_schema_and_every_versioned_alias_cites_a_source():
    doc = _metrics_doc()
    data.validate(doc, "metrics.yaml", "metrics")
    versioned = [a for spec in doc["metrics"].values() for a in spec.get("aliases", []) if isinstance(a, dict)]
    assert versioned and all(a["source"].strip() for a in versioned)
    assert all(spec["since"]["source"].strip() for spec in doc["metrics"].values() if "since" in spec)


@pytest.mark.parametrize(
    "alias,where",
    [
        ({"name": "x__y.sum"}, "metrics[./]dram__bytes_read\\.sum[./]aliases[./]0"),  # no source
        ({"name": "x__y.sum", "source": "s", "ncu": "2020"}, "metrics[./]dram__bytes_read\\.sum[./]aliases[./]0"),
        ({"name": "x__y.sum", "source": "s", "version": "2020.1"}, "metrics[./]dram__bytes_read\\.sum[./]aliases[./]0"),
        (7, "metrics[./]dram__bytes_read\\.sum[./]aliases[./]0"),
    ],
)
def test_a_malformed_alias_is_refused_naming_its_place(alias, where):
    doc = _metrics_doc()
    doc["metrics"]["dram__bytes_read.sum"]["aliases"] = [alias]
    with pytest.raises(DataFileError, match=f"^metrics.yaml: {where}"):
        data.validate(doc, "metrics.yaml", "metrics")


@pytest.mark.parametrize(
    "key,value",
    [
        ("since", {"ncu": "2020.1.1"}),  # no source
        ("since", {"ncu": "new", "source": "s"}),
        ("derived", {"product": ["a"], "source": "s"}),
        ("derived", {"product": ["a", "b"], "scale": "1e-9", "source": "s"}),
        ("sincee", {"ncu": "2020.1.1", "source": "s"}),  # a misspelt key is no silent no-op
    ],
)
def test_malformed_since_and_derived_entries_are_refused(key, value):
    doc = _metrics_doc()
    doc["metrics"]["launch__grid_size"][key] = value
    with pytest.raises(DataFileError, match="^metrics.yaml: metrics/launch__grid_size"):
        data.validate(doc, "metrics.yaml", "metrics")


@pytest.mark.parametrize(
    "edit,message",
    [
        (
            lambda m: m["sm__cycles_elapsed.avg"]["derived"].update(product=["no__such.sum", "gpu__time_duration.sum"]),
            "derived.product must name other metrics",
        ),
        (lambda m: m["dram__bytes_read.sum"]["aliases"][0].update(chips=["zz999"]), "unavailable_on must list chips"),
    ],
)
def test_the_loader_checks_what_the_schema_cannot(monkeypatch, edit, message):
    doc = _metrics_doc()
    edit(doc["metrics"])
    monkeypatch.setattr(
        data,
        "_read",
        lambda name: (
            doc if name == "metrics.yaml" else data._parse((data.resources.files(data._DATA) / name).read_text(), name)
        ),
    )
    data.metrics_table.cache_clear()
    try:
        with pytest.raises(DataFileError, match=message):
            data.metrics_table()
    finally:
        data.metrics_table.cache_clear()


def test_the_loader_gives_every_name_with_its_versions():
    names = data.metric_aliases(DIV)
    assert names == [DIV, "smsp__average_thread_inst_executed_per_inst_executed.ratio"]
    (newer,) = data.metric_alias_table(DIV)
    assert newer["ncu"] == "2025.3.1.." and newer["chips"] == [] and "2025.3.1" in newer["source"]
    assert data.metric_aliases("dram__throughput.avg.pct_of_peak_sustained_elapsed")[1] == (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
    )
    assert data.metric_since("launch__grid_dim_x") == "2020.1.1" and data.metric_since("launch__grid_size") is None
    assert data.metric_derivation("sm__cycles_elapsed.avg") == (
        "sm__cycles_elapsed.avg.per_second",
        "gpu__time_duration.sum",
        1e-9,
    )
    assert "launch__grid_dim_x" in data.section_metrics("LaunchStats")


def test_a_derived_metric_is_added_only_when_the_report_has_none_of_its_names():
    used: dict[str, str] = {}
    metrics = {"sm__cycles_elapsed.avg.per_second": 1.6e9, "gpu__time_duration.sum": 1000.0}
    data.derive_metrics(metrics, used)
    assert math.isclose(metrics["sm__cycles_elapsed.avg"], 1600.0)
    assert used == {"sm__cycles_elapsed.avg": "sm__cycles_elapsed.avg.per_second x gpu__time_duration.sum"}
    measured = {**metrics, "sm__cycles_elapsed.avg": 1234.0}
    data.derive_metrics(measured)
    assert measured["sm__cycles_elapsed.avg"] == 1234.0
    nan = {"sm__cycles_elapsed.avg.per_second": math.nan, "gpu__time_duration.sum": 1000.0}
    data.derive_metrics(nan)
    assert "sm__cycles_elapsed.avg" not in nan


# ---- re-profile advice -------------------------------------------------------------------
DIMS = tuple(f"launch__{w}_dim_{d}" for w in ("grid", "block") for d in "xyz")


def _launch_stats_of_ncu_2020_1() -> KernelProfile:
    """A launch whose LaunchStats section came from an ncu before 2020.1.1: grid and block
    totals, no per-dimension metrics."""
    return KernelProfile(id=0, name="k", metrics={m: 1.0 for m in data.section_metrics("LaunchStats") if m not in DIMS})


def test_advice_names_the_section_only_when_the_report_lacks_it():
    bare = KernelProfile(id=0, name="k")
    assert data.reprofile_advice(bare.collected, "launch__grid_dim_x") == "ncu --section LaunchStats"
    old = _launch_stats_of_ncu_2020_1()
    assert data.reprofile_advice(old.collected, "launch__grid_dim_x") == "re-profile with ncu >= 2020.1.1"
    # the section is there and no version is known to add the metric: no section to name
    del old.metrics["launch__registers_per_thread"]
    assert data.reprofile_advice(old.collected, "launch__registers_per_thread") is None
    # most of the section's metrics absent: the section is not in the report
    few = KernelProfile(id=0, name="k", metrics={"launch__grid_size": 64.0, "launch__block_size": 256.0})
    assert data.reprofile_advice(few.collected, "launch__grid_dim_x") == "ncu --section LaunchStats"


def test_a_derived_value_is_no_sign_of_its_section():
    """sm__cycles_elapsed.avg computed from the SM frequency does not make SpeedOfLight count
    as collected: a report of the roofline charts alone is still told to add the section."""
    k = KernelProfile(
        id=0,
        name="k",
        metrics={"sm__cycles_elapsed.avg": 1.0, "gpu__time_duration.sum": 1.0},
        metric_names={"sm__cycles_elapsed.avg": "sm__cycles_elapsed.avg.per_second x gpu__time_duration.sum"},
    )
    assert k.has("sm__cycles_elapsed.avg") and not k.collected("sm__cycles_elapsed.avg")
    assert data.reprofile_advice(k.collected, "sm__cycles_active.avg") == "ncu --section SpeedOfLight"


def test_the_partial_analysis_note_asks_for_a_newer_ncu_not_for_the_section(monkeypatch):
    import drgpu_py.readers.sections as readers

    monkeypatch.setattr(
        readers,
        "_needed_metrics",
        lambda chip: ([(m, "LaunchStats") for m in data.section_metrics("LaunchStats")], []),
    )
    old = _launch_stats_of_ncu_2020_1()
    note_missing_sections(Profile(path="r", format="csv", kernels=[old]))
    newer = [n for n in old.notes if "ncu >=" in n]
    assert newer == [
        "partial analysis: the report's ncu predates launch__grid_dim_x, launch__grid_dim_y, launch__grid_dim_z, "
        "launch__block_dim_x, launch__block_dim_y, launch__block_dim_z (its sections are in the report): "
        "re-profile with ncu >= 2020.1.1"
    ]
    assert not any("--section" in n for n in newer)
    bare = KernelProfile(id=0, name="k")
    note_missing_sections(Profile(path="r", format="csv", kernels=[bare]))
    assert any("lacks most metrics of section(s) LaunchStats" in n for n in bare.notes)
    assert not any("ncu >=" in n for n in bare.notes)


def test_a_tree_node_of_a_metric_newer_than_the_report_says_so():
    node = Node("Grid x", None, "", "missing", attrs={"metric": "launch__grid_dim_x", "section": "LaunchStats"})
    assert missing_text(node) == "not collected (section LaunchStats)"
    node.attrs["ncu_since"] = "2020.1.1"
    assert missing_text(node) == "not in this report's ncu (re-profile with ncu >= 2020.1.1)"
