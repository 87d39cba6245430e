"""SARIF and gcc output (render/sarif.py, render/gcc.py, render/located.py) on a literal
analysis of three kernel groups: a 100 µs kernel with a finding on two source lines, a 1.2 µs
library kernel (no source lines) with a high finding, and a 20 µs kernel with a medium one.

Checked: the level rule (error only for a high finding saving a meaningful share of the
profiled GPU time), path maps (``--source-root``, ``--path-map``: relative URIs with
``uriBaseId`` and ``originalUriBaseIds``, absolute targets, the longest folder first, nothing
outside a folder), a physical location for every result (the report file for a kernel without
lines, never by an absolute path of the analysing machine; the kernel as a logical location), fingerprints, rule help, validation against the
OASIS SARIF 2.1.0 schema (tests/data), which rejects broken documents; and the gcc lines as
VS Code's ``$gcc`` problem matcher reads them."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from urllib.parse import quote

import pytest

from conftest import sarif_validator
from drgpu_py.analysis.findings import Finding
from drgpu_py.errors import UsageError
from drgpu_py.profile import KernelProfile
from drgpu_py.render import RenderOptions, render
from drgpu_py.render.located import PathMapping, level, map_path, parse_path_map, problems, source_root
from drgpu_py.specs import loader as data

# VS Code's $gcc problem matcher (its built-in pattern): file, line, optional column, severity, message.
GCC_MATCHER = re.compile(r"^(.*?):(\d+):(\d*):?\s+(?:fatal\s+)?(warning|error):\s+(.*)$")
REPORT = "/data/runs/step one.ncu-rep"


def _kernel(kid: int, name: str, ns: float, grid=(1, 1, 1)) -> KernelProfile:
    return KernelProfile(
        id=kid, name=name, mangled=f"_Z{kid}k", grid=grid, block=(256, 1, 1), metrics={"gpu__time_duration.sum": ns}
    )


def _finding(fid: str, severity: str, speedup: float, locations=()) -> Finding:
    return Finding(
        id=fid,
        title=f"{fid} title",
        severity=severity,
        stall_share=0.5,
        estimated_speedup=speedup,
        advice=f"advice for {fid}\non two lines",
        locations=list(locations),
        group="memory",
    )


def literal():
    """Three kernel groups; durations make the shares: 100 + 1.2 + 20 µs."""
    lines = [
        {"file": "/opt/samples/src/k.cu", "line": 9, "share": 0.75, "code": "  float k = recs[i].key;"},
        {"file": "/opt/samples/src/k.cu", "line": 12, "share": 0.25},
    ]
    big = SimpleNamespace(
        kernel=_kernel(0, "void gather<float>(const float *, float *)", 100_000.0),
        findings=[_finding("global-uncoalesced", "high", 4.0, lines)],
        context=None,
    )
    tiny = SimpleNamespace(
        kernel=_kernel(1, "void at::native::elementwise_kernel<(int)4>(int, T1)", 1_200.0),
        findings=[
            _finding("serial-kernel", "high", 1.57, [{"file": None, "line": None, "pc_offset": 0x1A0, "sass": "EXIT"}])
        ],
        context=None,
    )
    mid = SimpleNamespace(
        kernel=_kernel(2, "void at::native::elementwise_kernel<(int)4>(int, T1)", 20_000.0, grid=(2, 1, 1)),
        findings=[_finding("serial-kernel", "medium", 1.1)],
        context=None,
    )
    return SimpleNamespace(profile=SimpleNamespace(path=REPORT), kernels=[big, tiny, mid])


def sarif(analysis, *maps) -> dict:
    doc = json.loads(render(analysis, "sarif", RenderOptions(path_map=tuple(maps))))
    errors = sorted(sarif_validator().iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return doc


# ---- the level rule ---------------------------------------------------------------------------
def test_level_is_error_only_for_high_findings_that_save_a_meaningful_share():
    th = data.thresholds()
    err, warn = th["error_saved_share"], th["warning_saved_share"]
    assert level("high", err, th) == "error" and level("high", err * 0.99, th) == "warning"
    assert level("high", warn * 0.99, th) == "note" and level("medium", 0.9, th) == "warning"
    assert level("medium", warn * 0.99, th) == "note" and level("low", 1.0, th) == "note"
    # Without measured durations the severity alone decides.
    assert [level(s, None, th) for s in ("high", "medium", "low")] == ["error", "warning", "note"]
    # The thresholds are data: an override moves the line.
    assert level("high", 0.06, data.thresholds({"error_saved_share": 0.5})) == "warning"


def test_a_high_finding_in_a_microsecond_kernel_is_a_note():
    by_kernel = {p.kernel.id: p for p in problems(literal())}
    total = 121_200.0
    assert by_kernel[0].level == "error" and by_kernel[0].saved_share == pytest.approx(100_000 * 0.75 / total)
    assert by_kernel[1].finding.severity == "high" and by_kernel[1].level == "note"  # 0.4 µs of 121 µs
    assert by_kernel[2].level == "warning"  # medium, 1.5% of the time
    doc = sarif(literal())
    assert [r["level"] for r in doc["runs"][0]["results"]] == ["error", "note", "warning"]
    assert "saves 0.4 µs, 0.36% of the profiled GPU time" in doc["runs"][0]["results"][1]["message"]["text"]


# ---- paths ------------------------------------------------------------------------------------
def test_path_maps():
    maps = (parse_path_map("/opt/samples=/home/me/app"), parse_path_map("/opt/samples/src="))
    assert map_path("/opt/samples/src/k.cu", maps) == ("k.cu", 1), "the longest folder wins"
    assert map_path("/opt/samples/lib/a.cu", maps) == ("/home/me/app/lib/a.cu", 0)
    assert map_path("/opt/samples2/k.cu", maps) == ("/opt/samples2/k.cu", None), "not inside the folder"
    assert map_path("C:\\build\\src\\k.cu", (parse_path_map("C:\\build=repo/"),)) == ("repo/src/k.cu", 0)
    assert parse_path_map("/opt/x/=.") == PathMapping("/opt/x", "")
    assert source_root("/opt/samples/") == PathMapping("/opt/samples", "")
    for bad in ("/opt/samples", "=src", "relative=src"):
        with pytest.raises(UsageError):
            parse_path_map(bad)


def test_sarif_uris_absolute_without_a_map_relative_under_a_source_root():
    plain = sarif(literal())["runs"][0]
    loc = plain["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "file:///opt/samples/src/k.cu"} and loc["region"] == {"startLine": 9}
    assert "originalUriBaseIds" not in plain
    run = sarif(literal(), source_root("/opt/samples"), parse_path_map("/data/runs=runs"))["runs"][0]
    loc = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "src/k.cu", "uriBaseId": "SRCROOT"}
    report = run["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert report == {"uri": "runs/step%20one.ncu-rep", "uriBaseId": "SRCROOT2"}, "percent-encoded"
    # The folder a relative URI starts from: a source root itself; for FROM=TO, FROM less TO.
    assert run["originalUriBaseIds"] == {
        "SRCROOT": {"uri": "file:///opt/samples/"},
        "SRCROOT2": {"uri": "file:///data/"},
    }
    other = sarif(literal(), parse_path_map("/data/runs=profiles"))["runs"][0]
    loc = other["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "profiles/step%20one.ncu-rep", "uriBaseId": "SRCROOT"} and "originalUriBaseIds" not in other
    moved = sarif(literal(), parse_path_map("/opt/samples=/home/me/app"))["runs"][0]
    uri = moved["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file:///home/me/app/src/k.cu" and "originalUriBaseIds" not in moved


# ---- locations, fingerprints, rules -----------------------------------------------------------
def test_every_result_has_a_physical_location_and_the_kernel_as_a_logical_one():
    run = sarif(literal())["runs"][0]
    for r, ka in zip(run["results"], literal().kernels):
        (loc,) = r["locations"]
        assert loc["physicalLocation"]["artifactLocation"]["uri"]
        assert loc["logicalLocations"][0]["fullyQualifiedName"] == ka.kernel.name
        assert loc["logicalLocations"][0]["kind"] == "function"
    first = run["results"][0]
    assert [x["physicalLocation"]["region"]["startLine"] for x in first["relatedLocations"]] == [12]
    tiny = run["results"][1]["locations"][0]
    # The report is outside the working folder: named by its file name, never by the absolute
    # path of the machine that ran drgpu.
    assert tiny["physicalLocation"] == {"artifactLocation": {"uri": "step%20one.ncu-rep"}}
    assert tiny["logicalLocations"][0]["name"] == "at::native::elementwise_kernel"
    assert "SASS +0x1a0 EXIT" in tiny["message"]["text"]


def _at(analysis, report: str):
    analysis.profile.path = report
    return analysis


def _report_uri(doc: dict) -> dict:
    return doc["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]


def test_sarif_never_names_a_path_of_the_analysing_machine(tmp_path, monkeypatch):
    """The report file of a result without a source line: relative to the working folder when
    it is in it (absolute or not as given), as given when given relative, else by its file
    name; a source root given relative (made absolute here) has no base in
    ``originalUriBaseIds``. The working folder's path is nowhere in the document."""
    work = tmp_path / "work space"
    (work / "runs").mkdir(parents=True)
    monkeypatch.chdir(work)
    inside = sarif(_at(literal(), str(work / "runs" / "a b.ncu-rep")))
    assert _report_uri(inside) == {"uri": "runs/a%20b.ncu-rep"}
    assert _report_uri(sarif(_at(literal(), "runs/a.ncu-rep"))) == {"uri": "runs/a.ncu-rep"}
    assert _report_uri(sarif(_at(literal(), "../elsewhere/a.ncu-rep"))) == {"uri": "../elsewhere/a.ncu-rep"}
    outside = sarif(_at(literal(), str(tmp_path / "elsewhere" / "a.ncu-rep")))
    assert _report_uri(outside) == {"uri": "a.ncu-rep"}
    # A mapping onto a folder of this machine moves source files (asked for), never the report.
    moved = sarif(_at(literal(), str(work / "runs" / "a.ncu-rep")), parse_path_map(f"{work}={tmp_path / 'other'}"))
    assert _report_uri(moved) == {"uri": "runs/a.ncu-rep"}
    rooted = sarif(_at(literal(), str(work / "runs" / "a.ncu-rep")), source_root("."))
    assert _report_uri(rooted) == {"uri": "runs/a.ncu-rep", "uriBaseId": "SRCROOT"}
    assert "originalUriBaseIds" not in rooted["runs"][0], "the root's absolute form is this machine's"
    for doc in (inside, outside, rooted):
        text = json.dumps(doc)
        assert str(work) not in text and str(tmp_path) not in text and "file://" + quote(str(tmp_path)) not in text


def test_fingerprints_stable_and_distinct():
    a, b = sarif(literal())["runs"][0]["results"], sarif(literal(), source_root("/opt"))["runs"][0]["results"]
    prints = [r["partialFingerprints"]["drgpuFinding/v1"] for r in a]
    assert prints == [r["partialFingerprints"]["drgpuFinding/v1"] for r in b], "the same on another machine"
    assert len(set(prints)) == 3, "two launch shapes of one kernel are two results"
    moved = literal()
    moved.kernels[0].findings[0].locations[0]["line"] = 30  # the same code, moved down
    assert sarif(moved)["runs"][0]["results"][0]["partialFingerprints"]["drgpuFinding/v1"] == prints[0]


def test_rules_carry_help_from_the_catalogue():
    rules = sarif(literal())["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["global-uncoalesced", "serial-kernel"]
    help_text = rules[0]["help"]["text"]
    spec = next(f for f in data.findings_catalogue()["findings"] if f["id"] == "global-uncoalesced")
    assert spec["title"] in help_text and "Make consecutive threads" in help_text and "{" not in help_text
    assert "error for a high finding" in help_text and rules[0]["help"]["markdown"].startswith("**")


_CATALOGUE = data.findings_catalogue()["findings"]
#: What an unfilled template slot leaves in a text: a placeholder, the ellipsis that stood for
#: one, a per cent sign with no number before it ("…% of"), a bracket or punctuation beside a
#: gap ("( sectors", "x )", "by ."), brackets left empty (not a call such as __syncthreads()).
_GAPS = re.compile(r"[{}…]|(?<![\w)\]])%|\(\s|\s\)|(?<!\w)\(\)|\s[,.:;]")


@pytest.mark.parametrize("spec", _CATALOGUE, ids=[f["id"] for f in _CATALOGUE])
def test_every_rule_help_is_written_without_template_gaps(spec):
    """Each finding kind's rule, in a real SARIF document: its short and full descriptions and
    its help (text and Markdown) hold no unfilled slot of the finding's templates, say what the
    pattern is and how to fix it (and, for a finding with library-kernel advice, how to change
    the call), how the speedup is estimated and how the level is set."""
    a = literal()
    a.kernels[0].findings[0] = _finding(spec["id"], "high", 2.0, a.kernels[0].findings[0].locations)
    (rule,) = [r for r in sarif(a)["runs"][0]["tool"]["driver"]["rules"] if r["id"] == spec["id"]]
    texts = {
        "shortDescription": rule["shortDescription"]["text"],
        "fullDescription": rule["fullDescription"]["text"],
        "help.text": rule["help"]["text"],
        "help.markdown": rule["help"]["markdown"],
    }
    for where, text in texts.items():
        gap = _GAPS.search(text)
        assert gap is None, f"{where}: {text[max(0, gap.start() - 40) : gap.end() + 40]!r}"
        assert "?" not in text.replace("?)", ""), f"{where}: {text!r}"
    generic = " ".join(spec["help"].split())
    assert texts["fullDescription"] == generic and generic in texts["help.text"]
    assert texts["shortDescription"] == spec.get("help_title", spec["title"])
    assert texts["help.text"].startswith(texts["shortDescription"] + ".")
    assert ("In a library kernel (change the call): " in texts["help.text"]) == ("caller_advice" in spec)
    assert f"Estimate ({spec['speedup_model']}): " in texts["help.text"]
    assert "Level: error for a high finding" in texts["help.text"]


def test_the_schema_rejects_broken_documents():
    """The validation can fail: what SARIF forbids is reported."""
    doc = sarif(literal())
    result = doc["runs"][0]["results"][0]
    for breaks in (
        lambda d: d["runs"][0]["results"][0].update(level="fatal"),
        lambda d: d["runs"][0]["results"][0].update(unknown=1),
        lambda d: d["runs"][0]["results"][0]["locations"][0]["physicalLocation"].pop("artifactLocation"),
        lambda d: d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"].update(startLine=0),
        lambda d: d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"].update(
            uri="/opt/a b.cu"
        ),
        lambda d: d["runs"][0]["tool"]["driver"].pop("name"),
    ):
        broken = json.loads(json.dumps(doc))
        breaks(broken)
        assert list(sarif_validator().iter_errors(broken)), breaks
    assert result["ruleId"] == "global-uncoalesced"


# ---- gcc --------------------------------------------------------------------------------------
def test_gcc_lines_read_by_the_gcc_problem_matcher():
    text = render(literal(), "gcc", RenderOptions(path_map=(source_root("/opt/samples"),)))
    lines = text.splitlines()
    assert len(lines) == 4, lines  # two lines of the first finding, one line each for the others
    m = GCC_MATCHER.match(lines[0])
    assert m and m[1] == "src/k.cu" and m[2] == "9" and m[4] == "error"
    assert lines[0].endswith("[global-uncoalesced]") and "advice for global-uncoalesced on two lines" in lines[0]
    assert lines[1].startswith("src/k.cu:12: note: blamed 25%")
    assert lines[2].startswith(
        f"{REPORT}: note: serial-kernel title in at::native::elementwise_kernel<(int)4> at SASS +0x1a0"
    )
    assert lines[3].startswith(f"{REPORT}: warning: ")


def test_gcc_keeps_one_line_per_problem_whatever_the_names():
    a = literal()
    a.kernels[1].kernel.name = "evil\nsrc/k.cu:1: error: injected\x1b[31m"
    a.kernels[0].findings[0].locations[0]["file"] = "/opt/samples/src/a\nb.cu"
    lines = render(a, "gcc", RenderOptions()).splitlines()
    assert len(lines) == 4 and not any(ln.startswith("src/k.cu:1") for ln in lines)
    assert "\x1b" not in "".join(lines)
