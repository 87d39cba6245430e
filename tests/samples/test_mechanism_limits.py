"""Every estimate within its mechanism's limit: the most the change can give if it removed all
of what its mechanism costs, which the finding's evidence carries as ``mechanism_limit``
(docs/json-schema.md), on every sample report's findings.

* warp-divergence: 32 / the active lanes per executed instruction (every lane busy);
* global-uncoalesced: actual / ideal global sectors (every access coalesced);
* shared-bank-conflict: actual / ideal shared wavefronts (every access conflict-free);
* integer-division, fp64-conversion, slow-math: 1 / (1 - the share of the time, or of an
  issue-bound kernel's instructions, the change removes);
* constant-cache-divergence: the moved lookups' own time (lookup_bound);
* the launch findings and low-data-reuse: the launch-shape model's what-if for the change
  (tests/samples/test_launch_shape.py checks the same against launch_model);
* serial-kernel: one launch floor removed per launch, duration / max(duration - floor, floor).

The sweep covers the project's samples and the public corpus (sample_reports/public/roundN/:
programs nobody on the project wrote); the public sweep is slow, one public report stays in the
fast tier. Findings without a closed-form limit: docs/json-schema.md, "Mechanism limits".
"""

from __future__ import annotations

import pytest
import yaml

from conftest import CASES, ROOT, analysis_of, library_analysis, shared, slow
from drgpu_py.analysis import analyze
from drgpu_py.analysis.groups import group_profile
from drgpu_py.readers import open_report
from drgpu_py.analysis.detectors import MAX_REMOVABLE

#: Findings whose evidence always carries their mechanism's limit.
LIMITED = (
    "warp-divergence",
    "global-uncoalesced",
    "shared-bank-conflict",
    "integer-division",
    "fp64-conversion",
    "slow-math",
    "constant-cache-divergence",
    "occupancy-limited",
    "grid-too-small",
    "partial-warps",
    "block-too-small",
    "tail-effect",
    "low-data-reuse",
    "serial-kernel",
)
PUBLIC = ROOT / "sample_reports" / "public"
#: The public report kept in the fast tier: warp divergence and a repeated pass.
PUBLIC_FAST = "round2/score"
LAUNCH = ("occupancy-limited", "grid-too-small", "partial-warps", "block-too-small", "tail-effect")


def _share_of(limit: float) -> float:
    """The share of the time a limit 1 / (1 - share) removes."""
    return 1.0 - 1.0 / limit


def _removable(share: float) -> float:
    """A share of the time as a limit counts it: no change removes more than MAX_REMOVABLE."""
    return min(share, MAX_REMOVABLE)


def _check(f) -> None:
    """The finding's limit: present, what it says it is, and not exceeded."""
    ev = f.evidence
    limit = ev["mechanism_limit"]
    assert set(limit) == {"value", "what"} and isinstance(limit["what"], str) and limit["what"]
    value = limit["value"]
    assert value >= 1.0
    assert f.estimated_speedup <= value + 1e-3
    assert f.model_speedup <= value + 1e-3
    if f.id == "warp-divergence":
        # avg_active_threads is rounded to 0.1 lane
        assert value == pytest.approx(32.0 / ev["avg_active_threads"], rel=0.05 / ev["avg_active_threads"] + 1e-3)
    elif f.id == "global-uncoalesced":
        assert _share_of(value) == pytest.approx(ev["excessive_sector_share"], abs=6e-4)
    elif f.id == "shared-bank-conflict":
        assert value == pytest.approx(ev["wavefronts_per_conflict_free_access"], rel=5e-3)
    elif f.id == "fp64-conversion":
        assert _share_of(value) == pytest.approx(_removable(ev["removed_sample_share"]), abs=6e-4)
    elif f.id == "integer-division":
        # the sequence's samples, or its instructions where the kernel is issue-bound
        assert _share_of(value) >= _removable(ev["sample_share"]) - 6e-4
        assert _share_of(value) <= max(ev["sample_share"], ev["division_instruction_share"]) + 6e-4
    elif f.id == "slow-math":
        assert _share_of(value) >= _removable(ev["slow_line_instruction_share"]) - 6e-4
    elif f.id == "constant-cache-divergence":
        assert value == pytest.approx(ev["lookup_bound"], abs=6e-3)
    elif f.id == "serial-kernel":
        dur, floor = ev["gpu__time_duration.sum"], ev["launch_floor_ns"]
        assert value == pytest.approx(dur / max(dur - floor, floor), rel=1e-3)
    elif f.id in LAUNCH:
        assert value == pytest.approx(ev["launch_model"]["speedup"], abs=1e-3)


def _analyses() -> list:
    cases = set(CASES)
    for path in (ROOT / "sample_reports").glob("heldout*.yaml"):
        cases |= set(yaml.safe_load(path.read_text(encoding="utf-8"))["held_out"])
    out = [analysis_of(case, "bad") for case in sorted(cases)]
    out += [analysis_of(case, "fixed") for case in sorted(CASES)]
    return out + [library_analysis(stem) for stem in ("library", "step", "full_set")]


def _checked(analyses) -> dict[str, int]:
    """Every finding of ``analyses`` within its limit; finding id -> how many were checked."""
    checked: dict[str, int] = {}
    for analysis in analyses:
        for ka in analysis.kernels:
            for f in ka.findings:
                if f.id in LIMITED:
                    assert "mechanism_limit" in f.evidence, (ka.kernel.name, f.id)
                if "mechanism_limit" in f.evidence:
                    try:
                        _check(f)
                    except AssertionError as e:
                        raise AssertionError(
                            f"{ka.kernel.name}: {f.id} {f.estimated_speedup:.3f}x, {f.evidence}"
                        ) from e
                    checked[f.id] = checked.get(f.id, 0) + 1
    return checked


def _public(stem: str):
    path = PUBLIC / f"{stem}.ncu-rep.xz"
    return shared(f"public-{stem.replace('/', '-')}", lambda: analyze(group_profile(open_report(path))))


def test_every_estimate_is_within_its_mechanisms_limit_on_every_sample():
    checked = _checked(_analyses())
    assert set(checked) == set(LIMITED), set(LIMITED) - set(checked)
    assert sum(checked.values()) >= 100


@slow
def test_every_estimate_is_within_its_mechanisms_limit_on_every_public_report():
    stems = sorted(str(p.relative_to(PUBLIC)).removesuffix(".ncu-rep.xz") for p in PUBLIC.glob("round*/*.ncu-rep.xz"))
    assert len(stems) >= 24
    checked = _checked(_public(stem) for stem in stems)
    assert sum(checked.values()) >= 15


def test_every_estimate_is_within_its_mechanisms_limit_on_a_public_report():
    checked = _checked([_public(PUBLIC_FAST)])
    assert checked.get("warp-divergence") and sum(checked.values()) >= 2


def test_divergence_is_capped_at_every_lane_busy():
    """The issue's case: 12.0x with 16.9 of 32 lanes active, where every lane busy gives at most
    32 / 16.9 = 1.9x. split_lists' fixed kernel (19.1 lanes active): the samples of its idle
    lanes asked for 3.44x; the limit, 32 / 19.1 = 1.68x, is the estimate."""
    (f,) = [f for f in analysis_of("split_lists", "fixed").kernels[0].findings if f.id == "warp-divergence"]
    limit = f.evidence["mechanism_limit"]
    assert f.evidence["avg_active_threads"] == 19.1
    assert limit["value"] == pytest.approx(32.0 / 19.1, rel=3e-3)
    assert limit["what"].startswith("32 / 19.1 active lanes per executed instruction")
    assert f.model_speedup == pytest.approx(limit["value"], abs=1e-3)
