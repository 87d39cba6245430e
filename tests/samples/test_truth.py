"""What the user reads must be true (issue 21): no PC sample is silently dropped, advice
does not contradict its evidence, fixed code gets no false finding, and the messages name
the real remedy. Every test runs on a real report of sample_reports/ or the CLI."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from drgpu_py.cli import app

from conftest import CASES, analysis_of, report_path, sample_params


def _over_duration(speedup: float, bounds: list[dict]) -> float:
    """A what-if over the time warps run, as the kernel's speedup: the launch floor (its bound's
    limit, among a finding's ``bounds``, is duration / floor) is the part no change removes."""
    (limit,) = [b["limit"] for b in bounds if b["kind"] == "launch_floor"]
    return 1.0 / (1.0 / limit + (1.0 - 1.0 / limit) / speedup)


runner = CliRunner()


# ---- 1. PC samples at addresses without SASS -------------------------------------------------
@pytest.mark.parametrize("ext", ["ncu-rep", "raw.csv"])
def test_system_fence_samples_are_counted_not_dropped(ext):
    """A system-scope fence runs code outside the function's SASS listing: 88% of the
    report's samples (memory barrier) sit there. They must count in the stall mix (kernel
    level) and be reported as unattributed, not vanish."""
    ka = analysis_of("sysfence_loop", "bad", ext).kernels[0]
    acc = ka.context.accounting
    assert acc["reported"] == 17397
    assert acc["at_instructions"] + acc["unattributed"] == pytest.approx(acc["reported"])
    assert acc["unattributed"] > 0.8 * acc["reported"]
    assert acc["by_reason"]["membar"] > 14000
    assert ka.context.share("membar") > 0.8  # was 7% with the samples dropped
    assert any("PC samples (88.4%)" in n and "no source line" in n for n in ka.notes)
    mem = next(f for f in ka.findings if f.id == "memory-barrier")
    assert mem.stall_share > 0.8


@pytest.mark.parametrize("case", sample_params(CASES))
def test_every_kernel_reconciles_its_samples(case):
    for variant in ("bad", "fixed"):
        for ka in analysis_of(case, variant).kernels:
            acc = ka.context.accounting
            if acc is None:
                continue
            total = acc["at_instructions"] + acc["unattributed"]
            if acc["reported"] is not None:
                assert total == pytest.approx(acc["reported"], abs=1.0), (case, variant)
            assert ka.context.samples_total == pytest.approx(total, abs=1.0)


def test_unattributed_samples_in_every_output(tmp_path):
    rep = str(report_path("sysfence_loop", "bad"))
    r = runner.invoke(app, ["analyze", rep, "-f", "json"])
    k = json.loads(r.stdout)["kernels"][0]
    assert k["samples"]["unattributed"] == 15386 and k["samples"]["reported"] == 17397
    assert k["samples"]["unattributed_by_reason"]["membar"] == 14709
    r = runner.invoke(app, ["analyze", rep], env={"COLUMNS": "250"})
    assert "15,386 of 17,397 PC samples" in r.stdout
    assert "at no instruction of the SASS listing" in r.stdout
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["analyze", rep, "-f", "html", "-o", str(out)]).exit_code == 0
    assert "15,386 of 17,397 PC samples" in out.read_text()


# ---- 7. a raw CSV without its source page ------------------------------------------------------
def test_raw_csv_alone_names_the_missing_source_export(tmp_path):
    raw = tmp_path / "fence.raw.csv"
    shutil.copy(report_path("fence_loop", "bad", "raw.csv"), raw)
    r = runner.invoke(app, ["analyze", str(raw), "-f", "json"])
    assert r.exit_code == 0, r.output
    notes = json.loads(r.stdout)["kernels"][0]["notes"]
    text = " ".join(notes)
    assert "no PC sampling" not in text and "collect the SourceCounters" not in text
    assert "PC sampling was collected (5,400 samples) but the source-page export is missing" in text
    assert "ncu -i fence.ncu-rep --csv --page source --print-source sass > fence.source.csv" in text


# ---- 2. advice true to its evidence -------------------------------------------------------
def _finding(case, variant, fid, ext="ncu-rep"):
    ka = analysis_of(case, variant, ext).kernels[0]
    return next(f for f in ka.findings if f.id == fid)


def test_store_drain_without_stores_names_the_atomics():
    f = _finding("global_atomics", "bad", "store-drain")
    assert f.evidence["global_store_sectors"] == 0 and f.evidence["atomic_instructions"] > 0
    assert "atomics" in f.advice and "wider, coalesced stores" not in f.advice
    g = _finding("const_lookup", "fixed", "store-drain")  # a kernel that does store
    assert g.evidence["global_store_sectors"] > 0 and "wider, coalesced stores" in g.advice


def test_warp_reduce_intrinsic_only_for_integer_atomics():
    f = _finding("global_atomics", "bad", "atomic-contention")  # atomicAdd(unsigned*)
    assert f.evidence["atomic_data_types"] == ["integer"] and "__reduce_add_sync" in f.advice
    g = _finding("dot_atomic", "bad", "atomic-contention")  # atomicAdd(float*): RED.E.ADD.F32
    assert g.evidence["atomic_data_types"] == ["float"]
    assert "__shfl_down_sync" in g.advice and "__reduce_add_sync" not in g.advice


@pytest.mark.parametrize("case", sample_params(CASES))
def test_shares_in_advice_are_the_shares_shown(case):
    import re

    for variant in ("bad", "fixed"):
        for f in analysis_of(case, variant).kernels[0].findings:
            for m in re.finditer(r"(\d+)% of stall (cycles|samples)", f.advice):
                assert int(m.group(1)) == round(100 * f.stall_share), (case, variant, f.id, f.advice)


def test_capped_estimate_reads_as_a_lower_bound(tmp_path, monkeypatch):
    """With the model's ceiling at 95% of the time removed (20x), global_atomics' contention
    (98% of stall cycles) reaches it: every output says "at least" of the figure over the
    kernel's duration (20x of the time warps run, less the launch floor), none prints it as if
    measured. A finding under the ceiling is not capped."""
    from drgpu_py.analysis.detectors import base as detectors

    assert _finding("global_atomics", "bad", "lsu-throttle").estimate_capped is False
    monkeypatch.setattr(detectors, "MAX_REMOVABLE", 0.95)
    rep = str(report_path("global_atomics", "bad"))
    d = json.loads(runner.invoke(app, ["analyze", rep, "-f", "json", "-j", "1"]).stdout)
    f = d["kernels"][0]["findings"][0]
    assert f["id"] == "atomic-contention" and f["estimate_capped"] is True
    figure = _over_duration(20.0, f["bounds"])
    assert f["estimated_speedup"] == pytest.approx(figure, abs=1e-3)
    shown = f"{f['estimated_speedup']:.2f}x"
    assert any("estimate capped at 20x" in n and f"at least {shown}" in n for n in f["notes"])
    assert d["summary"][0]["findings"][0]["estimate_capped"] is True
    r = runner.invoke(app, ["analyze", rep, "-j", "1"], env={"COLUMNS": "250"})
    assert f"≥{shown} (capped)" in r.stdout and f"| {shown}" not in r.stdout.replace("│", "|")
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["analyze", rep, "-f", "html", "-j", "1", "-o", str(out)]).exit_code == 0
    assert f"est. ≥{shown} (capped)" in out.read_text()


# ---- 3. barrier-imbalance names the unbalanced work ------------------------------------------
@pytest.mark.parametrize("case,line", [("serial_norm", 19), ("tri_scan", 23), ("skew_segments", 22)])
def test_barrier_finding_names_the_work_only_some_warps_run(case, line):
    """The loop whose trip count or guard depends on the thread index (thread 0's loop,
    thread t's triangular loop, warp w's segment) is named beside the barrier, in the
    locations, the evidence and the advice."""
    f = _finding(case, "bad", "barrier-imbalance")
    work = [loc for loc in f.locations if loc.get("role")]
    assert line in [loc["line"] for loc in work], f.locations
    assert f"{case}.cu:{line}" in f.evidence["unbalanced_work"]
    assert f"{case}.cu:{line}" in f.advice
    assert all(c >= 4 * 600 for c in f.evidence["barrier_interval_cycles"])


def test_barrier_waits_after_one_memory_round_trip_are_not_imbalance():
    """skew_segments' fixed variant syncs after each segment's single load per thread and
    tri_scan's after a 0..15-step loop: the waits there are the slowest warp's access."""
    from drgpu_py.analysis.detectors.sync.barrier_imbalance import _barrier_regions

    for case in ("skew_segments", "tri_scan"):
        k = analysis_of(case, "fixed").kernels[0]
        regions = _barrier_regions(k.context)
        assert any(r["work"] for r in regions)  # thread-dependent code exists...
        assert all(r["interval_cycles"] < 4 * 600 for r in regions if r["work"])  # ...in short intervals
        assert "barrier-imbalance" not in [f.id for f in k.findings]


def test_a_triangular_loop_is_work_the_fix_removes_not_only_waits():
    """tri_scan: thread t sums tile[0..t] (its exit compares a counter derived from the thread
    index by arithmetic alone, and the lanes of a warp leave it up to 32 steps apart). The
    estimate removes the waits and the loop's repeated steps beyond the first warp's share,
    unloading the shared-memory pipe the loop keeps busy; it holds against the measured scan."""
    from conftest import timed_speedup
    from drgpu_py.analysis.detectors.sync.barrier_imbalance import _triangular_loops

    f = _finding("tri_scan", "bad", "barrier-imbalance")
    assert f.severity == "high" and f.evidence["triangular_lane_spread"] > 1.0
    assert 0.3 < f.evidence["triangular_loop_share"] < 0.6
    assert f.bounded_by != "stall_cycles"
    assert 1 / 1.5 <= f.estimated_speedup / timed_speedup("tri_scan") <= 1.5
    # Loops that stride by the block size, or run a fixed count under a thread guard, or
    # stop at a bound read from memory, are not triangular.
    for case, variant in (
        ("serial_norm", "bad"),
        ("serial_norm", "fixed"),
        ("skew_segments", "bad"),
        ("skew_segments", "fixed"),
        ("tri_scan", "fixed"),
    ):
        assert _triangular_loops(analysis_of(case, variant).kernels[0].context) == {}, (case, variant)


def test_spreading_full_warp_work_is_credited_as_latency_hiding():
    """skew_segments: the one warp that sums the long segment runs all 32 lanes, so spreading
    its loop over the block issues the same loads from more warps (at most latency_hiding_max);
    serial_norm's thread-0 loop runs one lane, and the fix fills the other 31 as well."""
    from drgpu_py.specs import loader as data

    cap = data.thresholds()["latency_hiding_max"]
    skew = _finding("skew_segments", "bad", "barrier-imbalance")
    assert skew.evidence["unbalanced_work_lanes"] == 32
    assert skew.estimated_speedup == pytest.approx(_over_duration(cap, skew.bounds), rel=2e-3)
    norm = _finding("serial_norm", "bad", "barrier-imbalance")
    assert norm.evidence["unbalanced_work_lanes"] == 1 and norm.estimated_speedup > cap


@pytest.mark.parametrize("case", ["iter_counts", "lane_branch", "redblack_mix"])
def test_divergence_shortens_only_the_active_sm_time(case):
    """The SMs' idle cycles (elapsed minus active: launch ramp, last blocks) stay when the
    lanes reconverge: the estimate applies to the active share only."""
    from conftest import timed_speedup

    f = _finding(case, "bad", "warp-divergence")
    assert 0.9 < f.evidence["sm_active_share"] < 1.0
    assert 1 / 1.5 <= f.estimated_speedup / timed_speedup(case) <= 1.5


@pytest.mark.parametrize("case", ["seg_sort", "power_tile", "smem_stride"])
def test_bank_conflict_estimate_keeps_the_instructions_issued_meanwhile(case):
    """Removing the conflict wavefronts' time does not remove the instructions issued during
    it (the issue slots' share, evenly spread): below the traffic model's 1/(1 - w)."""
    from conftest import timed_speedup

    f = _finding(case, "bad", "shared-bank-conflict")
    i = f.evidence["issue_active_share"]
    assert 0.0 < i < 0.1
    nways = f.evidence["wavefronts_per_conflict_free_access"]
    running = 1.0 / (1.0 / nways + (1.0 - 1.0 / nways) * i)
    assert f.estimated_speedup == pytest.approx(_over_duration(running, f.bounds), rel=0.02)
    assert 1 / 1.5 <= f.estimated_speedup / timed_speedup(case) <= 1.5


# ---- 3. slow-math only where precise math runs --------------------------------------------------
@pytest.mark.parametrize("case,variant", [("nm_fast_sfu", "bad"), ("redblack_mix", "bad"), ("precise_math", "fixed")])
def test_fast_intrinsics_are_not_slow_math(case, variant):
    """__sinf/__cosf (MUFU.SIN of x/2pi), __expf (MUFU.EX2 of x*log2 e) and __logf (MUFU.LG2
    times ln 2) are what slow-math advises: a line made of them gets no slow-math, however
    much other work it holds."""
    from drgpu_py.analysis.detectors.instruction.slow_math import _math_mufus
    from drgpu_py.sass.dataflow import fast_intrinsic

    k = analysis_of(case, variant).kernels[0]
    ctx = k.context
    mufus = [i for i in ctx.insts if i.is_mufu() and i.modifiers[0] in ("SIN", "COS", "EX2", "LG2")]
    assert mufus and all(fast_intrinsic(ctx.cfg, ctx.cfg.index_of_pc[i.pc]) for i in mufus)
    assert not _math_mufus(ctx) and "slow-math" not in [f.id for f in k.findings]


def test_precise_math_keeps_slow_math():
    for case in ("precise_math", "moment_pow", "gravity_powf"):
        assert "slow-math" in [f.id for f in analysis_of(case, "bad").kernels[0].findings], case


# ---- 4. inlined header code without a binary ---------------------------------------------------
@pytest.mark.parametrize("case,fid", [("split_lists", "atomic-contention"), ("queue_fence", "memory-barrier")])
def test_header_location_says_the_binary_restores_the_call_site(case, fid):
    """Without a binary the report gives atomicAdd's (and the libcu++ fence's) samples the CUDA
    header's line only: the finding says so and names --cubin/--binary; with the cubin the
    location is the calling line of the sample, inlined_from the header, and no such note."""
    f = _finding(case, "bad", fid)
    assert f.locations[0]["file"].endswith((".hpp", ".h"))
    assert any("--cubin or --binary" in n and "call site" in n for n in f.notes), f.notes
    cubin = report_path(case, "bad").parent / f"{case}.sm_90.cubin"
    out = runner.invoke(app, ["analyze", str(report_path(case, "bad")), "--cubin", str(cubin), "-f", "json"])
    assert out.exit_code == 0, out.output
    g = next(x for x in json.loads(out.stdout)["kernels"][0]["findings"] if x["id"] == fid)
    assert g["locations"][0]["file"].endswith(f"{case}.cu") and g["locations"][0].get("inlined_from")
    assert not any("--cubin or --binary" in n for n in g["notes"])


# ---- 3. no bank-conflict finding without a line ------------------------------------------------
def test_bank_conflict_counters_without_conflicted_instruction_ways_still_locate_the_finding():
    """On a tree reduction with strided shared indexing the per-instruction conflict ways read 0
    while the kernel's counters count 70 % conflict wavefronts: the finding is raised from the
    counters and located at the shared instructions by their stall samples (smem_stride with its
    per-instruction ways cleared: the same line as with them)."""
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    prof = open_report(report_path("smem_stride", "bad"))
    f = next(f for f in analyze(prof).kernels[0].findings if f.id == "shared-bank-conflict")
    assert f.locations and f.locations[0]["line"]
    k = prof.kernels[0]
    k.instructions["shared_nway"] = k.instructions["shared_nway"].where(k.instructions["shared_nway"].isna(), 1.0)
    got = [f for f in analyze(prof).kernels[0].findings if f.id == "shared-bank-conflict"]
    # The counters' conflicts are placed on the shared instructions by their stall samples.
    assert got and got[0].locations[0]["line"] == f.locations[0]["line"]
    assert "per-instruction conflict ways read none" in got[0].evidence["located_by"]
