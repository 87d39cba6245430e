"""SARIF, gcc and CSV output of real reports: the PyTorch model step (library kernels without
source lines, kernels of a few microseconds) and sample kernels with source lines. Every
document validates against the OASIS SARIF 2.1.0 schema (tests/data); every result has a
physical location; levels follow the rule of render/located.py (a high finding that saves a
negligible share of the step's GPU time is not an error); under a source root every source
URI is relative with its base in ``originalUriBaseIds``, and the CSV's ``file`` column names
the files by the same path mappings."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

from conftest import analysis_of, api_analysis, library_report, sarif_validator
from drgpu_py.render import RenderOptions, render
from drgpu_py.render.located import level, parse_path_map, problems, source_root, thresholds_of


def _sarif(analysis, *maps) -> dict:
    doc = json.loads(render(analysis, "sarif", RenderOptions(path_map=tuple(maps))))
    errors = list(sarif_validator().iter_errors(doc))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return doc


@pytest.fixture(scope="module")
def step():
    return api_analysis(library_report("step"))


def test_step_results_are_located_and_leveled_by_time_share(step):
    run = _sarif(step)["runs"][0]
    results = run["results"]
    assert len(results) == sum(len(ka.findings) for ka in step.kernels) > 0
    # Library kernels have no source line: their results are at the report, named relative
    # to the working folder when it is in it, else by its file name, never by this machine's
    # absolute path.
    path = str(step.profile.path)
    inside = not os.path.relpath(path).startswith("..")
    report = os.path.relpath(path) if inside else os.path.basename(path)
    at_report = 0
    for r in results:
        (loc,) = r["locations"]
        if "region" not in loc["physicalLocation"]:
            assert loc["physicalLocation"]["artifactLocation"] == {"uri": report}, r["ruleId"]
            at_report += 1
        assert loc["logicalLocations"][0]["fullyQualifiedName"] == r["properties"]["kernel"]
    assert at_report > len(results) // 2, "most of the step's kernels are library kernels"
    assert os.getcwd() not in json.dumps(run) and os.path.dirname(os.path.abspath(path)) not in json.dumps(run)
    th = thresholds_of(step)
    for r in results:
        p = r["properties"]
        assert r["level"] == level(p["severity"], p["saved_share"], th)
        if r["level"] == "error":
            assert p["saved_share"] >= th["error_saved_share"]
    # The step holds what the rule is for: high findings in kernels of a few microseconds.
    small_high = [r for r in results if r["properties"]["severity"] == "high" and r["level"] != "error"]
    assert small_high and all(r["properties"]["saved_share"] < th["error_saved_share"] for r in small_high)
    fingerprints = [r["partialFingerprints"]["drgpuFinding/v1"] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)


@pytest.mark.parametrize("case", ["double_literal", "aos_gather", "few_blocks"])
def test_sample_sarif_relative_under_a_source_root(case):
    a = analysis_of(case, "bad")
    lined = [loc for ka in a.kernels for f in ka.findings for loc in f.locations if loc.get("file")]
    assert lined, "the sample has findings on source lines"
    folder = str(lined[0]["file"]).rsplit("/", 1)[0]
    plain = _sarif(a)["runs"][0]
    run = _sarif(a, source_root(folder))["runs"][0]
    assert run["originalUriBaseIds"]["SRCROOT"] == {"uri": f"file://{folder}/"}
    for before, after in zip(plain["results"], run["results"]):
        loc = after["locations"][0]["physicalLocation"]
        if "region" not in loc:
            continue
        name = loc["artifactLocation"]["uri"]
        assert loc["artifactLocation"]["uriBaseId"] == "SRCROOT" and not name.startswith(("/", "file:"))
        assert before["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == f"file://{folder}/{name}"
        assert before["partialFingerprints"] == after["partialFingerprints"]


def test_sample_gcc_has_a_line_per_problem():
    a = analysis_of("double_literal", "bad")
    text = render(a, "gcc", RenderOptions())
    heads = [p for p in problems(a)]
    assert len([ln for ln in text.splitlines() if ": note: blamed " not in ln]) == len(heads)
    first = heads[0]
    assert text.startswith(f"{first.lines[0]['file']}:{first.lines[0]['line']}: {first.level}: {first.finding.title}")


def _csv(analysis, *maps) -> list[dict]:
    return list(csv.DictReader(io.StringIO(render(analysis, "csv", RenderOptions(path_map=tuple(maps))))))


@pytest.mark.parametrize("case", ["double_literal", "aos_gather"])
def test_csv_file_column_follows_the_path_maps(case):
    """``--source-root`` and ``--path-map`` rename the CSV's files as they do SARIF's and gcc's:
    relative under a source root, under TO for FROM=TO; rows without a file stay without one,
    and every other cell is unchanged."""
    a = analysis_of(case, "bad")
    plain = _csv(a)
    files = [r["file"] for r in plain if r["file"]]
    assert files and all(f.startswith("/") for f in files), "the report's absolute paths"
    folder = files[0].rsplit("/", 1)[0]
    rooted, moved = _csv(a, source_root(folder)), _csv(a, parse_path_map(f"{folder}=src"))
    assert len(rooted) == len(moved) == len(plain)
    for before, under_root, under_src in zip(plain, rooted, moved):
        inside = before["file"].startswith(folder + "/")
        expect = before["file"][len(folder) + 1 :] if inside else before["file"]
        assert under_root["file"] == expect
        assert under_src["file"] == (f"src/{expect}" if inside else before["file"])
        assert {**under_root, "file": before["file"]} == before == {**under_src, "file": before["file"]}
    assert any(not r["file"].startswith("/") for r in rooted if r["file"])
