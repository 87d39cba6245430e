"""Data files: schema checks pass for the shipped files and catch broken ones; arch overlays."""

from __future__ import annotations

import pytest
import yaml

from drgpu_py.specs import loader as data
from drgpu_py.analysis.detectors import REGISTRY
from drgpu_py.errors import DataFileError, UsageError

REQUIRED = {
    "global-uncoalesced",
    "shared-bank-conflict",
    "fp64-conversion",
    "barrier-imbalance",
    "grid-too-small",
    "local-memory",
    "loop-invariant-load",
    "low-ilp",
    "slow-math",
    "warp-divergence",
    "atomic-contention",
    "constant-cache-divergence",
    "memory-barrier",
    "occupancy-limited",
}


def test_catalogue_is_valid_and_complete():
    cat = data.findings_catalogue()["findings"]
    ids = {f["id"] for f in cat}
    assert ids >= REQUIRED
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
    monkeypatch.setattr(
        data,
        "_read",
        lambda name: (
            doc
            if name == "findings.yaml"
            else data._parse((data.resources.files("drgpu_py.specs") / name).read_text(), name)
        ),
    )
    data.findings_catalogue.cache_clear()
    try:
        with pytest.raises(DataFileError, match="unknown speedup model"):
            data.findings_catalogue()
    finally:
        data.findings_catalogue.cache_clear()


def _spec_docs():
    """(origin, schema name, document) of every shipped data file."""
    specs = data.resources.files("drgpu_py.specs")
    out = [
        (f"{n}.yaml", n, data._parse((specs / f"{n}.yaml").read_text(), n))
        for n in ("metrics", "tree", "thresholds", "findings", "attribution")
    ]
    out += [
        (f"arch/{p.name}", "arch", data._parse(p.read_text(), p.name))
        for p in (specs / "arch").iterdir()
        if p.name.endswith(".yaml")
    ]
    out += [
        (p.name, "metric_set", data._parse(p.read_text(), p.name))
        for p in sorted(data.share_dir("metric_sets").glob("*.yaml"))
    ]
    return out


def test_every_data_file_matches_its_json_schema():
    docs = _spec_docs()
    assert {n for _, n, _ in docs} == {"metrics", "tree", "thresholds", "findings", "arch", "metric_set", "attribution"}
    for origin, name, doc in docs:
        data.validate(doc, origin, name)


@pytest.mark.parametrize(
    "name,edit,where",
    [
        (
            "thresholds",
            lambda d: d["thresholds"]["barrier_share"].update(default="high"),
            "thresholds/barrier_share/default",
        ),
        ("findings", lambda d: d["findings"][0].pop("advice"), "findings/0"),
        ("metrics", lambda d: d["stall_reasons"]["barrier"].update(sampling="one"), "stall_reasons/barrier/sampling"),
        ("tree", lambda d: d.update(schema="drgpu.tree/2"), "schema"),
        ("findings", lambda d: d.update(library_kernels=["(unclosed"]), "library_kernels/0"),
        ("attribution", lambda d: d["cells"][0].pop("owners"), "cells/0"),
    ],
)
def test_a_malformed_data_file_is_a_data_file_error_naming_the_place(name, edit, where):
    """The schemas catch what the hand-written checks did: a malformed file is DataFileError
    (exit 8), naming the file and the path inside it."""
    specs = data.resources.files("drgpu_py.specs")
    doc = data._parse((specs / f"{name}.yaml").read_text(), name)
    data.validate(doc, f"{name}.yaml", name)
    edit(doc)
    with pytest.raises(DataFileError, match=f"^{name}.yaml: {where}: ") as e:
        data.validate(doc, f"{name}.yaml", name)
    assert e.value.exit_code == 8


def test_packaged_specs_load_without_jsonschema():
    """Start-up stays cheap: loading the packaged specs and shipped metric sets does not
    import jsonschema (the suite validates them above); a user's metric set does."""
    import subprocess
    import sys

    code = (
        "import sys; from drgpu_py.specs import loader as data, metric_sets; data.findings_catalogue(); data.tree_shape(); "
        "data.load_arch('gh100'); metric_sets.load_metric_set('gh100'); print('jsonschema' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stdout + r.stderr
