"""The CLI is thin: analyze in text/json, clear errors with exit codes, thresholds listing."""

from __future__ import annotations

import json
import re

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


def test_an_existing_output_is_refused_before_the_report_is_read(tmp_path, monkeypatch):
    """Without --force, an existing -o ends the run at once: no report is read or analyzed."""
    import drgpu_py.pipeline as pipeline

    def must_not_run(*a, **k):
        raise AssertionError("the report was analyzed before the output was checked")

    monkeypatch.setattr(pipeline, "analyze_reports", must_not_run)
    out = tmp_path / "a.json"
    out.write_text("kept")
    r = runner.invoke(app, ["analyze", str(report_path("few_blocks", "bad")), "-o", str(out)])
    assert r.exit_code == 6 and "exists" in r.output
    assert out.read_text() == "kept"


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


# ---- conventions (issue: help, ranges, widths, units, CI exit codes, CSV, SARIF) ----------------
def test_help_has_plain_placeholders_on_every_command():
    for cmd in ("analyze", "list", "diff", "merge", "profile", "thresholds"):
        r = runner.invoke(app, [cmd, "-h"])
        assert r.exit_code == 0, (cmd, r.output)
        assert "<" not in r.stdout and "list[" not in r.stdout, (cmd, r.stdout)
    assert "--fail-on high|medium" in runner.invoke(app, ["analyze", "-h"]).stdout


def test_option_ranges_and_unknown_threshold_keys_are_usage_errors(tmp_path):
    rep = str(report_path("few_blocks", "bad"))
    for argv in (
        ["analyze", rep, "--fold", "5"],
        ["merge", rep, rep, "--fold", "5"],
        ["analyze", rep, "-t", "no_such=1"],
        ["analyze", rep, "--fail-on", "low"],
    ):
        r = runner.invoke(app, argv)
        assert r.exit_code == 2, (argv, r.output)
    f = tmp_path / "t.yaml"
    f.write_text("thresholds:\n  grid_fil: 0.5\n")
    r = runner.invoke(app, ["analyze", rep, "--thresholds", str(f)])
    assert r.exit_code == 2 and "unknown threshold 'grid_fil'" in r.output


def test_fail_on_exit_status_after_the_output(tmp_path):
    rep = str(report_path("few_blocks", "bad"))  # grid-too-small, high
    out = tmp_path / "a.json"
    r = runner.invoke(app, ["analyze", rep, "-o", str(out), "--fail-on", "high"])
    assert r.exit_code == 9 and "check-failed" in r.output and json.loads(out.read_text())["kernels"]
    assert runner.invoke(app, ["analyze", rep, "-f", "json", "--fail-on", "medium"]).exit_code == 9
    # With the finding's threshold relaxed nothing is high: the check passes.
    sev = {
        f["severity"]
        for f in json.loads(runner.invoke(app, ["analyze", rep, "-f", "json", "-t", "grid_fill=0.01"]).stdout)[
            "kernels"
        ][0]["findings"]
    }
    expect = 9 if "high" in sev else 0
    assert (
        runner.invoke(app, ["analyze", rep, "-f", "json", "-t", "grid_fill=0.01", "--fail-on", "high"]).exit_code
        == expect
    )


def test_diff_fail_on_regression():
    bad, fixed = str(report_path("smem_occupancy", "bad")), str(report_path("smem_occupancy", "fixed"))
    assert runner.invoke(app, ["diff", bad, fixed, "--fail-on-regression"]).exit_code == 0
    r = runner.invoke(app, ["diff", fixed, bad, "--fail-on-regression"])  # the change undone: slower
    assert r.exit_code == 9 and "slower" in r.output and "occupancy-limited" in r.output


def test_tree_numbers_in_readable_units_and_width_follows_columns(monkeypatch):
    rep = str(report_path("few_blocks", "bad"))
    monkeypatch.setenv("COLUMNS", "200")
    wide = runner.invoke(app, ["analyze", rep, "-q"]).stdout
    assert not re.search(r"\de[+-]\d", wide), "exponent notation in the tree"
    assert re.search(r"Duration: [\d.]+ (µs|ms)", wide)
    assert max(len(line) for line in wide.splitlines()) > 120
    monkeypatch.setenv("COLUMNS", "60")
    narrow = runner.invoke(app, ["analyze", rep, "-q"]).stdout
    assert max(len(line) for line in narrow.splitlines()) <= 60
    est = re.search(r"grid-too-small.*?(\d+\.\d\dx)", wide, re.S).group(1)
    assert est in narrow  # numbers are never cut by a narrow width


def test_csv_for_list_and_analyze(tmp_path):
    import csv
    import io

    rep = str(report_path("few_blocks", "bad"))
    r = runner.invoke(app, ["list", rep, "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    # A report is listed without analyzing: no finding; a saved analysis lists its findings.
    assert r.exit_code == 0 and rows[0]["top_finding"] == "" and rows[0]["grid"] == "16x1x1"
    r = runner.invoke(app, ["analyze", rep, "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert r.exit_code == 0 and "grid-too-small" in {row.get("finding") or row.get("id") for row in rows}
    saved = tmp_path / "few_blocks.json"
    assert runner.invoke(app, ["analyze", rep, "-o", str(saved)]).exit_code == 0
    rows = list(csv.DictReader(io.StringIO(runner.invoke(app, ["list", str(saved), "-f", "csv"]).stdout)))
    assert rows[0]["top_finding"] == "grid-too-small" and rows[0]["grid"] == "16x1x1"
    out = tmp_path / "k.csv"
    assert runner.invoke(app, ["list", rep, "-o", str(out)]).exit_code == 0 and out.read_text().startswith("report,id,")


def test_sarif_output_is_sarif_2_1_0_located_on_source_lines(tmp_path):
    from conftest import sarif_validator

    rep = str(report_path("double_literal", "bad"))
    out = tmp_path / "f.sarif"
    assert runner.invoke(app, ["analyze", rep, "-o", str(out)]).exit_code == 0
    doc = json.loads(out.read_text())
    sarif_validator().validate(doc)  # the OASIS SARIF 2.1.0 schema
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "drgpu"
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    res = {x["ruleId"]: x for x in run["results"]}
    assert "fp64-conversion" in res and set(res) <= set(rules)
    assert all(rules[x["ruleIndex"]] == x["ruleId"] for x in run["results"])
    loc = res["fp64-conversion"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("double_literal.cu") and loc["region"]["startLine"] == 11
    assert res["fp64-conversion"]["level"] in ("error", "warning")


def test_source_root_and_path_map_for_sarif_and_gcc(tmp_path):
    """The report names its sources as the profiling machine saw them (/opt/samples/...):
    --source-root and --path-map make SARIF URIs relative (with their base) and gcc paths
    what an editor in the source tree opens; a malformed --path-map is a usage error."""
    from conftest import sarif_validator

    rep = str(report_path("double_literal", "bad"))
    out = tmp_path / "f.sarif"
    r = runner.invoke(app, ["analyze", rep, "-q", "-o", str(out), "--source-root", "/opt/samples"])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    sarif_validator().validate(doc)
    run = doc["runs"][0]
    loc = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "double_literal.cu", "uriBaseId": "SRCROOT"}
    assert run["originalUriBaseIds"] == {"SRCROOT": {"uri": "file:///opt/samples/"}}
    r = runner.invoke(app, ["analyze", rep, "-q", "-f", "gcc", "--path-map", "/opt/samples=kernels"])
    assert r.exit_code == 0, r.output
    first = r.stdout.splitlines()[0]
    assert re.match(r"kernels/double_literal\.cu:11: (error|warning): .* \[fp64-conversion\]$", first), first
    for bad in ("/opt/samples", "opt=src"):
        r = runner.invoke(app, ["analyze", rep, "-q", "-f", "gcc", "--path-map", bad])
        assert r.exit_code == 2 and "--path-map" in r.output, (bad, r.output)


def test_analyze_of_different_programs_warns_and_keeps_them_apart():
    a, b = str(report_path("few_blocks", "bad")), str(report_path("aos_gather", "bad"))
    r = runner.invoke(app, ["analyze", a, b, "-f", "json"])
    assert r.exit_code == 0 and "different programs" in r.stderr
    d = json.loads(r.stdout)
    assert d["format"] == "separate" and len(d["kernels"]) == 2
    assert {k["name"].split("(")[0] for k in d["kernels"]} == {"saxpy_stride", "scale_keys_aos"}
    merged = json.loads(runner.invoke(app, ["analyze", a, b, "-f", "json", "--merge"]).stdout)
    assert merged["format"] == "merged"
