"""Each detector declares the kernel-level metrics it reads (``@detector(metrics=...)``), and
each of them is a metric the readers read (``specs/metrics.yaml``) or one drgpu derives
itself (``drgpu__*``, written by the merge of ranks): a misspelt or undeclared name would
read as "not collected" and silence its detector without a word."""

from __future__ import annotations


import yaml

from conftest import ROOT
from conftest import metric_literals
from drgpu_py.analysis.detectors import REGISTRY, base
from test_rule_modules import FAMILIES, family_modules


def _catalogue() -> set[str]:
    doc = yaml.safe_load((ROOT / "drgpu_py" / "specs" / "metrics.yaml").read_text())
    names = set(doc["metrics"])
    for spec in doc["metrics"].values():
        names.update(a if isinstance(a, str) else a["name"] for a in (spec or {}).get("aliases") or [])
    return names


def test_every_declared_metric_is_read_by_the_readers():
    known = _catalogue()
    unknown = {
        (d.name, m) for d in REGISTRY.values() for m in d.metrics if m not in known and not m.startswith("drgpu__")
    }
    assert not unknown, sorted(unknown)


def test_every_metric_a_detector_module_names_is_declared():
    """A metric named in a rule module's code is declared by its detector, and one named in a
    family's shared module (common.py: helpers read on behalf of several rules) by one of the
    family's detectors; base.py's shared helpers read the UNIT/GRID metric groups."""
    for family in FAMILIES:
        modules = family_modules(family)
        names = {module.__name__ for module in modules}
        in_family = {m for d in REGISTRY.values() if d.run.__module__ in names for m in d.metrics}
        for module in modules:
            declared = {m for d in REGISTRY.values() if d.run.__module__ == module.__name__ for m in d.metrics}
            shared = module.__name__.endswith(".common")
            missing = metric_literals(module) - (in_family if shared else declared)
            assert not missing, (module.__name__, sorted(missing))
    assert set(base.UNIT_METRICS) <= _catalogue() and set(base.GRID_METRICS) <= _catalogue()


def test_registry_has_one_detector_per_catalogue_entry():
    from drgpu_py.specs import loader

    wanted = {f["detector"] for f in loader.findings_catalogue()["findings"]}
    assert wanted == set(REGISTRY), wanted ^ set(REGISTRY)
    assert all(callable(d.run) and d.name == d.run.__name__ for d in REGISTRY.values())
