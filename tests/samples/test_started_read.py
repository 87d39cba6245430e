"""A report read started early (``readers.start_read``: what ``drgpu analyze`` does before it
loads pandas and the analysis) gives the profile and the JSON that ``open_report`` gives
reading the report itself: the same launches, metrics, tables and notes, byte for byte.
The early reader runs without pandas (its tables come back as parts), and a started read
nobody takes is stopped with its temporary files. Each check runs in a fresh interpreter,
where ncu_report is not loaded (a process that has loaded it reads in-process)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES, needs_ncu_report

SCRIPT = r"""
import os, pickle, sys
from pathlib import Path

import drgpu_py.readers.ncu_rep as ncu_rep
from drgpu_py.readers import KernelSelector, open_report, start_read

real = ncu_rep.read_ncu_rep


def spy(*args, **kwargs):  # what the reading process had loaded, and how it returned the tables
    prof = real(*args, **kwargs)
    prof.notes.append(f"spy: pandas {'pandas' in sys.modules}, frames {kwargs.get('frames', True)}")
    return prof


ncu_rep.read_ncu_rep = spy
report, selector = Path(sys.argv[1]), KernelSelector.parse(sys.argv[2] or None)
assert "pandas" not in sys.modules
started = start_read(report, kernel=selector, jobs=1)
assert started is not None
early = open_report(report, kernel=selector, sass=started)
plain = open_report(report, kernel=selector)
print(early.notes.pop(), "|", plain.notes.pop())

import pandas as pd
from drgpu_py.analysis import analyze
from drgpu_py.render import render

assert early.notes == plain.notes and early.path == plain.path and early.format == plain.format
assert len(early.kernels) == len(plain.kernels) > 0
for a, b in zip(early.kernels, plain.kernels):
    ta, tb = a.instructions, b.instructions
    a.instructions = b.instructions = None
    assert pickle.dumps(a) == pickle.dumps(b), a.id  # every field, metrics in their order
    assert list(ta.columns) == list(tb.columns) and list(ta.dtypes) == list(tb.dtypes)
    pd.testing.assert_frame_equal(ta, tb, check_exact=True)
    a.instructions, b.instructions = ta, tb
assert render(analyze(early), "json") == render(analyze(plain), "json")

# A started read nobody takes: the child is stopped and reaped, its temporary files removed.
unused = start_read(report, kernel=selector, jobs=1)
pid, cubins = unused._child._pid, Path(unused._cubins.name)
unused.close()
try:
    os.waitpid(pid, os.WNOHANG)
    raise AssertionError("the child of an unused read was not reaped")
except ChildProcessError:
    pass
assert not cubins.exists()
# Asked for another read (here: another selection), it is stopped and the report read as asked.
other = start_read(report, kernel=selector, jobs=1)
got = open_report(report, kernel=KernelSelector.parse("0"), sass=other)
assert other._child is None and got.notes.pop().startswith("spy: pandas True, frames True")
print("ok")
"""


def _run(report, selector: str = "") -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DRGPU_READ_IN_PROCESS", None)
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(report), selector],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


@needs_ncu_report
@pytest.mark.parametrize(
    "report, selector",
    [
        ("aos_gather/aos_gather_bad.ncu-rep", ""),
        ("launch/serial_steps_floor.ncu-rep", ""),
        ("launch/serial_steps_floor.ncu-rep", "1"),
    ],
)
def test_a_started_read_is_the_read(report, selector):
    out = _run(SAMPLES / report, selector)
    # The early reader had no pandas and left the tables as parts; the plain one, forked from
    # this process after the analysis loaded, built them.
    assert out.splitlines() == ["spy: pandas False, frames False | spy: pandas True, frames True", "ok"], out


def _cli_json(report, tmp_path, name: str, **env) -> bytes:
    out = tmp_path / f"{name}.json"
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    r = subprocess.run(
        [sys.executable, "-m", "drgpu_py", "analyze", str(report), "-f", "json", "-o", str(out), "-q"],
        capture_output=True,
        text=True,
        env=full,
        cwd=ROOT,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return out.read_bytes()


@needs_ncu_report
def test_the_command_line_gives_the_bytes_of_a_read_in_process(tmp_path):
    """``drgpu analyze`` reads a report early, in a child; ``DRGPU_READ_IN_PROCESS=1`` reads
    it in the process, after the analysis has loaded: the same JSON. The process leaves no
    temporary file behind (its TMPDIR is the test's own folder)."""
    report = SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    early = _cli_json(report, tmp_path, "early", TMPDIR=str(tmp))
    assert early == _cli_json(report, tmp_path, "in", DRGPU_READ_IN_PROCESS="1")
    assert list(tmp.iterdir()) == []
