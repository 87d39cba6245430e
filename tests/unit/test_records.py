"""The typed records of the data files (drgpu_py/specs/records.py) name exactly what the
files hold: every threshold of thresholds.yaml is a key of Thresholds and no other, and every
key of any arch file is a key of ArchConstants; a record and its file cannot drift apart."""

from __future__ import annotations

import yaml

from conftest import ROOT
from drgpu_py.specs import loader
from drgpu_py.specs.records import ArchConstants, Thresholds

SPECS = ROOT / "drgpu_py" / "specs"


def test_thresholds_record_names_every_threshold():
    in_file = set(yaml.safe_load((SPECS / "thresholds.yaml").read_text())["thresholds"])
    assert set(Thresholds.__annotations__) == in_file
    assert set(loader.thresholds()) == in_file


def test_arch_record_names_every_arch_key():
    keys = set()
    for f in sorted((SPECS / "arch").glob("*.yaml")):
        keys |= set(yaml.safe_load(f.read_text()))
    assert keys <= set(ArchConstants.__annotations__), keys - set(ArchConstants.__annotations__)
    for chip in (None, "gh100"):
        assert set(loader.load_arch(chip)) <= set(ArchConstants.__annotations__)
