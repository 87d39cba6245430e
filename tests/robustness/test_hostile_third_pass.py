"""Hostile inputs, third pass: each test builds its hostile input at test time.

Random bytes appended to an ``.ncu-rep`` that ncu_report passed over in silence, kernel
names of bytes that are not UTF-8 in every output format, SVG to standard output, the
dry run of ``drgpu profile`` printing the argv a real run passes, and source files named
by a report's line table that drgpu must not read.
"""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_reports"
R = SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep"
MINI = ROOT / "tests" / "data" / "bad" / "mini.raw.csv"


def _drgpu(*argv: str, timeout: float = 120, env: dict | None = None, cwd=None):
    return run_cli(*argv, timeout=timeout, env={**os.environ, "COLUMNS": "200", **(env or {})}, cwd=cwd)


# ---- 1. bytes appended to a report that hold no whole block ----------------------------------

# Random tails that ncu_report read past without a word (exit 0 with only a note): a first
# word that reads as a header size beyond the end of the file, and nothing or a few bytes after.
_SHORT_TAILS = {
    "4-random": random.Random(5).randbytes(4),
    "9-random": bytes.fromhex("9914fe062ca9e8b122"),
    "small-size-word": struct.pack("<I", 20),
    "3-bytes": b"\x01\x02\x03",
}


@pytest.mark.parametrize("tail", list(_SHORT_TAILS.values()), ids=list(_SHORT_TAILS))
@pytest.mark.parametrize("cmd", ["analyze", "list"])
def test_random_bytes_appended_to_a_report_are_refused(tmp_path, tail, cmd):
    good = R.read_bytes()
    p = tmp_path / "appended.ncu-rep"
    p.write_bytes(good + tail)
    r = _drgpu(cmd, str(p), *(["-q"] if cmd == "analyze" else []))
    assert r.returncode == 4, (r.returncode, r.stdout[-500:], r.stderr)
    assert "is truncated or corrupt" in r.stderr and "are no whole block" in r.stderr, r.stderr
    assert f"truncate -s {len(good)}" in r.stderr, r.stderr


def test_every_sample_report_ends_with_a_whole_block():
    """The rule refuses no report ncu wrote: each sample's framing ends at a block's end."""
    from drgpu_py.readers.common import rep_walk

    reports = sorted(SAMPLES.rglob("*.ncu-rep"))
    assert reports
    for p in reports:
        w = rep_walk(p)
        assert w.problem is None and w.refusable_at is None, (p, w)


def test_a_line_report_with_bytes_appended_gives_no_line_numbers(tmp_path):
    bad = tmp_path / "line.ncu-rep"
    bad.write_bytes(R.read_bytes() + _SHORT_TAILS["4-random"])
    out = tmp_path / "out.json"
    r = _drgpu("analyze", str(MINI), "--line-report", str(bad), "-f", "json", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert "line table of line.ncu-rep unreadable (the file's last 4 bytes" in out.read_text()
