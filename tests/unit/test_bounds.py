"""analysis/bounds.py on hostile values: a bound whose limit overflows bounds nothing (JSON
would write it as null, which the schema refuses)."""

from __future__ import annotations

import math
from types import SimpleNamespace

from drgpu_py.analysis.bounds import apply_bounds, physical_bounds


def _ctx(duration_ns: float = 1000.0):
    kernel = SimpleNamespace(duration_ns=duration_ns, m=lambda name, default=None: default)
    return SimpleNamespace(units={}, kernel=kernel, th={"latency_hiding_max": 2.0})


def test_a_unit_at_a_subnormal_share_of_its_peak_gives_no_infinite_bound():
    sol = SimpleNamespace(units={"dram": 1e-320}, labels={}, launch_floor_ns=math.nan)
    bounds = physical_bounds(_ctx(), sol, [], "stall_elimination", 50.0)
    assert all(math.isfinite(b.limit) for b in bounds)
    assert [b.kind for b in bounds] == ["stall_cycles"]
    assert apply_bounds(5.0, bounds)[0] == 2.0


def test_a_tiny_but_finite_unit_share_still_bounds():
    sol = SimpleNamespace(units={"dram": 50.0}, labels={"dram": "DRAM"}, launch_floor_ns=math.nan)
    bounds = physical_bounds(_ctx(), sol, [], "throughput", math.nan)
    assert [(b.kind, b.limit) for b in bounds] == [("unit", 2.0)]
