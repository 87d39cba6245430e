"""One rule module per finding (docs/architecture.md, "Rule files"): every finding of
``specs/findings.yaml`` has its module ``drgpu_py/analysis/detectors/<family>/<finding>.py``
(the id with ``_`` for ``-``), which opens with a contract docstring and registers exactly
one detector, the one the finding names, as its last definition (a rule reads top to
bottom: its tables and helpers, then the detector); a family's shared module (``common.py``)
and its package register none; no module of the detectors is over 800 lines."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from drgpu_py.analysis import detectors
from drgpu_py.analysis.detectors import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
DETECTORS = ROOT / "drgpu_py" / "analysis" / "detectors"
#: The families, in the order detectors/__init__.py imports them (REGISTRY's order).
FAMILIES = ("constant", "instruction", "launch", "memory", "pipes", "reuse", "sync")
MAX_LINES = 800


def catalogue() -> list[dict]:
    return yaml.safe_load((ROOT / "drgpu_py" / "specs" / "findings.yaml").read_text(encoding="utf-8"))["findings"]


def rule_module_name(finding_id: str) -> str:
    return finding_id.replace("-", "_")


@cache
def family_modules(family: str) -> tuple[ModuleType, ...]:
    """The family's package and every module in it, imported."""
    package = importlib.import_module(f"{detectors.__name__}.{family}")
    return (package,) + tuple(
        importlib.import_module(f"{package.__name__}.{info.name}") for info in pkgutil.iter_modules(package.__path__)
    )


def registered_in(module: ModuleType) -> list[str]:
    return [d.name for d in REGISTRY.values() if d.run.__module__ == module.__name__]


def test_the_families_are_the_packages_under_detectors():
    on_disk = {p.parent.name for p in DETECTORS.glob("*/__init__.py")}
    assert on_disk == set(FAMILIES)
    assert not [p.name for p in DETECTORS.glob("*.py") if p.name not in ("__init__.py", "base.py")]


@pytest.mark.parametrize("spec", catalogue(), ids=lambda spec: spec["id"])
def test_every_finding_has_its_rule_module_with_its_detector(spec):
    name = rule_module_name(spec["id"])
    found = [f for f in FAMILIES if (DETECTORS / f / f"{name}.py").is_file()]
    assert len(found) == 1, (spec["id"], found)
    module = importlib.import_module(f"{detectors.__name__}.{found[0]}.{name}")
    assert registered_in(module) == [spec["detector"]], spec["id"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_rule_module_opens_with_a_contract_and_registers_one_detector(family):
    ids = {rule_module_name(spec["id"]) for spec in catalogue()}
    for module in family_modules(family):
        doc = module.__doc__ or ""
        assert doc.strip() and "Contract:" in doc, f"{module.__name__}: no contract docstring"
        short = module.__name__.rsplit(".", 1)[-1]
        if module.__name__.endswith(f".{family}") or short == "common":
            assert registered_in(module) == [], module.__name__
        else:
            assert short in ids, f"{module.__name__}: no finding of that id in findings.yaml"
            assert len(registered_in(module)) == 1, (module.__name__, registered_in(module))


def test_the_detector_is_the_last_definition_of_its_rule_module():
    for d in REGISTRY.values():
        module = importlib.import_module(d.run.__module__)
        body = ast.parse(inspect.getsource(module)).body
        last = body[-1]
        assert isinstance(last, ast.FunctionDef) and last.name == d.name, (module.__name__, d.name)


def test_every_detector_lives_in_a_rule_module():
    modules = {m.__name__ for f in FAMILIES for m in family_modules(f)}
    assert all(d.run.__module__ in modules for d in REGISTRY.values())


def test_registry_order_is_families_then_their_rule_modules():
    """Each family's package imports its rule modules in a fixed order: REGISTRY lists the
    detectors family by family in that order."""
    expected = [
        name
        for family in FAMILIES
        for rule in importlib.import_module(f"{detectors.__name__}.{family}").__all__
        for name in registered_in(importlib.import_module(f"{detectors.__name__}.{family}.{rule}"))
    ]
    assert list(REGISTRY) == expected


def test_no_detector_module_is_over_the_line_limit():
    long = {
        str(p.relative_to(ROOT)): n
        for p in DETECTORS.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long
