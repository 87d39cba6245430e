"""Unknown is unknown, never zero: a metric the report lacks makes no finding stronger.

On real reports (bad variants covering most findings), every metric the analysis reads
(``coverage.metric_needs()``: what each detector declares, the speed of light and the time
ledger) is dropped from the kernel one at a time, and so are whole groups: the launch and
device attributes, the speed-of-light throughputs, the stall counters, the PC samples, the
per-instruction source counters (all of them, and each alone: readers fill a column the
report lacks with 0, as done here), the L1 and L2 sector counters, the FLOP counters and the
DRAM counters. Against the full report, no finding may appear and none may get stronger: the
estimate it asks for (after its bounds, before the time ledger shares the time out among the
findings: a weaker or absent finding rightly leaves more of it to another) may not rise, nor
its severity, and its settled estimate stays within what the full report's finding asked for.

What a missing metric may change, and why (the only exceptions):

* ``CAPS``: upper bounds that bound nothing when not measured (the coverage note names the
  metric): the busiest-unit bound and the units in the traffic and launch-shape models
  (speed-of-light throughputs), the active share of the elapsed time (SM cycles), the launch
  floor (duration). Without them an estimate may rise, and a finding the full report's
  detector found but its bounds held below the reporting floor may show.
* ``STAND_INS``: another measurement of the same quantity, for the findings named: the
  kernel-wide stall counters for the PC samples, the kernel-wide lanes per instruction (the
  same measured lanes, unlocated) for the per-instruction ones.

Each ncu section is also dropped whole (the metrics specs/metrics.yaml gives it: a report of
another set). Each kernel is analyzed once per variant from the report read once (about a
minute in all); two reports run in the fast tier, the sweep over the rest is marked slow.
"""

from __future__ import annotations

import dataclasses

import pytest

from conftest import report_path
from drgpu_py.analysis import AnalysisCache, AnalysisOptions, KernelAnalysis, analyze_kernel, coverage
from drgpu_py.analysis.context import UNITS
from drgpu_py.analysis.detectors import REGISTRY
from drgpu_py.analysis.findings import Finding, severity_of, severity_rank
from drgpu_py.analysis.groups import group_profile
from drgpu_py.analysis.sol import L1_FALLBACK, UNIT_METRICS
from drgpu_py.profile import INSTRUCTION_COLUMNS, KernelProfile
from drgpu_py.readers import open_report
from drgpu_py.specs import loader as data

#: Bad variants whose findings cover the detectors that read kernel metrics or per-instruction
#: counters (the planted finding first; others they raise besides).
REPORTS = {
    "lane_branch": "warp-divergence",
    "serial_norm": "barrier-imbalance, warp-divergence",
    "fma_chain": "low-ilp",
    "rowwalk_sum": "global-uncoalesced (L1 hit rate)",
    "smem_stride": "shared-bank-conflict",
    "double_literal": "fp64-conversion",
    "split_lists": "atomic-contention, store-drain",
    "local_hist": "local-memory",
    "hist_walk": "occupancy-limited, low-ilp",
    "half_warps": "block-too-small (partial-warps held back)",
    "sbox_rounds": "constant-cache-divergence",
    "reload_rate": "loop-invariant-load, lsu-throttle",
    "fence_hist": "memory-barrier (memory-latency held back by L2)",
}

#: Per-instruction counter columns (readers fill a missing one with 0).
SOURCE_COUNTERS = tuple(c for c in INSTRUCTION_COLUMNS if c not in ("offset", "sass", "file", "line", "samples"))
SAMPLE_COLUMNS = ("samples", "samples_not_issued")

#: The speed-of-light throughputs (units, pipes, issue slots, and their stand-ins).
THROUGHPUTS = frozenset(
    {metric for metric, _ in UNITS.values()} | {metric for _, metric, _ in UNIT_METRICS.values()} | {L1_FALLBACK}
)
#: Metric -> the upper bound it feeds, which an unmeasured metric leaves unapplied.
CAPS: dict[str, str] = {
    **{metric: "the busiest-unit bound; the units of the traffic and launch-shape models" for metric in THROUGHPUTS},
    "sm__cycles_active.avg": "the active share: launch bounds, and warp-divergence's SM idle time",
    "sm__cycles_elapsed.avg": "the active share: launch bounds, and warp-divergence's SM idle time",
    "gpu__time_duration.sum": "the launch floor",
}

#: Why another measurement of the same quantity may set a finding's estimate.
_COUNTERS = "the kernel-wide stall counters stand in for the PC samples (the stall mix the model reads)"
_LANES = (
    "the kernel-wide lanes per instruction stand in for the per-instruction lanes and samples: the "
    "same measured lanes, the finding unlocated"
)
#: Variant -> {finding whose estimate another measurement of the same quantity sets: why}.
STAND_INS: dict[str, dict[str, str]] = {
    "PC samples": {"block-too-small": _COUNTERS, "low-ilp": _COUNTERS, "warp-divergence": _LANES},
    "PC samples and stall counters": {"warp-divergence": _LANES},
    "source counters": {"warp-divergence": _LANES},
    "column inst_executed": {"warp-divergence": _LANES},
    "column thread_inst_executed": {"warp-divergence": _LANES},
}

#: Relative change below which two estimates are the same (stand-in arithmetic, rounding).
TOLERANCE = 0.01


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    metrics: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()

    @property
    def caps_only(self) -> bool:
        return bool(self.metrics) and not self.columns and all(m in CAPS for m in self.metrics)


def _variants(kernel: KernelProfile) -> list[Variant]:
    """Each metric the analysis reads that the kernel has, then the groups."""
    needs = sorted({m for metrics in coverage.metric_needs().values() for m in metrics})
    out = [Variant(m, (m,)) for m in needs if kernel.has(m)]
    stall_counters = {m for spec in data.stall_reasons().values() for m in spec["counter"]}

    def having(pred) -> tuple[str, ...]:
        return tuple(sorted(m for m in kernel.metrics if pred(m)))

    stall_columns = tuple(c for c in kernel.instructions.columns if c.startswith("stall_"))
    groups = [
        Variant("launch__*", having(lambda m: m.startswith("launch__"))),
        Variant("device__*", having(lambda m: m.startswith("device__"))),
        Variant("speed-of-light throughputs", having(lambda m: m in THROUGHPUTS)),
        Variant("stall counters", having(lambda m: m in stall_counters)),
        Variant("PC samples", having(lambda m: m.startswith("smsp__pcsamp")), stall_columns + SAMPLE_COLUMNS),
        Variant(
            "PC samples and stall counters",
            having(lambda m: m.startswith("smsp__pcsamp") or m in stall_counters),
            stall_columns + SAMPLE_COLUMNS,
        ),
        Variant("source counters", (), SOURCE_COUNTERS),
        *(Variant(f"column {c}", (), (c,)) for c in SOURCE_COUNTERS),
        Variant("l1tex__t_*", having(lambda m: m.startswith("l1tex__t_"))),
        Variant("lts__t_*", having(lambda m: m.startswith("lts__t_"))),
        Variant("FLOP counters", having(lambda m: "sass_thread_inst_executed_op_" in m)),
        Variant("dram__*", having(lambda m: m.startswith("dram__"))),
        # Each ncu section whole (specs/metrics.yaml's sections): a report of another set.
        *(
            Variant(f"section {section}", having(lambda m, section=section: data.metric_section(m) == section))
            for section in sorted({spec["section"] for spec in data.metrics_table()["metrics"].values()})
        ),
    ]
    df = kernel.instructions
    for v in groups:
        counted = [c for c in v.columns if c in df and float(df[c].abs().sum()) > 0]
        if v.metrics or counted:
            out.append(dataclasses.replace(v, columns=tuple(counted)))
    return out


def _without(kernel: KernelProfile, variant: Variant) -> KernelProfile:
    """The kernel as a report without the variant's metrics and per-instruction counters."""
    metrics = {m: v for m, v in kernel.metrics.items() if m not in variant.metrics}
    df = kernel.instructions
    if variant.columns:
        df = df.assign(**{c: 0.0 for c in variant.columns})
    return dataclasses.replace(kernel, metrics=metrics, instructions=df)


def _asked(ka: KernelAnalysis) -> dict[str, tuple[float, float]]:
    """Finding id -> (the estimate it asks for: the model's after its bounds, before the time
    ledger; its settled estimate)."""
    out = {}
    for f in ka.findings:
        limits = [b["limit"] for b in f.bounds if b["kind"] != "ledger"]
        out[f.id] = (max(1.0, min([f.model_speedup, *limits])), f.estimated_speedup)
    return out


def _finding(ka: KernelAnalysis, fid: str) -> Finding:
    return next(f for f in ka.findings if f.id == fid)


def _detected(ka: KernelAnalysis) -> set[str]:
    """Findings whose detector finds its pattern with a gain, reported or held below the floor."""
    assert ka.context is not None and ka.passes is not None
    out = set()
    for spec in data.findings_catalogue()["findings"]:
        got = REGISTRY[spec["detector"]].run(ka.context, ka.passes)
        if got is not None and got.speedup > 1.0:
            out.add(spec["id"])
    return out


def _allowed(variant: Variant, full: Finding, var: Finding) -> bool:
    """Whether the variant's finding may ask for more than the full report's (CAPS, STAND_INS)."""
    if variant.caps_only:
        return True
    why = STAND_INS.get(variant.name, {}).get(var.id)
    if why is _LANES:
        # The stand-in path, not per-instruction lanes read as 0.
        return not var.locations and var.evidence.get("avg_active_threads") == full.evidence.get("avg_active_threads")
    return why is not None


def _stronger(full: KernelAnalysis, var: KernelAnalysis, variant: Variant, detected: set[str]) -> list[str]:
    th = data.thresholds()
    before, after = _asked(full), _asked(var)
    out = []
    for fid, (asked, settled) in after.items():
        if fid not in before:
            if not (variant.caps_only and fid in detected):
                out.append(f"{variant.name}: new {fid} {settled:.3f}x")
            continue
        if _allowed(variant, _finding(full, fid), _finding(var, fid)):
            continue
        was, _ = before[fid]
        limit = was * (1 + TOLERANCE)
        if asked > limit:
            out.append(f"{variant.name}: {fid} asks {asked:.3f}x (full report {was:.3f}x)")
        if settled > limit:
            out.append(f"{variant.name}: {fid} settled at {settled:.3f}x (full report asked {was:.3f}x)")
        if severity_rank(severity_of(asked, th)) < severity_rank(severity_of(was * (1 + TOLERANCE), th)):
            out.append(f"{variant.name}: {fid} {severity_of(was, th)} -> {severity_of(asked, th)}")
    return out


#: The cases of the fast tier (pytest -m "not slow"); the others sweep the rest of REPORTS.
FAST = ("lane_branch", "fma_chain")


@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=[] if c in FAST else [pytest.mark.slow]) for c in sorted(REPORTS)]
)
def test_no_finding_gets_stronger_when_a_metric_is_absent(case):
    profile = group_profile(open_report(report_path(case, "bad")))
    options, cache = AnalysisOptions(), AnalysisCache()
    problems: list[str] = []
    for kernel in profile.kernels:
        full = analyze_kernel(kernel, options, cache)
        assert full.findings, case
        detected = _detected(full)
        for variant in _variants(kernel):
            var = analyze_kernel(_without(kernel, variant), options, cache)
            caps = tuple(m for m in variant.metrics if m in CAPS)
            if caps and not variant.caps_only:
                # A section holds upper bounds (CAPS) and other metrics: its bounds dropped
                # alone may raise an estimate; the rest of the section may add nothing to that.
                capless = Variant(f"{variant.name} (its CAPS alone)", caps)
                base = analyze_kernel(_without(kernel, capless), options, cache)
                problems += _stronger(full, base, capless, detected)
                problems += _stronger(base, var, variant, set())
            else:
                problems += _stronger(full, var, variant, detected)
    assert not problems, "\n".join(problems)


def test_every_variant_kind_is_exercised():
    """The variants of one report hold every single metric it has of those the analysis reads
    and every group, each dropping something (a check on the test itself)."""
    kernel = group_profile(open_report(report_path("lane_branch", "bad"))).kernels[0]
    names = {v.name for v in _variants(kernel)}
    assert {"launch__*", "PC samples", "source counters", "column thread_inst_executed", "l1tex__t_*"} <= names
    assert {"section Occupancy", "section LaunchStats", "section SpeedOfLight"} <= names
    assert "smsp__thread_inst_executed_per_inst_executed.ratio" in names
    assert all(v.metrics or v.columns for v in _variants(kernel))


# ---- the cases the issue named ----------------------------------------------------------------------


def _analysis(case: str, metrics: tuple[str, ...] = (), columns: tuple[str, ...] = ()) -> KernelAnalysis:
    kernel = open_report(report_path(case, "bad")).kernels[0]
    return analyze_kernel(_without(kernel, Variant("", metrics, columns)), AnalysisOptions())


def test_no_lanes_measured_is_no_divergence():
    """Without smsp__thread_inst_executed_per_inst_executed.ratio and the per-instruction thread
    counts, the lanes are not measured: no warp-divergence at '0.0 of 32 threads active'."""
    ka = _analysis("lane_branch", ("smsp__thread_inst_executed_per_inst_executed.ratio",), ("thread_inst_executed",))
    assert "warp-divergence" not in [f.id for f in ka.findings]


def test_no_eligible_warps_measured_is_no_low_ilp():
    """Without smsp__warps_eligible, whether ready warps hide the waits is not known: low-ilp is
    not raised (not at '0.00 warps ready'), and the note names the metric."""
    ka = _analysis("fma_chain", ("smsp__warps_eligible.avg.per_cycle_active",))
    assert "low-ilp" not in [f.id for f in ka.findings]
    assert any(n.startswith("low-ilp not evaluated fully") and "smsp__warps_eligible" in n for n in ka.notes)


@pytest.mark.parametrize("hit_rate", ["l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct"])
def test_a_missing_hit_rate_is_no_miss(hit_rate):
    """global-uncoalesced: an L1 or L2 hit rate the report lacks is not 0 %: the excess sectors
    are not assumed to reach L2 or DRAM, so the estimate is no larger than with the rate."""
    full, _ = _asked(_analysis("rowwalk_sum"))["global-uncoalesced"]
    got = _asked(_analysis("rowwalk_sum", (hit_rate,))).get("global-uncoalesced")
    assert got is None or got[0] <= full * (1 + TOLERANCE)
