"""drgpu profile --passes 2 through the stand-in ncu (tests/standin/ncu): both runs' argument
lists, the second run's filter built from the first run's durations, the share rule, the
one-run fallback, the joined analysis and the record, and --dry-run."""

from __future__ import annotations

import json
import lzma
import os
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import slow, standin_profile

from drgpu_py.cli import app
from drgpu_py.ncu import session as ncu_session
from drgpu_py.readers import open_report

ROOT = Path(__file__).resolve().parents[2]
#: A report of 16 kernels of different lengths, one launch each.
LIBRARY = ROOT / "sample_reports" / "library" / "library.ncu-rep.xz"
runner = CliRunner()


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The library report, plain (the stand-in copies it as each run's report), and its launches."""
    rep = tmp_path_factory.mktemp("lib") / "library.ncu-rep"
    with lzma.open(LIBRARY) as src:
        rep.write_bytes(src.read())
    return rep, open_report(rep).kernels


def _profile(tmp_path, monkeypatch, library, *args):
    rep, kernels = library
    env = {
        "STANDIN_NCU_SCENARIO": "ok",
        "STANDIN_NCU_REPORT": str(rep),
        "STANDIN_NCU_KERNELS": ",".join(k.mangled for k in kernels),
        "STANDIN_NCU_ARGV_LOG": str(tmp_path / "argv.jsonl"),
        "COLUMNS": "250",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in ncu_session.RANK_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, standin_profile(tmp_path / "out", "-q", *args, "--", "/bin/echo", "hi"))
    log = tmp_path / "argv.jsonl"
    runs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return r, runs


def _expected_focus(kernels, share: float) -> list[str]:
    """The share rule written out here: longest first until `share` of the summed time."""
    ranked = sorted(kernels, key=lambda k: -k.duration_ns)
    total = sum(k.duration_ns for k in kernels)
    out, held = [], 0.0
    for k in ranked:
        if out and held >= share * total:
            break
        out.append(k.mangled)
        held += k.duration_ns
    return out


def _opt(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize("share", [0.8, pytest.param(0.5, marks=slow)])
def test_two_passes_run_the_rest_for_the_kernels_holding_the_share(tmp_path, monkeypatch, library, share):
    r, runs = _profile(tmp_path, monkeypatch, library, "--passes", "2", "--focus-share", str(share))
    assert r.exit_code == 0, r.output
    assert len(runs) == 2
    first, second = runs
    focus = _expected_focus(library[1], share)
    assert 0 < len(focus) < len(library[1])
    # first run: every launch, the cheap groups, the source
    assert "-k" not in first and "-c" not in first and _opt(first, "--import-source") == "yes"
    assert "gpu__time_duration.sum" in _opt(first, "--metrics").split(",")
    assert "sm__throughput.avg.pct_of_peak_sustained_elapsed" not in _opt(first, "--metrics")
    assert _opt(first, "-o").endswith("out/echo.pass1")
    # second run: the rest, only the focus kernels' launches, by exact mangled name
    assert _opt(second, "--kernel-name-base") == "mangled"
    regex = _opt(second, "-k")
    assert regex.startswith("regex:")
    named = [k.mangled for k in library[1] if __import__("re").search(regex[len("regex:") :], k.mangled)]
    assert sorted(named) == sorted(focus)
    assert _opt(second, "-c") == str(len(focus))
    assert "--import-source" not in second and "--section" not in second
    assert "sm__throughput.avg.pct_of_peak_sustained_elapsed" in _opt(second, "--metrics").split(",")
    assert _opt(second, "-o").endswith("out/echo.pass2")

    out = tmp_path / "out"
    rec = json.loads((out / "echo.profile.json").read_text())["passes"]
    assert rec["runs"] == 2 and rec["focus_share"] == share
    both = [k["mangled"] for k in rec["kernels"] if k["collected"] == "both passes"]
    assert sorted(both) == sorted(focus)
    assert len(rec["kernels"]) == len(library[1])
    assert rec["second"]["launch_count"] == len(focus) and len(rec["second"]["kernels"]) == len(focus)
    assert len(rec["first"]["kernels"]) == len(library[1])

    # one analysis of the two joined: kernels outside the focus say so, those inside do not
    doc = json.loads((out / "echo.json").read_text())
    assert len(doc["kernels"]) == len(library[1])
    outside = [k for k in doc["kernels"] if any("outside the focus" in n for n in k["notes"])]
    assert len(outside) == len(library[1]) - len(focus)
    assert (out / "echo.pass1.ncu-rep").is_file() and (out / "echo.pass2.ncu-rep").is_file()
    assert not (out / "echo.ncu-rep").exists()

    # drgpu analyze of the output folder joins the two reports again (not a merge of ranks)
    r = runner.invoke(app, ["analyze", "-f", "json", "-o", str(tmp_path / "again.json"), str(out)])
    assert r.exit_code == 0, r.output
    again = json.loads((tmp_path / "again.json").read_text())
    assert any("two-pass profile" in n for n in again["notes"])
    assert not any("merged from" in n for k in again["kernels"] for n in k["notes"])


def test_auto_falls_back_to_one_run_for_a_single_launch(tmp_path, monkeypatch, library):
    r, runs = _profile(tmp_path, monkeypatch, library, "--passes", "auto", "-c", "1")
    assert r.exit_code == 0, r.output
    assert len(runs) == 1 and _opt(runs[0], "-o").endswith("out/echo")
    rec = json.loads((tmp_path / "out" / "echo.profile.json").read_text())["passes"]
    assert rec["runs"] == 1 and "--launch-count 1" in rec["why"]


def test_two_passes_with_launch_skip_is_refused_before_anything_runs(tmp_path, monkeypatch, library):
    r, runs = _profile(tmp_path, monkeypatch, library, "--passes", "2", "-s", "3")
    assert r.exit_code == 2 and "--launch-skip" in r.output
    assert runs == []


def test_dry_run_prints_both_runs_the_second_depending_on_the_first(tmp_path, monkeypatch, library):
    r, runs = _profile(tmp_path, monkeypatch, library, "--passes", "2", "--dry-run")
    assert r.exit_code == 0, r.output
    assert runs == [] and not (tmp_path / "out").exists()
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert len(lines) == 4 and lines[0].startswith("# run 1 of 2") and "depends on the first pass" in lines[2]
    first, second = shlex.split(lines[1]), shlex.split(lines[3])
    assert _opt(first, "-o").endswith("echo.pass1") and "-k" not in first
    assert _opt(second, "-k") == "regex:<FOCUS_KERNELS>" and _opt(second, "-c") == "<FOCUS_LAUNCHES>"
    assert os.path.basename(first[-2]) == "echo" and first[-1] == "hi"  # the application, unchanged


def test_one_pass_stays_the_default(tmp_path, monkeypatch, library):
    r, runs = _profile(tmp_path, monkeypatch, library, "--dry-run")
    assert r.exit_code == 0, r.output
    assert len([ln for ln in r.stdout.splitlines() if ln.strip()]) == 1


@pytest.mark.parametrize(("scenario", "code"), [("app_fail", 12), ("perm", 11)])
def test_a_failed_first_run_ends_the_session_without_a_second(tmp_path, monkeypatch, library, scenario, code):
    monkeypatch.setenv("STANDIN_NCU_SCENARIO", scenario)
    rep, kernels = library
    env = {
        "STANDIN_NCU_REPORT": str(rep),
        "STANDIN_NCU_KERNELS": ",".join(k.mangled for k in kernels[:2]),
        "STANDIN_NCU_ARGV_LOG": str(tmp_path / "argv.jsonl"),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in ncu_session.RANK_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, standin_profile(tmp_path / "out", "-q", "--passes", "2", "--", "/bin/echo", "hi"))
    assert r.exit_code == code, r.output
    assert len((tmp_path / "argv.jsonl").read_text().splitlines()) == 1
    rec = json.loads((tmp_path / "out" / "echo.profile.json").read_text())
    assert rec["passes"]["runs"] == 2 and rec["passes"]["second"] is None
    assert rec["exit_code"] == code
