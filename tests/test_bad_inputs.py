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
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from drgpu_py.cli import app
from drgpu_py.errors import ALL_ERRORS, OutputError
from drgpu_py.io import atomic_write

ROOT = Path(__file__).resolve().parent.parent
BAD = ROOT / "tests" / "data" / "bad"
CASES = yaml.safe_load((BAD / "cases.yaml").read_text(encoding="utf-8"))["cases"]
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
KIND_OF = {e.exit_code: e.kind for e in ALL_ERRORS}
runner = CliRunner()


# ---- building the inputs ---------------------------------------------------------------------

def _blocks(buf: bytes) -> list[tuple[int, int]]:
    """(start, end) of each block of an intact .ncu-rep (see readers.common.rep_framing_problem)."""
    from drgpu_py.readers.common import _payload_size
    (hlen,) = struct.unpack("<I", buf[4:8])
    pos, out = 8 + hlen, []
    while pos < len(buf):
        (n,) = struct.unpack("<I", buf[pos:pos + 4])
        end = pos + 4 + n + _payload_size(buf[pos + 4:pos + 4 + n])
        out.append((pos, end))
        pos = end
    return out


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
        launch = max(_blocks(src), key=lambda se: se[1] - se[0])  # the launch is the big block
        piece = src[launch[0]:launch[1]]
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


@pytest.mark.parametrize("case", [c for c in CASES if c["id"] in
                                  ("ncu-rep-truncated-in-launch", "hostile-names",
                                                 "source-csv-infinite-values")],
                         ids=_case_id)
def test_real_process_has_clean_stderr(case, tmp_path):
    """The installed entry point, as a user runs it: no traceback, no native library log."""
    argv, _ = prepare(case, tmp_path)
    p = subprocess.run([sys.executable, "-m", "drgpu_py", *argv], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
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


@pytest.mark.parametrize("name", ["long_name.raw.csv", "non_utf8.raw.csv", "nul_bytes.raw.csv", "weird_numbers.raw.csv"])
def test_odd_inputs_render_in_every_text_format(name):
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report
    from drgpu_py.render import RenderOptions, formats, render
    a = analyze(open_report(BAD / name))
    for fmt in ("json", "text", "html", "dot"):
        if fmt not in formats():
            continue
        out = render(a, fmt, RenderOptions())
        assert isinstance(out, str) and out
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
        raise KeyboardInterrupt if signum == 2 else Terminated(signum)   # Ctrl-C, SIGTERM, SIGHUP
    monkeypatch.setattr(os, "replace", interrupted)
    monkeypatch.setattr(os, "link", interrupted)   # a new output is linked into place
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


@pytest.mark.parametrize("rel", ["sample_reports/few_blocks/few_blocks_bad.ncu-rep",
                                 "sample_reports/few_blocks/few_blocks_bad.raw.csv"])
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
    from drgpu_py.cli import EXIT_INTERNAL
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
    import subprocess
    import sys
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
    argv = {"report": ["analyze", str(special)], "thresholds": ["analyze", rep, "--thresholds", str(special)],
            "baseline": ["diff", str(special), rep]}[where]
    r = subprocess.run([sys.executable, "-m", "drgpu_py", *argv], capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and ("FIFO" in r.stderr or "device" in r.stderr or "socket" in r.stderr), r.stderr


@pytest.mark.parametrize("argv, needle", [
    (["analyze", "R", "-t", "no_such_key=1"], "unknown key 'no_such_key'"),
    (["analyze", "R", "-t", "sol_pct=nan"], "finite number >= 0"),
    (["analyze", "R", "-t", "sol_pct=-5"], "finite number >= 0"),
    (["analyze", "R", "--fold", "5"], "--fold is a share between 0 and 1"),
    (["analyze", "R", "--top", "-1"], "--top must be 0 or more"),
])
def test_option_values_are_usage_errors(argv, needle):
    """Unknown threshold keys and out-of-range option values: exit 2 with a clear line."""
    import subprocess
    import sys
    from conftest import report_path
    argv = [str(report_path("aos_gather", "bad")) if a == "R" else a for a in argv]
    r = subprocess.run([sys.executable, "-m", "drgpu_py", *argv], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_version_and_short_help():
    import subprocess
    import sys
    from drgpu_py import __version__
    for argv in (["--version"], ["-V"]):
        r = subprocess.run([sys.executable, "-m", "drgpu_py", *argv], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == f"drgpu {__version__}"
    for argv in (["-h"], ["analyze", "-h"], ["profile", "-h"], ["diff", "-h"]):
        r = subprocess.run([sys.executable, "-m", "drgpu_py", *argv], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "Usage:" in r.stdout, argv


@pytest.mark.parametrize("target", ["device", "fifo", "link-to-device", "link-to-file"])
def test_force_never_replaces_special_files(tmp_path, target):
    """-o onto a device, FIFO or a link to one is refused even with --force (exit 6), and the
    node stays; a link to a regular file is written through (the link stays a link)."""
    import os
    import subprocess
    import sys
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
    r = subprocess.run([sys.executable, "-m", "drgpu_py", "analyze", rep, "-f", "json", "-o", str(out), "--force"],
                       capture_output=True, text=True, timeout=120)
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
    import subprocess
    import sys
    rows = list(_csv.reader(open(BAD / "mini.raw.csv", newline="", encoding="utf-8")))
    col = rows[0].index("Kernel Name")
    for r in rows[2:]:
        if len(r) > col:
            r[col] = "evil\x1b]0;pwned\x07\x1b[31mred\u202etxt"
    bad = tmp_path / "evil.raw.csv"
    with open(bad, "w", newline="", encoding="utf-8") as fh:
        _csv.writer(fh).writerows(rows)
    r = subprocess.run([sys.executable, "-m", "drgpu_py", "analyze", str(bad), "-q"], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
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
    buf[elf + 63] = 230   # e_shstrndx's high byte of the ELF64 header
    dest.write_bytes(bytes(buf))
    return dest


def _drgpu(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "drgpu_py", *argv], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=300)


@pytest.fixture(scope="module")
def crashing(tmp_path_factory) -> Path:
    rep = _crashing_report(tmp_path_factory.mktemp("crash") / "k.ncu-rep")
    direct = _drgpu("analyze", str(rep), "-q", env={"DRGPU_READ_IN_PROCESS": "1"})
    if direct.returncode != -11:   # the case is real only while this ncu_report crashes on it
        pytest.skip(f"this ncu_report does not crash on the damaged byte (rc {direct.returncode})")
    return rep


@pytest.mark.parametrize("cmd", ["analyze", "list", "diff"])
def test_native_reader_crash_is_a_format_error(crashing, cmd):
    argv = [cmd, str(crashing)] + ([str(crashing)] if cmd == "diff" else []) + (["-q"] if cmd == "analyze" else [])
    r = _drgpu(*argv)
    assert r.returncode == 4, (r.returncode, r.stderr)
    assert f"drgpu: format: {crashing} is corrupt: ncu_report crashed reading it (signal 11, SIGSEGV)" in r.stderr
    assert "Traceback" not in r.stderr


def test_native_crash_of_the_line_table_is_a_note(crashing, tmp_path):
    src = ROOT / "sample_reports" / "fma_chain"
    for sfx in ("raw.csv", "source.csv"):
        shutil.copy(src / f"fma_chain_bad.{sfx}", tmp_path / f"k.{sfx}")
    shutil.copy(crashing, tmp_path / "k.ncu-rep")
    r = _drgpu("analyze", str(tmp_path / "k.raw.csv"), "-f", "json", "-q")
    assert r.returncode == 0, r.stderr
    notes = _all_notes(json.loads(r.stdout))
    assert any("line table of k.ncu-rep unreadable" in n and "ncu_report crashed" in n for n in notes), notes


@pytest.mark.parametrize("report", ["tests/data/bad/long_name.raw.csv", "sample_reports/fma_chain/fma_chain_bad.ncu-rep"])
@pytest.mark.parametrize("pattern, needle", [(r"(.+)+\x00", "took over 2 s to match"),
                                             ("a{4294967296}", "is not a valid regular expression")])
def test_kernel_patterns_that_hang_or_overflow_are_usage_errors(report, pattern, needle):
    """A catastrophic pattern (nested quantifiers on long names) is stopped after its time
    budget; a repeat count Python cannot compile is refused (it was exit 70)."""
    import time
    t0 = time.monotonic()
    r = runner.invoke(app, ["analyze", str(ROOT / report), "-k", pattern, "-q"])
    assert r.exit_code == 2, r.output
    assert needle in r.output and "internal" not in r.output
    assert time.monotonic() - t0 < 120   # 2 s budget per pass; the rest is reading, on a loaded machine
