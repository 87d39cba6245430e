"""The CLI is thin: analyze in text/json, clear errors with exit codes, thresholds listing."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from drgpu_py.cli import app

from conftest import report_path

runner = CliRunner()


def test_analyze_json_stdout():
    r = runner.invoke(app, ["analyze", str(report_path("few_blocks", "bad")), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["kernels"][0]["findings"][0]["id"] == "grid-too-small"


def test_analyze_text_shows_tree_and_findings():
    r = runner.invoke(app, ["analyze", str(report_path("double_literal", "bad"))])
    assert r.exit_code == 0, r.output
    assert "Stall cycles" in r.stdout and "fp64-conversion" in r.stdout and "double_literal.cu:11" in r.stdout


def test_output_file_and_force(tmp_path):
    out = tmp_path / "a.json"
    args = ["analyze", str(report_path("few_blocks", "bad")), "-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    assert json.loads(out.read_text())["tool"] == "drgpu"
    r = runner.invoke(app, args)
    assert r.exit_code == 6 and "exists" in r.output
    assert runner.invoke(app, args + ["--force"]).exit_code == 0


def test_missing_file_and_bad_kernel_filter(tmp_path):
    r = runner.invoke(app, ["analyze", str(tmp_path / "nope.ncu-rep")])
    assert r.exit_code == 3 and "no such file" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["analyze", str(report_path("few_blocks", "bad")), "-k", "zzz"])
    assert r.exit_code == 5 and "saxpy_stride" in r.output


def test_threshold_option():
    r = runner.invoke(app, ["analyze", str(report_path("few_blocks", "bad")), "-f", "json", "-t", "grid_fill=0.01"])
    assert r.exit_code == 0
    assert "grid-too-small" not in [f["id"] for f in json.loads(r.stdout)["kernels"][0]["findings"]]
    r = runner.invoke(app, ["analyze", str(report_path("few_blocks", "bad")), "-t", "grid_fill"])
    assert r.exit_code == 2 and "KEY=VALUE" in r.output


def test_thresholds_listing():
    r = runner.invoke(app, ["thresholds"])
    assert r.exit_code == 0 and "sol_pct" in r.stdout


def test_outputs_get_the_umask_mode(tmp_path):
    import os
    from drgpu_py.io import atomic_write
    umask = os.umask(0o022)
    try:
        out = atomic_write(tmp_path / "r.html", "<p>x</p>")
    finally:
        os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o644
