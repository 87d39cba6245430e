"""``drgpu profile`` when ncu dies of a signal after writing its report, or leaves a FIFO
where a file should be (the stand-in ncu, tests/standin/ncu, plays each part).

docs/errors.md: ncu dying of a signal is exit 10 (what it wrote is analyzed first, and the
message names the signal); a FIFO, device or socket at the report, log or record path is
never opened (a FIFO would block): refused with exit 10 (the report ncu left) or 6 (an
output path, before ncu runs)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from conftest import run_cli, standin_profile

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "COLUMNS": "120"}


def drgpu(*argv, env=None, cwd=None, timeout=120):
    # A timeout well under the suite's: a FIFO opened for reading or writing blocks for ever.
    # drgpu runs in the test process; ncu (the stand-in) is its child, which the signals end.
    return run_cli(*argv, cwd=cwd or ROOT, env={**ENV, **(env or {})}, timeout=timeout)


@pytest.mark.parametrize("sig", ["SIGSEGV", "SIGABRT", "SIGKILL"])
def test_ncu_dying_of_a_signal_after_its_report_is_exit_10(tmp_path, sig):
    out = tmp_path / "out"
    env = {"STANDIN_NCU_SCENARIO": "crash", "STANDIN_NCU_SIGNAL": sig}
    p = drgpu(*standin_profile(out, "--", "/bin/echo", "hi"), env=env, cwd=tmp_path)
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 10, (p.returncode, p.stderr[-3000:])
    num = int(getattr(signal, sig))
    line = next(ln for ln in p.stderr.splitlines() if ln.startswith("drgpu: "))
    assert line.startswith("drgpu: profiler: ") and f"ncu died of signal {num} ({sig})" in line, p.stderr
    assert "was analyzed" in line, line
    # the report it wrote is kept and analyzed; the record says how ncu ended
    assert (out / "echo.ncu-rep").is_file()
    doc = json.loads((out / "echo.json").read_text())
    assert doc["kernels"][0]["name"].startswith("scale_keys_aos")
    rec = json.loads((out / "echo.profile.json").read_text())
    assert rec["ncu_signal"] == sig and rec["exit_code"] == 10 and rec["ncu_exit_code"] == -num, rec


def test_ncu_dying_of_a_signal_without_a_report_names_it(tmp_path):
    out = tmp_path / "out"
    env = {"STANDIN_NCU_SCENARIO": "crash", "STANDIN_NCU_SIGNAL": "SIGSEGV"}
    p = drgpu(*standin_profile(out, "-k", "no_such_kernel", "--", "/bin/echo", "hi"), env=env, cwd=tmp_path)
    assert p.returncode == 10, (p.returncode, p.stderr[-3000:])
    assert "drgpu: profiler: ncu died of signal 11 (SIGSEGV) and wrote no report" in p.stderr, p.stderr


def test_ncu_leaving_a_fifo_as_its_report_is_refused_not_opened(tmp_path):
    out = tmp_path / "out"
    p = drgpu(*standin_profile(out, "--", "/bin/echo", "hi"), env={"STANDIN_NCU_SCENARIO": "fifo_report"}, cwd=tmp_path)
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 10, (p.returncode, p.stderr[-3000:])
    assert "drgpu: profiler: " in p.stderr and "is a FIFO, not a report" in p.stderr, p.stderr
    assert (out / "echo.ncu-rep").is_fifo()  # left as it is
    assert (out / "echo.ncu.log").is_file() and (out / "echo.profile.json").is_file()


@pytest.mark.parametrize("name", ["echo.ncu.log", "echo.profile.json", "echo.ncu-rep", "echo.html"])
def test_a_fifo_at_an_output_path_is_refused_before_ncu_runs_even_with_force(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / name)
    argv_out = tmp_path / "ncu_argv.json"
    p = drgpu(
        *standin_profile(out, "--force", "--", "/bin/echo", "hi"),
        env={"STANDIN_NCU_ARGV_OUT": str(argv_out)},
        cwd=tmp_path,
    )
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 6, (p.returncode, p.stderr[-3000:])
    assert "drgpu: output: " in p.stderr and "is not a regular file" in p.stderr and name in p.stderr, p.stderr
    assert not argv_out.exists(), "ncu ran"
    assert (out / name).is_fifo()
