"""What an analysis worker sends back (pipeline.parallel.ship / receive): the parent's own
kernels in place of the worker's, by position and identity, and nothing set to None."""

from __future__ import annotations

import pickle

import pytest

from drgpu_py.pipeline.parallel import receive, ship
from drgpu_py.profile import KernelProfile


def test_shipped_kernels_come_back_as_the_receivers_own():
    worker = [KernelProfile(id=0, name="a"), KernelProfile(id=1, name="b")]
    parent = [KernelProfile(id=0, name="a"), KernelProfile(id=1, name="b")]
    stray = KernelProfile(id=7, name="c")
    got = receive(ship([(1, {"kernel": worker[1], "again": worker[1]}), (0, worker[0]), stray], worker), parent)
    (i, d), (j, k), s = got
    assert (i, j) == (1, 0)
    assert d["kernel"] is parent[1] and d["again"] is parent[1] and k is parent[0]
    assert s is not stray and s.id == 7 and s.name == "c"  # not one of the kernels: pickled whole


def test_a_shipped_kernel_is_resolved_by_receive_only():
    k = KernelProfile(id=0, name="a")
    shipped = ship(k, [k])
    with pytest.raises(RuntimeError, match="resolved by pipeline.parallel.receive"):
        pickle.loads(shipped)
    assert receive(shipped, [k]) is k
