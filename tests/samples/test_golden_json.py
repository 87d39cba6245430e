"""The JSON analysis of each shipped sample report is byte-identical to its fingerprint in
tests/data/golden_json.sha256 (made by scripts/golden_json.py --write): a change meant to
keep behaviour (a refactoring) keeps every fingerprint; a change meant to alter the output
rewrites them, and the diff of that file shows which inputs it altered. The CSV exports are
checked by ``scripts/golden_json.py --check`` (in .ci/run), which reads each input anew."""

from __future__ import annotations

import hashlib
import importlib.util

import pytest

from conftest import ROOT, analysis_of, library_analysis, library_report, tier_marks

_spec = importlib.util.spec_from_file_location("golden_json", ROOT / "scripts" / "golden_json.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

FINGERPRINTS = golden.read_golden()
SAMPLE_REPORTS = sorted(
    rel for rel in FINGERPRINTS if rel.endswith(("_bad.ncu-rep", "_fixed.ncu-rep")) and rel.count("/") == 2
)
LIBRARY = sorted(rel for rel in FINGERPRINTS if rel.startswith("sample_reports/library/"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_every_input_has_a_fingerprint():
    assert sorted(FINGERPRINTS) == golden.inputs()


def _case_and_variant(rel: str) -> tuple[str, str]:
    case, variant = rel.split("/")[2].removesuffix(".ncu-rep").rsplit("_", 1)
    return case, variant


@pytest.mark.parametrize("rel", [pytest.param(r, marks=tier_marks(_case_and_variant(r)[0])) for r in SAMPLE_REPORTS])
def test_sample_report_json_matches_its_fingerprint(rel):
    case, variant = _case_and_variant(rel)
    text = golden.json_text(analysis_of(case, variant), ROOT / rel, rel)
    assert _digest(text) == FINGERPRINTS[rel], f"{rel}: JSON changed (scripts/golden_json.py --dump DIR shows it)"


@pytest.mark.parametrize("rel", LIBRARY)
def test_library_report_json_matches_its_fingerprint(rel):
    stem = rel.rsplit("/", 1)[1].removesuffix(".ncu-rep.xz")
    text = golden.json_text(library_analysis(stem), library_report(stem), rel)
    assert _digest(text) == FINGERPRINTS[rel], f"{rel}: JSON changed (scripts/golden_json.py --dump DIR shows it)"
