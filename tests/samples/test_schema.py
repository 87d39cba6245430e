"""The shipped JSON Schemas (drgpu_py/specs/schema) hold for every output on every sample
report (.ncu-rep and CSV, grouped, per launch, merged, side by side; list and diff), the
prose in docs/json-schema.md names exactly the schema's keys, and docs/calibration.md is what
scripts/calibration.py writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from drgpu_py.specs import output_schema as schema
from drgpu_py.cli import app
from drgpu_py.pipeline.compare import diff, list_rows
from drgpu_py.render.diff import render_diff
from drgpu_py.render.list_ import render_list_json
from drgpu_py.render import render

from conftest import CASES, ROOT, analysis_of, api_analysis, library_report, report_path, sample_param, slow

runner = CliRunner()
VARIANTS = [
    (c, v, e) for c in CASES for v in ("bad", "fixed") for e in ("ncu-rep", "raw.csv") if report_path(c, v, e).exists()
]


@pytest.mark.parametrize("name", schema.NAMES)
def test_schemas_are_valid_draft_2020_12(name):
    s = schema.load(name)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(s)


@pytest.mark.parametrize("case, variant, ext", [sample_param(*v) for v in VARIANTS])
def test_every_sample_report_output_matches_the_schema(case, variant, ext):
    doc = json.loads(render(analysis_of(case, variant, ext), "json"))
    schema.validate(doc, "analysis")
    # One shape for every node: attrs always present; root attrs use ids as the kernel does.
    for k in doc["kernels"]:
        stack = [k["tree"]]
        while stack:
            n = stack.pop()
            assert "attrs" in n, n["name"]
            stack.extend(n["children"])
        assert k["tree"]["attrs"]["top_unit"] == k["top_unit"]
        assert set(k["slicing"]) == set(schema.load("analysis")["$defs"]["Slicing"]["properties"])


def test_grouped_per_launch_merged_and_separate_outputs_match_the_schema():
    from drgpu_py.pipeline import analyze_reports

    step = library_report("step")
    a, b = report_path("few_blocks", "bad"), report_path("aos_gather", "bad")
    outs = {
        "grouped": api_analysis(step),  # analyze_reports([step]) through drgpu_py.analyze, made once per run
        "per-launch": analyze_reports([step], per_launch=True),
        "merged": analyze_reports([a, a]),
        "separate": analyze_reports([a, b]),
    }
    for label, res in outs.items():
        doc = json.loads(render(res, "json"))
        schema.validate(doc, "analysis")
        assert doc["format"] == {"merged": "merged", "separate": "separate"}.get(label, "ncu-rep"), label


def test_a_node_without_attrs_or_an_unknown_key_breaks_the_schema():
    doc = json.loads(render(analysis_of("few_blocks", "bad"), "json"))
    broken = json.loads(json.dumps(doc))
    del broken["kernels"][0]["tree"]["children"][0]["attrs"]
    with pytest.raises(jsonschema.ValidationError):
        schema.validate(broken, "analysis")
    broken = json.loads(json.dumps(doc))
    broken["kernels"][0]["undocumented"] = 1
    with pytest.raises(jsonschema.ValidationError):
        schema.validate(broken, "analysis")


def test_the_model_in_both_forms_matches_the_schema_and_a_wrong_one_does_not():
    doc = json.loads(render(analysis_of("few_blocks", "fixed"), "json"))
    m = doc["kernels"][0]["model"]
    assert m["available"] is True and m["loops"], m
    assert {w["change"] for w in m["what_if"]} >= {"unroll", "warps"}, m["what_if"]
    schema.validate(doc, "analysis")
    defs = schema.load("analysis")["$defs"]
    assert set(m) == set(defs["Model"]["oneOf"][1]["properties"])

    def broken(change):
        d = json.loads(json.dumps(doc))
        change(d["kernels"][0]["model"])
        return d

    none = broken(lambda mm: (mm.clear(), mm.update(available=False, reason="no SASS in the report")))
    schema.validate(none, "analysis")
    wrongs = {
        "available without its keys": lambda mm: mm.update(available=False),
        "unavailable with a reason only": lambda mm: (mm.clear(), mm.update(available=True, reason="x")),
        "unknown term": lambda mm: mm["terms"].update({"pipe:fp16": 1.0}),
        "unknown bottleneck": lambda mm: mm.update(bottleneck="dram"),
        "unknown instruction class": lambda mm: mm["instruction_mix"].update(vector=0.1),
        "a loop key missing": lambda mm: mm["loops"][0].pop("critical_path"),
        "an unroll without k": lambda mm: [w.pop("k") for w in mm["what_if"] if w["change"] == "unroll"],
        "k on a warps change": lambda mm: [w.update(k=4) for w in mm["what_if"] if w["change"] == "warps"],
        "a speedup below 1": lambda mm: [w.update(speedup=0.5) for w in mm["what_if"]],
    }
    for label, change in wrongs.items():
        with pytest.raises(jsonschema.ValidationError):
            schema.validate(broken(change), "analysis")
            pytest.fail(label)


def test_list_and_diff_json_match_their_schemas():
    docs = [
        analysis_of(c, v).to_dict() for c in ("few_blocks", "aos_gather", "smem_occupancy") for v in ("bad", "fixed")
    ]
    schema.validate(json.loads(render_list_json(list_rows(docs))), "list")
    for b, n in ((docs[0], docs[1]), (docs[2], docs[3]), (docs[4], docs[5]), (docs[0], docs[2])):
        schema.validate(json.loads(render_diff(diff(b, n), "json")), "diff")


def test_cli_json_outputs_were_validated_by_the_session_hook():
    from conftest import SCHEMA_CHECKED

    before = dict(SCHEMA_CHECKED)
    bad, fixed = str(report_path("few_blocks", "bad")), str(report_path("few_blocks", "fixed"))
    assert runner.invoke(app, ["analyze", bad, "-f", "json"]).exit_code == 0
    assert runner.invoke(app, ["list", bad, "-f", "json"]).exit_code == 0
    assert runner.invoke(app, ["diff", bad, fixed, "-f", "json"]).exit_code == 0
    assert {k: SCHEMA_CHECKED[k] - before[k] for k in before} == {"analysis": 1, "list": 1, "diff": 1}


# ---- schema_version: every document says which contract it follows -------------------------
def test_every_json_output_carries_the_schema_version(tmp_path):
    """analyze/merge, list and diff JSON open with the contract's version (docs/json-schema.md,
    "Schema versions"), the one output_schema.SCHEMA_VERSION names and every schema accepts;
    list and diff documents need it, an analysis without it (an older baseline) still reads."""
    bad, fixed = str(report_path("few_blocks", "bad")), str(report_path("few_blocks", "fixed"))
    docs = {
        "analysis": json.loads(runner.invoke(app, ["analyze", bad, "-f", "json"]).stdout),
        "merge": json.loads(runner.invoke(app, ["merge", bad, bad, "-q"]).stdout),
        "list": json.loads(runner.invoke(app, ["list", bad, "-f", "json"]).stdout),
        "diff": json.loads(runner.invoke(app, ["diff", bad, fixed, "-f", "json"]).stdout),
    }
    assert re.fullmatch(r"\d+\.\d+", schema.SCHEMA_VERSION)
    for what, doc in docs.items():
        assert list(doc)[:3] == ["tool", "version", "schema_version"], what
        assert doc["schema_version"] == schema.SCHEMA_VERSION, what
    for name in ("list", "diff"):
        schema.validate(docs[name], name)
        with pytest.raises(jsonschema.ValidationError, match="schema_version"):
            schema.validate({k: v for k, v in docs[name].items() if k != "schema_version"}, name)
        with pytest.raises(jsonschema.ValidationError):
            schema.validate({**docs[name], "schema_version": "2.0"}, name)
    older = {k: v for k, v in docs["analysis"].items() if k != "schema_version"}
    schema.validate(older, "analysis")
    (tmp_path / "older.json").write_text(json.dumps(older))
    r = runner.invoke(app, ["diff", str(tmp_path / "older.json"), fixed, "-f", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["summary"]["matched"] == 1, r.output


def test_a_saved_analysis_of_a_schema_this_drgpu_does_not_read_is_refused(tmp_path):
    from drgpu_py.analysis.saved import SavedAnalysis, load_analysis_json
    from drgpu_py.errors import ReportFormatError

    doc = analysis_of("few_blocks", "bad").to_dict()
    path = tmp_path / "a.json"
    path.write_text(json.dumps(doc))
    saved = SavedAnalysis.load(path)
    assert saved.schema_version == schema.SCHEMA_VERSION and saved.to_dict() == json.loads(path.read_text())
    major, minor = map(int, schema.SCHEMA_VERSION.split("."))
    for other in (f"{major + 1}.0", f"{major}.{minor + 1}", "1", "x.y", 10):
        path.write_text(json.dumps({**doc, "schema_version": other}))
        with pytest.raises(ReportFormatError, match="does not read") as e:
            load_analysis_json(path)
        assert e.value.exit_code == 4
    assert schema.reads(None) and schema.reads(schema.SCHEMA_VERSION) and schema.reads(f"{major}.0")
    assert not schema.reads(f"{major}.{minor + 1}") and not schema.reads(f"{major + 1}.0")


# ---- docs/json-schema.md names the schema's keys, and only those ----------------------------
def _schema_keys(node, out: set) -> set:
    if isinstance(node, dict):
        for k, v in node.get("properties", {}).items():
            out.add(k)
            _schema_keys(v, out)
        for key in ("$defs", "additionalProperties", "items", "anyOf", "oneOf"):
            sub = node.get(key)
            for s in (sub or {}).values() if key == "$defs" else sub if isinstance(sub, list) else [sub]:
                _schema_keys(s, out)
    return out


def _doc_keys() -> set:
    text = (ROOT / "docs" / "json-schema.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n(.*?)```", text, re.S)
    keys = set()
    for b in blocks:
        code = "\n".join(line.split("#", 1)[0] for line in b.splitlines())  # comments are prose
        keys |= set(re.findall(r'"([A-Za-z_$][\w$]*)"\s*:', code))
    return keys


def test_json_schema_doc_and_schema_name_the_same_keys():
    in_schema = _schema_keys(schema.load("analysis"), set()) - {"$schema"}
    in_doc = _doc_keys()
    assert in_doc - in_schema == set(), "documented but not in the schema"
    assert in_schema - in_doc == set(), "in the schema but not documented"


# ---- docs/calibration.md does not drift ----------------------------------------------------
@slow  # every sample and held-out report
def test_calibration_doc_is_what_the_script_writes(monkeypatch):
    """scripts/calibration.py run in this process on the test run's shared analyses (the
    script's own reads and analyses, one per report, are what the shared ones are: open_report
    then analyze with the defaults), so the doc is checked without analyzing every report again."""
    import contextlib
    import importlib.util
    import io

    from conftest import analysis_of

    spec = importlib.util.spec_from_file_location("calibration_script", ROOT / "scripts" / "calibration.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    def shared_report(path):
        path = Path(path)
        case, variant = path.parent.name, path.name.removesuffix(".ncu-rep").rsplit("_", 1)[1]
        return analysis_of(case, variant).profile

    def shared_analysis(case, variant, kernel):
        kernels = analysis_of(case, variant).kernels
        want = script.kernel_named(analysis_of(case, variant).profile, kernel)
        return next((ka for ka in kernels if ka.kernel is want), kernels[0])

    monkeypatch.setattr(script, "open_report", shared_report)
    monkeypatch.setattr(script, "analyzed", shared_analysis)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert script.main() == 0
    assert out.getvalue() == (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8"), (
        "docs/calibration.md is stale: regenerate it with scripts/calibration.py"
    )
