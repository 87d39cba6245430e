"""Bad input, failing tools and hostile names: drgpu keeps working, says why, loses nothing.

Every case of the corpus (tests/data/bad/cases.yaml) runs through the CLI: the exit code is
the documented one, stderr holds one "drgpu: KIND: message" line (plus at most a hint) and
never a traceback, and an analysis that lacks data says what it lacks in its notes. The
damaged ``.ncu-rep`` cases are built at test time from a real sample report. Also here:
hostile names through every renderer, atomic and non-clobbering writes, and reports that
analysis leaves byte-for-byte unchanged.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import rep_blocks, run_cli, slow
import yaml
from typer.testing import CliRunner

from drgpu_py.cli import app
from drgpu_py.errors import ALL_ERRORS, OutputError
from drgpu_py.io import atomic_write

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
CASES = yaml.safe_load((BAD / "cases.yaml").read_text(encoding="utf-8"))["cases"]
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
KIND_OF = {e.exit_code: e.kind for e in ALL_ERRORS}
runner = CliRunner()


# ---- building the inputs ---------------------------------------------------------------------


def derive(spec: dict, dest: Path) -> Path:
    src = (ROOT / spec["from"]).read_bytes()
    kind = spec["kind"]
    if kind == "truncate":
        out = src[: spec["keep"]]
    elif kind == "flip":
        rnd = random.Random(spec["seed"])
        b = bytearray(src)
        for _ in range(spec["count"]):
            i = rnd.randrange(8, len(b))
            b[i] ^= 0xFF
        out = bytes(b)
    elif kind == "second-launch-truncated":
        launch = max(rep_blocks(src), key=lambda se: se[1] - se[0])  # the launch is the big block
        piece = src[launch[0] : launch[1]]
        out = src + piece[: len(piece) // 2]
    else:
        raise ValueError(kind)
    dest.write_bytes(out)
    return dest


def prepare(case: dict, tmp: Path) -> tuple[list[str], Path | None]:
    """argv for ``drgpu`` and the input path; inputs are copies, so no case can touch the corpus."""
    data = tmp / "data"
    shutil.copytree(BAD, data)
    derived = derive(case["derive"], tmp / "derived.ncu-rep") if "derive" in case else None
    special = case.get("special")
    if special == "directory":
        inp = tmp / "a_folder"
        inp.mkdir()
    elif special == "missing":
        inp = tmp / "nope.ncu-rep"
    elif special == "unreadable":
        inp = tmp / "locked.raw.csv"
        shutil.copy(BAD / "mini.raw.csv", inp)
        inp.chmod(0)
    elif "input" in case:
        inp = data / case["input"]
    else:
        inp = derived
    setup = case.get("setup")
    if setup == "existing-output":
        (tmp / "out.json").write_text("precious\n")
    elif setup == "readonly-dir":
        (tmp / "ro").mkdir()
        (tmp / "ro").chmod(0o555)

    def fill(a):
        return a.format(data=data, tmp=tmp, derived=derived)

    args = [fill(a) for a in case.get("args", [])]
    if not {"-o", "--output", "-f", "--format"} & set(args):
        args += ["-f", "json"]
    return ["analyze", str(inp), *args], inp


def _case_id(c: dict) -> str:
    return c["id"]


def _skip_reason(case: dict) -> str | None:
    if AS_ROOT and (case.get("special") == "unreadable" or case.get("setup") == "readonly-dir"):
        return "running as root, which reads and writes regardless of permissions"
    return None


def _all_notes(d: dict) -> list[str]:
    return list(d["notes"]) + [n for k in d["kernels"] for n in k["notes"]]


# ---- the corpus -----------------------------------------------------------------------------


def test_manifest_is_complete():
    ids = [c["id"] for c in CASES]
    assert len(ids) >= 25 and len(set(ids)) == len(ids)
    used = set()
    for c in CASES:
        assert c["exit"] in KIND_OF or c["exit"] == 0, c["id"]
        assert ("message" in c) == (c["exit"] != 0) and ("partial" in c) == (c["exit"] == 0), c["id"]
        assert "input" in c or "derive" in c or "special" in c, c["id"]
        if "input" in c:
            assert (BAD / c["input"]).is_file(), c["input"]
            used.add(c["input"])
        used.update(m.group(1) for a in c.get("args", []) for m in [re.search(r"\{data\}/([^/]+)", a)] if m)
    # Every committed input is exercised; a source export rides along with its raw CSV.
    committed = {p.name for p in BAD.iterdir() if p.suffix in (".csv", ".ncu-rep")}
    riders = {n for n in committed if n.endswith(".source.csv") and n.replace(".source.csv", ".raw.csv") in used}
    assert committed - used - riders == set()


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_bad_input(case, tmp_path):
    reason = _skip_reason(case)
    if reason:
        pytest.skip(reason)
    argv, _ = prepare(case, tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = runner.invoke(app, argv)
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == case["exit"], r.output
    if case["exit"]:
        lines = r.stderr.splitlines()
        assert lines and lines[0].startswith(f"drgpu: {KIND_OF[case['exit']]}: "), r.stderr
        assert case["message"] in lines[0], r.stderr
        assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("  hint: ")), r.stderr
        assert r.stdout == ""
        # A refused or failed run writes nothing: no output, no temporary file.
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        if case.get("setup") == "existing-output":
            assert (tmp_path / "out.json").read_text() == "precious\n"
    else:
        d = json.loads(r.stdout)
        assert d["kernels"], "an exit-0 case must analyze at least one kernel"
        notes = _all_notes(d)
        assert any(case["partial"] in n for n in notes), notes
        if "name" in case:
            assert case["name"] in d["kernels"][0]["name"]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=[] if i == 0 else [slow])  # each a process: the fast tier runs the first
        for i, c in enumerate(
            c
            for c in CASES
            if c["id"] in ("ncu-rep-truncated-in-launch", "hostile-names", "source-csv-infinite-values")
        )
    ],
    ids=_case_id,
)
def test_real_process_has_clean_stderr(case, tmp_path):
    """The installed entry point, as a user runs it: no traceback, no native library log."""
    argv, _ = prepare(case, tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "drgpu_py", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert p.returncode == case["exit"], p.stderr
    assert "Traceback" not in p.stderr
    if case["exit"]:
        assert p.stderr.startswith(f"drgpu: {KIND_OF[case['exit']]}: ") and case["message"] in p.stderr
        assert len(p.stderr.splitlines()) <= 2, p.stderr
    else:
        assert p.stderr == ""
        json.loads(p.stdout)


# ---- hostile names through every renderer -----------------------------------------------------


class _Html(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.script: list[str] = []
        self.tags: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        (self.script if self._in_script else self.text).append(data)


def _dot_plain(dot_source: str) -> str | None:
    if not shutil.which("dot"):
        return None
    p = subprocess.run(["dot", "-Tplain"], input=dot_source, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


@pytest.fixture(scope="module")
def hostile_analysis():
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    return analyze(open_report(BAD / "hostile.raw.csv"))


def test_hostile_names_are_text_in_every_format(hostile_analysis):
    from drgpu_py.render import RenderOptions, formats, render

    name = hostile_analysis.kernels[0].kernel.name
    assert name.startswith('<script>alert("x")</script>')
    opts = RenderOptions()
    d = json.loads(render(hostile_analysis, "json", opts))
    assert d["kernels"][0]["name"] == name
    text = render(hostile_analysis, "text", opts)
    assert "[bold]x[/]" in text and "[/nope]" in text  # printed, not taken as rich markup
    if "html" in formats():
        html = render(hostile_analysis, "html", opts)
        assert '<script>alert("x")' not in html
        p = _Html()
        p.feed(html)
        p.close()
        assert not any('alert("x")' in s for s in p.script), "kernel name leaked into a <script>"
        assert any('<script>alert("x")</script>' in t for t in p.text), "kernel name not shown as text"
    if "dot" in formats():
        dot = render(hostile_analysis, "dot", opts)
        plain = _dot_plain(dot)
        if plain is not None:
            nodes = [ln.split()[1] for ln in plain.splitlines() if ln.startswith("node ")]
            assert "n1" not in nodes and "n2" not in nodes, "DOT syntax in a name made nodes"
            assert "pwn" not in " ".join(ln for ln in plain.splitlines() if ln.startswith("edge "))
        if shutil.which("dot"):
            ET.fromstring(render(hostile_analysis, "svg", opts).encode("utf-8"))


@pytest.mark.parametrize(
    "name", ["long_name.raw.csv", "non_utf8.raw.csv", "nul_bytes.raw.csv", "weird_numbers.raw.csv"]
)
def test_odd_inputs_render_in_every_text_format(name):
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report
    from drgpu_py.render import RenderOptions, formats, render

    a = analyze(open_report(BAD / name))
    for fmt in ("json", "text", "html", "dot", "sarif", "gcc"):
        if fmt not in formats():
            continue
        out = render(a, fmt, RenderOptions())
        assert isinstance(out, str) and (out or fmt == "gcc")  # gcc: a line per finding, maybe none
        if fmt == "gcc":
            assert len(out.splitlines()) >= sum(len(ka.findings) for ka in a.kernels)
        if fmt == "json":
            assert json.loads(out)["kernels"][0]["name"] == a.kernels[0].kernel.name


# ---- writes: atomic, never clobbering; inputs untouched -------------------------------------


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_failing_write_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out.json"

    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd, *a, **k):
            self.fh = real_fdopen(fd, *a, **k)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            self.fh.write(data[:10])  # a part reached the disk before it filled up
            self.fh.flush()
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", Full)
    with pytest.raises(OutputError, match="No space left on device"):
        atomic_write(target, "x" * 100_000)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_failing_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old\n")

    def no_rename(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OutputError, match="Input/output error"):
        atomic_write(target, "new\n", force=True)
    monkeypatch.undo()
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


@pytest.mark.parametrize("signum", [2, 15, 1])
def test_interrupted_write_leaves_nothing(tmp_path, monkeypatch, signum):
    from drgpu_py.errors import Terminated

    def interrupted(src, dst):
        raise KeyboardInterrupt if signum == 2 else Terminated(signum)  # Ctrl-C, SIGTERM, SIGHUP

    monkeypatch.setattr(os, "replace", interrupted)
    monkeypatch.setattr(os, "link", interrupted)  # a new output is linked into place
    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "out.json", "new\n")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_file_appearing_during_write_is_not_overwritten(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    real_fdopen = os.fdopen

    def racing_fdopen(*a, **k):
        target.write_text("someone else's\n")  # created between the check and the rename
        return real_fdopen(*a, **k)

    monkeypatch.setattr(os, "fdopen", racing_fdopen)
    with pytest.raises(OutputError, match="exists"):
        atomic_write(target, "ours\n")
    monkeypatch.undo()
    assert target.read_text() == "someone else's\n" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_existing_output_needs_force(tmp_path):
    out = tmp_path / "a.json"
    out.write_text("keep me\n")
    args = ["analyze", str(BAD / "mini.raw.csv"), "-o", str(out)]
    r = runner.invoke(app, args)
    assert r.exit_code == 6 and out.read_text() == "keep me\n"
    r = runner.invoke(app, args + ["--force"])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["kernels"][0]["name"].startswith("saxpy_stride")


@pytest.mark.parametrize(
    "rel",
    [
        "sample_reports/few_blocks/few_blocks_bad.ncu-rep",
        pytest.param("sample_reports/few_blocks/few_blocks_bad.raw.csv", marks=slow),
    ],
)
def test_analyze_never_modifies_the_report(rel, tmp_path):
    src = ROOT / rel
    folder = tmp_path / "in"
    folder.mkdir()
    for sib in src.parent.glob("few_blocks_bad.*"):
        shutil.copy2(sib, folder / sib.name)
    before = {p.name: (_sha(p), p.stat().st_mtime_ns) for p in folder.iterdir()}
    for extra in (["-f", "json"], ["-o", str(tmp_path / "r.json")], ["-o", str(tmp_path / "r.txt")]):
        r = runner.invoke(app, ["analyze", str(folder / src.name), *extra])
        assert r.exit_code == 0, r.output
    after = {p.name: (_sha(p), p.stat().st_mtime_ns) for p in folder.iterdir()}
    assert after == before


# ---- docs/errors.md stays in step with drgpu_py.errors -----------------------------------------


def _doc_exit_table() -> list[dict]:
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in rows[0].strip("|").split("|")]
    assert head[:3] == ["code", "kind", "class"], head
    out = []
    for ln in rows[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        out.append(dict(zip(head, cells)))
    return out


def test_errors_doc_matches_error_classes():
    from drgpu_py.cli.options import EXIT_INTERNAL

    rows = _doc_exit_table()
    documented = {int(r["code"]): r for r in rows}
    assert len(documented) == len(rows), "a code is listed twice"
    for cls in ALL_ERRORS:
        r = documented.get(cls.exit_code)
        assert r is not None, f"{cls.__name__} (exit {cls.exit_code}) is not in docs/errors.md"
        assert r["kind"] == cls.kind and r["class"] == f"`{cls.__name__}`", r
        example = r["example message"].strip("`")
        assert example.startswith(f"drgpu: {cls.kind}"), example
        assert r["meaning"] and r["what to do"], r
    extra = set(documented) - {c.exit_code for c in ALL_ERRORS}
    assert extra == {0, EXIT_INTERNAL}, extra
    assert len({c.exit_code for c in ALL_ERRORS}) == len(ALL_ERRORS), "two classes share an exit code"


def test_corpus_uses_only_documented_codes():
    documented = {int(r["code"]) for r in _doc_exit_table()}
    assert {c["exit"] for c in CASES} <= documented


@pytest.mark.parametrize("kind", ["fifo", "device", "socket"])
@pytest.mark.parametrize("where", ["report", "thresholds", "baseline"])
def test_special_files_are_refused_at_once(tmp_path, kind, where):
    """A FIFO (which would block forever), a device or a socket given as an input is refused
    at once with exit 3, whichever input it is."""
    import os
    import socket
    from conftest import report_path

    if kind == "fifo":
        special = tmp_path / "x.ncu-rep"
        os.mkfifo(special)
    elif kind == "device":
        special = Path("/dev/null")
    else:
        special = tmp_path / "s.ncu-rep"
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(special))
    rep = str(report_path("aos_gather", "bad"))
    argv = {
        "report": ["analyze", str(special)],
        "thresholds": ["analyze", rep, "--thresholds", str(special)],
        "baseline": ["diff", str(special), rep],
    }[where]
    r = run_cli(*argv, timeout=60)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and ("FIFO" in r.stderr or "device" in r.stderr or "socket" in r.stderr), (
        r.stderr
    )


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["analyze", "R", "-t", "no_such_key=1"], "unknown key 'no_such_key'"),
        (["analyze", "R", "-t", "sol_pct=nan"], "finite number >= 0"),
        (["analyze", "R", "-t", "sol_pct=-5"], "finite number >= 0"),
        (["analyze", "R", "--fold", "5"], "Invalid value for '--fold': Input should be less than or equal to 1"),
        (["analyze", "R", "--top", "-1"], "Invalid value for '--top': Input should be greater than or equal to 0"),
    ],
)
def test_option_values_are_usage_errors(argv, needle):
    """Unknown threshold keys and out-of-range option values: exit 2 with a clear line."""
    from conftest import report_path

    argv = [str(report_path("aos_gather", "bad")) if a == "R" else a for a in argv]
    r = run_cli(*argv, timeout=60)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_version_and_short_help():
    from drgpu_py import __version__

    for argv in (["--version"], ["-V"]):
        r = run_cli(*argv, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == f"drgpu {__version__}"
    for argv in (["-h"], ["analyze", "-h"], ["profile", "-h"], ["diff", "-h"]):
        r = run_cli(*argv, timeout=60)
        assert r.returncode == 0 and "Usage:" in r.stdout, argv


@pytest.mark.parametrize("target", ["device", "fifo", "link-to-device", "link-to-file"])
def test_force_never_replaces_special_files(tmp_path, target):
    """-o onto a device, FIFO or a link to one is refused even with --force (exit 6), and the
    node stays; a link to a regular file is written through (the link stays a link)."""
    import os
    from conftest import report_path

    rep = str(report_path("aos_gather", "bad"))
    if target == "device":
        out = Path("/dev/null")
    elif target == "fifo":
        out = tmp_path / "f.json"
        os.mkfifo(out)
    elif target == "link-to-device":
        out = tmp_path / "l.json"
        out.symlink_to("/dev/null")
    else:
        real = tmp_path / "real.json"
        real.write_text("old")
        out = tmp_path / "l.json"
        out.symlink_to(real)
    r = run_cli("analyze", rep, "-f", "json", "-o", str(out), "--force", timeout=120)
    if target == "link-to-file":
        assert r.returncode == 0, r.stderr
        assert out.is_symlink() and (tmp_path / "real.json").read_text().startswith("{")
    else:
        assert r.returncode == 6 and "not a regular file" in r.stderr, r.stderr
        assert Path("/dev/null").is_char_device()
        if target == "fifo":
            import stat

            assert stat.S_ISFIFO(out.stat().st_mode)
        if target == "link-to-device":
            assert out.is_symlink()


def test_terminal_sequences_in_names_are_not_passed_to_the_terminal(tmp_path):
    """A kernel name with ESC sequences (colour, window title) and a right-to-left override
    reaches the text output as visible escapes, never as raw control characters."""
    import csv as _csv

    rows = list(_csv.reader((BAD / "mini.raw.csv").read_text(encoding="utf-8").splitlines()))
    col = rows[0].index("Kernel Name")
    for r in rows[2:]:
        if len(r) > col:
            r[col] = "evil\x1b]0;pwned\x07\x1b[31mred\u202etxt"
    bad = tmp_path / "evil.raw.csv"
    with open(bad, "w", newline="", encoding="utf-8") as fh:
        _csv.writer(fh).writerows(rows)
    r = run_cli("analyze", str(bad), "-q", timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\u202e" not in r.stdout
    assert "evil\\x1b]0;pwned" in r.stdout


# ---- native crashes of ncu_report ----------------------------------------------------------------


def _crashing_report(dest: Path, rel: str = "sample_reports/fma_chain/fma_chain_bad.ncu-rep") -> Path:
    """A real report with one damaged byte that makes ncu_report crash natively (a
    segmentation fault in sass_by_pc): the high byte of the section-name index of the cubin
    embedded in it, found by seeded byte flips over the sample reports."""
    buf = bytearray((ROOT / rel).read_bytes())
    elf = buf.find(b"\x7fELF")
    buf[elf + 63] = 230  # e_shstrndx's high byte of the ELF64 header
    dest.write_bytes(bytes(buf))
    return dest


# Child processes: whether the damaged byte crashes ncu_report depends on the reading process's
# memory (a reader forked from the test process, after earlier analyses, may read it whole).
def _drgpu(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "drgpu_py", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=300,
    )


@pytest.fixture(scope="module")
def crashing(tmp_path_factory) -> Path:
    rep = _crashing_report(tmp_path_factory.mktemp("crash") / "k.ncu-rep")
    direct = _drgpu("analyze", str(rep), "-q", env={"DRGPU_READ_IN_PROCESS": "1"})
    if direct.returncode != -11:  # the case is real only while this ncu_report crashes on it
        pytest.skip(f"this ncu_report does not crash on the damaged byte (rc {direct.returncode})")
    return rep


@pytest.mark.parametrize("cmd", ["analyze", "diff"])
def test_native_reader_crash_is_a_format_error(crashing, cmd):
    argv = [cmd, str(crashing)] + ([str(crashing)] if cmd == "diff" else []) + (["-q"] if cmd == "analyze" else [])
    r = _drgpu(*argv)
    if r.returncode == 0 and not r.stderr:
        # The reader's child read the damaged byte whole this time (the crash depends on its
        # memory, e.g. under a parallel test run): nothing crashed, so there is nothing to map.
        pytest.skip("the reader did not crash on the damaged byte in this run")
    assert r.returncode == 4, (r.returncode, r.stderr)
    assert f"drgpu: format: {crashing} is corrupt: ncu_report crashed reading it (signal 11, SIGSEGV)" in r.stderr
    assert "Traceback" not in r.stderr


def test_list_reads_no_code_so_a_damaged_cubin_still_lists(crashing):
    """``list`` reads each launch's names, shape and duration, never its SASS: the byte that
    crashes ncu_report's disassembler does not stop it."""
    r = _drgpu("list", str(crashing), "-f", "json")
    assert r.returncode == 0, r.stderr
    assert [k["name"] for k in json.loads(r.stdout)["kernels"]] == ["void horner<(int)1>(const float *, float *)"]


def test_native_crash_of_the_line_table_is_a_note(crashing, tmp_path):
    src = ROOT / "sample_reports" / "fma_chain"
    for sfx in ("raw.csv", "source.csv"):
        shutil.copy(src / f"fma_chain_bad.{sfx}", tmp_path / f"k.{sfx}")
    shutil.copy(crashing, tmp_path / "k.ncu-rep")
    r = _drgpu("analyze", str(tmp_path / "k.raw.csv"), "-f", "json", "-q")
    assert r.returncode == 0, r.stderr
    notes = _all_notes(json.loads(r.stdout))
    assert any("line table of k.ncu-rep unreadable" in n and "ncu_report crashed" in n for n in notes), notes


@pytest.mark.parametrize(
    "report", ["tests/data/bad/long_name.raw.csv", "sample_reports/fma_chain/fma_chain_bad.ncu-rep"]
)
@pytest.mark.parametrize(
    "pattern, needle",
    [
        pytest.param(r"(.|..)+(?!)", "took over 2 s of processor time to match", marks=slow),  # 2 s each
        ("a{4294967296}", "is not a valid regular expression"),
    ],
)
def test_kernel_patterns_that_hang_or_overflow_are_usage_errors(report, pattern, needle):
    """A catastrophic pattern (alternatives under a repeat that can never match: exponential
    backtracking on any name of 40 characters) is stopped after its time budget; a repeat
    count the pattern compiler cannot take is refused (it was exit 70)."""
    import time

    t0 = time.monotonic()
    r = runner.invoke(app, ["analyze", str(ROOT / report), "-k", pattern, "-q"])
    assert r.exit_code == 2, r.output
    assert needle in r.output and "internal" not in r.output
    assert time.monotonic() - t0 < 120  # 2 s budget per pass; the rest is reading, on a loaded machine


# ---- hostile inputs that were internal errors (exit 70) -------------------------------------------

MINI = BAD / "mini.raw.csv"


@pytest.mark.parametrize(
    "name, needle",
    [
        ("a" * 300 + ".raw.csv", "name too long"),
        ("a/" * 3000 + "x.raw.csv", "name too long"),
        ("loop", "symbolic link loop"),
    ],
)
def test_unreachable_paths_are_input_errors(tmp_path, name, needle):
    """A name over NAME_MAX or PATH_MAX and a link loop are input errors that say which (were
    exit 70, and a loop read 'no such file')."""
    if name == "loop":
        (tmp_path / "loop").symlink_to(tmp_path / "loop2")
        (tmp_path / "loop2").symlink_to(tmp_path / "loop")
    r = runner.invoke(app, ["analyze", str(tmp_path / name), "-q"])
    assert r.exit_code == 3, r.output
    assert needle in r.output and "internal" not in r.output


def test_folder_without_permission_is_an_input_error(tmp_path, monkeypatch):
    """A folder drgpu may not list (simulated: root may list anything) is exit 3."""
    import drgpu_py.pipeline as pipeline

    (tmp_path / "d").mkdir()
    monkeypatch.setattr(pipeline.os, "access", lambda p, mode: False)
    r = runner.invoke(app, ["analyze", str(tmp_path / "d"), "-q"])
    assert r.exit_code == 3 and "permission denied" in r.output, r.output


# Each a process; the fast tier runs analyze on a full device (test_contract_edges: a closed one).
@pytest.mark.parametrize("how", ["full", pytest.param("closed", marks=slow)])
@pytest.mark.parametrize("cmd", ["analyze", pytest.param("list", marks=slow)])
def test_stdout_that_cannot_be_written_is_an_output_error(how, cmd):
    """stdout on a full disk (/dev/full) or closed: exit 6 with one line, no traceback and no
    'Exception ignored' at exit (were exit 70)."""
    if how == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    argv = [sys.executable, "-m", "drgpu_py", cmd, str(MINI), "-f", "json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if how == "full":
        with open("/dev/full", "w") as full:
            r = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    else:
        r = subprocess.run(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=300,
            preexec_fn=lambda: os.close(1),
        )
    assert r.returncode == 6, (r.returncode, r.stderr)
    assert ("cannot write to standard output" if how == "full" else "standard output is closed") in r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"thresholds: [1]\n", "'thresholds' should map threshold names to numbers"),
        (b"- 1\n- 2\n", "expected a mapping"),
        (bytes(range(256)) * 4, "not a text file"),
        ("thresholds:\n  sol_pct: 70\n".encode("utf-16-le"), "not a text file"),
        (b"thresholds:\n  sol_pct: .inf\n", "must be a finite number >= 0"),
        (b"thresholds:\n  sol_pct: [1]\n", "must be a number"),
        (b"thresholds:\n  sol_pct: true\n", "must be a number"),
    ],
)
def test_malformed_thresholds_files_are_data_errors(tmp_path, content, needle):
    """Thresholds files that are lists, binary, UTF-16 without a byte-order mark or hold
    non-numbers: exit 8 naming the problem (were exit 70 or silently accepted)."""
    t = tmp_path / "t.yaml"
    t.write_bytes(content)
    r = runner.invoke(app, ["analyze", str(MINI), "--thresholds", str(t), "-q"])
    assert r.exit_code == 8, r.output
    assert needle in r.output and "internal" not in r.output


def test_utf16_thresholds_file_with_a_bom_is_read(tmp_path):
    t = tmp_path / "t.yaml"
    t.write_bytes("thresholds:\n  sol_pct: 70\n".encode("utf-16"))
    from drgpu_py.specs import loader as data

    assert data.thresholds(file=t)["sol_pct"] == 70.0


@pytest.mark.parametrize(
    "doc, needle",
    [
        ({"groups": [1]}, "'groups' should be a mapping"),
        ({"groups": 5}, "'groups' should be a mapping"),
        ({"inherits": "base", "add": [1]}, "'add' should be a mapping"),
        ({"inherits": "base", "add": {"context": {1: 2}}}, "add.context should map metrics"),
        ({"drop": 5}, "'drop' should be a list"),
        ({"drop": [[1]]}, "'drop' should be a list of metric names"),
        ({"rename": [1]}, "'rename' should be a mapping"),
        ({"rename": {"a.sum": [1]}}, "'rename' should map metric names"),
        ({"name": [1]}, "'name' should be text"),
        (
            {"groups": {"g": {"why": "w", "optional": "no", "metrics": {"a.sum": "x"}}}},
            "'optional' should be true or false",
        ),
        ({"groups": {"g": {"why": "w"}}}, "group g collects nothing"),
        (
            {"groups": {"g": {"why": "w", "metrics": {"a.sum": "x"}, "provides": {"b.sum": "y"}}}},
            "groups.g: 'provides' needs the sections",
        ),
        ({"groups": {"g": {"why": " ", "metrics": {"a.sum": "x"}}}}, "groups.g needs a 'why'"),
    ],
)
def test_malformed_metric_sets_are_data_errors(tmp_path, doc, needle):
    """Metric-set YAML with keys of the wrong type: exit 8 naming the key (were exit 70 or
    silently accepted)."""
    from drgpu_py.specs import metric_sets as msets
    from drgpu_py.errors import DataFileError

    base = {"schema": "drgpu.metric_set/1", "name": "x", "groups": {"g": {"why": "w", "metrics": {"a.sum": "x"}}}}
    f = tmp_path / "set.yaml"
    f.write_text(yaml.safe_dump({**base, **doc}), encoding="utf-8")
    with pytest.raises(DataFileError) as e:
        msets.load_metric_set(str(f))
    assert needle in e.value.message


def test_metric_set_that_is_binary_is_a_data_error(tmp_path):
    from drgpu_py.specs import metric_sets as msets
    from drgpu_py.errors import DataFileError

    f = tmp_path / "set.yaml"
    f.write_bytes(bytes(range(256)))
    with pytest.raises(DataFileError, match="not a text file"):
        msets.load_metric_set(str(f))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> dict:
    r = runner.invoke(app, ["analyze", str(MINI), "-f", "json", "-q"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _edit(doc: dict, fn) -> str:
    import copy

    d = copy.deepcopy(doc)
    out = fn(d)
    return out if isinstance(out, str) else json.dumps(d)


_BASELINES = {
    "findings-not-a-list": (lambda d: d["kernels"][0].update(findings="x"), "kernels/0/findings"),
    "name-missing": (lambda d: d["kernels"][0].pop("name") and None, "'name' is a required property"),
    "kernel-not-an-object": (lambda d: d.update(kernels=[1]), "kernels/0"),
    "duration-text": (lambda d: d["kernels"][0].update(duration_ns="slow"), "kernels/0/duration_ns"),
    "stall-groups-list": (lambda d: d["kernels"][0].update(stall_groups=[1]), "kernels/0"),
    "finding-without-id": (lambda d: d["kernels"][0].update(findings=[{}]), "kernels/0/findings/0"),
    "notes-number": (lambda d: d.update(notes=5), "notes"),
    "deep-nesting": (
        lambda d: '{"tool": "drgpu", "kernels": ' + "[" * 100000 + "]" * 100000 + "}",
        "nested too deeply",
    ),
    "400-digit-integer": (
        lambda d: json.dumps(d).replace('"kernels": [', '"x": ' + "9" * 400 + ', "kernels": [', 1),
        "an integer of 400 digits",
    ),
    "nan-where-text-belongs": (
        lambda d: (
            json.dumps(d)
            .replace('"version": "', '"version": NaN, "v_": "', 1)
            .replace(', "v_": "' + d["version"] + '"', "", 1)
        ),
        "version",
    ),
    "not-utf8": (
        lambda d: (
            json.dumps(d)
            .replace('"kernels": [', '"x": "\udcff", "kernels": [', 1)
            .encode("utf-8", "surrogateescape")
            .decode("latin-1")
        ),
        "not a readable JSON file",
    ),
}


@pytest.mark.parametrize("case", sorted(_BASELINES))
@pytest.mark.parametrize("cmd", ["list", "diff"])
def test_malformed_json_baselines_are_format_errors(baseline, tmp_path, case, cmd):
    """Saved analyses are checked against the shipped JSON Schema (and JSON's own limits)
    before use: wrong types, missing keys, deep nesting, huge numbers are exit 4 naming where
    (were exit 70)."""
    fn, needle = _BASELINES[case]
    f = tmp_path / "base.json"
    text = _edit(baseline, fn)
    f.write_bytes(text.encode("latin-1") if case == "not-utf8" else text.encode("utf-8"))
    argv = [cmd, str(f)] + ([str(f)] if cmd == "diff" else [])
    r = runner.invoke(app, argv)
    assert r.exit_code == 4, r.output
    assert needle in r.output and "internal" not in r.output, r.output


def test_non_finite_numbers_in_a_baseline_read_as_missing(baseline, tmp_path):
    """NaN, Infinity and 1e400 where a number may be missing: read as null (exit 0)."""
    text = re.sub(r'"duration_ns": [0-9.e+-]+', '"duration_ns": 1e400', json.dumps(baseline))
    text = re.sub(r'"stall_cycle_pct": [0-9.e+-]+', '"stall_cycle_pct": NaN', text)
    f = tmp_path / "base.json"
    f.write_text(text, encoding="utf-8")
    r = runner.invoke(app, ["list", str(f), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert '"duration_ns": null' in r.stdout.replace('":null', '": null')


def test_pc_at_or_over_2_63_in_a_source_csv_is_skipped(tmp_path):
    """An address that no int64 holds is no address: its row is skipped (was exit 70)."""
    text = (BAD / "mini.source.csv").read_text(encoding="utf-8")
    first = re.search(r'"(0x[0-9a-f]+)"', text).group(1)
    src = tmp_path / "big.source.csv"
    src.write_text(text.replace(f'"{first}"', '"0xffffffffffffff00"', 1), encoding="utf-8")
    r = runner.invoke(app, ["analyze", str(MINI), "--source-csv", str(src), "-f", "json", "-q"])
    assert r.exit_code == 0, r.output
    k = json.loads(r.stdout)["kernels"][0]
    assert k["name"]


@pytest.mark.parametrize("what", ["all-inf", "sm-count-inf"])
def test_infinite_metrics_are_analyzed(tmp_path, what):
    """Every metric inf, or the SM count inf: an analysis (no ZeroDivisionError, no exit 70)."""
    import csv

    rows = list(csv.reader(io.StringIO((BAD / "mini.raw.csv").read_text(encoding="utf-8"))))
    h = rows[0]
    first_metric = h.index("CC") + 1
    for r in rows[2:]:
        for j in range(first_metric, len(h)):
            if what == "all-inf" or h[j] == "device__attribute_multiprocessor_count":
                r[j] = "inf"
    f = tmp_path / "inf.raw.csv"
    with open(f, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(rows)
    r = runner.invoke(app, ["analyze", str(f), "-f", "json", "-q"])
    assert r.exit_code == 0, r.output


# ---- CSV exports that gave wrong successes -----------------------------------------------------------


def _mini_rows() -> list[list[str]]:
    import csv

    return list(csv.reader(io.StringIO((BAD / "mini.raw.csv").read_text(encoding="utf-8"))))


def _write_csv(path: Path, rows) -> Path:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(rows)
    return path


def _localised(cell: str, how: str) -> str:
    if not any(ch.isdigit() for ch in cell) or cell.startswith("("):
        return cell
    if how == "decimal-comma":  # 1.234,5 (German, French with '.' groups)
        return cell.replace(",", "\0").replace(".", ",").replace("\0", ".")
    if how == "apostrophe":  # 1'234.56 (Swiss)
        return cell.replace(",", "'")
    return cell.replace(",", "\u202f")  # 1 234.5 (narrow no-break space)


@pytest.mark.parametrize("how", ["decimal-comma", "apostrophe", "space"])
def test_locale_formatted_numbers_are_refused(tmp_path, how):
    """Numbers re-saved in a locale's format would read 10x off (1.234,5 as 1.2345) or go
    missing: the file is refused naming the cell (exit 4)."""
    h, u, *body = _mini_rows()
    first = h.index("CC") + 1
    body = [[c if j < first else _localised(c, how) for j, c in enumerate(r)] for r in body]
    f = _write_csv(tmp_path / "loc.raw.csv", [h, u, *body])
    r = runner.invoke(app, ["analyze", str(f), "-f", "json", "-q"])
    assert r.exit_code == 4, r.output
    assert "is written in a locale's format" in r.output, r.output


def test_a_lone_decimal_comma_is_refused(tmp_path):
    h, u, row = _mini_rows()[:3]
    j = h.index("gpu__time_duration.sum") if "gpu__time_duration.sum" in h else h.index("gpc__cycles_elapsed.max")
    row = list(row)
    row[j] = "3,5"
    f = _write_csv(tmp_path / "one.raw.csv", [h, u, row])
    r = runner.invoke(app, ["analyze", str(f), "-f", "json", "-q"])
    assert r.exit_code == 4 and "'3,5'" in r.output, r.output


@pytest.mark.parametrize("extra", ["header-and-units", "units", "header"])
def test_repeated_header_or_units_rows_are_no_kernels(tmp_path, extra):
    """A header or units row repeated inside the file (two exports concatenated) is skipped
    with a note, never read as an extra kernel."""
    h, u, row = _mini_rows()[:3]
    more = {"header-and-units": [h, u, row], "units": [u], "header": [h]}[extra]
    f = _write_csv(tmp_path / "rep.raw.csv", [h, u, row, *more])
    r = runner.invoke(app, ["analyze", str(f), "-f", "json", "-q", "--per-launch"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert len(d["kernels"]) == (2 if extra == "header-and-units" else 1)
    assert all(k["name"] == row[h.index("Kernel Name")] for k in d["kernels"])
    assert any("repeated header or units row" in n for n in d["notes"]), d["notes"]


def test_source_csv_cut_inside_a_row_is_refused(tmp_path):
    """A source page cut short mid-row (head -c, an interrupted copy): exit 4, never an
    analysis of the half that is left."""
    text = (BAD / "mini.source.csv").read_text(encoding="utf-8")
    src = tmp_path / "cut.source.csv"
    src.write_text(text[: len(text) // 2 + 7], encoding="utf-8")
    r = runner.invoke(app, ["analyze", str(MINI), "--source-csv", str(src), "-f", "json", "-q"])
    assert r.exit_code == 4 and "is truncated" in r.output, r.output


def test_source_csv_cut_at_a_line_end_is_noted(tmp_path):
    """Cut at a line end (head -n): the kernel notes say the block counts a fraction of the
    launch's instructions and that the file may be truncated."""
    lines = (BAD / "mini.source.csv").read_text(encoding="utf-8").splitlines(True)
    src = tmp_path / "cut.source.csv"
    src.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    r = runner.invoke(app, ["analyze", str(MINI), "--source-csv", str(src), "-f", "json", "-q"])
    assert r.exit_code == 0, r.output
    notes = _all_notes(json.loads(r.stdout))
    assert any("may be truncated" in n for n in notes), notes
    assert any("instructions executed, the raw page" in n for n in notes), notes


def test_source_csv_of_another_run_is_refused(tmp_path):
    """Same kernel name, other counts (another run or report): a block that counts more
    instructions than the raw page's launch cannot be its own: exit 4."""
    import csv

    rows = list(csv.reader(io.StringIO((BAD / "mini.source.csv").read_text(encoding="utf-8"))))
    hdr = rows[1]
    j = hdr.index("Instructions Executed")
    for r in rows[2:]:
        if len(r) > j and r[j].isdigit():
            r[j] = str(int(r[j]) * 10)
    src = _write_csv(tmp_path / "other.source.csv", rows)
    r = runner.invoke(app, ["analyze", str(MINI), "--source-csv", str(src), "-f", "json", "-q"])
    assert r.exit_code == 4 and "not of the same report" in r.output, r.output


def test_source_csv_of_other_kernels_is_refused(tmp_path):
    """A source page whose blocks are all of other kernels: exit 4 naming what it holds
    (was silently an analysis without per-instruction data)."""
    text = (BAD / "mini.source.csv").read_text(encoding="utf-8")
    src = tmp_path / "other.source.csv"
    src.write_text(text.replace('"saxpy_stride(', '"other_kernel(', 1), encoding="utf-8")
    r = runner.invoke(app, ["analyze", str(MINI), "--source-csv", str(src), "-f", "json", "-q"])
    assert r.exit_code == 4 and "holds none of the raw page's kernels" in r.output, r.output


@pytest.mark.parametrize("reader", ["sniff", "csv", "thresholds", "baseline", "ncu-rep", "line-table"])
def test_a_path_that_becomes_a_fifo_after_the_check_never_blocks(tmp_path, monkeypatch, reader):
    """The check (stat) and the open are two steps: a path swapped for a FIFO between them
    is refused on the opened descriptor (O_NONBLOCK, fstat), exit 3, instead of blocking."""
    import signal
    import drgpu_py.specs.loader as data_mod
    import drgpu_py.io as io_mod
    import drgpu_py.readers.sniffing as sniff_mod
    import drgpu_py.readers.csv_text as csv_text
    import drgpu_py.readers.ncu_csv as ncu_csv
    from drgpu_py.errors import InputError

    fifo = tmp_path / "x.raw.csv"
    os.mkfifo(fifo)

    def passes(p, what=""):
        return Path(p)  # the check saw a regular file

    for mod in (sniff_mod, ncu_csv, csv_text, io_mod):
        monkeypatch.setattr(mod, "require_input_file", passes)
    from drgpu_py.analysis import saved
    from drgpu_py.readers import ncu_rep  # ncu_report itself is not loaded: the open fails first

    run = {
        "sniff": lambda: sniff_mod.sniff(fifo),
        "csv": lambda: csv_text.read_text(fifo),
        "thresholds": lambda: data_mod.thresholds(file=fifo),
        "baseline": lambda: saved.load_analysis_json(fifo),
        "ncu-rep": lambda: ncu_rep.read_ncu_rep(fifo),
        "line-table": lambda: ncu_rep.read_line_table(fifo),
    }[reader]
    signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("blocked on the FIFO")))
    signal.alarm(20)
    try:
        with pytest.raises(InputError, match="is a FIFO"):
            run()
    finally:
        signal.alarm(0)


@pytest.mark.parametrize("folder", ["out%p", "o%q{HOME}", "run%h", "x%i"])
def test_output_dir_with_ncu_placeholders_is_refused(tmp_path, folder):
    """ncu expands %p, %q{VAR}, %h, %i in -o: a -d folder named with them would scatter the
    report away from its log and analysis. Refused before ncu runs (exit 2)."""
    r = runner.invoke(app, ["profile", "-d", str(tmp_path / folder), "--dry-run", "--", "/bin/true"])
    assert r.exit_code == 2, r.output
    assert "holds '%', which ncu expands" in r.output
    assert not (tmp_path / folder).exists()


def _variant(how: str, tmp: Path) -> Path:
    """mini.raw.csv re-written as an editor, a spreadsheet or a hostile hand would."""
    import codecs

    h, u, row = _mini_rows()[:3]
    ki = h.index("Kernel Name")
    row = list(row)
    enc, bom = "utf-8", b""
    if how == "columns-reversed":
        h, u, row = h[::-1], u[::-1], row[::-1]
    elif how == "newlines-in-name":
        row[ki] = "kern<\nwith\r\nnewlines>"
    elif how == "name-of-300-kib":
        row[ki] = "k" * 300_000
    elif how == "nul-in-name":
        row[ki] = "ke\x00rnel"
    elif how == "latin-1":
        row[ki] = "k\u00e9rnel_\u00b5"
        enc = "latin-1"
    elif how in ("utf-16-bom", "utf-16-be-bom"):
        enc, bom = ("utf-16-le", codecs.BOM_UTF16_LE) if how == "utf-16-bom" else ("utf-16-be", codecs.BOM_UTF16_BE)
    elif how == "utf-8-bom":
        bom = codecs.BOM_UTF8
    s = io.StringIO()
    import csv

    csv.writer(s, quoting=csv.QUOTE_ALL).writerows([h, u, row])
    f = tmp / f"{how}.raw.csv"
    f.write_bytes(bom + s.getvalue().encode(enc))
    return f


@pytest.mark.parametrize(
    "how, name",
    [
        ("columns-reversed", "saxpy_stride"),
        ("newlines-in-name", "kern<\nwith\r\nnewlines>"),
        ("name-of-300-kib", "k" * 1000),
        ("nul-in-name", "ke\x00rnel"),
        ("latin-1", "k\ufffdrnel_\ufffd"),
        ("utf-16-bom", "saxpy_stride"),
        ("utf-16-be-bom", "saxpy_stride"),
        ("utf-8-bom", "saxpy_stride"),
    ],
)
def test_raw_csv_variants_read_as_the_original(tmp_path, how, name):
    """Columns in another order, a kernel name with quoted newlines, NULs or 300 KiB, latin-1
    bytes, UTF-16 with a byte-order mark: the launch reads with the original's numbers
    (columns reordered or a UTF-16 re-save were 'neither a report nor a CSV'; a name past
    128 KiB was 'malformed CSV')."""
    ref = runner.invoke(app, ["analyze", str(MINI), "-f", "json", "-q", "--source-csv", str(BAD / "mini.source.csv")])
    r = runner.invoke(app, ["analyze", str(_variant(how, tmp_path)), "-f", "json", "-q"])
    assert r.exit_code == 0, r.output
    k, k0 = json.loads(r.stdout)["kernels"][0], json.loads(ref.stdout)["kernels"][0]
    assert name in k["name"]
    assert k["duration_ns"] == k0["duration_ns"] and k["stall_cycle_pct"] == k0["stall_cycle_pct"]


def test_raw_csv_without_id_column_names_it(tmp_path):
    h, u, row = _mini_rows()[:3]
    keep = [j for j, c in enumerate(h) if c != "ID"]
    f = _write_csv(tmp_path / "noid.raw.csv", [[x[j] for j in keep] for x in (h, u, row)])
    r = runner.invoke(app, ["analyze", str(f), "-q"])
    assert r.exit_code == 4 and "no 'ID'/'Kernel Name' columns" in r.output, r.output
