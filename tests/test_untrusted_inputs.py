"""Reports and applications are untrusted: a hostile kernel name, a line an application
prints, a file name in a report's line table. Each test builds its hostile input at test
time from a sample report (a renamed kernel in a copied CSV export) or the stand-in ncu
(tests/standin/ncu) and checks that drgpu neither passes it on raw nor acts on it."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drgpu_py.cli import app

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_reports" / "aos_gather"
SAMPLE_NAME = "scale_keys_aos(const Record *, float *, int)"
STANDIN = ROOT / "tests" / "standin" / "ncu"

runner = CliRunner()


def hostile_export(tmp_path: Path, name: str, variant: str = "bad") -> Path:
    """A copy of aos_gather's CSV export (raw page and source page) whose kernel is ``name``."""
    folder = tmp_path / f"hostile_{variant}"
    folder.mkdir(exist_ok=True)
    for page in ("raw", "source"):
        text = (SAMPLE_DIR / f"aos_gather_{variant}.{page}.csv").read_text(encoding="utf-8")
        assert SAMPLE_NAME in text
        quoted = name.replace('"', '""')
        (folder / f"aos_gather_{variant}.{page}.csv").write_text(text.replace(SAMPLE_NAME, quoted), encoding="utf-8")
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
