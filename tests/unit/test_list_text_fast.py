"""The plain text tables of ``drgpu list`` and ``drgpu diff``, laid out without rich for
printable ASCII (rich took 8 ms a list row, 15 ms a diff table: minutes for 20,000 kernels),
are the text rich lays out, character for character; other text still goes through rich."""

from __future__ import annotations

import random

import pytest

import drgpu_py.render.list_ as list_
from drgpu_py.render import diff


def _row(rnd: random.Random, i: int) -> dict:
    finding = rnd.choice([None, "global-uncoalesced", "x"])
    return {
        "report": rnd.choice(["a.ncu-rep", "r", "long_report_name.raw.csv"]),
        "id": i,
        "name": rnd.choice(["k", "void f<int, 3>(float *, int)", "a  b", "x" * 300, "ns::k(int)"]),
        "duration_ns": rnd.choice([None, 1.0, 94912.3, 1e9]),
        "grid": rnd.choice([None, [1, 1, 1], [16384, 2, 1]]),
        "block": rnd.choice([None, [256, 1, 1]]),
        "stall_cycle_pct": rnd.choice([None, 0.0, 96.9]),
        "bound": rnd.choice([None, "memory", "latency"]),
        "top_finding": finding,
        "top_severity": rnd.choice(["high", "medium", "low"]) if finding else None,
        "top_speedup": rnd.choice([1.0, 4.41]) if finding else None,
    }


@pytest.mark.parametrize("seed", range(8))
def test_list_text_is_rich_text(monkeypatch, seed):
    rnd = random.Random(seed)
    rows = [_row(rnd, i) for i in range(rnd.randint(1, 30))]
    fast = list_.render_list_text(rows)
    monkeypatch.setattr(list_, "_plain", lambda cell: False)
    assert fast == list_.render_list_text(rows)


def test_list_text_with_other_characters_goes_through_rich():
    assert not list_._plain("kernel\u00e9") and not list_._plain(" lead") and not list_._plain("a\tb")


@pytest.mark.parametrize("seed", range(20))
def test_diff_tables_are_rich_tables(seed):
    rnd = random.Random(seed)
    n = rnd.randint(1, 6)
    headers = [rnd.choice(["", "metric", "base", "new", "change"]) for _ in range(n)]
    cells = ["1", "94.91 us", "-3.0%", "stall cycles", "", "q", "(a, b)", "0.123", "memory -> latency"]
    rows = [[rnd.choice(cells) for _ in range(n)] for _ in range(rnd.randint(0, 8))]
    indent = rnd.choice([0, 2, 4])
    assert diff._text_table(headers, rows, indent) == diff._rich_table(headers, rows, indent)
