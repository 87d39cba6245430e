"""Evaluate the findings catalogue on a kernel: run each detector, bound its speedup by
physics, assign severity, and rank (best first).

Contract: ``evaluate(ctx, passes) -> Evaluation`` is pure: the findings, and notes on what
it left out and why and on the metrics its detectors needed that the report lacks
(coverage.py); it reads the facts (``ctx``) and the passes before it (``passes``:
traits, speed of light, performance model, stall cycles) and changes neither.
Every estimate goes through bounds.py; severity is the estimate's alone, on any grade (the
time ledger, ledger.py, then settles overlapping estimates and severities); designed-in
patterns and library kernels (without source lines, or library helpers by name:
``library_helper``) are not reported as defects (a note names what was left out, and a helper's
note gives its library's advice about the call). Advice quotes only its own evidence.

Rules and rationale: docs/json-schema.md, "Findings: severity and advice".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..specs import loader as data
from .advice_shape import advice_key, advice_text, is_header, shape_of
from .bounds import Bound, apply_bounds, beyond_launch_floor, floor_applies, physical_bounds
from .coverage import missing_metric_notes
from ..profile import KernelProfile, rounded
from ..readers.selection import is_library_name
from .context import KernelContext
from .figures import quoted, share_pct, speedup
from .passes import Passes
from ..specs.records import Thresholds
from .sol import SpeedOfLight, Traits
from .tree import Location, location_text
from .detectors import REGISTRY
from .detectors import base as detector_base

#: Severities, worst first: the order findings are ranked in, --fail-on reads and diff compares by.
SEVERITIES = ("high", "medium", "low")


#: How the notes on a finding's estimate begin (the bound that set it, the model's ceiling);
#: the time ledger replaces them with its own when it lowers the estimate (settle.py).
ESTIMATE_NOTES = ("estimate limited:", "estimate capped", "estimate lowered:")


def severity_rank(severity: str) -> int:
    """0 for the worst severity; a larger number is milder."""
    return SEVERITIES.index(severity)


@dataclass
class Finding:
    id: str
    title: str
    severity: str
    stall_share: float
    estimated_speedup: float
    advice: str
    evidence: dict[str, Any] = field(default_factory=dict)
    locations: list[Location] = field(default_factory=list)
    group: str = ""
    speedup_model: str = ""
    notes: list[str] = field(default_factory=list)
    model_speedup: float = 1.0  # the model's estimate before the physical bounds
    bounds: list[dict[str, Any]] = field(default_factory=list)
    bounded_by: str | None = None  # the bound that set the estimate, if any
    audience: str = "code"  # "code" (change the kernel) | "caller" (library kernel)
    estimate_capped: bool = False  # the model hit its ceiling: the speedup is at least this
    time_share: float | None = None  # of the elapsed time, what the ledger gives it (None: no ledger)
    estimated_speedup_alone: float | None = None  # made alone, before larger findings' fixes (ledger.py)
    relieves: tuple[str, ...] = ()  # the catalogue's units the fix unloads (bounds.RELIEF keys)
    # The advice's template and its values: an advice that quotes the estimate is written again
    # with the estimate the ledger settles on (advice_quoting), so text and number agree.
    advice_template: tuple[str, dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    # The catalogue key of the advice given (advice_shape.advice_key: "advice",
    # "caller_advice" or "advice_when.KEY"); not part of the JSON.
    advice_key: str = field(default="advice", repr=False, compare=False)

    def __repr__(self) -> str:
        # The dataclass repr would print the evidence, bounds and every location.
        where = location_text(self.locations[0]) if self.locations else None
        return (
            f"Finding(id={self.id!r}, severity={self.severity!r}, estimated_speedup={_round(self.estimated_speedup, 3)!r}, "
            f"where={where!r}, locations={len(self.locations)})"
        )

    def advice_quoting(self, estimate: float) -> str:
        """The advice written with ``estimate`` where it quotes the estimate (unchanged where
        it does not, or where the finding was read back without its template)."""
        if self.advice_template is None:
            return self.advice
        text, values = self.advice_template
        return " ".join(_render(text, dict(values, estimate=quoted(estimate))).split())

    def speedup_text(self) -> str:
        """The estimate as shown to the user: a capped one reads as a lower bound; with a
        ledger, the share of the kernel's time it removes (the estimate is 1 / (1 - share))."""
        text = (
            f"≥{speedup(self.estimated_speedup)} (capped)" if self.estimate_capped else speedup(self.estimated_speedup)
        )
        if self.time_share is not None:
            text += f", {share_pct(self.time_share)}% of the time"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity,
            "stall_share": _round(self.stall_share, 4),
            "estimated_speedup": _round(self.estimated_speedup, 3),
            "model_speedup": _round(self.model_speedup, 3),
            "bounded_by": self.bounded_by,
            "bounds": self.bounds,
            "audience": self.audience,
            "estimate_capped": self.estimate_capped,
            "time_share": _round(self.time_share, 4),
            "estimated_speedup_alone": _round(self.estimated_speedup_alone, 3),
            "advice": self.advice,
            "evidence": self.evidence,
            "locations": self.locations,
            "group": self.group,
            "speedup_model": self.speedup_model,
            "notes": self.notes,
        }


def _round(value: float | None, ndigits: int) -> float | None:
    # None: a finding read back from JSON where the number was not finite (written as null).
    return None if value is None else round(value, ndigits)


class _Fmt(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def _render(text: str, values: dict[str, Any]) -> str:
    try:
        return text.format_map(_Fmt(values))
    except (ValueError, KeyError, IndexError):
        return text


def library_helper(kernel: KernelProfile) -> tuple[str, str] | None:
    """(library, advice about the call) when ``kernel`` is a helper kernel a library launches
    for the user's call (thrust, CUB, Kokkos' own, cuBLAS/cuDNN, PyTorch, Triton: findings.yaml
    ``library_helpers``), whether or not the report has its source lines; else None."""
    names = [n for n in (kernel.name, kernel.mangled) if n]
    return next(((lib, use) for lib, rx, use in data.library_helpers() if any(rx.search(n) for n in names)), None)


def is_library_kernel(ctx: KernelContext, traits: Traits | None) -> bool:
    """A library's kernel: its user can change only the call. A library helper kernel
    (``library_helper``: header-only libraries compile into the program, so their source lines
    may be in the report), or a kernel of a library (cuBLAS, cuDNN, CUTLASS, NCCL, PyTorch...:
    findings.yaml ``library_kernels``) whose source the report does not have."""
    if library_helper(ctx.kernel) is not None:
        return True
    if traits is None or traits.has_line_info:
        return False
    return is_library_name(ctx.kernel.name, ctx.kernel.mangled)


def _has_lines(passes: Passes) -> bool:
    return passes.traits is not None and passes.traits.has_line_info


def designed_in(traits: Traits | None, fid: str) -> str | None:
    """Why a finding is the kernel's design rather than a defect, or None."""
    if traits is None:
        return None
    if fid == "barrier-imbalance" and traits.warp_specialized:
        return (
            "barrier waits are the hand-off of a warp-specialized pipeline ("
            + ", ".join(traits.signs)
            + "), not unbalanced work"
        )
    if fid == "slow-math" and traits.tensor_core:
        return "MUFU work in a tensor-core kernel is its algorithm (e.g. attention's softmax)"
    if fid == "slow-math" and not traits.has_line_info:
        return "without source lines drgpu cannot tell a precise math routine from the kernel's own math"
    return None


def _launch_floor_note(active: float, whole: float, duration_ns: float | None, floor_ns: float) -> str | None:
    """Say so where the launch floor takes a visible part (over 2%) of a what-if."""
    if duration_ns is None or active <= 1.0 or whole >= active * 0.98:
        return None
    return (
        f"{speedup(whole)} of the kernel's {duration_ns / 1000:.1f} µs: {speedup(active)} past its launch floor "
        f"({floor_ns / 1000:.1f} µs that no change to the code removes)"
    )


@dataclass(frozen=True)
class _Estimate:
    """A detection's what-if turned into the kernel's speedup: the model's figure over the
    time warps run (``active``), bounded, then over the kernel's duration (``speed``), with
    the notes that say what shaped it."""

    active: float  # the model's figure over the time warps run (before the launch floor)
    speed: float
    bounds: list[Bound]
    binding: Bound | None
    capped: bool
    notes: tuple[str, ...]


def _estimate(
    ctx: KernelContext,
    sol: SpeedOfLight | None,
    speedup_model: str,
    detection: detector_base.Detection,
    relieves: tuple[str, ...] | list[str],
    stall_pct: float,
) -> _Estimate:
    active = float(detection.speedup)
    notes: list[str] = []
    bounds = (
        physical_bounds(ctx, sol, relieves, speedup_model, stall_pct, detection.partial_relief)
        if sol is not None
        else []
    )
    # The bounds of the units, latency hiding and stall cycles hold over the time warps run,
    # as the model does; the launch floor is then added back as the part no change removes
    # (beyond_launch_floor), which also keeps the estimate under the floor's own bound.
    duration = ctx.kernel.duration_ns
    floor = sol.launch_floor_ns if sol is not None else math.nan
    over_floor = floor_applies(duration, floor, speedup_model)
    running = [b for b in bounds if b.kind != "launch_floor"] if over_floor else bounds
    bounded, binding = apply_bounds(active, running)
    speed = beyond_launch_floor(bounded, duration, floor, speedup_model)
    floor_note = _launch_floor_note(bounded, speed, duration, floor) if over_floor else None
    notes += [floor_note] if floor_note else []
    if binding is not None:
        notes.append(f"estimate limited: {binding.why}")
    # The model's own ceiling (it never removes more than MAX_REMOVABLE of the time) is
    # not a measurement: say that the estimate is a lower bound.
    ceiling = 1.0 / (1.0 - detector_base.MAX_REMOVABLE)
    capped = binding is None and active >= ceiling * (1 - 1e-9)
    if capped:
        notes.append(
            f"estimate capped at {ceiling:.0f}x: the model removes at most "
            f"{100 * detector_base.MAX_REMOVABLE:.0f}% of the time, and the evidence would give more; read it as at least "
            f"{speedup(speed)}, not as a measured value"
        )
    return _Estimate(active, speed, bounds, binding, capped, tuple(notes))


@dataclass(frozen=True)
class Evaluation:
    """The findings of a kernel, ranked (worst severity, then largest estimate, first), and
    notes on findings left out (designed-in patterns, library kernels)."""

    findings: list[Finding]
    notes: list[str]


def evaluate(ctx: KernelContext, passes: Passes) -> Evaluation:
    th, sol = ctx.th, passes.sol
    stall_pct = passes.stall.pct
    library = is_library_kernel(ctx, passes.traits)
    out: list[Finding] = []
    notes_out: list[str] = []
    left_out: list[str] = []
    detected: list[str] = []  # reported or not: what the report lacks is noted for these
    for spec in data.findings_catalogue()["findings"]:
        det = REGISTRY.get(spec["detector"])
        if det is None:
            continue
        detection = det.run(ctx, passes)
        if detection is None:
            continue
        why = designed_in(passes.traits, spec["id"])
        if why:
            notes_out.append(f"{spec['id']} not reported: {why}")
            continue
        if library and not spec.get("caller_advice"):
            left_out.append(spec["id"])
            continue
        detected.append(spec["id"])
        relieves = detection.relieves_override or spec["relieves"]
        est = _estimate(ctx, sol, spec["speedup_model"], detection, relieves, stall_pct)
        speed, bounds, binding = est.speed, est.bounds, est.binding
        if speed < th["min_speedup"]:
            continue
        notes = list(est.notes)
        sev = severity_of(speed, th)
        capped = est.capped
        header = _inlined_header_note(detection.locations)
        if header:
            notes.append(header)
        evidence = {m: _num(ctx.kernel.m(m)) for m in spec["evidence"] if ctx.kernel.has(m)}
        evidence.update(detection.evidence)
        key = advice_key(spec, detection.variant, shape_of(ctx, passes, detection.locations, library))
        text = advice_text(spec, key)
        share = max(0.0, min(1.0, detection.stall_share))
        # One source for the numbers shown: a share in the advice is the finding's stall share
        # (the HTML card and JSON show the same).
        # An advice that quotes the estimate quotes the one reported (after the bounds).
        fmt = dict(detection.fmt, estimate=quoted(speed)) | (
            dict(detection.fmt, share_pct=100 * share) if "share_pct" in detection.fmt else {}
        )
        out.append(
            Finding(
                id=spec["id"],
                title=_render(spec["title"], fmt),
                severity=sev,
                stall_share=share,
                estimated_speedup=speed,
                estimate_capped=capped,
                advice=" ".join(_render(text, fmt).split()),
                evidence=evidence,
                locations=detection.locations,
                group=spec["group"],
                speedup_model=spec["speedup_model"],
                notes=notes,
                model_speedup=max(1.0, est.active),
                bounds=[b.to_dict() for b in bounds],
                bounded_by=binding.kind if binding else None,
                audience="caller" if library else "code",
                relieves=tuple(relieves),
                advice_template=(text, fmt),
                advice_key=key,
            )
        )
    helper = library_helper(ctx.kernel)
    if left_out:
        what = "library kernel" if helper is not None and _has_lines(passes) else "library kernel without source lines"
        notes_out.append(
            f"{what}: findings that need changes inside it are not shown ("
            + ", ".join(left_out)
            + "); the advice given is for the caller"
        )
    # Something to act on (a finding, or one left out): the library's advice about its use.
    if helper is not None and (out or left_out):
        notes_out.append(f"{helper[0]} kernel, the library's own code: {helper[1]}")
    notes_out.extend(missing_metric_notes(ctx.kernel, detected))
    return Evaluation(ranked(out), notes_out)


def severity_of(speed: float, th: Thresholds) -> str:
    """The severity of an estimate, on any grade: what the fix buys decides it."""
    return "high" if speed >= th["high_speedup"] else "medium" if speed >= th["medium_speedup"] else "low"


def ranked(findings: list[Finding]) -> list[Finding]:
    """Worst severity first, then the largest estimate (the input's order breaks ties)."""
    return sorted(findings, key=lambda f: (severity_rank(f.severity), -f.estimated_speedup))


def _inlined_header_note(locations: list[Location]) -> str | None:
    """A top location inside a header (atomicAdd from device_atomic_functions.hpp, a libcu++
    fence) is code inlined into the kernel. An .ncu-rep gives each instruction one file and
    line (ncu_report's source_info has no inline chain), so without the cubin's inline
    information (--cubin/--binary, then ``inlined_from``) the calling line is unknown: say so."""
    for loc in locations[:3]:
        file = str(loc.get("file") or "")
        if not file or loc.get("inlined_from"):
            continue
        if is_header(file):
            name = file.replace("\\", "/").rsplit("/", 1)[-1]
            return (
                f"{name}:{loc.get('line')} is header code inlined into the kernel; the report names no "
                "call site for inlined code: give --cubin or --binary to see the line that calls it"
            )
    return None


def _num(value: float | None) -> float | None:
    return rounded(value, 4)
