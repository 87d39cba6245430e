"""Typed records for the data files' contents that cross modules: thresholds and per-chip
architecture constants. Keys are checked statically (mypy) where code reads them by name, and
against the YAML files by tests (tests/unit/test_records.py): a key the code reads but the data
lacks, or the data has but the record omits, fails there instead of reading as missing.

Contract: type declarations only; the loaders (specs/loader.py) return these shapes.
"""

from __future__ import annotations

from typing import TypedDict


class Thresholds(TypedDict):
    """specs/thresholds.yaml's ``thresholds`` keys, each at its default or a user override."""

    sol_pct: float
    grade_okay: float
    grade_good: float
    grade_excellent: float
    silence_stall_pct: float
    slicing_budget_instructions: float
    model_budget_instructions: float
    latency_hiding_max: float
    saturation_pct: float
    bound_pct: float
    launch_bound_us: float
    high_speedup: float
    medium_speedup: float
    min_speedup: float
    uncoalesced_excess: float
    bank_conflict_excess: float
    reuse_loads_per_fma: float
    reuse_reads_per_store: float
    reuse_share: float
    reuse_target_loads_per_fma: float
    fp64_inst_share: float
    barrier_share: float
    barrier_full_warp_lanes: float
    barrier_interval_latencies: float
    grid_fill: float
    launch_overlap_norm: float
    serial_blocks: float
    dominant_share: float
    local_inst_share: float
    invariant_load_share: float
    repeated_pass_share: float
    low_ilp_share: float
    low_ilp_eligible: float
    slow_math_ratio: float
    slow_math_share: float
    division_share: float
    division_kept: float
    division_kept_varying: float
    partial_warp_fill: float
    latency_load_share: float
    latency_loads_per_iteration: float
    divergence_threads: float
    atomic_share: float
    atomic_idle_pct: float
    constant_share: float
    membar_share: float
    fence_gpu_kept: float
    fence_dram_pct: float
    overhead_issue_pct: float
    overhead_share: float
    model_unroll_k: float
    overhead_useful_per_iteration: float
    occupancy_pct: float
    latency_share: float
    tail_waves: float
    tail_loss: float
    drain_share: float
    icache_share: float
    pipe_throttle_share: float
    lg_throttle_share: float
    rank_imbalance: float
    fold_share: float
    error_saved_share: float
    warning_saved_share: float


class ConstantCache(TypedDict):
    bytes: int
    line_bytes: int


class ArchConstants(TypedDict, total=False):
    """specs/arch/base.yaml deep-merged with a chip's overlay (loader.load_arch); ``known``
    is False for a chip without a file of its own (base constants)."""

    schema: str
    name: str
    inherits: str
    compute_capability: str
    known: bool
    issue_slots_per_sm: int
    schedulers_per_sm: int
    shared_banks: int
    max_warps_per_sm: int
    registers_per_sm: int
    latency: dict[str, float]
    constant_cache: ConstantCache
    pipe_rate: dict[str, float]
    latency_issue_norm: float
    peak_flops_per_sm_cycle: dict[str, float]
    launch_floor_ns: float
    block_start_ns: float | None
    f2f64_pipe: str
    # Peak DRAM bandwidth, for reports without ncu's own peak (no shipped file sets it yet).
    dram_bytes_per_s: float
