"""Mechanisms in the forms real code takes, on held-out kernels of the third to fifth rounds
(sample_reports/heldout3.yaml to heldout5.yaml) and development samples: a shared-memory tile
the compiler unrolled completely, pow inlined with a literal exponent (positive and negative),
divisions that share one hoisted reciprocal, a launch sequence estimated as dependent steps, a
saturated special-function unit that waits in the MIO queue (a public kernel), bank
conflicts that the per-instruction ways hide, cp.async's shared writes and generic loads into
shared memory. Each test reads the mechanism's evidence from the analysis, not a measured
speedup."""

from __future__ import annotations

import re

import pytest

from conftest import SAMPLES, analysis_of, api_analysis, slow
from drgpu_py.analysis import analyze as drgpu_analyze


def _finding(case: str, fid: str, variant: str = "bad"):
    return next((f for f in analysis_of(case, variant).kernels[0].findings if f.id == fid), None)


def _root_line(case: str) -> int:
    text = (SAMPLES / "src" / f"{case}.cu").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(text, 1) if "// ROOT" in line)


def test_low_data_reuse_in_a_tile_the_compiler_unrolled_away():
    """ho3_batched_gemm_16: the 16-step k loop is unrolled completely (no loop in the SASS);
    the kernel as a whole is the region whose FMAs read shared loads one to one, and the
    MIO-throttle samples at the S2R and global loads behind the full queue count for them."""
    f = _finding("ho3_batched_gemm_16", "low-data-reuse")
    assert f is not None and f.severity == "high"
    assert f.evidence["loads_per_fma"] >= 1.0
    assert f.locations[0]["line"] == _root_line("ho3_batched_gemm_16")
    # Still quiet where each operand already feeds a 4x4 tile (near misses).
    for case in ("ho3_gemm_regblock_nm", "nm_regblock"):
        assert _finding(case, "low-data-reuse") is None, case


@pytest.mark.parametrize(("case", "exponent"), [("ho3_gaussian_pow2", 3), ("ho4_idw_powf_template", -2)])
def test_an_inlined_powf_names_its_literal_exponent_at_the_pow_line(case, exponent):
    """powf(r, 3.0f) and powf(d, -2.0f) inlined (no call): the exponent is the immediate of the
    routine's exact product (FMUL hi, FFMA lo with -hi), and the reciprocal that starts the
    inlined logarithm counts as the routine's MUFU, so the pow line itself is the slow line."""
    f = _finding(case, "slow-math")
    assert f is not None and f.evidence["literal_integer_exponent"] == exponent
    assert f.locations[0]["line"] == _root_line(case)
    assert "x * x" in f.advice and "negative exponent" in f.advice


def test_an_integer_power_keeps_what_its_multiplications_cost():
    """A negative power keeps a division besides the multiplications, so its estimate is
    below the same kernel's with the routine's instructions all removed; and a slow line
    beside the pow (a square root) keeps its own routine."""
    f = _finding("ho4_idw_powf_template", "slow-math")
    removed_all = 1.0 / (1.0 - f.evidence["slow_line_instruction_share"])
    assert 1.0 < f.estimated_speedup < removed_all


def test_divisions_sharing_one_hoisted_reciprocal_are_found_at_their_line():
    """ho4_sparse_mask_mod: ptxas computes the reciprocal of blk and of stride once and each of
    the 8 unrolled elements' quotients from it (multiply-high and corrections on the mask line):
    the quotients the reciprocal feeds are the division code."""
    f = _finding("ho4_sparse_mask_mod", "integer-division")
    assert f is not None and f.severity == "high"
    assert f.locations[0]["line"] == _root_line("ho4_sparse_mask_mod")
    # A DRAM-bound kernel's two divisions are no high finding (near miss).
    near = _finding("ho4_bn_nchw_div_nm", "integer-division")
    assert near is None or near.severity != "high"


@slow  # 96 launches
def test_a_profiled_launch_sequence_is_estimated_as_dependent_steps():
    """ho4_histeq_serial: the report holds all 96 one-block launches. Whether they are
    independent pieces or steps that each need the previous one's result is not in the report,
    so the estimate is the CUDA graph's (a launch floor per launch), the same as for one of
    them; the launch-shape model's batched what-if is evidence and a conditional in the
    advice, which names the block count."""
    ka = api_analysis(SAMPLES / "ho4_histeq_serial" / "ho4_histeq_serial_bad.ncu-rep").kernels[0]
    f = next(f for f in ka.findings if f.id == "serial-kernel")
    assert f.evidence["launches"] == 96 and "launch_model" not in f.evidence
    assert f.evidence["if_independent"]["speedup"] > 10
    assert "96 blocks" in f.advice and "CUDA graph" in f.advice and "Only if" in f.advice
    graph = float(re.search(r"launch \(([0-9.]+)x\)", f.advice).group(1))
    assert f.estimated_speedup == pytest.approx(graph, abs=0.01)
    assert f.estimated_speedup < 2.0
    # A sequence whose launches fill the GPU is no serial kernel (near miss).
    near = api_analysis(SAMPLES / "ho4_sgd_pertensor_nm" / "ho4_sgd_pertensor_nm_bad.ncu-rep").kernels[0]
    assert "serial-kernel" not in [x.id for x in near.findings]


def test_a_division_by_a_literal_is_no_power():
    """ho_rk4_template's dt / 6.0 in double calls the division routine with 6 as an
    immediate; no logarithm (ln 2) is computed, so slow-math names no integer exponent and
    the planted fp64-conversion stays first."""
    a = analysis_of("ho_rk4_template", "bad").kernels[0]
    slow = next((f for f in a.findings if f.id == "slow-math"), None)
    assert slow is None or "literal_integer_exponent" not in slow.evidence
    assert a.findings[0].id == "fp64-conversion"


def test_a_double_root_or_division_is_no_slow_math():
    """tail_field2d's hot line is a precise double reciprocal square root (MUFU.RSQ64H and its
    Newton steps): no intrinsic or --use_fast_math makes double math faster, so slow-math does
    not advise them (the work is double precision, fp64-conversion's); a double pow with a
    literal exponent still is slow math, multiplications replace it."""
    a = analysis_of("tail_field2d", "bad").kernels[0]
    assert "slow-math" not in [f.id for f in a.findings]
    assert a.findings[0].id == "tail-effect"
    powers = _finding("moment_pow", "slow-math")
    assert powers is not None and "literal_integer_exponent" in powers.evidence


def test_a_saturated_special_function_unit_waits_in_the_mio_queue():
    """A public kernel (HeCBench minkowski, round 1 of the public corpus): powf with a run-time
    exponent compiles to MUFU.LG2, FMUL, MUFU.EX2 per term, the XU pipe runs at 92% of peak and
    its queue waits are MIO throttle at the MUFUs, not math-pipe throttle. pipe-contention
    counts them, locates the powf line and advises fewer MUFUs (a version per integer
    exponent). MIO throttle at shared-memory instructions is no XU wait (bank conflicts)."""
    from drgpu_py.analysis.groups import group_profile
    from drgpu_py.readers import open_report

    report = SAMPLES / "public" / "round1" / "minkowski.ncu-rep.xz"
    ka = drgpu_analyze(group_profile(open_report(report))).kernels[0]
    f = next(f for f in ka.findings if f.id == "pipe-contention")
    assert f.evidence["pipe_xu_pct"] > 80 and f.evidence["xu_queue_stall_share"] > 0.3
    assert f.locations[0]["line"] == 40 and "specialised per value" in f.advice
    conflicted = _finding("ho5_layernorm_welford_tree", "pipe-contention")
    assert conflicted is None or "xu_queue_stall_share" not in conflicted.evidence


@pytest.mark.parametrize("case", ["ho5_layernorm_welford_tree", "ho5_ctc_argmax_tree"])
def test_bank_conflicts_the_per_instruction_ways_hide_are_found_from_the_counters(case):
    """Tree steps whose idle warps execute the conflicted LDS/STS predicated off (0
    wavefronts): ncu's per-instruction ways average to one or less, the kernel's conflict
    counters say most shared wavefronts are conflicts; the shared instructions are located by
    the stalls they cost, the root line among the first three, and the fix is quiet."""
    f = _finding(case, "shared-bank-conflict")
    assert f is not None and f.evidence["conflict_wavefront_share"] > 0.5
    assert "per-instruction conflict ways read none" in f.evidence["located_by"]
    assert _root_line(case) in [loc["line"] for loc in f.locations[:3]]
    assert _finding(case, "shared-bank-conflict", "fixed") is None


@pytest.mark.parametrize(("case", "opcode"), [("smem_cpasync_rows", "LDGSTS"), ("ho5_sgemm_cpasync_ta", "LDGSTS")])
def test_cp_async_shared_writes_count_where_the_conflict_counters_do_not(case, opcode):
    """cp.async writes shared memory through LDGSTS, whose conflicts ncu's load/store conflict
    counters leave out (they read about 0 here): the per-instruction wavefronts beyond the
    copy width's add them, and the LDGSTS carry the cost."""
    k = analysis_of(case, "bad").kernels[0].kernel
    counted = k.m("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") + k.m(
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
    )
    assert counted < 0.05 * k.m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    f = _finding(case, "shared-bank-conflict")
    assert f is not None and f.severity == "high"
    assert f.evidence["shared_by_address"] == [opcode] and f.evidence["conflict_share_shared_ldgsts"] > 0.5
    assert opcode in f.locations[0]["sass"]
    assert _finding(case, "shared-bank-conflict", "fixed") is None


@pytest.mark.parametrize("case", ["smem_generic_ptr", "ho5_blockdiag_generic_dot"])
def test_generic_loads_that_reach_shared_memory_are_located(case):
    """A helper reached through a pointer the compiler cannot prove shared loads with LD.E:
    the per-instruction wavefronts show those loads in shared memory, 32-way conflicted; the
    finding points at them (their LSU-queue stalls count), not at the tile's stores."""
    f = _finding(case, "shared-bank-conflict")
    assert f is not None and f.severity == "high" and f.evidence["shared_by_address"] == ["LD"]
    assert f.locations[0]["sass"].startswith("LD.E")
    assert _finding(case, "shared-bank-conflict", "fixed") is None
