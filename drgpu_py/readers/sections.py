"""What a report lacks that the analysis would use: a note per kernel naming the ncu sections
and metric groups missing, and how to collect them.

Contract: ``note_missing_sections(profile)`` only appends notes to the kernels of
``profile`` (and returns it); it changes no metric.
"""

from __future__ import annotations

from ..errors import DrgpuError
from ..profile import KernelProfile, Profile
from ..specs import loader as data

__all__ = ["note_missing_sections"]


def note_missing_sections(profile: Profile) -> Profile:
    """Note on each kernel what its report lacks that the analysis would use, and how to
    collect it: the ncu sections most of whose needed metrics are absent, and each metric
    group of drgpu's set (``metric_sets/``) with an ``absent_note`` (its absence changes a
    result) whose metrics the report lacks.

    "Needed" means what drgpu's own default set for the kernel's chip collects: a report
    made by ``drgpu profile`` is complete by that measure, whatever ``--set full`` adds."""
    stall_counters = [s["counter"][0] for s in data.stall_reasons().values()]
    sets: dict[str | None, tuple[list[tuple[str, str]], list]] = {}
    for k in profile.kernels:
        if k.chip not in sets:
            sets[k.chip] = _needed_metrics(k.chip)
        needed, noted = sets[k.chip]
        lacking = _lacking_sections(k, needed, stall_counters)
        if lacking:
            k.notes.append(
                "partial analysis: the report lacks most metrics of section(s) "
                + ", ".join(lacking)
                + " (collect them with ncu --set full, or --section NAME)"
            )
        for advice, names in _newer_metrics(k, needed, lacking).items():
            k.notes.append(
                f"partial analysis: the report's ncu predates {', '.join(names)} (its sections are in the report): {advice}"
            )
        for metrics, note in noted:
            if not any(k.has(m) for m in metrics):
                k.notes.append(note)
    return profile


def _lacking_sections(k: KernelProfile, needed: list[tuple[str, str]], stall_counters: list[str]) -> list[str]:
    """The sections most of whose needed metrics the kernel lacks (a value derived from others
    is no sign of its section). The stall mix comes from PC samples (SourceCounters) or,
    without them, from the kernel-wide counters (WarpStateStats): only lacking both loses it."""
    total: dict[str, int] = {}
    absent: dict[str, int] = {}
    for name, sec in needed:
        total[sec] = total.get(sec, 0) + 1
        if not k.collected(name):
            absent[sec] = absent.get(sec, 0) + 1
    lacking = [sec for sec in total if absent.get(sec, 0) * 2 > total[sec]]
    if stall_counters and not any(k.has(c) for c in stall_counters) and not k.has_sampling:
        lacking.append("WarpStateStats")
    return lacking


def _newer_metrics(k: KernelProfile, needed: list[tuple[str, str]], lacking: list[str]) -> dict[str, list[str]]:
    """Sections the report has, without metrics that came with a later ncu (``since``): its
    ncu predates them, and the section's name would not bring them. {advice: metrics}."""
    newer: dict[str, list[str]] = {}
    for name, sec in needed:
        if sec not in lacking and not k.has(name):
            advice = data.reprofile_advice(k.collected, name)
            if advice and advice.startswith("re-profile"):
                newer.setdefault(advice, []).append(name)
    return newer


def _needed_metrics(chip: str | None) -> tuple[list[tuple[str, str]], list[tuple[list[str], str]]]:
    """([(canonical metric, its section)] of metrics.yaml that drgpu's default set for
    ``chip`` collects under one of their names, [(metrics, absent_note)] of the set's groups
    that have a note); the base set for a chip without one of its own."""
    ms = _default_set(chip)
    expected = set(ms.selection().expected)
    needed = [
        (name, data.metric_section(name) or "?")
        for name, spec in data.metrics_table()["metrics"].items()
        if not spec.get("optional") and any(a in expected for a in data.metric_aliases(name))
    ]
    noted = [(list(g.metrics), g.absent_note) for g in ms.groups.values() if g.absent_note and g.metrics]
    return needed, noted


def _default_set(chip: str | None):
    """drgpu's default metric set for ``chip``; the base set for a chip without one of its own."""
    from ..specs.metric_sets import load_metric_set

    try:
        return load_metric_set(chip or "base")
    except DrgpuError:
        return load_metric_set("base")
