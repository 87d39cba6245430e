"""Not measured is None: KernelProfile.m, the one accessor of metric values, gives None for a
metric the report lacks and for a NaN a reader stored; a default replaces it; has() agrees."""

from __future__ import annotations

import math

from drgpu_py.profile import KernelProfile


def _kernel() -> KernelProfile:
    return KernelProfile(
        id=0,
        name="k",
        metrics={"gpu__time_duration.sum": 1500.0, "stored_nan": math.nan, "zero": 0.0},
    )


def test_an_absent_metric_and_a_stored_nan_read_as_none():
    k = _kernel()
    assert k.m("absent") is None
    assert k.m("stored_nan") is None
    assert k.m("gpu__time_duration.sum") == 1500.0
    assert k.m("zero") == 0.0


def test_the_default_replaces_a_missing_value_only():
    k = _kernel()
    assert k.m("absent", 0.0) == 0.0
    assert k.m("stored_nan", 7.0) == 7.0
    assert k.m("gpu__time_duration.sum", 7.0) == 1500.0
    assert k.m("zero", 7.0) == 0.0


def test_has_agrees_with_m():
    k = _kernel()
    for name in ("absent", "stored_nan", "gpu__time_duration.sum", "zero"):
        assert k.has(name) == (k.m(name) is not None)
    assert not k.has("absent") and not k.has("stored_nan") and k.has("zero")


def test_duration_and_launch_count_without_measurements():
    k = KernelProfile(id=1, name="k")
    assert k.duration_ns is None
    assert k.launch_count == 1
    assert _kernel().duration_ns == 1500.0


def test_active_share_is_none_unless_both_cycle_counts_make_a_share():
    def share(**cycles):
        names = {"act": "sm__cycles_active.avg", "ela": "sm__cycles_elapsed.avg"}
        return KernelProfile(id=2, name="k", metrics={names[k]: v for k, v in cycles.items()}).active_share

    assert share(act=30.0, ela=40.0) == 0.75
    assert share(act=40.0, ela=40.0) == 1.0
    assert share(act=30.0) is None and share(ela=40.0) is None
    assert share(act=50.0, ela=40.0) is None  # more active than elapsed cycles: no share
    assert share(act=0.0, ela=40.0) is None and share(act=math.nan, ela=40.0) is None
