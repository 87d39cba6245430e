"""The memory-side estimators' mechanisms, checked on the real sample reports: what a fix
changes that the estimate must see (not the estimated number itself)."""

from __future__ import annotations

from conftest import analysis_of, report_path
from drgpu_py.readers import open_report
from drgpu_py.sass.cfg import build_cfg
from drgpu_py.sass.isa import parse_listing


def _finding(case: str, fid: str, variant: str = "bad"):
    k = analysis_of(case, variant).kernels[0]
    return next((f for f in k.findings if f.id == fid), None)


def _stores_in_loops(case: str, variant: str) -> int:
    k = open_report(report_path(case, variant)).kernels[0]
    cfg = build_cfg(parse_listing(zip(k.instructions.index, k.instructions["sass"])))
    return sum(1 for lp in cfg.loops for j in cfg.loop_instructions(lp) if cfg.insts[j].opcode in ("STG", "ST"))


def test_hoisting_the_reloads_also_keeps_a_one_address_store_in_a_register():
    """x = *p ... *p = x in a loop that reloads aliasing-blocked invariants: once the reloads
    leave the loop the compiler stores once after it (the fixed loops of lcg_state and
    oscillator_params hold no store); the estimate counts those stores as removed. Stores to
    several slots (reload_rate's s % 8) stay in memory and are not counted."""
    for case in ("lcg_state", "oscillator_params"):
        assert _stores_in_loops(case, "bad") > 0 and _stores_in_loops(case, "fixed") == 0, case
        f = _finding(case, "loop-invariant-load")
        assert f.evidence["promoted_accesses"] > 0, case
    f = _finding("reload_rate", "loop-invariant-load")
    assert f.evidence["promoted_accesses"] == 0


def test_a_returning_atomic_keeps_one_operation_per_warp_instruction():
    """Slot allocation with ATOM (split_lists) aggregated within the warp still sends one
    returning atomic per warp instruction to L2 (the fixed kernel's L2 atomic sectors), so
    the estimate keeps those; on the fixed kernel, whose ATOMs run on one lane, the next
    level (one per block) is what remains to gain. Reductions without a returned value (RED)
    keep nothing."""
    fixed = open_report(report_path("split_lists", "fixed")).kernels[0]
    assert fixed.m("lts__t_sectors_srcunit_tex_op_atom.sum", 0.0) > 0
    bad = _finding("split_lists", "atomic-contention").evidence["kept_after_aggregation"]
    after = _finding("split_lists", "atomic-contention", "fixed").evidence["kept_after_aggregation"]
    assert 0 < bad < after < 1
    for case in ("dot_atomic", "global_atomics"):
        assert _finding(case, "atomic-contention").evidence["kept_after_aggregation"] == 0, case


def test_a_chain_of_dependent_loads_is_one_load_in_flight():
    """Pointer chasing and binary search unrolled by the compiler issue many loads per
    iteration, each taking its address from the previous one: memory-latency is raised at
    the chained load although L2 runs above bound_pct (hop_chains)."""
    for case, line in (("hop_chains", 23), ("bsearch_batch", 23)):
        f = _finding(case, "memory-latency")
        assert f is not None, case
        assert f.locations[0]["line"] == line, (case, f.locations[:2])
    k = open_report(report_path("hop_chains", "bad")).kernels[0]
    cfg = build_cfg(parse_listing(zip(k.instructions.index, k.instructions["sass"])))
    from drgpu_py.sass.dataflow import load_chain_depth

    loads = [sum(cfg.insts[j].is_global_load() for j in cfg.loop_instructions(lp)) for lp in cfg.loops]
    depths = [load_chain_depth(cfg, cfg.loop_instructions(lp)) for lp in cfg.loops]
    assert max(depths) > 1 and all(d == n for d, n in zip(depths, loads) if n)


def test_a_returning_atomic_keeps_one_operation_per_counter_its_lanes_pick():
    """split_lists picks one of two counters by a data bit ((k >> 7) & 1 scaled to a 4-byte
    offset: an AND with a one-bit mask): a warp aggregation keeps one returning atomic per
    counter per warp (the fix issues two from lane 0), twice the one-per-instruction floor."""
    from drgpu_py.analysis.detectors.memory.atomic_contention import _atomic_addresses

    ctx = analysis_of("split_lists", "bad").kernels[0].context
    atoms = [i.pc for i in ctx.insts if i.is_global_atomic()]
    assert atoms and all(_atomic_addresses(ctx, pc) == 2 for pc in atoms)
    fixed = open_report(report_path("split_lists", "fixed")).kernels[0]
    fixed_atoms = fixed.instructions["sass"].str.contains(r"\bATOMG\b").sum()
    assert fixed_atoms == 2  # one per counter, from lane 0


def test_hoisted_reloads_take_their_own_samples_with_them():
    """The reloads leave the loop: their issue and fixed-latency waits go too, not only the
    waits for their data (oscillator_params: LDGs with 'wait' samples before each DFMA chain)."""
    for case in ("oscillator_params", "lcg_state"):
        ev = _finding(case, "loop-invariant-load").evidence
        assert ev["removed_sample_share"] > ev["blamed_sample_share"], case


def test_the_moved_constant_lookups_cost_the_shared_memory_banks():
    """constant-cache-divergence: the fix moves the lookups to shared memory (or L1), where a
    warp of data-selected words takes as many wavefronts as its fullest bank holds: 3.53 for 32
    random 4-byte words (balls in bins), 2 x 3.08 for 8-byte ones. sbox_rounds' fixed kernel
    measures 3.2 shared wavefronts per lookup; the bound binds on sbox_rounds and interp_knots,
    whose lookups cost the constant cache 61 and 108 cycles per SM, and not on const_lookup
    (a 4 KB table, 330 cycles per lookup)."""
    from drgpu_py.analysis.detectors.constant.constant_cache_divergence import (
        _table_lookup_wavefronts,
        expected_max_load,
    )

    assert expected_max_load(1, 32) == 1.0 and abs(expected_max_load(5, 1) - 5.0) < 1e-9
    assert abs(expected_max_load(32, 32) - 3.533) < 1e-3
    assert abs(_table_lookup_wavefronts(8, 32) - 2 * expected_max_load(16, 16)) < 1e-9
    # a masked index into a table smaller than the banks: every entry in its own bank
    assert _table_lookup_wavefronts(4, 32, values=8) == 1.0 and _table_lookup_wavefronts(8, 32, values=8) == 2.0
    fixed = open_report(report_path("sbox_rounds", "fixed")).kernels[0]
    per = fixed.m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") / fixed.m(
        "smsp__sass_inst_executed_op_shared_ld.sum"
    )
    assert 2.5 < per < _table_lookup_wavefronts(4, 32)
    for case, binds in (("sbox_rounds", True), ("interp_knots", True), ("const_lookup", False)):
        f = _finding(case, "constant-cache-divergence")
        assert (f.model_speedup >= f.evidence["lookup_bound"] - 0.01) == binds, (case, f.model_speedup, f.evidence)
