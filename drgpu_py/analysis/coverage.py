"""Which kernel metrics the analysis reads, and which of them a report lacks.

Contract:
- ``metric_needs()`` is the one list of what the analysis reads from a kernel's metrics: per
  finding of ``specs/findings.yaml``, what its detector declares (``@detector(metrics=...)``);
  for the speed of light, ``sol.SOL_METRICS``; for the useful work and time ledger,
  ``ledger.LEDGER_METRICS``. drgpu's default metric set of every chip collects all of them
  (tests/unit/test_metric_set_parity.py).
- ``missing_metric_notes(kernel, finding_ids)`` is pure: for the findings whose detectors
  found their pattern on ``kernel`` (``findings.evaluate`` passes their ids), the metrics
  they read that the report lacks, as notes: one per group of findings that lack the same
  metrics, naming where those are collected. A finding evaluated without a metric it needs
  can come out too low (or be dropped below the reporting floor) or unbounded; the note says
  so instead of staying silent. Reports of drgpu's default set or of ``ncu --set full`` get
  none.
- ``what_to_collect(kernel)`` is pure: how to collect everything ``metric_needs()`` names that
  ``kernel``'s report lacks (the sections, or the full set beyond SECTIONS_NAMED of them; a
  newer ncu), or None; the dominant kernel's ``collect`` (groups.dominant).

Not counted as lacking: ``drgpu__*`` metrics (drgpu writes them when it merges the reports of
ranks: no ncu report has them) and a detector's EVIDENCE_ONLY metrics.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..profile import KernelProfile
from ..specs import loader as data
from .detectors import REGISTRY
from .ledger import LEDGER_METRICS
from .sol import SOL_METRICS

#: what_to_collect names the sections a report lacks up to this many; beyond, the full set.
SECTIONS_NAMED = 3
#: metric_needs() keys of the passes that are not findings.
SPEED_OF_LIGHT = "speed-of-light"
TIME_LEDGER = "time-ledger"

#: Detector -> metrics it reads only to show them as evidence: whether the finding is made
#: and its estimate do not depend on them, so a report without them gets no note.
EVIDENCE_ONLY: dict[str, frozenset[str]] = {
    "local_memory": frozenset({"derived__local_spilling_requests"}),
    "divergence": frozenset({"smsp__sass_branch_targets_threads_divergent.sum"}),
    "occupancy": frozenset({"sm__warps_active.avg.pct_of_peak_sustained_active"}),
}


def metric_needs() -> dict[str, tuple[str, ...]]:
    """Finding id (catalogue order), then SPEED_OF_LIGHT and TIME_LEDGER -> the kernel
    metrics it reads (canonical names of specs/metrics.yaml, or drgpu's own ``drgpu__*``)."""
    needs = {spec["id"]: REGISTRY[spec["detector"]].metrics for spec in data.findings_catalogue()["findings"]}
    needs[SPEED_OF_LIGHT] = SOL_METRICS
    needs[TIME_LEDGER] = LEDGER_METRICS
    return needs


def lacking(kernel: KernelProfile, finding_id: str) -> tuple[str, ...]:
    """The metrics the finding's detector needs that ``kernel``'s report lacks, sorted."""
    spec = next((s for s in data.findings_catalogue()["findings"] if s["id"] == finding_id), None)
    det = REGISTRY.get(spec["detector"]) if spec else None
    if det is None:
        return ()
    shown_only = EVIDENCE_ONLY.get(det.name, frozenset())
    return tuple(
        sorted({m for m in det.metrics if not m.startswith("drgpu__") and m not in shown_only and not kernel.has(m)})
    )


def what_to_collect(kernel: KernelProfile) -> str | None:
    """How to collect what the analysis reads (``metric_needs``) and ``kernel``'s report lacks:
    the sections it lacks (a section named only when missing, ``specs.loader.reprofile_advice``),
    SourceCounters when it has no per-instruction data (the lines a finding points at), and a
    newer ncu for metrics the report's ncu predates; None when it lacks nothing drgpu reads."""
    sections, newer = _lacking_sections(kernel)
    if kernel.instructions.empty and "SourceCounters" not in sections:
        sections.append("SourceCounters")
    if not sections and not newer:
        return None
    return "; ".join(([_sections_advice(sections)] if sections else []) + newer)


def _lacking_sections(kernel: KernelProfile) -> tuple[list[str], list[str]]:
    """The sections ``kernel``'s report lacks for what the analysis reads, and the 're-profile
    with a newer ncu' advice for metrics its ncu predates (each once, in metric order)."""
    needs = sorted({m for ms in metric_needs().values() for m in ms if not m.startswith("drgpu__")})
    sections: list[str] = []
    newer: list[str] = []
    for m in needs:
        advice = None if kernel.has(m) else data.reprofile_advice(kernel.collected, m)
        if advice is None:
            continue
        said = newer if advice.startswith("re-profile") else sections
        item = advice if said is newer else data.metric_section(m)
        if item and item not in said:
            said.append(item)
    return sections, newer


def _sections_advice(sections: list[str]) -> str:
    """The command that collects ``sections``: drgpu's default set, or ncu with them named
    (the full set when more than SECTIONS_NAMED)."""
    if len(sections) > SECTIONS_NAMED:
        return "drgpu profile's default set, or ncu --set full --import-source yes for this kernel"
    return "drgpu profile's default set, or ncu " + " ".join(f"--section {s}" for s in sections) + " for this kernel"


def missing_metric_notes(kernel: KernelProfile, finding_ids: Iterable[str]) -> list[str]:
    """One note per group of the findings (in the order given) that lack the same metrics."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for fid in finding_ids:
        absent = lacking(kernel, fid)
        if absent:
            groups.setdefault(absent, []).append(fid)
    return [_note(ids, absent, kernel) for absent, ids in groups.items()]


def _note(finding_ids: list[str], absent: tuple[str, ...], kernel: KernelProfile | None = None) -> str:
    """The note of findings lacking ``absent``: how to collect each metric. A section is named
    only when the report lacks it (``specs.loader.reprofile_advice``); a metric whose section
    is there but which an older ncu did not have (``since`` in specs/metrics.yaml) asks for a
    newer ncu; one whose section is there otherwise is named for ``ncu --metrics``."""
    has = kernel.collected if kernel is not None else (lambda _name: False)
    sections: list[str] = []
    by_name: list[str] = []
    newer: dict[str, list[str]] = {}
    for m in absent:
        advice = data.reprofile_advice(has, m)
        if advice is None:
            by_name.append(m)
        elif advice.startswith("re-profile"):
            newer.setdefault(advice, []).append(m)
        elif (s := data.metric_section(m)) and s not in sections:
            sections.append(s)
    where = "drgpu profile's default set"
    if sections:
        where += ", or ncu " + " ".join(f"--section {s}" for s in sections)
    if by_name:  # named in words: ncu's comma list of them would be one long word to wrap
        them = ("it" if len(by_name) == 1 else "them") if len(by_name) == len(absent) else ", ".join(by_name)
        where += f", or ncu --metrics naming {them}"
    text = f"{', '.join(finding_ids)} not evaluated fully: the report lacks {', '.join(absent)} (collected by {where})"
    for advice, names in newer.items():
        text += f"; the report's ncu predates {', '.join(names)}: {advice}"
    return text
