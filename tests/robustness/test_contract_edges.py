"""Cases where drgpu's behaviour and docs/errors.md disagreed, each settled on purpose: a
closed standard output, an unreadable metric-set file, a CSV cut inside its units row, a
kernel name of 200 KB laid out by Graphviz. Inputs are made at test time."""

from __future__ import annotations

import csv
import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "data" / "bad" / "mini.raw.csv"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "COLUMNS": "120"}


def drgpu(*argv, cwd=None):
    return run_cli(*argv, cwd=cwd or ROOT, env=ENV, timeout=300)


def first_line(p) -> str:
    return next((ln for ln in p.stderr.splitlines() if ln.startswith("drgpu: ")), p.stderr)


@pytest.mark.parametrize("argv", [["thresholds"], ["metrics", "base"]])
def test_a_closed_standard_output_is_exit_6(argv):
    """docs: standard output closed (``>&-``) is 6; rich wrote the table into nothing (exit 0)."""
    # A child process: a closed descriptor 1 is the subject.
    p = subprocess.run(
        ["sh", "-c", 'exec "$0" -m drgpu_py "$@" >&-', sys.executable, *argv],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert p.returncode == 6, (p.returncode, p.stderr)
    assert p.stderr.startswith("drgpu: output: standard output is closed"), p.stderr


def test_an_unreadable_metric_set_file_is_exit_3(tmp_path, monkeypatch):
    """docs: an unreadable input file is 3 (was 8, a data error, for a metric set). Root reads
    a chmod-000 file, so the refusal is made by the operating system's calls here."""
    from typer.testing import CliRunner

    from drgpu_py.cli import app

    ms = tmp_path / "mine.yaml"
    shutil.copy(ROOT / "metric_sets" / "base.yaml", ms)  # a valid set: only reading it fails
    ms.chmod(0)
    denied = str(ms)
    real_os_open, real_io_open = os.open, io.open

    def os_open(path, *a, **k):
        if str(path) == denied:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_os_open(path, *a, **k)

    def io_open(file, *a, **k):
        if str(file) == denied:
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_io_open(file, *a, **k)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)
    r = CliRunner().invoke(app, ["metrics", str(ms)])
    assert r.exit_code == 3, (r.exit_code, r.output)
    assert "drgpu: input: " in r.output and "permission denied" in r.output, r.output


def _rows() -> list[list[str]]:
    with open(MINI, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_a_csv_cut_inside_its_units_row_is_exit_4(tmp_path):
    """docs: a raw CSV cut short is 4; cut inside its units row it said 'no kernel launch' (5)."""
    data = MINI.read_bytes()
    end_header = data.index(b"\n")
    end_units = data.index(b"\n", end_header + 1)
    cut = tmp_path / "cut.raw.csv"
    cut.write_bytes(data[: (end_header + end_units) // 2])
    p = drgpu("analyze", cut)
    assert p.returncode == 4, (p.returncode, p.stderr)
    assert "is truncated or edited: its units row has" in first_line(p), p.stderr
    # cut right after the whole units row: a valid export without launches (5)
    cut.write_bytes(data[: end_units + 1])
    p = drgpu("analyze", cut)
    assert p.returncode == 5 and "holds no kernel launch" in first_line(p), p.stderr


@pytest.mark.parametrize("fmt", ["svg", "html"])
def test_a_kernel_name_of_200_kb_is_laid_out(tmp_path, fmt):
    """A 200 KB kernel name in the graph title made dot fail ('Broken pipe', exit 6): labels
    are cut to 500 characters per line; the full name stays in the page's text."""
    if not shutil.which("dot"):
        pytest.skip("Graphviz dot is not installed")
    rows = _rows()
    name = "big_kernel_" + "x" * 200_000
    col = rows[0].index("Kernel Name")
    for r in rows[2:]:
        r[col] = name
    src = tmp_path / "big.raw.csv"
    with open(src, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    out = tmp_path / f"big.{fmt}"
    p = drgpu("analyze", src, "-o", out)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    text = out.read_text(encoding="utf-8")
    assert "big_kernel_xxx" in text and "<svg" in text
    if fmt == "html":
        assert name in text  # the page keeps the whole name
