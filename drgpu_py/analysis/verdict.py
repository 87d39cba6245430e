"""A kernel's verdict: the one line a performance engineer says first.

Contract: ``verdict(useful, ledger, findings) -> str`` is pure. It says how far the kernel is
from its useful-work limit (``UsefulWork.efficiency_pct``: the longest part of its essential
work at its unit's peak over the elapsed time, ledger.py), what holds the rest of the time and
what to do, from values the analysis already has:

- the useful-work figure and its limiting part ("1% of useful-work peak (DRAM at ideal
  width)"); "useful work not measured" where the report lacks what it needs;
- the first finding worth reading (estimated at ``WORTH`` or more; findings come best first)
  with the share of the time the ledger gives it, the line to fix and the estimate ("atomic-
  contention holds 99% of the time: fix global_atomics.cu:15 (est. 78.04x)");
- without such a finding, "little to gain" where the useful work is graded good or better,
  else the largest other time the ledger names (a mechanism or what nothing explains).

How busy a unit is (speed of light) is no verdict: a unit kept busy by waste reads busy, so
renderers show it as a detail under this line. Numbers use one rounding (figures.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from .figures import share_pct, speedup
from .findings import Finding
from .ledger import Ledger, UsefulWork, part_label
from .tree import location_text

#: The least estimate a verdict names (the readable outputs' default --hide-below).
WORTH = 1.02
#: Useful-work grades with little left to gain when no finding is worth reading.
GOOD_GRADES = ("good", "excellent")


def useful_share(useful: UsefulWork | None, ledger: Ledger | None) -> float | None:
    """The one useful figure, as a share of the elapsed time (None: not measured): the useful
    work at peak over the elapsed time, at most 1, computed as the ledger's time line computes
    it, so that the verdict and that line always print the same number."""
    if ledger is not None and not ledger.useful_measured:
        return None
    if ledger is not None and ledger.useful_counted_ns is not None:
        return ledger.useful_counted_ns / ledger.elapsed_ns
    eff = useful.efficiency_pct if useful is not None else None
    return None if eff is None else min(eff, 100.0) / 100.0


def verdict(useful: UsefulWork | None, ledger: Ledger | None, findings: Sequence[Finding]) -> str:
    share = useful_share(useful, ledger)
    if share is None:
        lead = "useful work not measured"
    else:
        lead = f"{share_pct(share)}% of useful-work peak ({part_label(useful.limiter if useful else None)})"
    top = next((f for f in findings if f.estimated_speedup >= WORTH), None)
    if top is not None:
        where = f" {location_text(top.locations[0])}" if top.locations else ""
        held = (
            f"{top.id} holds {share_pct(top.time_share)}% of the time"
            if top.time_share is not None
            else f"{top.id} (its share of the time not measured)"
        )
        est = ("≥" if top.estimate_capped else "") + speedup(top.estimated_speedup)
        return f"{lead}; {held}: fix{where} (est. {est})"
    if useful is not None and useful.grade in GOOD_GRADES:
        return f"at {lead}: little to gain"
    if ledger is None:
        return f"{lead}; no finding above the thresholds"
    e = ledger.elapsed_ns
    others = [(a.short_label, a.ns) for a in ledger.attributed] + [("unexplained", ledger.unexplained_ns)]
    label, ns = max(others, key=lambda x: x[1])
    if ns / e < 0.005:
        return f"{lead}; no finding above the thresholds"
    return f"{lead}; no finding explains the rest: {label} holds {share_pct(ns / e)}% of the time"
