"""Reports and applications are untrusted: a hostile kernel name, a line an application
prints, a file name in a report's line table. Each test builds its hostile input at test
time from a sample report (a renamed kernel in a copied CSV export) or the stand-in ncu
(tests/standin/ncu) and checks that drgpu neither passes it on raw nor acts on it."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import slow, standin_profile
from drgpu_py.cli import app

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = ROOT / "sample_reports" / "aos_gather"
SAMPLE_NAMES = {
    "bad": "scale_keys_aos(const Record *, float *, int)",
    "fixed": "scale_keys_soa(const float *, float *, int)",
}

runner = CliRunner()


def hostile_export(tmp_path: Path, name: str, variant: str = "bad") -> Path:
    """A copy of aos_gather's CSV export (raw page and source page) whose kernel is ``name``."""
    folder = tmp_path / f"hostile_{variant}"
    folder.mkdir(exist_ok=True)
    for page in ("raw", "source"):
        text = (SAMPLE_DIR / f"aos_gather_{variant}.{page}.csv").read_text(encoding="utf-8")
        old = SAMPLE_NAMES[variant]
        assert old in text
        quoted = name.replace('"', '""')
        (folder / f"aos_gather_{variant}.{page}.csv").write_text(text.replace(old, quoted), encoding="utf-8")
    return folder / f"aos_gather_{variant}.raw.csv"


# --------------------------------------------------------------------------- 1. CSV formula injection
FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r"]


def _csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("lead", FORMULA_STARTS)
def test_findings_csv_neutralises_a_formula_kernel_name(tmp_path, lead):
    rep = hostile_export(tmp_path, lead + "cmd|'/C calc'!A0")
    out = tmp_path / "findings.csv"
    r = runner.invoke(app, ["analyze", str(rep), "-o", str(out)])
    assert r.exit_code == 0, r.output
    rows = _csv_rows(out.read_text(encoding="utf-8"))
    assert rows and all(row["kernel"].startswith("'") for row in rows), rows[0]["kernel"]
    assert all(not row["kernel"].startswith(tuple(FORMULA_STARTS)) for row in rows)
    # numbers stay numbers
    assert all(float(row["estimated_speedup"]) > 1 for row in rows)
    r = runner.invoke(app, ["analyze", str(rep), "-f", "csv"])
    assert r.exit_code == 0 and all(row["kernel"].startswith("'") for row in _csv_rows(r.stdout))


@pytest.mark.parametrize("lead", FORMULA_STARTS)
def test_list_csv_neutralises_a_formula_kernel_name(tmp_path, lead):
    rep = hostile_export(tmp_path, lead + "cmd|'/C calc'!A0")
    r = runner.invoke(app, ["list", str(rep), "-f", "csv"])
    assert r.exit_code == 0, r.output
    rows = _csv_rows(r.stdout)
    assert len(rows) == 1 and rows[0]["name"].startswith("'"), rows
    out = tmp_path / "k.csv"
    assert runner.invoke(app, ["list", str(rep), "-o", str(out)]).exit_code == 0
    assert _csv_rows(out.read_text(encoding="utf-8"))[0]["name"].startswith("'")


def test_csv_cells_rule_keeps_numbers_numbers():
    from drgpu_py.io import csv_cell

    assert csv_cell(-1.5) == -1.5 and csv_cell(-3) == -3 and csv_cell(None) is None
    assert csv_cell("-1.5") == "'-1.5"  # text is text, whatever it looks like
    assert csv_cell("=A1") == "'=A1" and csv_cell("@SUM(A1)") == "'@SUM(A1)" and csv_cell("\tx") == "'\tx"
    assert csv_cell("plain") == "plain" and csv_cell("") == ""


def test_negative_numbers_in_csv_stay_numbers(tmp_path):
    from drgpu_py.render.list_ import render_list_csv

    row = {
        "report": "-r.ncu-rep",
        "id": 0,
        "name": "k",
        "duration_ns": -5.0,
        "grid": [1, 1, 1],
        "block": [32, 1, 1],
        "stall_cycle_pct": -0.5,
        "bound": "memory",
        "top_finding": None,
        "top_severity": None,
        "top_speedup": None,
    }
    got = _csv_rows(render_list_csv([row]))[0]
    assert got["duration_ns"] == "-5.0" and got["stall_cycle_pct"] == "-0.5" and got["report"] == "'-r.ncu-rep"


# --------------------------------------------------------------------------- 3. terminal and markup injection
EVIL = "evil\x1b]0;pwned\x07\x1b[31mred\x9b1m\u202etxt\u2066x\u2069"
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u2069")


def assert_no_raw_controls(text: str, where: str) -> None:
    found = [repr(c) for c in RAW_CONTROLS if c in text]
    assert not found, f"{where}: raw {', '.join(found)} in output"


def test_list_text_csv_and_json_show_no_raw_control_characters(tmp_path):
    rep = hostile_export(tmp_path, EVIL)
    for fmt in ("text", "csv", "json"):
        r = runner.invoke(app, ["list", str(rep), "-f", fmt])
        assert r.exit_code == 0, r.output
        assert_no_raw_controls(r.stdout, f"list -f {fmt}")
        assert "evil" in r.stdout
    assert json.loads(runner.invoke(app, ["list", str(rep), "-f", "json"]).stdout)["kernels"][0]["name"] == EVIL


def test_diff_of_a_hostile_baseline_shows_no_raw_control_characters(tmp_path):
    bad, fixed = hostile_export(tmp_path, EVIL, "bad"), hostile_export(tmp_path, EVIL, "fixed")
    base_json = tmp_path / "base.json"
    assert runner.invoke(app, ["analyze", str(bad), "-o", str(base_json)]).exit_code == 0
    for base in (bad, base_json):
        for fmt in ("text", "json", "html"):
            r = runner.invoke(app, ["diff", str(base), str(fixed), "-f", fmt])
            assert r.exit_code == 0, r.output
            assert_no_raw_controls(r.stdout, f"diff {base.name} -f {fmt}")
            assert "evil" in r.stdout
    # JSON keeps the name itself (escaped in the text, the same string once parsed)
    d = json.loads(runner.invoke(app, ["diff", str(base_json), str(fixed), "-f", "json"]).stdout)
    assert d["kernels"][0]["base"]["name"] == EVIL


def test_analysis_outputs_of_a_hostile_name_show_no_raw_control_characters(tmp_path):
    rep = hostile_export(tmp_path, EVIL)
    for fmt in ("text", "json", "html", "csv", "sarif", "dot"):
        r = runner.invoke(app, ["analyze", str(rep), "-f", fmt])
        assert r.exit_code == 0, r.output
        assert_no_raw_controls(r.stdout, f"analyze -f {fmt}")


def evil_report(tmp_path: Path) -> tuple[Path, str]:
    """aos_gather's .ncu-rep with its kernel renamed in place (same length): ESC sequences."""
    name = "\x1b[31mPWNED\x1b[0m"
    assert len(name) == len("scale_keys_aos")
    data = (SAMPLE_DIR / "aos_gather_bad.ncu-rep").read_bytes()
    out = tmp_path / "evil.ncu-rep"
    out.write_bytes(data.replace(b"scale_keys_aos", name.encode()))
    return out, name


def run_profile(tmp_path, monkeypatch, *args, app_argv, env=None, quiet=False):
    e = {"STANDIN_NCU_SCENARIO": "ok", "PATH": os.environ.get("PATH", ""), "COLUMNS": "250"}
    e.update(env or {})
    for k, v in e.items():
        monkeypatch.setenv(k, v)
    from drgpu_py.ncu.session import RANK_VARS

    for k in RANK_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    argv = standin_profile(tmp_path / "out")
    return runner.invoke(app, [*argv, *(["-q"] if quiet else []), *args, "--", *app_argv])


def test_profile_relays_no_raw_control_characters(tmp_path, monkeypatch):
    """ncu's progress lines name the kernel, the application's own lines are relayed: neither
    may drive the terminal; the analysis written beside the report holds no raw ESC either."""
    rep, name = evil_report(tmp_path)
    script = tmp_path / "app.sh"
    script.write_text("#!/bin/sh\nprintf 'app \\033]0;pwned\\007\\033[31mred\\342\\200\\256txt\\n'\n")
    script.chmod(0o755)
    r = run_profile(
        tmp_path,
        monkeypatch,
        app_argv=[str(script)],
        env={"STANDIN_NCU_REPORT": str(rep), "STANDIN_NCU_KERNELS": f"{name},\x1b]0;title\x07k2\u202e"},
    )
    assert r.exit_code == 0, r.output
    assert_no_raw_controls(r.output, "drgpu profile's console")
    assert "PWNED" in r.output and "app " in r.output
    out = tmp_path / "out"
    for f in sorted(out.iterdir()):
        if f.suffix in (".html", ".txt", ".json", ".dot", ".svg"):
            assert_no_raw_controls(f.read_text(encoding="utf-8"), f.name)


def test_live_progress_on_a_terminal_shows_no_raw_sequences_of_the_app():
    """On a terminal the progress line and the lines after it name the kernel: rich draws its
    own colours, but no OSC sequence, BEL or bidi override of the kernel name gets through."""
    from rich.console import Console

    from drgpu_py.cli.profile import ProgressView
    from drgpu_py.ncu.console import OutputParser

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=200)
    evil = "k\x1b]0;pwned\x07\u202eeht\x9b2J"
    parser = OutputParser()
    with ProgressView(console, quiet=False) as view:
        for ev in parser.feed(f'==PROF== Profiling "{evil}" - 0: 0%....50%....100% - 12 passes\n'):
            view(ev)
        for ev in parser.feed("==ERROR== \x1b]0;pwned\x07 boom\nplain \x1b]8;;http://x\x07link\n"):
            view(ev)
    out = buf.getvalue()
    for raw in ("\x1b]", "\x07", "\u202e", "\x9b"):
        assert raw not in out, repr(raw)
    assert "pwned" in out


# --------------------------------------------------------------------------- 4. spoofed console lines
SPOOFS = [
    ("app-error-code", "==ERROR== The application returned an error code (3)."),
    ("counter-permission", "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU"),
    ("shutdown", "==PROF== Trying to shutdown target application"),
    ("missing-app", "==ERROR== '/bin/x' does not exist or is not an executable."),
    ("ncu-error", "==ERROR== Failed to profile kernel"),
]


@pytest.mark.parametrize(
    "case, line", [SPOOFS[0], *(pytest.param(*s, marks=slow) for s in SPOOFS[1:])], ids=[c[0] for c in SPOOFS]
)
def test_a_line_the_application_prints_does_not_decide_the_outcome(tmp_path, monkeypatch, case, line):
    """ncu and the application succeed; the application prints one of ncu's messages (or a
    fake progress line): drgpu still exits 0, analyzes the report and records what ncu did."""
    script = tmp_path / "app.sh"
    fake = '==PROF== Profiling "fake_kernel" - 7: 0%....50%....100% - 99 passes'
    script.write_text(f"#!{sys.executable}\nprint({line!r})\nprint({fake!r})\n")
    script.chmod(0o755)
    r = run_profile(tmp_path, monkeypatch, app_argv=[str(script)], quiet=True)
    assert r.exit_code == 0, r.output
    rec = json.loads((tmp_path / "out" / "app.sh.profile.json").read_text())
    assert rec["exit_code"] == 0 and rec["app_exit_code"] is None and not rec["interrupted"]
    assert rec["ncu_errors"] == [] and rec["kernels"] == [{"name": "scale_keys_aos", "launch": 0, "passes": 12}]
    assert (tmp_path / "out" / "app.sh.json").is_file()
    assert line in (tmp_path / "out" / "app.sh.ncu.log").read_text()  # the log still has the app's output


def test_ncu_own_messages_still_decide(tmp_path, monkeypatch):
    """What ncu itself says (through its --log-file) still counts: permission (11), the
    application's failure (12)."""
    r = run_profile(tmp_path, monkeypatch, app_argv=["/bin/echo", "hi"], env={"STANDIN_NCU_SCENARIO": "perm"})
    assert r.exit_code == 11, r.output
    r = run_profile(
        tmp_path, monkeypatch, "--force", app_argv=["/bin/echo", "hi"], env={"STANDIN_NCU_SCENARIO": "app_fail"}
    )
    assert r.exit_code == 12 and "exited with code 3" in r.output, r.output


@pytest.mark.parametrize("args", [["--ncu-arg", "--log-file", "--ncu-arg", "x.log"], ["--ncu-arg", "--log-file=x.log"]])
def test_a_log_file_of_the_users_own_is_refused(tmp_path, monkeypatch, args):
    r = run_profile(tmp_path, monkeypatch, *args, app_argv=["/bin/echo", "hi"], quiet=True)
    assert r.exit_code == 2 and "--log-file" in r.output, r.output
    assert not (tmp_path / "out" / "echo.ncu-rep").exists()


def test_ncu_is_given_a_private_log_file(tmp_path, monkeypatch):
    argv_out = tmp_path / "ncu_argv.json"
    r = run_profile(
        tmp_path, monkeypatch, app_argv=["/bin/echo", "hi"], env={"STANDIN_NCU_ARGV_OUT": str(argv_out)}, quiet=True
    )
    assert r.exit_code == 0, r.output
    argv = json.loads(argv_out.read_text())
    log = Path(argv[argv.index("--log-file") + 1])
    assert not log.is_relative_to(tmp_path) and not log.exists()  # private, removed after the run
    assert argv.index("--log-file") < argv.index("/bin/echo")


# --------------------------------------------------------------------------- 2. local-file disclosure
def _secret_source(tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    """aos_gather's CSV export and a copy of its cubin whose line table names a file outside
    the report's folder and the working folder (its folder renamed in place, same length):
    the "secret" there exists on this machine. Returns (export, cubin, secret folder)."""
    import secrets
    import shutil

    data = (SAMPLE_DIR / "aos_gather.sm_90.cubin").read_bytes()
    old = b"/opt/samples"
    assert data.count(old) >= 1
    folder = Path("/tmp") / ("d" + secrets.token_hex(3))
    assert len(str(folder)) == len(old)
    folder.mkdir()
    (folder / "aos_gather.cu").write_text("".join(f"SECRET-LINE-{i}\n" for i in range(1, 200)))
    reports = tmp_path / "reports"
    reports.mkdir()
    for page in ("raw", "source"):
        shutil.copy(SAMPLE_DIR / f"aos_gather_bad.{page}.csv", reports / f"aos_gather_bad.{page}.csv")
    cubin = reports / "aos_gather.sm_90.cubin"
    cubin.write_bytes(data.replace(old, str(folder).encode()))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return reports / "aos_gather_bad.raw.csv", cubin, folder


@pytest.fixture
def secret_source(tmp_path, monkeypatch):
    import shutil

    rep, cubin, folder = _secret_source(tmp_path, monkeypatch)
    yield rep, cubin, folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_file_named_by_the_line_table_is_not_read(secret_source):
    rep, cubin, folder = secret_source
    for fmt in ("text", "json"):
        r = runner.invoke(app, ["analyze", str(rep), "--cubin", str(cubin), "-f", fmt])
        assert r.exit_code == 0, r.output
        assert "SECRET-LINE" not in r.stdout, fmt
    doc = json.loads(runner.invoke(app, ["analyze", str(rep), "--cubin", str(cubin), "-f", "json"]).stdout)
    notes = doc["notes"] + [n for k in doc["kernels"] for n in k["notes"]]
    assert any(str(folder / "aos_gather.cu") in n and "--source-root" in n for n in notes), notes
    # the line table itself is still used: the finding sits on its line
    assert doc["kernels"][0]["findings"][0]["locations"][0]["line"]


def test_source_root_lets_a_named_folder_be_read(secret_source):
    rep, cubin, folder = secret_source
    r = runner.invoke(app, ["analyze", str(rep), "--cubin", str(cubin), "--source-root", str(folder), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert "SECRET-LINE" in r.stdout


def test_a_source_below_the_working_folder_is_read(secret_source, monkeypatch):
    rep, cubin, folder = secret_source
    monkeypatch.chdir(folder)
    r = runner.invoke(app, ["analyze", str(rep), "--cubin", str(cubin), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert "SECRET-LINE" in r.stdout


@slow
def test_packed_html_groups_carry_no_raw_control_characters():
    """Past the first groups a page carries each group's markup gzip-packed, and the browser
    puts it into the document when the group is shown: a hostile kernel name in a packed group
    must arrive there as a visible escape, as it does in the page around it."""
    import copy
    import dataclasses

    from conftest import library_analysis
    from drgpu_py.render import render
    from drgpu_py.render.html.page import packed_bodies

    hostile = "evil\x1b]0;pwned\x07\u202etxt\x9b31m"
    # Shallow copies of what changes (the shared analysis stays as it is; a deep copy of its
    # contexts took longer than the page).
    shared = library_analysis()
    kernels = []
    for ka in shared.kernels:
        kernel = copy.copy(ka.kernel)
        kernel.name = hostile + ka.kernel.name
        # notes travel in the packed bodies
        kernels.append(dataclasses.replace(ka, kernel=kernel, notes=[*ka.notes, f"from {hostile}.ncu-rep"]))
    analysis = dataclasses.replace(shared, kernels=kernels, _summary=None)
    page = render(analysis, "html")
    bodies = packed_bodies(page)
    assert bodies, "the library report's page packs its later groups"
    assert any("pwned" in body for body in bodies)
    for text in [page, *bodies]:
        assert not any(ch in text for ch in ("\x1b", "\x07", "\u202e", "\x9b"))
