"""Advice chosen from the code's shape (drgpu_py/analysis/advice_shape.py) on real reports:
each variant is given on a sample where its fact holds and not on one where it does not.
memory-latency's advice unrolls a loop only where the waiting loads are in one; loop-free
loads (one element per thread, a gather through an index) get several elements per thread
instead. tests/unit/test_advice_variants.py checks every template on constructed facts."""

from __future__ import annotations

import pytest

from conftest import analysis_of, representatives, sample_params, slow


def _finding(case: str, fid: str):
    ka = analysis_of(case, "bad").kernels[0]
    return next(f for f in ka.findings if f.id == fid)


#: (finding, advice key, a sample where its fact holds, one where it does not).
VARIANTS = [
    ("memory-latency", "advice_when.loop_free", "ho3_index_select", "chase_loads"),
    ("global-uncoalesced", "advice_when.loop_free", "aos_gather", "naive_transpose"),
    ("low-ilp", "advice_when.loop_free", "half_warps", "fma_chain"),
    ("local-memory", "advice_when.loop_free", "window_sort", "spill_tile"),
    ("integer-division", "advice_when.loop_free", "ho2_im2col_div", "trial_div_u32"),
    ("shared-bank-conflict", "advice_when.header", "ho5_sgemm_cpasync_ta", "smem_stride"),
    ("atomic-contention", "advice_when.header", "split_lists", "global_atomics"),
    ("memory-barrier", "advice_when.header", "queue_fence", "fence_loop"),
    ("tail-effect", "advice_when.grid_stride", "tail_sbox", "tail_field2d"),
    ("tail-effect", "advice_when.fixed_work", "tail_particles", "tail_field2d"),
]


def _params():
    fast = representatives()
    return [
        pytest.param(*row, id=f"{row[0]}:{row[1]}", marks=[] if row[2] in fast and row[3] in fast else [slow])
        for row in VARIANTS
    ]


@pytest.mark.parametrize("fid,key,with_fact,without", _params())
def test_variant_given_with_its_fact_and_not_without(fid, key, with_fact, without):
    got, other = _finding(with_fact, fid), _finding(without, fid)
    assert got.advice_key == key
    assert other.advice_key == "advice"
    for f in (got, other):
        assert "{" not in f.advice and "?" not in f.advice, f.advice


@pytest.mark.parametrize("case", ["ho3_index_select", "ho2_embed_rows"])
def test_loop_free_loads_are_not_told_to_unroll(case):
    f = _finding(case, "memory-latency")
    assert "Unroll the loop" not in f.advice
    assert "several elements" in f.advice


def test_loads_in_a_loop_keep_the_loop_advice():
    f = _finding("chase_loads", "memory-latency")
    assert "Unroll the loop" in f.advice


@pytest.mark.parametrize("case", sample_params(["queue_fence"]))
def test_inlined_fence_is_changed_at_the_call(case):
    f = _finding(case, "memory-barrier")
    assert "cuda::thread_scope_block" in f.advice and "header code" in f.advice
