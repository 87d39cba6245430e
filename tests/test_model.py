"""The static SASS performance model (drgpu_py/analysis/model.py) on literal SASS and on the
real H100 sample reports: bottleneck classes agree with the counters' verdict, predicted
cycles of simple loops are within 30 % of the measured, the what-ifs move the right way,
and every kernel with SASS has a model in the JSON."""
from __future__ import annotations

import pytest

from conftest import analysis_of
from drgpu_py.analysis.model import family_of, simulate
from drgpu_py.sass import parse_instruction

LAT = {"fp32": 4, "alu": 4, "branch": 7, "shared": 23, "l1": 33, "l2": 260, "dram": 600}


def _body(text):
    return [parse_instruction(0x10 * i, t) for i, t in enumerate(text)]


def test_dependent_chain_is_latency_times_length():
    # Four dependent FFMAs per iteration: 4 x 4 cycles; independent ones issue back to back.
    chain = _body(["IADD3 R0, R0, 0x1, RZ", "ISETP.NE.AND P0, PT, R0, 0x10, PT"] + ["FFMA R7, R2, R7, 0.5"] * 4
                  + ["@P0 BRA 0x0"])
    dep = simulate(chain, list(range(len(chain))), LAT, 600, issue_gap=0.0, branch=0.0)
    assert dep.cycles == pytest.approx(16.0)
    assert sum(chain[j].opcode == "FFMA" for j in dep.chain) >= 3
    indep = _body([f"FFMA R{10 + i}, R2, R{10 + i}, 0.5" for i in range(4)] + ["@P0 BRA 0x0"])
    one = simulate(indep, list(range(len(indep))), LAT, 600, issue_gap=1.0, branch=0.0)
    assert one.cycles == pytest.approx(5.0)


def test_load_on_the_chain_is_memory_latency():
    body = _body(["LDG.E R4, desc[UR4][R2.64]", "IMAD.WIDE R2, R4, 0x4, R2", "@P0 BRA 0x0"])
    got = simulate(body, [0, 1, 2], LAT, 600.0, issue_gap=1.0, branch=0.0)
    assert got.cycles >= 600 and got.chain_memory


def _model(case, variant):
    ka = analysis_of(case, variant).kernels[0]
    return ka, ka.context.model


@pytest.mark.parametrize("case,variant,family", [
    ("fma_chain", "bad", "ilp"),           # one dependent FFMA chain per thread
    ("aos_gather", "fixed", "memory"),     # a bandwidth-bound gather/copy
    ("rolled_loop", "bad", "compute"),     # issue-bound rolled loop
    ("precise_math", "bad", "compute"),
    ("lane_branch", "bad", "compute"),
    ("local_hist", "bad", "memory"),
    ("reload_rate", "bad", "memory"),
    ("smem_stride", "bad", "memory"),
    ("fence_loop", "bad", "memory"),
    ("chase_loads", "bad", "latency"),
    ("few_blocks", "fixed", "memory"),
])
def test_bottleneck_agrees_with_counters(case, variant, family):
    _, m = _model(case, variant)
    assert m.available
    assert m.family == family
    assert m.verdict == family, "the counters' verdict"


def test_simple_loops_within_30_percent():
    for case, variant in (("fma_chain", "bad"), ("fma_chain", "fixed"), ("rolled_loop", "bad"),
                          ("rolled_loop", "fixed"), ("precise_math", "bad"), ("lane_branch", "bad")):
        _, m = _model(case, variant)
        assert abs(m.gap()) <= 0.30, (case, variant, m.predicted_cycles, m.measured_cycles)


def test_hot_loop_critical_path_and_lines():
    ka, m = _model("fma_chain", "bad")
    hot = m.hot
    # Eight dependent FFMAs per iteration at the chip's FMA latency.
    lat = ka.context.arch["latency"]["fp32"]
    assert hot.critical_path_cycles == pytest.approx(8 * lat, rel=0.05)
    assert hot.single_warp_cycles > hot.critical_path_cycles
    d = ka.to_dict()["model"]
    loop = d["loops"][0]
    assert loop["critical_path_waits_on"] == "arithmetic"
    assert any(ln["line"] == 14 for ln in loop["lines"])   # the ROOT line of fma_chain.cu
    assert d["bottleneck"] == "ilp" and d["agrees"] is True


def test_what_if_unroll_beats_the_chain():
    _, bad = _model("fma_chain", "bad")
    unroll = next(w for w in bad.what_if if w["change"] == "unroll")
    assert unroll["speedup"] > 2.0          # four independent chains hide the FFMA latency
    _, mem = _model("reload_rate", "bad")   # memory-bound: unrolling cannot help
    got = [w for w in mem.what_if if w["change"] == "unroll"]
    assert not got or got[0]["speedup"] < 1.05


def test_model_in_json_for_every_kernel():
    for case in ("fma_chain", "smem_occupancy"):
        for ka in analysis_of(case, "bad").kernels:
            d = ka.to_dict()["model"]
            assert d["available"] is True and d["predicted_cycles"] > 0 and d["measured_cycles"] > 0
            assert set(d) >= {"bottleneck", "instruction_efficiency", "loops", "what_if"}


def test_family_names():
    assert family_of("pipe:fma") == "compute" and family_of("issue") == "compute"
    assert family_of("pipe:lsu") == "memory" and family_of("ilp") == "ilp"
