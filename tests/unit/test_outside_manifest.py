"""The manifest of reports made by others (sample_reports/outside/manifest.yaml) and the script
that fetches them (scripts/fetch_outside.py): entries complete and consistent, a download
kept only when it is the file the manifest names."""

from __future__ import annotations

import hashlib
import io
import sys

import pytest
import yaml

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import fetch_outside

ENTRIES = yaml.safe_load((ROOT / "sample_reports" / "outside" / "manifest.yaml").read_text(encoding="utf-8"))["reports"]
KEYS = {"id", "repository", "commit", "path", "format", "licence", "redistributable", "size", "sha256"}
OPEN_LICENCES = {"MIT", "BSD-3-Clause", "BSD-2-Clause", "Apache-2.0", "CC-BY-4.0", "CC0-1.0"}


def test_entries_complete_and_unique():
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)
    for e in ENTRIES:
        assert set(e) >= KEYS, e["id"]
        assert len(e["commit"]) == 40 and len(e["sha256"]) == 64, e["id"]
        assert e["format"] in ("ncu-rep", "csv"), e["id"]
        # Copies are allowed only under an open licence; no licence file means fetch-only.
        assert e["redistributable"] == (e["licence"] in OPEN_LICENCES), e["id"]


def test_corpus_spans_gpus_and_ncu_versions():
    reps = [e for e in ENTRIES if e["format"] == "ncu-rep"]
    assert len(reps) >= 15
    assert len({e["compute_capability"] for e in reps}) >= 5
    assert len({(e["ncu_version"] or "")[:4] for e in reps}) >= 5


class _Response(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.mark.parametrize("right", [True, False], ids=["the-named-file", "another-file"])
def test_fetch_keeps_only_the_named_file(tmp_path, monkeypatch, right):
    body = b"NVR\x00 a report"
    entry = {
        "id": "x",
        "format": "ncu-rep",
        "repository": "o/r",
        "commit": "0" * 40,
        "path": "a b.ncu-rep",
        "size": len(body),
        "sha256": hashlib.sha256(body if right else b"other").hexdigest(),
    }
    asked = []

    def urlopen(url, timeout):
        asked.append(url)
        return _Response(body)

    monkeypatch.setattr(fetch_outside.urllib.request, "urlopen", urlopen)
    why = fetch_outside.fetch_one(entry, tmp_path)
    assert asked == ["https://raw.githubusercontent.com/o/r/" + "0" * 40 + "/a%20b.ncu-rep"]
    assert (why is None) == right
    assert (tmp_path / "x.ncu-rep").exists() == right
    if right:  # present and right: not asked again
        assert fetch_outside.fetch_one(entry, tmp_path) is None and len(asked) == 1
