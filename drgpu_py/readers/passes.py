"""Join the two reports of a two-pass ``drgpu profile`` into the one profile the analysis reads.

Contract: ``launch_key(kernel, seen)`` is a launch's identity across the two runs of one
application: its mangled name (the demangled one where a report has none) and how many launches
of that name came before it. ``join_passes(first, second, outside_note)`` is pure (inputs are
not modified): one ``KernelProfile`` per launch of the first report, in its order;
``focus`` (mangled names) limits the join to the kernels the second run was asked for
(``drgpu analyze STEM.pass1.ncu-rep STEM.pass2.ncu-rep`` joins without it: a real second run
holds only those);

* a launch the second report also holds (same identity) gets the metrics, their names and the
  strings of both; a name both hold keeps the first report's value (the first run collected it
  by request; the second holds it only as a section's or ncu's own extra);
* the per-instruction table, source text, launch configuration and device are the first
  report's (the second run collects no per-instruction data);
* a launch the second report does not hold keeps the first report's metrics only and carries
  ``outside_note``: what it lacks stays absent (None: not measured), so a finding that needs it
  is noted as not evaluated fully (analysis/coverage.py), never evaluated on a stand-in
  value. ``outside_note(share)`` is that note.

Launches of the second report with no counterpart in the first, or outside ``focus``, are left
out, and a profile note counts them.
"""

from __future__ import annotations

from dataclasses import replace

from ..profile import KernelProfile, Profile


def outside_note(share: float | None) -> str:
    """The note of a launch outside the focus; ``share``: the focus share, where known."""
    held = f"the kernels holding {share:.0%} of the first run's GPU time" if share is not None else "its second run"
    return (
        f"outside the focus of a two-pass profile ({held}): only the first run's metrics were collected "
        "(launch statistics, duration, L2/DRAM speed of light, PC sampling and per-instruction counters); "
        "what the others would show is not measured, and findings that need them are noted as not evaluated fully"
    )


def launch_key(kernel: KernelProfile, seen: dict[str, int]) -> tuple[str, int]:
    """The launch's identity across runs; ``seen`` counts the launches of each name so far."""
    name = kernel.function_key
    key = (name, seen.get(name, 0))
    seen[name] = key[1] + 1
    return key


def _by_key(profile: Profile, focus: set[str] | None) -> dict[tuple[str, int], KernelProfile]:
    seen: dict[str, int] = {}
    keyed = {launch_key(k, seen): k for k in profile.kernels}
    return {key: k for key, k in keyed.items() if focus is None or key[0] in focus}


def _joined(first: KernelProfile, second: KernelProfile) -> KernelProfile:
    """One launch measured by both runs: the second's metrics under the first's."""
    return replace(
        first,
        metrics={**second.metrics, **first.metrics},
        metric_names={**second.metric_names, **first.metric_names},
        strings={**second.strings, **first.strings},
        notes=list(dict.fromkeys([*first.notes, *second.notes])),
    )


def join_passes(first: Profile, second: Profile, outside_note: str, focus: set[str] | None = None) -> Profile:
    """The first report's launches, each joined with its launch in the second (module docstring)."""
    in_second = _by_key(second, focus)
    seen: dict[str, int] = {}
    kernels: list[KernelProfile] = []
    used: set[tuple[str, int]] = set()
    for k in first.kernels:
        key = launch_key(k, seen)
        other = in_second.get(key)
        if other is None:
            kernels.append(replace(k, notes=list(dict.fromkeys([*k.notes, outside_note]))))
            continue
        used.add(key)
        kernels.append(_joined(k, other))
    notes = [f"two-pass profile: {first.path} (every launch) joined with {second.path} ({len(used)} launches)"]
    extra = len(second.kernels) - len(used)
    if extra:
        notes.append(
            f"{extra} launch(es) of the second pass have no counterpart in the first or are outside the focus, and are left out"
        )
    notes += [n for n in [*first.notes, *second.notes] if n not in notes]
    return Profile(path=first.path, format=first.format, kernels=kernels, notes=notes)
