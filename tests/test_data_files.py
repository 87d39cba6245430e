"""Data files: schema checks pass for the shipped files and catch broken ones; arch overlays."""
from __future__ import annotations

import pytest
import yaml

from drgpu_py import data
from drgpu_py.analysis.detectors import REGISTRY
from drgpu_py.errors import DataFileError, UsageError

REQUIRED = {"global-uncoalesced", "shared-bank-conflict", "fp64-conversion", "barrier-imbalance", "grid-too-small",
            "local-memory", "loop-invariant-load", "low-ilp", "slow-math", "warp-divergence", "atomic-contention",
            "constant-cache-divergence", "memory-barrier", "occupancy-limited"}


def test_catalogue_is_valid_and_complete():
    cat = data.findings_catalogue()["findings"]
    ids = {f["id"] for f in cat}
    assert REQUIRED <= ids
    for f in cat:
        assert f["detector"] in REGISTRY, f["id"]


def test_tree_shape_covers_every_stall_reason():
    shape = data.tree_shape()
    grouped = {r for g in shape["groups"] for r in g["reasons"]} | set(shape["not_stalls"])
    assert grouped == set(data.stall_reasons())


def test_arch_files_are_overlays():
    base = data.load_arch(None)
    gh = data.load_arch("gh100")
    assert gh["known"] and gh["issue_slots_per_sm"] == base["issue_slots_per_sm"]
    assert gh["latency"]["l2"] != base["latency"]["l2"] or gh["latency"] == base["latency"]
    tu = data.load_arch("tu102")
    assert tu["max_warps_per_sm"] == 32 and tu["registers_per_sm"] == base["registers_per_sm"]
    assert not data.load_arch("zz999")["known"]
    assert data.chip_for("9.0") == "gh100" and data.chip_for("99.9") is None


def test_threshold_overrides_and_errors(tmp_path):
    th = data.thresholds({"sol_pct": 70})
    assert th["sol_pct"] == 70.0
    with pytest.raises(UsageError, match="unknown threshold") as e:
        data.thresholds({"no_such": 1})
    assert e.value.exit_code == 2
    f = tmp_path / "t.yaml"
    f.write_text("thresholds:\n  no_such: 0.5\n")
    with pytest.raises(UsageError, match="unknown threshold 'no_such'"):
        data.thresholds(file=f)
    f.write_text("thresholds:\n  barrier_share: 0.5\n")
    assert data.thresholds(file=f)["barrier_share"] == 0.5
    f.write_text("thresholds: [\n")
    with pytest.raises(DataFileError, match="not valid YAML"):
        data.thresholds(file=f)


def test_schema_violations_are_reported(monkeypatch):
    doc = yaml.safe_load((data.resources.files("drgpu_py.specs") / "findings.yaml").read_text())
    doc["findings"][0]["speedup_model"] = "magic"
    monkeypatch.setattr(data, "_read", lambda name: doc if name == "findings.yaml" else data._parse(
        (data.resources.files("drgpu_py.specs") / name).read_text(), name))
    data.findings_catalogue.cache_clear()
    try:
        with pytest.raises(DataFileError, match="unknown speedup model"):
            data.findings_catalogue()
    finally:
        data.findings_catalogue.cache_clear()
