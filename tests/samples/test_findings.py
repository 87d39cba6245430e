"""Every planted finding fires, ranked first, on its bad sample and not on the fixed one;
locations name the root-cause line marked in the source."""

from __future__ import annotations

import pytest

from conftest import timed_speedup, CASES, analysis_of, cases_for, manifest, near_misses, root_line, slow

SEVERITIES = {"high", "medium", "low"}


@pytest.mark.parametrize("case", cases_for("ranks_first"))
def test_planted_finding_ranks_first_on_bad(case):
    want = manifest()[case]["finding"]
    k = analysis_of(case, "bad").kernels[0]
    assert k.findings, f"{case}: no findings"
    assert k.findings[0].id == want, [f.id for f in k.findings]
    f = k.findings[0]
    assert f.severity in SEVERITIES and f.estimated_speedup >= 1.0
    assert f.advice and "{" not in f.advice


@pytest.mark.parametrize("case", cases_for("fixed_quiet"))
def test_fixed_variant_does_not_raise_it(case):
    want = manifest()[case]["finding"]
    k = analysis_of(case, "fixed").kernels[0]
    assert want not in [f.id for f in k.findings]


@pytest.mark.parametrize("case", cases_for("root_line", [c for c in CASES if manifest()[c].get("root") != "launch"]))
def test_root_line_among_top_locations(case):
    want = manifest()[case]["finding"]
    line = root_line(case)
    f = next(f for f in analysis_of(case, "bad").kernels[0].findings if f.id == want)
    assert line in [loc["line"] for loc in f.locations[:3]], (line, f.locations[:3])
    top = f.locations[0]
    assert top["file"].endswith(f"{case}.cu") and top["sass"] and 0 < top["share"] <= 1


@pytest.mark.parametrize("case", cases_for("near_quiet", table=near_misses()))
def test_near_miss_does_not_raise_its_finding(case):
    """Programs that resemble a finding's pattern without its cost (sample_reports/src/nm_*.cu)."""
    spec = near_misses()[case]
    k = analysis_of(case, "bad").kernels[0]
    assert spec["finding"] not in [f.id for f in k.findings], [(f.id, f.estimated_speedup) for f in k.findings]


def _held_out() -> dict:
    import yaml

    from conftest import ROOT

    out: dict = {}
    for path in sorted((ROOT / "sample_reports").glob("heldout*.yaml")):
        out.update(yaml.safe_load(path.read_text(encoding="utf-8"))["held_out"])
    return out


def _finding_ids_with_samples() -> list:
    # block-too-small and serial-kernel have no manifest pair: their kernels are half_warps
    # and held-out ones.
    return sorted({c["finding"] for c in manifest().values()} | {"block-too-small", "serial-kernel"})


@pytest.mark.parametrize("fid", _finding_ids_with_samples())
def test_every_finding_with_samples_has_three_kernels_and_a_near_miss(fid):
    """Bad/fixed pairs and near misses of the samples and of the held-out rounds (their
    measured fixes count the same; they are reported apart in docs/calibration.md)."""
    held = _held_out()
    ids = [c["finding"] for c in manifest().values()] + [s["finding"] for s in held.values() if not s.get("near_miss")]
    near = {c["finding"] for c in near_misses().values()} | {s["finding"] for s in held.values() if s.get("near_miss")}
    assert ids.count(fid) >= 3 and fid in near, fid


@pytest.mark.parametrize("case", ["aos_gather", "serial_norm", "double_literal"])
def test_csv_path_gives_the_same_top_finding(case):
    a = analysis_of(case, "bad").kernels[0]
    b = analysis_of(case, "bad", "raw.csv").kernels[0]
    assert [f.id for f in a.findings][:2] == [f.id for f in b.findings][:2]
    assert a.findings[0].locations[0]["line"] == b.findings[0].locations[0]["line"]


@slow
def test_findings_are_ranked_by_speedup_within_severity():
    for case in CASES:
        fs = analysis_of(case, "bad").kernels[0].findings
        order = {"high": 0, "medium": 1, "low": 2}
        keys = [(order[f.severity], -f.estimated_speedup) for f in fs]
        assert keys == sorted(keys), case


def test_a_busy_units_grade_does_not_cap_severity():
    """The busiest unit's grade says how hard the hardware works, not what a fix buys (a unit
    can be busy with waste): with the grade thresholds lowered so the kernel grades excellent,
    barrier-imbalance keeps its estimate and stays high (time ledger, docs/json-schema.md)."""
    from drgpu_py.specs import loader as data
    from drgpu_py.analysis import AnalysisOptions, analyze
    from drgpu_py.readers import open_report
    from conftest import report_path

    prof = open_report(report_path("serial_norm", "bad"))
    top = analysis_of("serial_norm", "bad").kernels[0]
    before = top.findings[0]
    assert before.id == "barrier-imbalance" and before.severity == "high"
    pct = top.sol.limiter_pct
    th = data.thresholds({"grade_okay": pct / 4, "grade_good": pct / 3, "grade_excellent": pct / 2})
    k = analyze(prof, AnalysisOptions(thresholds=th)).kernels[0]
    assert k.sol.grade == "excellent"
    f = next(f for f in k.findings if f.id == "barrier-imbalance")
    assert f.severity == "high" and f.estimated_speedup == before.estimated_speedup
    assert not any("does not reduce that unit" in n for n in f.notes)


def test_thresholds_change_what_fires():
    from drgpu_py.specs import loader as data
    from drgpu_py.analysis import AnalysisOptions, analyze
    from drgpu_py.readers import open_report
    from conftest import report_path

    prof = open_report(report_path("serial_norm", "bad"))
    k = analyze(prof, AnalysisOptions(thresholds=data.thresholds({"barrier_share": 0.999}))).kernels[0]
    assert "barrier-imbalance" not in [f.id for f in k.findings]


def test_bank_conflicts_come_from_ncus_conflict_counters():
    """Wide shared accesses take several wavefronts without any conflict: with ncu's conflict
    counters at 0 (cuBLAS's FP32 SIMT GEMM uses LDS.128), no bank-conflict detection, however
    many wavefronts per instruction; with real conflicts (smem_stride) the counters say so."""
    from conftest import library_analysis
    from drgpu_py.analysis.detectors.memory.shared_bank_conflict import bank_conflict

    fp32_gemm = library_analysis().kernels[5]
    k = fp32_gemm.kernel
    assert k.name.startswith("sm80_xmma_gemm_f32f32")
    assert k.m("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") == 0
    assert k.m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") > 3 * k.m(
        "smsp__sass_inst_executed_op_shared_ld.sum"
    )
    assert bank_conflict(fp32_gemm.context, fp32_gemm.passes) is None
    smem = analysis_of("smem_stride", "bad").kernels[0]
    d = bank_conflict(smem.context, smem.passes)
    assert d.evidence["source"] == "ncu conflict counters" and d.evidence["conflict_wavefront_share"] > 0.9


def _near_miss(name):
    from conftest import xz_report
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    return analyze(open_report(xz_report(f"near_miss/{name}"))).kernels[0]


def test_a_value_rewritten_in_the_loop_is_not_loop_invariant():
    """sample_reports/near_miss/shared_scalar.cu: x[blockIdx.x] has a loop-invariant address
    but thread 0 stores to it every iteration (barriers between): hoisting it would break
    the program, so no loop-invariant-load (reload_rate, whose store cannot be the loaded
    value, still gets it)."""
    ka = _near_miss("shared_scalar")
    assert "loop-invariant-load" not in [f.id for f in ka.findings]
    assert analysis_of("reload_rate", "bad").kernels[0].findings[0].id == "loop-invariant-load"
    advice = analysis_of("reload_rate", "bad").kernels[0].findings[0].advice
    assert "If that value is not written inside the loop" in advice


def test_uniform_constant_index_is_not_divergence():
    """near_miss/const_uniform.cu indexes __constant__ with loop counters and an argument:
    no constant-cache-divergence (its constant-cache misses get the no-known-pattern note);
    a register index is divergent only when it derives from the lane (literal SASS)."""
    ka = _near_miss("const_uniform")
    assert "constant-cache-divergence" not in [f.id for f in ka.findings]
    assert any(n.startswith("no known pattern") and "IMC miss" in n for n in ka.notes)
    from drgpu_py.sass.dataflow import thread_varying
    from drgpu_py.sass import build_cfg, parse_listing

    lst = [
        "S2R R0, SR_TID.X ;",
        "LDC R4, c[0x0][0x210] ;",
        "MOV R2, RZ ;",
        "IADD3 R3, R2, R4, RZ ;",
        "LOP3.LUT R5, R3, 0xff, RZ, 0xc0, !PT ;",
        "LDC R6, c[0x3][R5] ;",
        "IADD3 R7, R0, R2, RZ ;",
        "LDC R8, c[0x3][R7] ;",
        "IADD3 R2, R2, 0x1, RZ ;",
        "ISETP.NE.AND P0, PT, R2, 0x40, PT ;",
        "@P0 BRA 0x30 ;",
        "EXIT ;",
    ]
    cfg = build_cfg(parse_listing((16 * i, t) for i, t in enumerate(lst)))
    assert not thread_varying(cfg, 5, "R5")  # loop counter + kernel argument
    assert thread_varying(cfg, 7, "R7")  # + threadIdx.x
    assert not thread_varying(cfg, 5, "UR4")  # uniform register
    ids = [f.id for f in analysis_of("const_lookup", "bad").kernels[0].findings]
    assert ids[0] == "constant-cache-divergence"  # data-dependent per-lane index still fires


@pytest.mark.parametrize("case", ["tail_particles", "tail_sbox", "hist_walk", "rare_regs", "smem_occupancy"])
def test_wave_and_occupancy_estimates_hold_against_the_measured_fix(case):
    """Issue-22 item 5: the tail-effect (wave model) and occupancy estimates against the
    speedup measured when the grid or the resident warps were changed."""
    want = manifest()[case]["finding"]
    f = next(f for f in analysis_of(case, "bad").kernels[0].findings if f.id == want)
    ratio = f.estimated_speedup / timed_speedup(case)
    assert 1 / 1.5 <= ratio <= 1.5, (case, f.estimated_speedup, timed_speedup(case))


def test_register_limited_occupancy_says_what_the_cap_costs():
    k = analysis_of("rare_regs", "bad").kernels[0]
    f = next(f for f in k.findings if f.id == "occupancy-limited")
    assert f"(now {int(k.kernel.m('launch__registers_per_thread'))})" in f.advice and "spills" in f.advice


def _division_seed(ctx) -> int:
    return next(
        j
        for j, i in enumerate(ctx.cfg.insts)
        if i.opcode == "I2F"
        and "RP" in i.modifiers
        and (ctx.executed().get(i.pc) or 0) > 0
        and (ctx.cfg.innermost_loop(j) is not None or i.pc in ctx.call_sites())
    )


def test_integer_division_counts_the_whole_division_and_what_the_fix_keeps():
    """integer-division's sequence is the division the fix removes: a called 64-bit division
    (bucket_u64) with the whole subroutine and its calls, not the first 20 instructions
    after I2F.RP; an inline one (box_decomp_s32) with every quotient step on its line, the
    division whose reciprocal the compiler hoisted included. A divisor loaded in the loop
    (trial_div_u32) needs a reciprocal per divisor: the estimate keeps more of the sequence."""
    from drgpu_py.analysis.detectors.instruction.integer_division import _division_sequence

    ctx = analysis_of("bucket_u64", "bad").kernels[0].context
    seq, invariant = _division_sequence(ctx, _division_seed(ctx))
    sites = ctx.call_sites()
    assert sites and set(sites) <= seq and invariant
    assert {i.pc for i in ctx.insts if i.opcode == "CALL"} <= seq
    ctx = analysis_of("box_decomp_s32", "bad").kernels[0].context
    seq, invariant = _division_sequence(ctx, _division_seed(ctx))
    assert invariant and sum(ctx.by_pc[pc].opcode == "IMAD" and "HI" in ctx.by_pc[pc].modifiers for pc in seq) >= 2
    assert not any(ctx.by_pc[pc].opcode in ("FMUL", "FFMA", "BRA") for pc in seq)
    ctx = analysis_of("trial_div_u32", "bad").kernels[0].context
    assert not _division_sequence(ctx, _division_seed(ctx))[1]
    f = {
        k: next(f for f in analysis_of(k, "bad").kernels[0].findings if f.id == "integer-division")
        for k in ("trial_div_u32", "bucket_u64")
    }
    assert (
        f["trial_div_u32"].evidence["divisor_varies_in_loop"] and not f["bucket_u64"].evidence["divisor_varies_in_loop"]
    )


def _finding(case: str, fid: str):
    return next(f for f in analysis_of(case, "bad").kernels[0].findings if f.id == fid)


def test_slow_math_counts_removed_instructions_keeps_the_mufus_and_names_integer_powers():
    """slow-math: a called pow is a long dependent sequence whose samples undercount what its
    removal saves, so the slow lines' executed-instruction share counts too (moment_pow); the
    fast intrinsics use the same special-function unit, so the XU pipe stays loaded and bounds
    the gain (precise_math); pow with a literal
    small integer exponent is named and written as multiplications (issue 15, strength
    reduction), other precise calls keep the intrinsics advice."""
    mp = _finding("moment_pow", "slow-math")
    by_samples = 1.0 / (1.0 - mp.stall_share * (1.0 - 3.0 / mp.evidence["instructions_per_mufu"]))
    assert mp.evidence["slow_line_instruction_share"] > mp.stall_share and mp.model_speedup > 1.5 * by_samples
    assert mp.evidence["literal_integer_exponent"] == 2 and "x * x" in mp.advice
    pm = _finding("precise_math", "slow-math")
    xu = next(b for b in pm.bounds if b["kind"] == "unit")
    assert pm.bounded_by == "unit" and xu["why"].startswith("XU pipe")
    assert "literal_integer_exponent" not in pm.evidence and "__expf" in pm.advice
    assert analysis_of("redblack_mix", "bad").kernels[0].findings[0].id == "warp-divergence"


def test_pow_with_a_double_literal_specialised_by_nvcc_gets_the_integer_power_advice():
    """pow(diff, 2.0) on doubles that nvcc specialised for the constant: no register carries the
    exponent's bits to the CALL, the routine multiplies log(x) by the immediate 2 instead; the
    advice is x * x, not fast-math intrinsics (measured: -use_fast_math 1.00x, x * x 2.26x on
    a public benchmark's kernel). powf(r2, 1.5f) (gravity_powf) is no integer power."""
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    from conftest import SAMPLES

    a = analyze(open_report(SAMPLES / "ho_kmeans_pow" / "ho_kmeans_pow_bad.ncu-rep"))
    f = next(f for f in a.kernels[0].findings if f.id == "slow-math")
    assert f.evidence["literal_integer_exponent"] == 2 and "x * x" in f.advice
    assert "literal_integer_exponent" not in _finding("gravity_powf", "slow-math").evidence


def test_low_data_reuse_needs_staged_values_read_many_times_one_load_per_fma():
    """low-data-reuse: rolled_loop's FIR reads each staged tap from shared memory for every FMA
    (256 shared reads per shared store, one load per FMA): register blocking (several outputs
    per thread) would reuse each tap. A tree reduction reads its shared values once or twice
    (smem_stride: no reuse to gain) and a register-blocked GEMM already reuses them (nm_regblock):
    neither raises it."""
    f = _finding("rolled_loop", "low-data-reuse")
    assert f.evidence["loads_per_fma"] >= 0.5 and f.evidence["shared_reads_per_store"] >= 4
    assert f.locations and f.locations[0]["line"] is not None
    assert "register" in f.advice
    for case in ("smem_stride", "aos_gather", "nm_regblock"):
        assert "low-data-reuse" not in [x.id for x in analysis_of(case, "bad").kernels[0].findings]


def test_partial_warps_on_a_memory_bound_tile_is_capped_by_what_dram_has_left():
    """A 16-thread block that is its algorithm's tile, streaming panels at 80 % of DRAM peak
    (ho2_trsm16_halfwarp; 32-thread blocks measured 1.01x): filling the warps moves the same
    bytes, so the estimate is at most saturation / DRAM utilisation, not 1 / lane fill (2x)."""
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    from conftest import SAMPLES

    a = analyze(open_report(SAMPLES / "ho2_trsm16_halfwarp" / "ho2_trsm16_halfwarp_bad.ncu-rep"))
    # The launch-shape model keeps DRAM's/L2's busy time: filling the lanes leaves them to bind,
    # so partial-warps is at most a small finding (here below the smallest reported).
    f = next((f for f in a.kernels[0].findings if f.id == "partial-warps"), None)
    assert f is None or (f.estimated_speedup < 1.25 and f.severity != "high")
    assert _finding("half_warps", "block-too-small").severity == "high"  # compute-bound: filling the warps pays


def test_histogram_division_and_atomics_get_their_own_samples():
    """many_kernels' histogram computes `(int)(x[i] * nbins) % nbins` once per thread, loop-free:
    the division sequence's first instructions wait for the x[i] load (42 % of the samples).
    The blame edges give that wait to the load, so integer-division is not raised on it and the
    wait goes to memory-latency."""
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import KernelSelector, open_report

    from conftest import ROOT

    a = analyze(open_report(ROOT / "benchmarks/data/many_kernels.ncu-rep.xz", kernel=KernelSelector.parse("4")))
    ids = [f.id for f in a.kernels[0].findings]
    assert "histogram" in a.kernels[0].kernel.name
    assert "integer-division" not in ids and "memory-latency" in ids
    # Its atomics (RED into 64 bins, no returned value) hold the warps at EXIT while they drain,
    # the kernel's only global writes: that drain is the atomics', and atomic-contention leads.
    assert ids[0] == "atomic-contention"
