"""The .ncu-rep reader turns what ncu_report raises for an unreadable value into NaN/None,
and nothing else: a bug in drgpu (an AttributeError, a NameError) must surface."""

import math

import pytest

from drgpu_py.readers import ncu_rep


class _Metric:
    def __init__(self, exc):
        self.exc = exc

    def as_double(self):
        raise self.exc

    def as_uint64(self, *_):
        raise self.exc

    def num_instances(self):
        return 0


@pytest.mark.parametrize(
    "exc",
    [
        TypeError("wrong type"),
        OverflowError("range"),
        RuntimeError("c++"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad byte"),
    ],
)
def test_native_errors_read_as_missing(exc):
    assert math.isnan(ncu_rep._scalar(_Metric(exc)))
    assert ncu_rep._uint(_Metric(exc)) is None


@pytest.mark.parametrize("exc", [AttributeError("typo"), NameError("undefined"), KeyError("k")])
def test_bugs_are_not_read_as_missing(exc):
    with pytest.raises(type(exc)):
        ncu_rep._scalar(_Metric(exc))
    with pytest.raises(type(exc)):
        ncu_rep._uint(_Metric(exc))
