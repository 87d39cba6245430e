"""Durations are written in one unit, by one formatter (drgpu_py/render/units.py): ``µs`` in
``analyze``, ``list`` and ``diff`` alike (diff wrote ``us``), on literal diff inputs."""

from __future__ import annotations

import re

import pytest

from drgpu_py.pipeline.compare import diff
from drgpu_py.render.diff import render_diff
from drgpu_py.render.units import MICROSECONDS, us


def _k(i: int, name: str, dur: float) -> dict:
    return {"id": i, "name": name, "duration_ns": dur, "findings": [], "tree": {}}


def test_us_writes_the_unit_and_not_measured():
    assert us(94_910.0, ".2f") == "94.91 µs" and us(1_234_567.0) == "1,234.6 µs"
    assert us(None) == "n/a" and us(float("nan"), none="duration n/a") == "duration n/a"
    assert MICROSECONDS == "µs"


@pytest.mark.parametrize("fmt", ["text", "html"])
def test_diff_writes_microseconds_as_analyze_does(fmt):
    base = [_k(0, "k(int)", 94_910.0), _k(1, "gone()", 2_000.0)]
    new = [_k(0, "k(int)", 14_560.0), _k(1, "fresh()", 3_000.0)]
    out = render_diff(diff({"report": "a", "kernels": base}, {"report": "b", "kernels": new}), fmt)
    assert not re.search(r"\d us\b", out), "no ASCII 'us' beside a number"
    for written in ("94.91 µs", "14.56 µs", "2.00 µs", "3.00 µs"):
        assert written in out, written
