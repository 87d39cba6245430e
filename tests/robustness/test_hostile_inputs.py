"""Hostile inputs, second pass: each test builds its hostile input at test time.

Outputs over inputs reached through a folder, the ``--list-kernels`` log and ``--name`` of
``drgpu profile``, dangling links and file modes in the atomic writer, zero-filled
``.ncu-rep`` tails, YAML alias bombs, values that used to end in an internal error (exit 70)
and CSVs re-saved in a locale's number format.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import STANDIN, run_cli, standin_profile
from drgpu_py.cli import app
from drgpu_py.io import atomic_write

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_reports"
R = SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep"
MINI = ROOT / "tests" / "data" / "bad" / "mini.raw.csv"
runner = CliRunner()


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _drgpu(*argv: str, timeout: float = 120, env: dict | None = None, cwd=None):
    return run_cli(*argv, timeout=timeout, env={**os.environ, "COLUMNS": "200", **(env or {})}, cwd=cwd)


# ---- 1. an output over a member of an input folder ------------------------------------------


def test_output_over_a_report_inside_an_input_folder_is_refused(tmp_path):
    reps = tmp_path / "reps"
    reps.mkdir()
    shutil.copy(R, reps)
    shutil.copy(SAMPLES / "serial_norm" / "serial_norm_bad.ncu-rep", reps)
    victim = reps / "serial_norm_bad.ncu-rep"
    before = _sha(victim)
    r = runner.invoke(app, ["analyze", str(reps), "-f", "json", "-o", str(victim), "--force"])
    assert r.exit_code == 6, r.output
    assert "never overwrites its inputs" in r.output
    assert _sha(victim) == before


def test_output_over_a_csv_companion_inside_an_input_folder_is_refused(tmp_path):
    reps = tmp_path / "reps"
    reps.mkdir()
    shutil.copy(MINI, reps / "a.raw.csv")
    companion = reps / "a.source.csv"
    companion.write_text("not read: a companion the reader would pick up\n")
    before = _sha(companion)
    r = runner.invoke(app, ["analyze", str(reps), "-f", "json", "-o", str(companion), "--force"])
    assert r.exit_code == 6, r.output
    assert "never overwrites its inputs" in r.output
    assert _sha(companion) == before
    # a new file in the folder is fine
    r = runner.invoke(app, ["analyze", str(reps), "-o", str(reps / "out.json")])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("cmd", ["merge", "diff"])  # list takes no thresholds: it does not analyze
def test_output_over_the_thresholds_file_is_refused(tmp_path, cmd):
    a, b = tmp_path / "a.raw.csv", tmp_path / "b.raw.csv"
    shutil.copy(MINI, a)
    shutil.copy(MINI, b)
    th = tmp_path / "t.yaml"
    th.write_text("{}\n")
    r = runner.invoke(app, [cmd, str(a), str(b), "--thresholds", str(th), "-o", str(th), "-f", "json", "--force"])
    assert r.exit_code == 6, r.output
    assert "never overwrites its inputs" in r.output and th.read_text() == "{}\n"


# ---- 2. profile --list-kernels writes its log with the guarded writer ------------------------


def _list_kernels(tmp_path: Path, *extra: str, timeout: float = 120):
    return _drgpu(
        *standin_profile(tmp_path / "out", "--list-kernels", "-q", *extra, "--", "/bin/echo", "hi", metric_set=None),
        timeout=timeout,
        env={"STANDIN_NCU_KERNELS": "gemm,softmax"},
        cwd=tmp_path,
    )


def test_list_kernels_log_is_not_replaced_without_force(tmp_path):
    (tmp_path / "out").mkdir()
    log = tmp_path / "out" / "echo.list-kernels.log"
    log.write_text("keep me\n")
    r = _list_kernels(tmp_path)
    assert r.returncode == 6, r.stderr
    assert "exists" in r.stderr and "--force" in r.stderr
    assert log.read_text() == "keep me\n"
    r = _list_kernels(tmp_path, "--force")
    assert r.returncode == 0, r.stderr
    assert "gemm" in r.stdout and "softmax" in log.read_text()


def test_list_kernels_log_never_writes_through_a_link_or_into_a_fifo(tmp_path):
    (tmp_path / "out").mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("not drgpu's\n")
    log = tmp_path / "out" / "echo.list-kernels.log"
    log.symlink_to(outside)
    r = _list_kernels(tmp_path)
    assert r.returncode == 6, r.stderr
    assert outside.read_text() == "not drgpu's\n" and log.is_symlink()
    log.unlink()
    os.mkfifo(log)
    for extra in ((), ("--force",)):
        r = _list_kernels(tmp_path, *extra, timeout=30)  # the unfixed code blocked here for ever
        assert r.returncode == 6, r.stderr
        assert "not a regular file" in r.stderr
        assert stat.S_ISFIFO(os.lstat(log).st_mode)


def test_list_kernels_log_is_written(tmp_path):
    r = _list_kernels(tmp_path)
    assert r.returncode == 0, r.stderr
    log = tmp_path / "out" / "echo.list-kernels.log"
    assert "gemm" in log.read_text()
    assert not [p for p in log.parent.iterdir() if p.name.endswith(".tmp")]


# ---- 3. profile --name, dangling -o links, modes kept by --force ------------------------------


@pytest.mark.parametrize("name", [".", "..", "a/b", "a\\b", "sub/../x"])
def test_profile_names_that_leave_the_folder_are_usage_errors(tmp_path, name):
    r = _drgpu(*standin_profile(tmp_path / "out", "--name", name, "-q", "--", "/bin/echo"), cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "--name" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "out") == []
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_output_through_a_dangling_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "out.json"
    link.symlink_to(elsewhere / "planted.json")
    for extra in ((), ("--force",)):
        r = runner.invoke(app, ["analyze", str(MINI), "-o", str(link), *extra])
        assert r.exit_code == 6, r.output
        assert "dangling" in r.output or "points to" in r.output
        assert not (elsewhere / "planted.json").exists() and link.is_symlink()


def test_force_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    out = tmp_path / "secret.json"
    out.write_text("old\n")
    out.chmod(0o600)
    atomic_write(out, "new\n", force=True)
    assert out.read_text() == "new\n" and stat.S_IMODE(out.stat().st_mode) == 0o600
    out.chmod(0o640)
    r = runner.invoke(app, ["analyze", str(MINI), "-o", str(out), "--force"])
    assert r.exit_code == 0, r.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh.json"
    old = os.umask(0o022)
    try:
        atomic_write(fresh, "x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644


# ---- 4. .ncu-rep with a zero-filled tail -------------------------------------------------------


ZERO_TAIL_LIMIT_S = 150.0


def _peak_rss_run(argv: list[str], timeout: float) -> tuple[int, str, float, int]:
    """(exit code, stderr, seconds, peak RSS in KiB) of ``drgpu ARGV`` run in a fresh wrapper
    process, so the peak is that of this one child."""
    wrapper = (
        "import os, resource, signal, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "p = subprocess.Popen(sys.argv[2:], stderr=subprocess.PIPE, text=True, start_new_session=True)\n"
        "try:\n"
        "    err = p.communicate(timeout=float(sys.argv[1]))[1]\n"
        "except subprocess.TimeoutExpired:\n"
        "    os.killpg(p.pid, signal.SIGKILL)\n"  # drgpu and its reading children
        "    err = p.communicate()[1] + '(timed out)'\n"
        "print(p.returncode, time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.stdout.write(err)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", wrapper, str(timeout), sys.executable, "-m", "drgpu_py", *argv],
        capture_output=True,
        text=True,
        timeout=timeout + 60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    first, _, rest = r.stdout.partition("\n")
    code, secs, rss = first.split()
    return int(code), rest, float(secs), int(rss)


def test_sparse_4gb_report_of_zeros_is_refused_fast_and_small(tmp_path):
    z = tmp_path / "z.ncu-rep"
    z.write_bytes(R.read_bytes()[:8])
    os.truncate(z, 4 << 30)  # sparse: no disk used
    # Generous for a loaded 2-core machine: the unfixed code ran past 180 s at 4.2 GB.
    code, err, secs, rss = _peak_rss_run(["analyze", str(z), "-q"], timeout=ZERO_TAIL_LIMIT_S)
    assert code == 4, err
    assert "zero" in err and "truncated or corrupt" in err, err
    assert secs < 60 and rss < 1_000_000, (secs, rss)
    assert "Traceback" not in err


def test_report_with_a_zero_tail_is_refused_with_the_fix(tmp_path):
    good = R.read_bytes()
    z = tmp_path / "tail.ncu-rep"
    z.write_bytes(good + b"\0" * 4096)
    r = _drgpu("analyze", str(z), "-q")
    assert r.returncode == 4, r.stderr
    assert "4,096 zero bytes" in r.stderr and f"truncate -s {len(good)}" in r.stderr, r.stderr


def test_zero_runs_inside_the_framing_are_skipped_fast(tmp_path):
    from conftest import rep_blocks as blocks_of
    from drgpu_py.sass.container import rep_blocks

    src = R.read_bytes()
    want = len(blocks_of(src))
    assert rep_blocks(R) == (want, None)
    # a run of zero words (empty blocks) between two blocks: the walk steps over it
    cut = blocks_of(src)[1][0]
    real = tmp_path / "inner.ncu-rep"
    real.write_bytes(src[:cut] + b"\0" * (4 << 20) + src[cut:])
    sparse = tmp_path / "hole.ncu-rep"
    with open(sparse, "wb") as fh:
        fh.write(src[:cut])
        fh.seek(cut + (64 << 20))  # a hole of 64 MiB, no disk used
        fh.write(src[cut:])
    for p in (real, sparse):
        t = time.monotonic()
        got = rep_blocks(p)
        assert time.monotonic() - t < 20, p
        assert got == (want, None), (p, got)


# ---- 5. YAML alias bombs ---------------------------------------------------------------------------


def _alias_bomb(top: str) -> str:
    """About 400 bytes that expand to 9**9 (387 million) strings: each level lists the one
    before nine times."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return top + "\n".join(lines) + "\n"


def test_alias_bomb_as_thresholds_file_is_a_data_error(tmp_path):
    bomb = tmp_path / "t.yaml"
    bomb.write_text(_alias_bomb("") + "thresholds: {sol_pct: *a8}\n")
    code, err, secs, rss = _peak_rss_run(["analyze", str(MINI), "--thresholds", str(bomb), "-q"], timeout=90)
    assert code == 8, err
    assert "t.yaml" in err and "alias" in err, err
    assert secs < 30 and rss < 1_000_000, (secs, rss)


def test_alias_bomb_as_metric_set_is_a_data_error(tmp_path):
    from drgpu_py.specs.metric_sets import SCHEMA

    bomb = tmp_path / "set.yaml"
    bomb.write_text(_alias_bomb(f"schema: {SCHEMA}\nname: bomb\n") + "groups: {g: {why: x, metrics: *a8}}\n")
    code, err, secs, rss = _peak_rss_run(
        ["profile", "--ncu", str(STANDIN), "--metric-set", str(bomb), "--dry-run", "--", "/bin/echo"], timeout=90
    )
    assert code == 8, err
    assert "set.yaml" in err and "alias" in err, err
    assert secs < 30 and rss < 1_000_000, (secs, rss)


def test_yaml_loader_bounds_alias_expansion_not_plain_files(tmp_path):
    from drgpu_py.errors import DataFileError
    from drgpu_py.specs import loader

    with pytest.raises(DataFileError, match="alias"):
        loader._parse(_alias_bomb(""), "bomb.yaml")
    with pytest.raises(DataFileError, match="alias"):
        loader._parse("a: &a [1, *a]\n", "loop.yaml")  # a list holding itself
    # a few aliases, as a hand-written file may use them, are fine
    doc = loader._parse("base: &b {x: 1, y: [1, 2]}\none: *b\ntwo: *b\n", "ok.yaml")
    assert doc["one"] == doc["two"] == {"x": 1, "y": [1, 2]}
    for name in ("metrics.yaml", "tree.yaml", "findings.yaml", "thresholds.yaml"):
        assert loader._read(name)


# ---- 6. what used to end in an internal error (exit 70) ---------------------------------------


@pytest.mark.parametrize("fmt", ["json", "sarif", "html", "text"])
def test_undecodable_bytes_in_a_report_name_reach_every_output_as_text(tmp_path, fmt):
    name = os.fsdecode(b"k\xff\xfe.raw.csv")  # bytes no UTF-8 decoder accepts: surrogate escapes
    rep = tmp_path / name
    shutil.copy(MINI, rep)
    out = tmp_path / f"out.{fmt}"
    r = runner.invoke(app, ["analyze", str(rep), "-f", fmt, "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    text = out.read_bytes().decode("utf-8")  # valid UTF-8
    assert "k\ufffd\ufffd" in text or fmt == "sarif", text[:300]
    if fmt in ("json", "sarif"):
        doc = json.loads(text)
        assert "\\udc" not in text and not any(0xD800 <= ord(c) <= 0xDFFF for c in json.dumps(doc, ensure_ascii=False))
    # To standard output, in a child process: its real standard output's encoding is the subject.
    r = subprocess.run(
        [sys.executable, "-m", "drgpu_py", "analyze", str(rep), "-f", fmt, "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    assert r.returncode == 0, r.stderr


def test_undecodable_kernel_names_from_a_saved_analysis_are_text(tmp_path):
    saved = tmp_path / "a.json"
    r = runner.invoke(app, ["analyze", str(MINI), "-o", str(saved), "-q"])
    assert r.exit_code == 0, r.output
    doc = json.loads(saved.read_text())
    doc["kernels"][0]["name"] = "saxpy\udcff\ud800"  # lone surrogates, as JSON escapes allow
    saved.write_text(json.dumps(doc))  # ensure_ascii: the escapes \udcff, \ud800
    for argv in (
        ["list", str(saved), "-f", "json"],
        ["diff", str(saved), str(saved), "-f", "json"],
        ["diff", str(saved), str(saved), "-f", "html"],
    ):
        out = tmp_path / ("o." + argv[-1])
        r = runner.invoke(app, [*argv, "-o", str(out), "--force"])
        assert r.exit_code == 0, (argv, r.output)
        text = out.read_bytes().decode("utf-8")
        assert "saxpy\ufffd\ufffd" in text or "saxpy\\ufffd\\ufffd" in text or argv[-1] == "html", text[:400]
        assert "\\udcff" not in text and "\\ud800" not in text


def test_integers_of_thousands_of_digits_are_usage_or_data_errors(tmp_path):
    digits = "1" * 5000
    for k in (digits, f"{digits}:", f"1:{digits}"):
        r = runner.invoke(app, ["analyze", str(MINI), "-k", k, "-q"])
        assert r.exit_code == 2, r.output
        assert "--kernel" in r.output and len(r.output) < 600, r.output
    r = runner.invoke(app, ["analyze", str(MINI), "-t", f"sol_pct={digits}", "-q"])
    assert r.exit_code == 2 and len(r.output) < 600, r.output
    th = tmp_path / "t.yaml"
    th.write_text(f"thresholds: {{sol_pct: {digits}}}\n")
    r = runner.invoke(app, ["analyze", str(MINI), "--thresholds", str(th), "-q"])
    assert r.exit_code == 8, r.output
    assert "t.yaml" in r.output and len(r.output) < 600, r.output


def test_profile_kernel_pattern_python_cannot_compile_is_a_usage_error(tmp_path):
    r = _drgpu(
        *standin_profile(tmp_path / "out", "--kernel", "a{4294967296}", "--dry-run", "--", "/bin/echo"),
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stderr
    assert "is not a valid regular expression" in r.stderr


def test_library_analyze_of_no_report_is_a_usage_error():
    import drgpu_py
    from drgpu_py.errors import UsageError

    for empty in ([], ()):
        with pytest.raises(UsageError, match="no report"):
            drgpu_py.analyze(empty)


# ---- 7. CSVs re-saved in a German locale -------------------------------------------------------


def _resave(dest: Path, fmt) -> Path:
    """MINI with every number cell of its launch rows rewritten by ``fmt(value)``, as a
    spreadsheet set to a German locale saves it (units row and text cells unchanged)."""
    import csv
    import io

    from drgpu_py.readers.locale_numbers import to_number

    rows = list(csv.reader(io.StringIO(MINI.read_text(encoding="utf-8"))))
    ident = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Device", "CC"}
    keep = {j for j, h in enumerate(rows[0]) if h in ident or h.endswith("Size")}
    for row in rows[2:]:
        for j, c in enumerate(row):
            v = to_number(c)
            if j not in keep and v == v and c.strip():
                row[j] = fmt(v)
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    dest.write_text(out.getvalue(), encoding="utf-8")
    return dest


def _german(v: float, decimals: int, group: bool) -> str:
    text = f"{v:,.{decimals}f}" if group else f"{v:.{decimals}f}"
    return text.replace(",", "_").replace(".", ",").replace("_", ".")


@pytest.mark.parametrize(
    "label, fmt",
    [
        ("three decimals, below 1000", lambda v: _german(v % 1000, 3, False)),
        ("three decimals, no grouping", lambda v: _german(v, 3, False)),
        # no '0,000' and nothing over 999: the units row tells ('%' cells of 1,000 % or more)
        ("three decimals, 1 to 999, zeros as 0", lambda v: _german(1 + v % 998, 3, False) if v else "0"),
        ("three decimals, grouped", lambda v: _german(v, 3, True)),
        ("whole numbers, thousands dots", lambda v: _german(round(v), 0, True)),
        ("whole numbers over 1000, thousands dots", lambda v: _german(round(v) + 1000, 0, True)),
    ],
)
def test_csv_resaved_in_a_german_locale_is_refused(tmp_path, label, fmt):
    csv_path = _resave(tmp_path / "de.raw.csv", fmt)
    r = runner.invoke(app, ["analyze", str(csv_path), "-f", "json", "-q"])
    assert r.exit_code == 4, (label, r.output[:2000])
    assert "locale" in r.output and "--csv" in r.output, r.output


def test_ncu_formatted_csv_with_thousands_commas_is_still_read(tmp_path):
    # the same cells in ncu's own format (1,234.56; 94,912 is 94912) are analyzed as before
    csv_path = _resave(tmp_path / "en.raw.csv", lambda v: f"{v:,.2f}" if v != int(v) else f"{int(v):,}")
    r = runner.invoke(app, ["analyze", str(csv_path), "-f", "json", "-q"])
    assert r.exit_code == 0, r.output
    base = runner.invoke(app, ["analyze", str(MINI), "-f", "json", "-q"])
    a, b = json.loads(r.stdout), json.loads(base.stdout)
    assert a["kernels"][0]["duration_ns"] == pytest.approx(b["kernels"][0]["duration_ns"], rel=1e-3)
