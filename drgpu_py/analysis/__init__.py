"""Analysis passes: profile -> per-kernel tree and ranked findings.

``analyze(profile, options)`` is a pure function of the profile (with each kernel's SASS
control codes from a cubin when given: ``KernelProfile.control``) and options (thresholds). It returns an :class:`Analysis` whose
``to_dict()`` is the JSON contract documented in docs/json-schema.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..version import __version__
from ..specs import loader as data
from ..specs.output_schema import SCHEMA_VERSION
from ..specs.records import Thresholds
from ..profile import (
    NOT_MEASURED_VERDICT,
    NOT_PROFILED,
    SOURCE_EXPORT_MISSING,
    KernelProfile,
    Profile,
    measured,
    rounded,
)
from . import display, groups
from .frame_methods import FrameMethods
from .context import AnalysisCache as AnalysisCache  # re-exported: pipeline.parallel imports it from here
from .context import KernelContext
from .findings import Finding, evaluate
from .ledger import Ledger, UsefulWork, useful_work
from .settle import settle
from .passes import Passes, stall_cycles
from .launch_shape import launch_shape_of
from .perfmodel import KernelModel, kernel_model
from .perfmodel import to_dict as model_dict
from .sol import SpeedOfLight, Traits, grade_at_least, kernel_traits, near_speed_of_light, speed_of_light
from .stall_tree import build_tree, classify_bound
from .tree import Node, location_text
from .verdict import verdict as verdict_text
from .figures import pct as pct_text

if TYPE_CHECKING:
    from .frames import FrameInput

    from .saved import SavedAnalysis

__all__ = [
    "AnalysisOptions",
    "Analysis",
    "KernelAnalysis",
    "analyze",
    "analyze_kernel",
    "Node",
    "Finding",
    "SpeedOfLight",
]


@dataclass
class AnalysisOptions:
    thresholds: Thresholds = field(default_factory=data.thresholds)


@dataclass
class KernelAnalysis:
    kernel: KernelProfile
    tree: Node
    findings: list[Finding]
    bound: str | None  # None: no unit throughput measured to tell the bound (classify_bound)
    stall_cycle_pct: float | None  # None: not measured (no stall reasons, no IPC)
    achieved_ipc: float | None  # None: not measured
    top_unit: str | None
    top_unit_pct: float | None
    slicing: dict[str, Any]
    notes: list[str]
    context: KernelContext | None = None
    passes: Passes | None = None  # what the passes after the facts computed (None: a literal analysis)
    useful: UsefulWork | None = None  # the essential work at peak and the efficiency (ledger.py)
    ledger: Ledger | None = None  # elapsed time = useful + findings' claims + unexplained

    @property
    def sol(self) -> SpeedOfLight | None:
        return self.passes.sol if self.passes is not None else None

    @property
    def traits(self) -> Traits | None:
        return self.passes.traits if self.passes is not None else None

    @property
    def perf(self) -> KernelModel | None:
        """The static SASS performance model (analysis/perfmodel/)."""
        return self.passes.perf if self.passes is not None else None

    @property
    def verdict(self) -> str:
        """The one line said first: how far from the useful-work peak, what holds the time,
        what to fix (analysis/verdict.py); a launch the report measured nothing of says so."""
        if not self.kernel.measured:
            return NOT_MEASURED_VERDICT
        return verdict_text(self.useful, self.ledger, self.findings)

    def _finding_lines(self) -> list[display.FindingLine]:
        total = groups.total_ns(self.kernel)
        return [
            display.FindingLine(
                f.id,
                f.severity,
                f.estimated_speedup,
                rounded(groups.time_saved(total, f.estimated_speedup), 1),
                location_text(f.locations[0]) if f.locations else None,
                f.title,
            )
            for f in self.findings
        ]

    def _facts(self) -> tuple[int, str, int, float | None, str | None, str | None]:
        kernel = self.kernel
        grade = self.sol.grade if self.sol is not None else None
        return kernel.id, kernel.name, kernel.launch_count, rounded(groups.total_ns(kernel), 1), self.bound, grade

    def __repr__(self) -> str:
        # The dataclass repr would print the profile's metrics, the tree and the facts (MBs).
        return display.kernel_repr("KernelAnalysis", *self._facts(), self._finding_lines())

    def _repr_pretty_(self, printer: display.Printer, cycle: bool) -> None:
        display.pretty(repr(self), printer)

    def _repr_html_(self) -> str:
        return display.kernel_html(*self._facts(), self._finding_lines())

    def to_dict(self) -> dict[str, Any]:
        kernel = self.kernel
        near_sol = (
            self.context is not None
            and self.top_unit is not None
            and near_speed_of_light(
                self.top_unit_pct,
                self.findings,
                self.context.th,
                self.useful.efficiency_pct if self.useful is not None else None,
            )
        )
        return {
            "id": kernel.id,
            "name": kernel.name,
            "mangled": kernel.mangled,
            "device": kernel.device,
            "compute_capability": kernel.compute_capability,
            "chip": kernel.chip,
            "sm_count": kernel.sm_count,
            "duration_ns": _f(kernel.duration_ns),
            "grid": list(kernel.grid),
            "block": list(kernel.block),
            "elapsed_cycles": _f(kernel.m("gpc__cycles_elapsed.max")),
            "sm_active_cycles": _f(kernel.m("sm__cycles_active.avg")),
            "verdict": self.verdict,
            "bound": self.bound,
            "stall_cycle_pct": _f(self.stall_cycle_pct),
            "achieved_ipc": _f(self.achieved_ipc),
            "top_unit": self.top_unit,
            "top_unit_pct": _f(self.top_unit_pct),
            "launches": kernel.launch_count,
            "launch_ids": groups.launch_ids(kernel),
            "total_duration_ns": _f(groups.total_ns(kernel)),
            "speed_of_light": self._sol(near_sol),
            "tree": self.tree.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
            "slicing": self.slicing,
            "samples": sample_summary(self.context),
            "notes": self.notes,
            "model": self.model_summary(),
            "ledger": self.ledger.to_dict() if self.ledger is not None else None,
        }

    def model_summary(self) -> dict[str, Any]:
        """The static SASS performance model (analysis/perfmodel.py), or why there is none."""
        if self.perf is None:
            return {"available": False, "reason": "not analyzed"}
        return model_dict(self.perf, self.context)

    def _sol(self, near: bool) -> dict[str, Any]:
        """Speed of light: the busiest unit's name and % keep their meaning (the memory/SM
        throughput units); grade, limiter, units and roofline are the speed-of-light layer."""
        out: dict[str, Any] = {"unit": self.top_unit, "pct": _f(self.top_unit_pct), "near_ceiling": bool(near)}
        if self.context is not None and self.sol is not None:
            out.update(self.sol.to_dict())
            out["traits"] = self.traits.to_dict() if self.traits is not None else None
            out["useful"] = self.useful.to_dict() if self.useful is not None else None
        return out


@dataclass
class Analysis(FrameMethods):
    profile: Profile
    kernels: list[KernelAnalysis]
    _summary: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    def summary(self) -> list[dict[str, Any]]:
        """Kernel groups by GPU time, each with its findings and the time they would save
        (drgpu_py.analysis.groups.summary); computed once (renderers ask several times)."""
        if self._summary is None:
            self._summary = groups.summary(self)
        return self._summary

    def priorities(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Findings across the report, most time saved first."""
        return groups.priorities(self.summary(), limit)

    def dominant(self) -> dict[str, Any] | None:
        """The group holding most of the time when no finding of its own leads the
        priorities (drgpu_py.analysis.groups.dominant), else None."""
        return groups.dominant(self, self.summary())

    def __repr__(self) -> str:
        # The dataclass repr would print every kernel's profile, tree and facts (MBs).
        return display.analysis_repr("Analysis", self.profile.path, self.summary())

    def _repr_pretty_(self, printer: display.Printer, cycle: bool) -> None:
        display.pretty(repr(self), printer)

    def _repr_html_(self) -> str:
        return display.analysis_html(self.profile.path, self.summary())

    # pandas frames (analysis/frames.py; docs/api.md lists columns, dtypes and joins).
    def frame_input(self) -> FrameInput:
        from .frames import FrameInput, FrameKernel

        kernels = [
            FrameKernel(
                ka.kernel.id,
                ka.kernel.name,
                ka.kernel.launch_count,
                _f(ka.stall_cycle_pct),  # as the JSON rounds it, so saved frames are equal
                ka.findings,
                ka.tree,
                ka.kernel,
            )
            for ka in self.kernels
        ]
        return FrameInput(self.profile.path, self.summary(), kernels, saved=False)

    @staticmethod
    def load(path: str | Path) -> "SavedAnalysis":
        """A JSON file ``to_dict()`` was written to (``drgpu analyze -f json``, ``merge``), read
        back: a :class:`~drgpu_py.analysis.saved.SavedAnalysis`, whose ``to_dict()`` is the
        file's document again. The profile and contexts are not in the JSON, so it is not an
        Analysis; list and diff read it, and it has the frames whose data the JSON holds."""
        from .saved import SavedAnalysis

        return SavedAnalysis.load(path)

    def to_dict(self, kernels: bool = True) -> dict[str, Any]:
        """The JSON document; ``kernels=False`` leaves its kernel list empty (for writers
        that make each kernel's dict when they write it)."""
        rows = self.summary()
        return {
            "tool": "drgpu",
            "version": __version__,
            "schema_version": SCHEMA_VERSION,
            "report": self.profile.path,
            "format": self.profile.format,
            "notes": self.profile.notes,
            "summary": rows,
            "priorities": groups.priorities(rows, 20),
            "kernels": [ka.to_dict() for ka in self.kernels] if kernels else [],
        } | ({"dominant": first} if (first := groups.dominant(self, rows)) is not None else {})


def _f(value: float | None) -> float | None:
    return rounded(value, 4)


def analyze_kernel(
    kernel: KernelProfile, options: AnalysisOptions, cache: AnalysisCache | None = None
) -> KernelAnalysis:
    # Values no counter reaches (1e308, inf from an edited CSV) overflow or cancel in sums;
    # the result is inf/NaN, which every output shows as such, so numpy's warnings add only
    # noise on the user's terminal. errstate is scoped to this call (and thread).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _analyze_kernel(kernel, options, cache)


def _analyze_kernel(kernel: KernelProfile, options: AnalysisOptions, cache: AnalysisCache | None) -> KernelAnalysis:
    # Control codes come only from a cubin (sass.binary.with_control): slicing then uses them.
    control = kernel.control or None
    ctx = KernelContext.build(
        kernel, options.thresholds, control=control, slicing_source="cubin" if control else "report", cache=cache
    )
    traits = kernel_traits(ctx)
    sol = speed_of_light(ctx)
    passes = Passes(
        traits=traits, sol=sol, perf=kernel_model(ctx, sol), stall=stall_cycles(ctx), launch=launch_shape_of(ctx, sol)
    )
    evaluation = evaluate(ctx, passes)
    useful = useful_work(ctx, sol)
    findings, ledger = settle(ctx, useful, evaluation.findings)
    tree = build_tree(ctx, passes, findings, useful, ledger)
    # The stall pass computes with NaN for what the report lacks; the analysis says None.
    pct, ipc = measured(passes.stall.pct), measured(passes.stall.achieved_ipc)
    top, top_val = ctx.top_unit()
    model_notes = passes.perf.notes if passes.perf is not None else []
    notes = list(kernel.notes) + ctx.notes + model_notes + evaluation.notes
    # Samples collected but no per-instruction table (a raw CSV alone): the reader's note
    # names the export that is missing, not the ncu section.
    if not ctx.sampling and not any(n.startswith(SOURCE_EXPORT_MISSING) for n in kernel.notes):
        notes.append(
            "no PC sampling in this report: per-line attribution and SASS slicing unavailable (collect the SourceCounters section)"
        )
    else:
        notes.extend(_sample_notes(ctx))
    if ctx.blame is not None:
        slicing = {
            "source": ctx.blame.source,
            "single_dependency_coverage": round(ctx.blame.single_dependency_coverage, 3),
            "single_dependency_sample_coverage": round(ctx.blame.single_dependency_sample_coverage, 3),
            "stalled_instructions": ctx.blame.stalled_instructions,
            "dependency_kinds": ctx.blame.kind_shares(),
        }
        if ctx.blame.source == "report":
            notes.append(
                "slicing used the report's SASS only (registers and predicates; give --cubin or --binary for scoreboard barriers)"
            )
    else:
        slicing = {
            "source": "none",
            "single_dependency_coverage": None,
            "single_dependency_sample_coverage": None,
            "stalled_instructions": 0,
            "dependency_kinds": {},
        }
    silent = _silence_note(ctx, sol, useful, findings, pct, options.thresholds)
    if silent:
        notes.append(silent)
    if not kernel.measured:
        # Said first: the notes after it list what is missing, here everything.
        notes = [NOT_PROFILED, *notes]
    if sol.limiter is not None and near_speed_of_light(
        sol.limiter_pct, findings, options.thresholds, useful.efficiency_pct
    ):
        notes.append(
            f"near speed of light: {sol.labels.get(sol.limiter, sol.limiter)} at {pct_text(sol.limiter_pct)}% of peak; "
            "little to gain without reducing that unit's work"
        )
    return KernelAnalysis(
        kernel=kernel,
        tree=tree,
        findings=findings,
        bound=classify_bound(ctx, sol),
        stall_cycle_pct=pct,
        achieved_ipc=ipc,
        top_unit=top,
        top_unit_pct=top_val,
        slicing=slicing,
        notes=notes,
        context=ctx,
        passes=passes,
        useful=useful,
        ledger=ledger,
    )


def sample_summary(ctx: KernelContext | None) -> dict[str, Any] | None:
    """The JSON ``samples`` object: the kernel's PC samples and where they went."""
    acc = ctx.accounting if ctx is not None else None
    if not acc:
        return None
    return {
        "reported": _f(acc["reported"]),
        "at_instructions": _f(acc["at_instructions"]),
        "moved_to_preceding": _f(acc["moved_to_preceding"]),
        "unattributed": _f(acc["unattributed"]),
        "unattributed_by_reason": {r: _f(v) for r, v in sorted(acc["by_reason"].items(), key=lambda kv: -kv[1])},
    }


def _sample_notes(ctx: KernelContext) -> list[str]:
    """Say how many PC samples no source line carries, and which stall reasons they are."""
    acc = ctx.accounting or {}
    out = []
    total = acc.get("reported") or (acc.get("at_instructions", 0.0) + acc.get("unattributed", 0.0))
    un = acc.get("unattributed", 0.0)
    if un > 0 and total:
        labels = data.stall_reasons()
        top = sorted(acc.get("by_reason", {}).items(), key=lambda kv: -kv[1])[:3]
        which = ", ".join(f"{labels[r]['label']} {v:,.0f}" for r, v in top)
        out.append(
            f"{un:,.0f} of {total:,.0f} PC samples ({100 * un / total:.1f}%) are at addresses with no instruction "
            "in the report's SASS listing (code outside the function, e.g. what the driver runs for a "
            "system-scope fence); they count in the stall mix at kernel level"
            + (f" ({which})" if which else "")
            + " but at no source line"
        )
    moved = acc.get("moved_to_preceding", 0.0)
    if moved > 0 and total:
        out.append(
            f"{moved:,.0f} of {total:,.0f} PC samples were at addresses inside the function without SASS "
            "and are shown at the nearest preceding instruction"
        )
    return out


def _stalls_unexplained(stall_pct: float | None, findings: list[Finding], th: Thresholds) -> bool:
    """Many stall cycles, and no finding says what to do: a located finding, or one about
    the launch (which has no line), already does."""
    if stall_pct is None or stall_pct < th["silence_stall_pct"]:
        return False
    return not any(f.locations or f.group == "launch" for f in findings)


def _graded_text(grade: str | None, useful: UsefulWork, on_useful: bool) -> str:
    """The grade the note gives: on useful work (with its efficiency), else on the busiest unit."""
    if on_useful and useful.efficiency_pct is not None:
        return f"{grade} on useful work ({pct_text(useful.efficiency_pct)}% efficiency)"
    return f"{grade or 'ungraded'} on its limiting unit"


def _top_stall_place(ctx: KernelContext, top: str) -> str:
    """Where the top stall reason's samples are most: its line, else its SASS offset, and
    the instruction ('' without a place)."""
    locs = ctx.line_samples(top, 1)
    if not locs:
        return ""
    loc = locs[0]
    where = (
        f" at {str(loc['file']).rsplit('/', 1)[-1]}:{loc['line']}"
        if loc.get("file")
        else f" at SASS +0x{loc.get('pc_offset', 0):x}"
    )
    return where + f" ({loc.get('sass', '')})"


def _silence_note(
    ctx: KernelContext,
    sol: SpeedOfLight | None,
    useful: UsefulWork,
    findings: list[Finding],
    stall_pct: float | None,
    th: Thresholds,
) -> str | None:
    """A kernel with headroom (graded below good on its useful work where that is known, else
    on its busiest unit; many stall cycles) is never left silent: without a located finding,
    say that no known pattern matched and where it stalls."""
    on_useful = useful.grade is not None
    grade = useful.grade if on_useful else (sol.grade if sol is not None else None)
    if sol is None or grade_at_least(grade, "good"):
        return None
    if not _stalls_unexplained(stall_pct, findings, th):
        return None
    stalls = {r: v for r, v in ctx.reasons.items() if r != "selected" and v > 0}
    if not stalls:
        return None
    top = max(stalls, key=stalls.__getitem__)
    label = data.stall_reasons()[top]["label"]
    where = _top_stall_place(ctx, top)
    graded = _graded_text(grade, useful, on_useful)
    return (
        f"no known pattern: the kernel is {graded} with {stall_pct:.0f}% stall cycles, and no "
        f"finding locates the cause; the top stall is {label} ({100 * ctx.share(top):.0f}% of stall cycles){where}"
    )


def analyze(
    profile: Profile,
    options: AnalysisOptions | None = None,
    progress: Callable[[int, int], object] | None = None,
    cache: bool | AnalysisCache = True,
) -> Analysis:
    """``cache``: share per-function static analysis between launches (an AnalysisCache, or
    True for a new one); False analyzes every launch from scratch (same result). In one
    process; drgpu_py.pipeline.analyze_profile spreads the kernel groups over processes."""
    options = options or AnalysisOptions()
    shared = cache if isinstance(cache, AnalysisCache) else AnalysisCache() if cache else None
    out = []
    for index, kernel in enumerate(profile.kernels):
        out.append(analyze_kernel(kernel, options, cache=shared))
        if progress:
            progress(index + 1, len(profile.kernels))
    return Analysis(profile=profile, kernels=out)
