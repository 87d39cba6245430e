"""Signals at every step of an output write (docs/errors.md, "Guarantees": outputs are
written to a temporary file and renamed): late in the write, a second signal while the
temporary file is removed, a signal as it is created and as it is renamed into place. Each
must end in the documented code (128 + the signal) with the output complete or absent and
no temporary file left.

The steps are made slow by a hook in the drgpu process (``_HOOKED``: the write in 2 KiB
pieces, or a pause right after the creating ``os.open``, before ``os.unlink`` or after the
renaming ``os.link``/``os.replace`` of a ``.tmp`` file), and the signal is sent when a
marker file says the step is under way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli

# Slow, left out of the fast tier (pytest -m "not slow"): signals at each step of writing an output, each a process.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REP = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "COLUMNS": "120"}

_HOOKED = """
import os, sys, time
hook, marks = os.environ["HOOK"], os.environ["MARKS"]
# How long a hooked step pauses: the test polls for the marker every 5 ms, so half a second
# leaves it a hundred looks before the step goes on.
PAUSE = 0.5

def mark(name):
    open(os.path.join(marks, name), "w").close()

def is_tmp(path):
    return str(path).endswith(".tmp")

real_fdopen, real_open, real_unlink = os.fdopen, os.open, os.unlink
real_link, real_replace = os.link, os.replace

class Slow:
    def __init__(self, fh): self.fh = fh
    def __enter__(self): return self
    def __exit__(self, *e): self.fh.close()
    def __getattr__(self, name): return getattr(self.fh, name)
    def write(self, data):
        for i in range(0, len(data), 2048):
            self.fh.write(data[i:i + 2048]); self.fh.flush(); time.sleep(0.01)

def fdopen(fd, *a, **k):
    fh = real_fdopen(fd, *a, **k)
    return Slow(fh) if is_tmp(os.readlink(f"/proc/self/fd/{fd}")) else fh

def open_(path, *a, **k):
    fd = real_open(path, *a, **k)
    if hook == "create" and is_tmp(path):
        mark("created"); time.sleep(PAUSE)
    return fd

def unlink(path, *a, **k):
    if is_tmp(path):
        mark("unlinking"); time.sleep(PAUSE)
    return real_unlink(path, *a, **k)

def link(src, dst, *a, **k):
    real_link(src, dst, *a, **k)
    if is_tmp(src):
        mark("renamed"); time.sleep(PAUSE)

def replace(src, dst, *a, **k):
    real_replace(src, dst, *a, **k)
    if is_tmp(src):
        mark("renamed"); time.sleep(PAUSE)

os.fdopen, os.open, os.unlink, os.link, os.replace = fdopen, open_, unlink, link, replace
if hook == "exit":
    import typer

    class SlowExit(typer.Exit):  # the command's body has ended: drgpu is on its way out
        def __init__(self, *a, **k):
            mark("exiting"); time.sleep(PAUSE); super().__init__(*a, **k)

    typer.Exit = SlowExit
sys.argv[0] = "drgpu"
from drgpu_py.cli import main
main()
"""


def _start(tmp: Path, hook: str, out: Path, *extra, command=("analyze", str(REP))) -> subprocess.Popen:
    marks = tmp / "marks"
    marks.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-c", _HOOKED, *command, "-o", str(out), *extra],
        cwd=out.parent,
        env={**ENV, "HOOK": hook, "MARKS": str(marks)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # signalled as a group, as a terminal's Ctrl-C is
    )


def _wait_for(p: subprocess.Popen, ready, what: str) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if ready():
            return
        if p.poll() is not None:
            pytest.fail(f"drgpu finished before {what}: {p.returncode} {p.stderr.read()[-2000:]}")
        time.sleep(0.005)
    os.killpg(p.pid, signal.SIGKILL)
    pytest.fail(f"no {what}")


def _temps(folder: Path) -> list[Path]:
    return [f for f in folder.iterdir() if f.name.endswith(".tmp")]


def _tmp_size(folder: Path) -> int:
    for f in _temps(folder):
        try:
            return f.stat().st_size
        except FileNotFoundError:
            pass
    return -1


@pytest.fixture(scope="module")
def html_size(tmp_path_factory) -> int:
    """The complete page's size: the signal is sent at a share of it."""
    out = tmp_path_factory.mktemp("full") / "full.html"
    p = run_cli("analyze", str(REP), "-o", str(out), env=ENV, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return out.stat().st_size


def _check_left(folder: Path, out: Path, earlier: str | None = None) -> None:
    assert not _temps(folder), sorted(f.name for f in folder.iterdir())
    if out.exists() and earlier is not None and out.read_text() == earlier:
        return
    if out.exists():  # complete: the page's closing tag is there
        assert out.read_text(encoding="utf-8").rstrip().endswith("</html>"), "a partial output"


@pytest.mark.parametrize("share", [0.8, 0.9, 0.95])
def test_sigint_late_in_an_html_write_leaves_it_absent(tmp_path, html_size, share):
    out = tmp_path / "w" / "r.html"
    out.parent.mkdir()
    p = _start(tmp_path, "slow", out)
    _wait_for(p, lambda: _tmp_size(out.parent) >= share * html_size, f"{share:.0%} of the page written")
    os.killpg(p.pid, signal.SIGINT)
    p.wait(timeout=120)
    err = p.stderr.read()
    assert p.returncode == 130, (p.returncode, err[-2000:])
    assert err.startswith("drgpu: interrupted") and "Traceback" not in err, err
    _check_left(out.parent, out)
    assert not out.exists()


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_while_the_temporary_file_is_removed(tmp_path, html_size, second):
    """Ctrl-C twice: the second arrives while the first one's cleanup removes the file."""
    out = tmp_path / "w" / "r.html"
    out.parent.mkdir()
    p = _start(tmp_path, "slow", out)
    _wait_for(p, lambda: _tmp_size(out.parent) >= 0.85 * html_size, "85% of the page written")
    os.killpg(p.pid, signal.SIGINT)
    _wait_for(p, lambda: (tmp_path / "marks" / "unlinking").exists(), "removal of the temporary file")
    os.killpg(p.pid, second)
    p.wait(timeout=120)
    err = p.stderr.read()
    assert p.returncode in (130, 128 + second), (p.returncode, err[-2000:])
    assert err.startswith("drgpu: interrupted") and "Traceback" not in err, err
    _check_left(out.parent, out)
    assert not out.exists()


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGINT, signal.SIGTERM])
def test_a_signal_as_the_temporary_file_is_created_leaves_nothing(tmp_path, sig):
    out = tmp_path / "w" / "r.json"
    out.parent.mkdir()
    p = _start(tmp_path, "create", out)
    _wait_for(p, lambda: (tmp_path / "marks" / "created").exists(), "temporary file")
    os.killpg(p.pid, sig)
    p.wait(timeout=120)
    err = p.stderr.read()
    assert p.returncode == 128 + sig, (p.returncode, err[-2000:])
    assert err.startswith("drgpu: interrupted") and "Traceback" not in err, err
    assert sorted(f.name for f in out.parent.iterdir()) == []  # no empty .tmp, no output


@pytest.mark.parametrize("force", [False, True])
def test_a_signal_as_the_output_is_renamed_into_place_leaves_it_complete(tmp_path, force):
    out = tmp_path / "w" / "r.html"
    out.parent.mkdir()
    earlier = "the earlier output\n"
    if force:
        out.write_text(earlier)
    p = _start(tmp_path, "rename", out, *(["--force"] if force else []))
    _wait_for(p, lambda: (tmp_path / "marks" / "renamed").exists(), "rename")
    os.killpg(p.pid, signal.SIGINT)
    p.wait(timeout=120)
    err = p.stderr.read()
    assert p.returncode == 130, (p.returncode, err[-2000:])
    assert "Traceback" not in err, err
    assert sorted(f.name for f in out.parent.iterdir()) == ["r.html"]
    assert out.read_text(encoding="utf-8").rstrip().endswith("</html>")


def test_an_output_name_of_245_characters_is_written(tmp_path):
    """The temporary name is short: '.NAME.XXXXXXXX.tmp' of a 245-byte name passed NAME_MAX."""
    name = "r" * 240 + ".json"
    p = run_cli("analyze", str(REP), "-o", name, cwd=tmp_path, env=ENV, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert sorted(f.name for f in tmp_path.iterdir()) == [name]
    assert '"kernels"' in (tmp_path / name).read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_as_merge_finishes_exits_128_plus_it_with_a_message(tmp_path, sig):
    """The body has written its output and returned; the signal comes as drgpu exits (was
    130 without a message for SIGTERM: the CLI framework's handling of KeyboardInterrupt)."""
    ranks = sorted(str(p) for p in (ROOT / "sample_reports" / "ranks").glob("*.ncu-rep"))
    out = tmp_path / "w" / "merged.json"
    out.parent.mkdir()
    p = _start(tmp_path, "exit", out, "-j", "1", command=("merge", *ranks))
    _wait_for(p, lambda: (tmp_path / "marks" / "exiting").exists(), "end of the command")
    os.killpg(p.pid, sig)
    p.wait(timeout=120)
    err = p.stderr.read()
    assert p.returncode == 128 + sig, (p.returncode, err[-2000:])
    assert f"drgpu: interrupted ({signal.Signals(sig).name})" in err and "Traceback" not in err, err
    assert sorted(f.name for f in out.parent.iterdir()) == ["merged.json"]
    assert '"kernels"' in out.read_text()
