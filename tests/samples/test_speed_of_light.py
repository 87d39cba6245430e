"""Speed of light, grades and physical bounds on real reports (H100, ncu 2025.3.1).

sample_reports/library: 16 real library kernels (cuBLAS/cuBLASLt GEMMs in bf16, fp16, tf32,
fp8 and fp32, a skinny GEMM, cuDNN flash attention and implicit-GEMM convolution, PyTorch
elementwise, softmax, layernorm and reduction kernels, a Triton kernel from torch.compile),
profiled with `drgpu profile --with tensor_ops`. The figures compared against are computed
here from the problem sizes (workload.py wrote them to library_timings.json), ncu's measured
duration and SM clock, and NVIDIA's published H100 SXM peaks, not from drgpu's specs.
sample_reports/library/step: one inference step of a small PyTorch model (18 launches, default
set); full_set: a cuBLAS GEMM, cuDNN attention and convolution under ncu's --set full.
sample_reports/launch: an empty kernel (the launch floor) and a one-block serial LU step.
"""

from __future__ import annotations

import re

import drgpu_py

import contextlib
import json
import math

import pytest

from conftest import CASES, SAMPLES, analysis_of, library_analysis, library_report, slow

# NVIDIA H100 SXM5 whitepaper: dense FP16/BF16 tensor 989.4 TFLOP/s at 1830 MHz on 132 SMs;
# TF32 half that, FP8 twice; HBM3 3.35 TB/s.
WHITEPAPER_TENSOR_PER_SM_CYCLE = {"bf16": 989.4e12 / (132 * 1.83e9)}
WHITEPAPER_TENSOR_PER_SM_CYCLE["fp16"] = WHITEPAPER_TENSOR_PER_SM_CYCLE["bf16"]
WHITEPAPER_TENSOR_PER_SM_CYCLE["tf32"] = WHITEPAPER_TENSOR_PER_SM_CYCLE["bf16"] / 2
WHITEPAPER_TENSOR_PER_SM_CYCLE["fp8"] = WHITEPAPER_TENSOR_PER_SM_CYCLE["bf16"] * 2
HBM3_BYTES_PER_S = 3.35e12
PRECISION = {
    "gemm_bf16_8192": "bf16",
    "gemm_bf16_4096": "bf16",
    "gemm_fp16_2048": "fp16",
    "gemm_bf16_512": "bf16",
    "gemm_tf32_4096": "tf32",
    "gemm_fp8_4096": "fp8",
    "sdpa_bf16": "bf16",
    "conv_fp16": "fp16",
}
NAME_HINT = {
    "sdpa_bf16": "sdpa",
    "conv_fp16": "fprop",
    "softmax_fp32": "SoftMax",
    "layernorm_bf16": "layer_norm",
    "reduction_fp32": "reduce_kernel",
    "triton_gelu": "triton_",
    "gemm_fp32_4096": "f32f32_f32f32",
    "gemm_tf32_4096": "tf32",
    "gemm_fp8_4096": "qq",
}


def _grade(pct: float) -> str:
    return "excellent" if pct > 75 else "good" if pct >= 60 else "okay" if pct >= 40 else "poor"


RANK = {"poor": 0, "okay": 1, "good": 2, "excellent": 3}


@pytest.fixture(scope="module")
def lib():
    """[(case name, its independent figures, the KernelAnalysis, the ncu_report action)]."""
    timings = json.loads((SAMPLES / "library" / "library_timings.json").read_text())["cases"]
    an = library_analysis()
    actions = _action_metrics(library_report())
    assert len(an.kernels) == len(timings) == len(actions)
    rows = []
    for (name, t), ka in zip(timings.items(), an.kernels):  # launch order = the workload's case order
        if name in NAME_HINT:
            assert NAME_HINT[name] in ka.kernel.name, (name, ka.kernel.name)
        rows.append((name, t, ka, actions[ka.kernel.id]))
    return rows


def _read_action_metrics(path: str) -> list[dict]:
    import ncu_report

    rng = ncu_report.load_report(path).range_by_idx(0)
    out = []
    for i in range(rng.num_actions()):
        act, vals = rng.action_by_idx(i), {}
        for n in act.metric_names():
            with contextlib.suppress(Exception):  # string-valued metrics raise
                vals[n] = act.metric_by_name(n).as_double()
        out.append(vals)
    return out


def _action_metrics(path) -> list[dict]:
    """Every launch's numeric metrics, read by ncu_report in a child process (loading it into
    the test process would make every later read in-process, and its memory stays)."""
    from drgpu_py.readers.isolate import in_child

    return in_child(_read_action_metrics, str(path), what=str(path))


def _m(action: dict, name):
    return action.get(name)


def test_tensor_flops_from_sass_equal_ncu_counters(lib):
    """drgpu counts tensor FLOPs from the executed HGMMA/QGMMA instructions and their shapes;
    ncu's sm__ops_path_tensor_* counters (one operation = one FLOP) must agree exactly."""
    checked = 0
    for name, _, ka, act in lib:
        counted = sum(_m(act, n) for n in act if n.startswith("sm__ops_path_tensor_src_") and n.endswith(".sum"))
        derived = sum(v for p, v in ka.sol.flops.items() if p.startswith("tensor_"))
        if counted:
            checked += 1
            assert derived == pytest.approx(counted, rel=1e-9), name
        else:
            assert derived == 0, name
    assert checked >= 9


def test_tensor_grade_agrees_with_independent_figure(lib):
    """Achieved % of the dense tensor peak, from the problem's FLOPs, ncu's duration and SM
    clock and the whitepaper peak, against drgpu's tensor unit and grade."""
    seen = 0
    for name, t, ka, act in lib:
        if name not in PRECISION:
            continue
        dur = _m(act, "gpu__time_duration.sum") * 1e-9
        clock = _m(act, "sm__cycles_elapsed.avg.per_second")
        indep = 100 * t["flops"] / dur / (WHITEPAPER_TENSOR_PER_SM_CYCLE[PRECISION[name]] * 132 * clock)
        sol = ka.sol
        assert sol.units["tensor"] == pytest.approx(indep, abs=8), name
        assert RANK[sol.grade] >= RANK[_grade(indep)] - (1 if abs(indep - 75) < 3 or abs(indep - 60) < 3 else 0), name
        seen += 1
    assert seen == len(PRECISION)


def test_memory_kernels_dram_share_agrees_with_independent_figure(lib):
    for name, t, ka, act in lib:
        if t["kind"] != "memory" or t["min_bytes"] < 1e8:
            continue
        dur = _m(act, "gpu__time_duration.sum") * 1e-9
        indep = 100 * t["min_bytes"] / dur / HBM3_BYTES_PER_S
        assert ka.sol.units["dram"] == pytest.approx(indep, abs=8), name
        assert RANK[ka.sol.grade] >= RANK[_grade(indep)], name


def test_near_peak_library_kernels_read_as_healthy(lib):
    """Every kernel graded good or excellent: no high finding unless the fix unloads the
    limiting unit (none of the library kernels has such a finding)."""
    from drgpu_py.analysis.bounds import relieved_units
    from drgpu_py.specs import loader as data

    relieves = {f["id"]: f["relieves"] for f in data.findings_catalogue()["findings"]}
    graded = 0
    for name, _, ka, _ in lib:
        sol = ka.sol
        if RANK.get(sol.grade, 0) >= RANK["good"]:
            graded += 1
            for f in ka.findings:
                if f.severity == "high":
                    assert sol.limiter in relieved_units(relieves[f.id]), (name, f.id)
    assert graded >= 12


def test_designed_in_patterns_are_not_defects(lib):
    by = {name: ka for name, _, ka, _ in lib}
    for name in ("gemm_bf16_8192", "gemm_bf16_4096", "gemm_fp8_4096", "sdpa_bf16", "conv_fp16"):
        ka = by[name]
        assert ka.traits.warp_specialized and ka.traits.tensor_core, name
        assert "barrier-imbalance" not in [f.id for f in ka.findings], name
    assert "slow-math" not in [f.id for f in by["sdpa_bf16"].findings]
    assert "slow-math" not in [f.id for f in by["softmax_fp32"].findings]
    assert any("warp-specialized" in n for n in by["gemm_bf16_4096"].notes)


def test_library_kernels_get_caller_advice(lib):
    by = {name: ka for name, _, ka, _ in lib}
    for name, _, ka, _ in lib:
        if not ka.traits.has_line_info and name != "triton_gelu":
            assert all(f.audience == "caller" for f in ka.findings), name
            assert all(f.advice_key == "caller_advice" for f in ka.findings), name
        else:  # source lines: the kernel's own advice (advice_shape.advice_key)
            assert all(f.advice_key != "caller_advice" for f in ka.findings), name
    small = {f.id: f for f in by["gemm_bf16_512"].findings}
    assert "grid-too-small" in small and "Batch several such calls" in small["grid-too-small"].advice
    # A Triton kernel carries its generated source's lines: it is not a library kernel.
    assert by["triton_gelu"].traits.has_line_info


@pytest.mark.parametrize("stem", ["step", "full_set"])
def test_model_step_and_full_set_reports(stem):
    """Reports not made for a single planted case: every kernel graded good or better has no
    high finding that leaves its limiter alone; warp-specialized tensor-core kernels get no
    barrier-imbalance and attention no slow-math; every library finding is for the caller."""
    from drgpu_py.specs import loader as data
    from drgpu_py.analysis.bounds import relieved_units

    relieves = {f["id"]: f["relieves"] for f in data.findings_catalogue()["findings"]}
    kernels = library_analysis(stem).kernels
    tensor = [ka for ka in kernels if ka.traits.tensor_core]
    assert len(tensor) >= 3
    for ka in kernels:
        sol, ids = ka.sol, [f.id for f in ka.findings]
        if RANK.get(sol.grade, 0) >= RANK["good"]:
            assert all(sol.limiter in relieved_units(relieves[f.id]) for f in ka.findings if f.severity == "high"), (
                ka.kernel.name
            )
        if ka.traits.warp_specialized:
            assert "barrier-imbalance" not in ids, ka.kernel.name
        if "sdpa" in ka.kernel.name:
            assert "slow-math" not in ids
    gemm = [ka for ka in tensor if ka.kernel.name.startswith(("nvjet", "sm90_xmma"))]
    assert gemm and all(RANK[ka.sol.grade] >= RANK["okay"] for ka in gemm)


def _all_analyses():
    yield from library_analysis().kernels
    yield from library_analysis("step").kernels
    yield from library_analysis("full_set").kernels
    for case in CASES:
        for v in ("bad", "fixed"):
            yield from analysis_of(case, v).kernels
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    for f in ("serial_steps_bad", "serial_steps_floor"):
        yield from analyze(open_report(SAMPLES / "launch" / f"{f}.ncu-rep")).kernels


@slow
def test_every_estimate_respects_the_physical_bounds():
    """On every real report: no estimate below the launch floor, above a unit's headroom it
    does not relieve, or above any bound listed with it."""
    n = 0
    for ka in _all_analyses():
        floor = ka.sol.launch_floor_ns
        for f in ka.findings:
            n += 1
            assert ka.kernel.duration_ns / f.estimated_speedup >= floor * (1 - 1e-9), (ka.kernel.name, f.id)
            for b in f.bounds:
                assert f.estimated_speedup <= b["limit"] + 1e-3 or b["limit"] < 1.0, (
                    ka.kernel.name,
                    f.id,
                    b,
                )  # limits are rounded to 3 places
            if f.speedup_model in ("latency_hiding", "occupancy"):
                assert f.estimated_speedup <= 2.0 + 1e-9
    assert n > 30


def test_launch_floor_is_the_measured_shortest_launch():
    from drgpu_py.specs import loader as data

    shortest = min(
        a["gpu__time_duration.sum"] for a in _action_metrics(SAMPLES / "launch" / "serial_steps_floor.ncu-rep")
    )
    assert data.load_arch("gh100")["launch_floor_ns"] == pytest.approx(shortest, rel=0.05)


def test_one_block_serial_kernel_gets_batching_advice_not_sms_over_blocks():
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    ka = analyze(open_report(SAMPLES / "launch" / "serial_steps_bad.ncu-rep")).kernels[0]
    ids = {f.id: f for f in ka.findings}
    assert "grid-too-small" not in ids
    # One launch alone: only the launch floor is sure.
    assert ids["serial-kernel"].evidence["launches"] == 1 and ids["serial-kernel"].estimated_speedup < 1.5
    # The Python API groups the report's launches, as drgpu analyze does.
    ka = drgpu_py.analyze(SAMPLES / "launch" / "serial_steps_bad.ncu-rep").kernels[0]
    f = {f.id: f for f in ka.findings}["serial-kernel"]
    # The report holds 3 of the 64 launches: batched into one grid (if the tiles were
    # independent) is the launch-shape model's what-if for 3 blocks, at most 3x; the tiles of
    # a factorisation depend on each other, and the estimate does not assume otherwise: it
    # stays what one launch gives, whatever number of launches was profiled.
    assert f.evidence["launches"] == 3
    assert 1.0 < f.evidence["if_independent"]["speedup"] <= 3.0
    assert f.estimated_speedup == pytest.approx(ids["serial-kernel"].estimated_speedup, rel=0.05)
    # Where each launch needs the previous one, the advice's CUDA graph figure is the one to
    # compare: the 64 launches replayed as one graph (serial_steps_timings.txt).
    graph = float(re.search(r"launch \(([0-9.]+)x\)", f.advice).group(1))
    assert "CUDA graph" in f.advice
    rows = dict(
        line.split(" ", 2)[1:3]
        for line in (SAMPLES / "launch" / "serial_steps_timings.txt").read_text().splitlines()
        if line.startswith("serial_steps")
    )
    measured = float(rows["bad"].split()[0]) / float(rows["fixed"].split()[0])
    assert 1 / 1.5 <= graph / measured <= 1.5


def test_a_near_miss_small_grid_still_gets_grid_too_small():
    """Near miss for serial-kernel: 16 blocks of a grid-stride loop are a grid to enlarge."""
    ids = [f.id for f in analysis_of("few_blocks", "bad").kernels[0].findings]
    assert ids[0] == "grid-too-small" and "serial-kernel" not in ids


def test_json_speed_of_light_is_additive(lib):
    d = lib[0][2].to_dict()["speed_of_light"]
    for key in ("unit", "pct", "near_ceiling", "units", "grade", "limiter", "roofline", "flops", "flops_source"):
        assert key in d
    r = d["roofline"]
    assert r["side"] == "compute" and r["precision"] == "tensor_bf16" and r["pct_of_attainable"] > 75
    assert math.isclose(r["flop_per_s"], r["flops"] / (lib[0][2].kernel.duration_ns * 1e-9), rel_tol=1e-6)


@slow
def test_never_silent_where_there_is_headroom(lib):
    """Below good (on useful work) with many stall cycles and nothing located: an explicit note
    names the top stall and where it is. Near misses: kernels graded good or better, and kernels
    with a located or launch finding, get no such note."""
    noted = 0
    kernels = (
        [ka for _, _, ka, _ in lib]
        + list(library_analysis("step").kernels)
        + [ka for case in CASES for v in ("bad", "fixed") for ka in analysis_of(case, v).kernels]
    )
    for ka in kernels:
        sol, note = ka.sol, [n for n in ka.notes if n.startswith("no known pattern")]
        # Graded on useful work where it is known (a unit can be busy with waste), else on the
        # busiest unit.
        grade = ka.useful.grade if ka.useful is not None and ka.useful.grade is not None else sol.grade
        if RANK.get(grade, 0) >= RANK["good"] or any(f.locations or f.group == "launch" for f in ka.findings):
            assert not note, ka.kernel.name
        elif ka.stall_cycle_pct >= 30:
            assert len(note) == 1, ka.kernel.name
            top = max((r for r in ka.context.reasons if r != "selected"), key=ka.context.reasons.get)
            from drgpu_py.specs import loader as data

            assert data.stall_reasons()[top]["label"] in note[0]
            noted += 1
    assert noted >= 3
    fixed = analysis_of("chase_loads", "fixed").kernels[0]
    assert any("chase_loads.cu:14" in n for n in fixed.notes if n.startswith("no known pattern"))


def test_useful_work_grade_agrees_with_independent_figure(lib):
    """The efficiency grade (useful work at peak over elapsed, analysis/ledger.py) of every
    library kernel with an independent figure (the problem's FLOPs at the whitepaper's dense
    tensor peak, or its minimum bytes at HBM3's peak, over ncu's duration) is within one grade
    of that figure's, and good or excellent where the figure is 60 % or more."""
    seen = 0
    for name, t, ka, act in lib:
        dur = _m(act, "gpu__time_duration.sum") * 1e-9
        if name in PRECISION:
            clock = _m(act, "sm__cycles_elapsed.avg.per_second")
            indep = 100 * t["flops"] / dur / (WHITEPAPER_TENSOR_PER_SM_CYCLE[PRECISION[name]] * 132 * clock)
        elif t["kind"] == "memory" and t["min_bytes"] >= 1e8:
            indep = 100 * t["min_bytes"] / dur / HBM3_BYTES_PER_S
        else:
            continue
        grade = ka.useful.grade
        assert abs(RANK[grade] - RANK[_grade(indep)]) <= 1, (name, indep, ka.useful.to_dict())
        if indep >= 60:
            assert RANK[grade] >= RANK["good"], (name, indep, ka.useful.to_dict())
        seen += 1
    assert seen >= 8
