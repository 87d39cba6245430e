"""Hostile inputs beyond the damaged-file corpus: odd file kinds and names, outputs that cannot
or must not be written, ``drgpu profile`` with a misbehaving ncu (the stand-in), and markup or
DOT syntax in every text drgpu renders, checked in a real browser's DOM and by ``dot``.

Each case has one documented outcome (docs/errors.md): a clean error (one ``drgpu: KIND:``
line, the documented exit code, nothing written) or an analysis, partial (a note says what
is missing) or full. The lists below are the cases; ``test_counts_in_docs`` checks the
counts table in docs/errors.md against them, the bad-input corpus (tests/data/bad/cases.yaml)
and the damaged-report sweep (tests/robustness/test_rep_fuzz.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import run_cli

# Slow, left out of the fast tier (pytest -m "not slow"): the hostile corpus, every input through every command.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
STANDIN = ROOT / "tests" / "standin" / "ncu"
REP = ROOT / "sample_reports" / "launch" / "serial_steps_floor.ncu-rep"  # small: 2 launches
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "COLUMNS": "120"}


def drgpu(*argv, cwd=None, env=None, timeout=300):
    return run_cli(*argv, cwd=cwd or ROOT, env={**ENV, **(env or {})}, timeout=timeout)


def assert_clean_error(p, code: int, needle: str) -> None:
    lines = p.stderr.splitlines()
    assert p.returncode == code, (p.returncode, p.stderr[-3000:])
    assert "Traceback" not in p.stderr and lines and lines[0].startswith("drgpu: "), p.stderr[-3000:]
    assert needle in lines[0], p.stderr
    assert len(lines) <= 2 and "\x1b" not in p.stderr, p.stderr


def _copy_csv(dest_stem: Path) -> Path:
    """mini.raw.csv (and its source page) as DEST_STEM.raw.csv / .source.csv."""
    shutil.copy(BAD / "mini.raw.csv", f"{dest_stem}.raw.csv")
    shutil.copy(BAD / "mini.source.csv", f"{dest_stem}.source.csv")
    return Path(f"{dest_stem}.raw.csv")


# ---- file kinds and names ----------------------------------------------------------------------
# (id, outcome, expected): outcome error -> (exit, message); partial -> a note; full -> a kernel name.
FILES = [
    ("csv-named-ncu-rep", "partial", "no source-page CSV"),
    ("report-named-csv", "full", "empty_kernel"),
    ("dev-zero", "error", (3, "is a device")),
    ("symlink-loop", "error", (3, "Too many levels of symbolic links")),
    ("name-too-long", "error", (3, "File name too long")),
    ("path-of-3900-characters", "full", "saxpy_stride"),
    ("spaces-in-name", "full", "saxpy_stride"),
    ("newline-in-name", "full", "saxpy_stride"),
    ("unicode-name", "full", "saxpy_stride"),
    ("leading-dash-after-double-dash", "full", "saxpy_stride"),
    ("leading-dash-as-dot-slash", "full", "saxpy_stride"),
    ("leading-dash-bare", "error", (2, "Missing argument 'REPORT'")),
    ("missing-name-with-control-characters", "error", (3, "no such file")),
]


def _file_case(case: str, tmp: Path) -> list[str]:
    """The argv after ``analyze`` for a case (inputs made in ``tmp``)."""
    if case == "csv-named-ncu-rep":
        shutil.copy(BAD / "mini.raw.csv", tmp / "x.ncu-rep")
        return [tmp / "x.ncu-rep"]
    if case == "report-named-csv":
        shutil.copy(REP, tmp / "x.raw.csv")
        return [tmp / "x.raw.csv"]
    if case == "dev-zero":
        return ["/dev/zero"]
    if case == "symlink-loop":
        (tmp / "a.ncu-rep").symlink_to(tmp / "b.ncu-rep")
        (tmp / "b.ncu-rep").symlink_to(tmp / "a.ncu-rep")
        return [tmp / "a.ncu-rep"]
    if case == "name-too-long":
        return [tmp / ("n" * 300 + ".ncu-rep")]
    if case == "path-of-3900-characters":
        deep = tmp
        while len(str(deep)) < 3700:
            deep = deep / ("d" * 200)
        deep.mkdir(parents=True)
        return [_copy_csv(deep / "mini")]
    if case == "spaces-in-name":
        return [_copy_csv(tmp / "my  report (v2)")]
    if case == "newline-in-name":
        return [_copy_csv(tmp / "two\nlines")]
    if case == "unicode-name":
        return [_copy_csv(tmp / "ядро_⚡_名前_é")]
    if case == "leading-dash-after-double-dash":
        return ["--", _copy_csv(tmp / "-k")]
    if case == "leading-dash-as-dot-slash":
        _copy_csv(tmp / "-k")
        return ["./-k.raw.csv"]
    if case == "leading-dash-bare":
        _copy_csv(tmp / "-k")
        return ["-k.raw.csv"]
    if case == "missing-name-with-control-characters":
        return [tmp / "no\nsuch\x1b[31m\u202efile.ncu-rep"]
    raise ValueError(case)


@pytest.mark.parametrize("case, outcome, expected", FILES, ids=[c[0] for c in FILES])
def test_file_kinds_and_names(tmp_path, case, outcome, expected):
    args = _file_case(case, tmp_path)
    p = drgpu("analyze", "-f", "json", *args, cwd=tmp_path)
    if outcome == "error":
        code, needle = expected
        if case == "leading-dash-bare":
            # read as the option -k with the value '.raw.csv': the command line parser's usage error
            assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr
            return
        assert_clean_error(p, code, needle)
        assert p.stdout == ""
        if case == "missing-name-with-control-characters":
            assert "no\\x0asuch\\x1b[31m\\u202efile" in p.stderr  # shown as escapes, on one line
        return
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr
    d = json.loads(p.stdout)
    notes = list(d["notes"]) + [n for k in d["kernels"] for n in k["notes"]]
    if outcome == "partial":
        assert any(expected in n for n in notes), notes
    else:
        assert expected in d["kernels"][0]["name"]
        # the source page beside a raw CSV is found whatever the name holds
        assert not any("no source-page CSV" in n for n in notes) or case == "report-named-csv", notes


# ---- outputs ---------------------------------------------------------------------------------------
OUTPUTS = [
    ("output-is-the-input", "error", (6, "drgpu never overwrites its inputs")),
    ("output-is-a-link-to-the-input", "error", (6, "drgpu never overwrites its inputs")),
    ("output-dev-full", "error", (6, "not a regular file")),
    ("full-filesystem", "error", (6, "No space left on device")),
    ("read-only-filesystem", "error", (6, "cannot write")),
    ("two-runs-same-output-force", "full", "both write; the file is one run's complete output"),
    ("two-runs-same-output", "error", (6, "exists")),
    ("sigint-while-writing-html", "error", (130, "interrupted")),
    ("sigterm-while-writing-json", "error", (143, "interrupted")),
    ("sigterm-while-replacing-an-output", "error", (143, "interrupted")),
]


def _tmpfs(where: Path, *opts: str) -> bool:
    where.mkdir()
    if not AS_ROOT or not shutil.which("mount"):
        return False
    p = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(("size=64k",) + opts), "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    return p.returncode == 0


def _umount(where: Path) -> None:
    subprocess.run(["umount", str(where)], capture_output=True)


# Writes in small slow pieces, so that a signal sent while the temporary file grows arrives
# in the middle of the write (the file is written in one call otherwise).
_SLOW_WRITER = """
import os, sys, time
real = os.fdopen
class Slow:
    def __init__(self, fh): self.fh = fh
    def __enter__(self): return self
    def __exit__(self, *e): self.fh.close()
    def __getattr__(self, name): return getattr(self.fh, name)
    def write(self, data):
        for i in range(0, len(data), 2048):
            self.fh.write(data[i:i + 2048]); self.fh.flush(); time.sleep(0.01)
def fdopen(fd, *a, **k):
    fh = real(fd, *a, **k)
    return Slow(fh) if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp") else fh
os.fdopen = fdopen
sys.argv[0] = "drgpu"
from drgpu_py.cli import main
main()
"""


def _interrupt_while_writing(tmp: Path, out: Path, sig: int, extra=()) -> subprocess.Popen:
    p = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _SLOW_WRITER,
            "analyze",
            str(ROOT / "sample_reports/aos_gather/aos_gather_bad.ncu-rep"),
            "-o",
            str(out),
            *extra,
        ],
        cwd=tmp,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        tmps = [f for f in tmp.iterdir() if f.name.endswith(".tmp")]
        if tmps and tmps[0].stat().st_size > 8192:
            os.killpg(p.pid, sig)
            break
        if p.poll() is not None:
            pytest.fail(f"drgpu finished before the signal: {p.returncode} {p.stderr.read()[-2000:]}")
        time.sleep(0.02)
    else:
        os.killpg(p.pid, signal.SIGKILL)
        pytest.fail("no temporary output file appeared")
    p.wait(timeout=60)
    return p


@pytest.mark.parametrize("case, outcome, expected", OUTPUTS, ids=[c[0] for c in OUTPUTS])
def test_outputs(tmp_path, case, outcome, expected):
    csv = _copy_csv(tmp_path / "in")
    before = csv.read_bytes()
    if case in ("output-is-the-input", "output-is-a-link-to-the-input", "output-dev-full"):
        out = {"output-is-the-input": csv, "output-dev-full": Path("/dev/full")}.get(case, tmp_path / "link.json")
        if case == "output-is-a-link-to-the-input":
            out.symlink_to(csv)
        p = drgpu("analyze", csv, "-f", "json", "-o", out, "--force")
        assert_clean_error(p, *expected)
        assert csv.read_bytes() == before and Path("/dev/full").is_char_device()
    elif case in ("full-filesystem", "read-only-filesystem"):
        mnt = tmp_path / "mnt"
        if not _tmpfs(mnt, *(("ro",) if case == "read-only-filesystem" else ())):
            pytest.skip("needs root and tmpfs mounts (a 64 KiB file system) to fill or to mount read-only")
        try:
            p = drgpu("analyze", ROOT / "sample_reports/aos_gather/aos_gather_bad.ncu-rep", "-o", mnt / "report.html")
            assert_clean_error(p, *expected)
            assert list(mnt.iterdir()) == []  # no partial file, no temporary file
        finally:
            _umount(mnt)
    elif case.startswith("two-runs"):
        out = tmp_path / "out.json"
        force = ["--force"] if case.endswith("force") else []
        # Child processes: two drgpu processes writing one output at once are the subject.
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "drgpu_py", "analyze", str(csv), "-o", str(out), *force],
                cwd=tmp_path,
                env=ENV,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        codes = sorted(pr.wait(timeout=300) for pr in procs)
        errs = [pr.stderr.read() for pr in procs]
        assert "Traceback" not in "".join(errs), errs
        assert codes == ([0, 0] if force else [0, 6]), (codes, errs)
        if not force:
            assert any("exists" in e for e in errs), errs
        assert json.loads(out.read_text())["kernels"][0]["name"].startswith("saxpy_stride")
        assert sorted(f.name for f in tmp_path.iterdir()) == ["in.raw.csv", "in.source.csv", "out.json"]
    else:
        sig = signal.SIGINT if case.startswith("sigint") else signal.SIGTERM
        out = tmp_path / ("r.html" if case.endswith("html") else "r.json")
        extra = []
        if case == "sigterm-while-replacing-an-output":
            out.write_text("the earlier output\n")
            extra = ["--force"]
        p = _interrupt_while_writing(tmp_path, out, sig, extra)
        err = p.stderr.read()
        assert p.returncode == expected[0], (p.returncode, err[-2000:])
        assert err.startswith("drgpu: interrupted") and "Traceback" not in err, err
        left = sorted(f.name for f in tmp_path.iterdir())
        assert not [f for f in left if f.endswith(".tmp")], left
        if extra:
            assert out.read_text() == "the earlier output\n"
        else:
            assert not out.exists()


# ---- drgpu profile with a misbehaving ncu (the stand-in) ---------------------------------------------
PROFILE = [
    ("arguments-reach-ncu-byte-for-byte", "full", "scale_keys_aos"),
    ("output-folder-with-shell-syntax", "full", "scale_keys_aos"),
    ("ncu-exits-0-without-a-report", "error", (10, "ncu profiled 1 kernel launch but wrote no report")),
    ("ncu-writes-a-truncated-report", "error", (10, "is truncated or corrupt")),
    ("ncu-floods-its-console", "full", "scale_keys_aos"),
]
# Cases of this group tested elsewhere: (test file, test function, outcome).
PROFILE_ELSEWHERE = [
    ("tests/e2e/test_profile.py", "test_timeout_stops_a_hanging_ncu", "error"),
    ("tests/robustness/test_profile_edges.py", "test_ncu_dying_of_a_signal_after_its_report_is_exit_10", "error"),
    ("tests/robustness/test_profile_edges.py", "test_ncu_dying_of_a_signal_without_a_report_names_it", "error"),
    ("tests/robustness/test_profile_edges.py", "test_ncu_leaving_a_fifo_as_its_report_is_refused_not_opened", "error"),
    (
        "tests/robustness/test_profile_edges.py",
        "test_a_fifo_at_an_output_path_is_refused_before_ncu_runs_even_with_force",
        "error",
    ),
]

WEIRD_ARGS = [
    "two words",
    'it\'s "quoted"',
    "a;b",
    "$(touch pwned)",
    "`touch pwned2`",
    "*",
    "?.cu",
    "",
    "-x",
    "--",
    "--flag=x y",
    "line\nbreak",
    "ünï⚡",
    "\\",
    "'",
    "|&>",
]


@pytest.mark.parametrize("case, outcome, expected", PROFILE, ids=[c[0] for c in PROFILE])
def test_profile_with_a_misbehaving_ncu(tmp_path, case, outcome, expected):
    env = {"STANDIN_NCU_SCENARIO": "ok", "STANDIN_NCU_ARGV_OUT": str(tmp_path / "ncu_argv.json")}
    outdir = tmp_path / "out"
    app = ["/bin/echo", "hi"]
    if case == "arguments-reach-ncu-byte-for-byte":
        script = tmp_path / "app.py"
        script.write_text("import json, sys\njson.dump(sys.argv[1:], open('app_argv.json', 'w'))\n")
        app = [sys.executable, str(script), *WEIRD_ARGS]
    elif case == "output-folder-with-shell-syntax":
        outdir = tmp_path / "o u;t $(touch pwned) `touch pwned2` *?[x] -d"
    elif case == "ncu-exits-0-without-a-report":
        env["STANDIN_NCU_SCENARIO"] = "no_report"
    elif case == "ncu-writes-a-truncated-report":
        env["STANDIN_NCU_SCENARIO"] = "truncated"
    elif case == "ncu-floods-its-console":
        env.update(STANDIN_NCU_SCENARIO="flood", STANDIN_NCU_FLOOD_MB="8")
    p = drgpu("profile", "--ncu", STANDIN, "--metric-set", "gh100", "-d", outdir, "--", *app, cwd=tmp_path, env=env)
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    stem = Path(app[0]).name if app[0] != sys.executable else Path(sys.executable).name
    if outcome == "error":
        assert p.returncode == expected[0], (p.returncode, p.stderr[-3000:])
        assert "drgpu: profiler: " in p.stderr and expected[1] in p.stderr, p.stderr[-3000:]
        assert (outdir / f"{stem}.ncu.log").is_file() and (outdir / f"{stem}.profile.json").is_file()
        if case == "ncu-writes-a-truncated-report":
            assert (outdir / f"{stem}.ncu-rep").is_file()  # kept, and named in the message
        return
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads((outdir / f"{stem}.json").read_text())
    assert doc["kernels"][0]["name"].startswith(expected)
    if case == "arguments-reach-ncu-byte-for-byte":
        assert json.loads((tmp_path / "app_argv.json").read_text()) == WEIRD_ARGS
        ncu_argv = json.loads((tmp_path / "ncu_argv.json").read_text())
        assert ncu_argv[-len(WEIRD_ARGS) - 2 :] == [sys.executable, str(script), *WEIRD_ARGS]
    if case == "ncu-floods-its-console":
        log = (outdir / f"{stem}.ncu.log").stat().st_size
        assert log > 8 << 20, log  # the log keeps everything
        assert len(p.stdout) + len(p.stderr) < 64 << 10, (len(p.stdout), len(p.stderr))
        assert "the rest is in ncu's log only" in p.stdout + p.stderr
        rec = json.loads((outdir / f"{stem}.profile.json").read_text())
        assert len(rec["ncu_warnings"]) <= 101 and rec["ncu_messages_dropped"] > 10_000


# ---- injection: markup and DOT syntax in every rendered text -------------------------------------
HOSTILE = (
    'k</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '<svg onload="window.__pwned=3"/>"]; n1 -> n2 [label="pwn"]; }{ \\" \x00 \u202etxt'
)
INJECTION = [
    ("html-in-chromium", "full", "no injected element runs or exists"),
    ("dot-parses", "full", "dot reads the graph; no injected node or edge"),
]


@pytest.fixture(scope="module")
def hostile_analysis():
    """A real report (with source lines) whose kernel name, file name, source lines and SASS
    text are replaced with markup, DOT syntax, a NUL and a right-to-left override."""
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    prof = open_report(ROOT / "sample_reports/aos_gather/aos_gather_bad.ncu-rep")
    for k in prof.kernels:
        k.name = k.mangled = HOSTILE
        k.process = HOSTILE
        files = {f: f"/src/{HOSTILE}{i}.cu" for i, f in enumerate(k.source_text)}
        k.source_text = {
            files[f]: [f"{HOSTILE} line {j}" for j, _ in enumerate(lines)] for f, lines in k.source_text.items()
        }
        ins = k.instructions
        if "file" in ins:
            ins["file"] = ins["file"].map(lambda f, files=files: files.get(f, f))
        if "sass" in ins:
            ins["sass"] = [f"{s} {HOSTILE}" if j % 3 == 0 else s for j, s in enumerate(ins["sass"])]
        assert files, "the sample must carry source files for this test"
    return analyze(prof)


@pytest.mark.parametrize("case, outcome, expected", INJECTION, ids=[c[0] for c in INJECTION])
def test_injection(tmp_path, hostile_analysis, case, outcome, expected):
    from drgpu_py.render import RenderOptions, render

    if case == "dot-parses":
        if not shutil.which("dot"):
            pytest.skip("Graphviz dot is not installed")
        dot = render(hostile_analysis, "dot", RenderOptions())
        p = subprocess.run(["dot", "-Tplain"], input=dot, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        nodes = [ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith("node ")]
        assert "n1" not in nodes and "n2" not in nodes, "DOT syntax in a name made nodes"
        assert not any(ln.startswith("edge ") and "pwn" in ln for ln in p.stdout.splitlines())
        return
    from chromium import Chrome, find_browser

    exe = find_browser()
    if exe is None:
        pytest.skip("Chromium is not installed")
    pytest.importorskip("websocket")
    html = tmp_path / "hostile.html"
    html.write_text(render(hostile_analysis, "html", RenderOptions()), encoding="utf-8")
    c = Chrome(exe)
    try:
        c.load(html.as_uri())
        time.sleep(0.5)
        # expand every collapsed part, so lazily rendered trees are in the DOM too
        c.eval("document.querySelectorAll('details').forEach(d => d.open = true); true")
        time.sleep(0.3)
        assert c.eval("window.__pwned === undefined"), "an injected script or handler ran"
        assert c.eval("document.querySelectorAll('img[onerror], svg[onload], img[src=\"x\"]').length") == 0
        n_scripts = c.eval("Array.from(document.scripts).filter(s => s.textContent.includes('__pwned')).length")
        assert n_scripts == 0, "an injected <script> element exists"
        text = c.eval("document.body.innerText")
        assert "window.__pwned=1" in text and "<img src=x" in text, "the hostile text is not shown as text"
    finally:
        c.close()


# ---- the counts in docs/errors.md ----------------------------------------------------------------------


def doc_counts() -> dict[str, dict[str, int]]:
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    section = text.split("## Hostile-input corpus: counts", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in rows[0].strip("|").split("|")]
    out = {}
    for ln in rows[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        out[cells[0]] = {h: int(v) for h, v in zip(head[1:], cells[1:]) if v.isdigit()}
    return out


def _count(cases) -> dict[str, int]:
    outcomes = [c[1] if isinstance(c, tuple) else c for c in cases]
    return {
        "cases": len(outcomes),
        "clean errors": outcomes.count("error"),
        "partial analyses": outcomes.count("partial"),
        "full analyses": outcomes.count("full"),
    }


def expected_counts() -> dict[str, dict[str, int]]:
    corpus = yaml.safe_load((BAD / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    for path, fn, _ in PROFILE_ELSEWHERE:
        assert f"def {fn}(" in (ROOT / path).read_text(), (path, fn)
    return {
        "bad-input corpus (`tests/data/bad/cases.yaml`)": _count(["error" if c["exit"] else "partial" for c in corpus]),
        "file kinds and names": _count(FILES),
        "outputs": _count(OUTPUTS),
        "`drgpu profile` with a misbehaving ncu": _count(PROFILE + [(f, o) for _, f, o in PROFILE_ELSEWHERE]),
        "injection (HTML in Chromium, DOT)": _count(INJECTION),
    }


def test_counts_in_docs():
    from test_rep_fuzz import mutations

    doc = doc_counts()
    for group, want in expected_counts().items():
        got = doc.get(group)
        assert got is not None, f"docs/errors.md has no counts row for {group!r}"
        assert got == want, f"docs/errors.md counts for {group!r} say {got}, the cases give {want}: update the table"
    for label, full in (("`.ncu-rep` sweep, bounded (CI)", False), ("`.ncu-rep` sweep, full", True)):
        row = doc[label]
        assert row["cases"] == len(mutations(full)) == sum(v for k, v in row.items() if k != "cases"), (label, row)
