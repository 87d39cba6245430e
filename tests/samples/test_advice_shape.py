"""Advice chosen from the code's shape: memory-latency's advice unrolls a loop only where the
waiting loads are in one; loop-free loads (one element per thread, a gather through an index)
get several elements per thread instead."""

from __future__ import annotations

import pytest

from conftest import analysis_of


def _memory_latency(case: str):
    ka = analysis_of(case, "bad").kernels[0]
    return next(f for f in ka.findings if f.id == "memory-latency")


@pytest.mark.parametrize("case", ["ho3_index_select", "ho2_embed_rows"])
def test_loop_free_loads_are_not_told_to_unroll(case):
    f = _memory_latency(case)
    assert "Unroll the loop" not in f.advice
    assert "several elements" in f.advice


def test_loads_in_a_loop_keep_the_loop_advice():
    f = _memory_latency("chase_loads")
    assert "Unroll the loop" in f.advice
