"""Settle the findings on the time ledger: the estimate each finding's ledger share implies.

Contract: ``settle(ctx, useful, findings) -> (findings, ledger)`` is pure. It builds the
ledger (ledger.py) from the findings' bounded estimates, then gives each finding the estimate
its share implies, elapsed / (elapsed - its claim), with ``time_share`` (the claim over the
elapsed time) and ``estimated_speedup_alone`` (its change made alone); a finding the ledger
cut names the ``ledger`` bound. Severity follows the settled estimate, on any grade, and an
advice that quotes the estimate quotes the settled one; the findings come back ranked. Method: docs/json-schema.md, "Time ledger".
"""

from __future__ import annotations

from dataclasses import replace

from .context import KernelContext
from .findings import ESTIMATE_NOTES, Finding, ranked, severity_of
from .ledger import Ledger, LedgerEntry, UsefulWork, time_ledger


def settle(ctx: KernelContext, useful: UsefulWork, findings: list[Finding]) -> tuple[list[Finding], Ledger | None]:
    """The findings with the estimates their ledger shares imply, and the ledger.

    A finding's estimate becomes elapsed / (elapsed - the time the ledger gives it), so the
    share its text states and its estimate cannot disagree; ``estimated_speedup_alone`` is what
    the change buys made alone (before the larger findings' fixes). Where the ledger gives it
    less than its bounded estimate asked for, the ``ledger`` bound says what took the rest;
    severity then follows the settled estimate, on any grade. Without an elapsed time there is
    no ledger and the findings are returned as they are.
    """
    ledger = time_ledger(ctx, useful, findings)
    if ledger is None:
        return findings, None
    by_id = {f.id: f for f in findings}
    settled = []
    before: list[str] = []  # the findings that claimed ahead of the one at hand
    for entry in ledger.losses:
        settled.append(_settled(by_id[entry.owner], entry, ledger.elapsed_ns, before, ctx))
        if entry.ns > 0:
            before.append(entry.owner)
    return ranked(settled), ledger


def _speedup(elapsed: float, removed: float) -> float:
    return elapsed / max(elapsed - removed, 1e-9 * elapsed)


def _settled(finding: Finding, entry: LedgerEntry, elapsed: float, before: list[str], ctx: KernelContext) -> Finding:
    speed = _speedup(elapsed, entry.ns)
    alone = _speedup(elapsed, entry.alone_share * elapsed)
    if entry.ns >= entry.wanted_share * elapsed * (1 - 1e-9):
        # Not cut: the settled estimate is the bounded one (up to rounding).
        return replace(finding, time_share=entry.claimed_share, estimated_speedup_alone=alone)
    # Said as a CUDA programmer reads it: what makes the estimate lower than the change alone
    # would give (the larger fixes above remove part of the same time first, or the work the
    # change leaves takes that time even at peak), then what is left to this change.
    reasons = []
    if entry.claimed_share < entry.alone_share * (1 - 1e-9) and before:
        names = ", ".join(before)
        reasons.append(
            f"the fix{'es' if len(before) > 1 else ''} of {names} above remove{'' if len(before) > 1 else 's'} "
            "part of this time first"
        )
    if entry.alone_share < entry.wanted_share * (1 - 1e-9):
        reasons.append(
            f"the work this change leaves takes {100 * entry.floor_share:.0f}% of the kernel's time even at peak speed"
        )
    why = (
        " and ".join(reasons or ["the work the kernel must do takes the rest even at peak speed"])
        + f"; {100 * entry.claimed_share:.0f}% of the kernel's time is left for this change to save"
        + (
            f" (made alone it would save {100 * entry.alone_share:.0f}%, {alone:.2f}x)"
            if alone > speed * (1 + 1e-9)
            else f" (its model estimated {100 * entry.wanted_share:.0f}%)"
        )
    )
    bound = {"kind": "ledger", "limit": round(speed, 3), "why": why}
    notes = [n for n in finding.notes if not n.startswith(ESTIMATE_NOTES)]
    return replace(
        finding,
        advice=finding.advice_quoting(speed),
        estimated_speedup=speed,
        estimated_speedup_alone=alone,
        time_share=entry.claimed_share,
        severity=severity_of(speed, ctx.th),
        bounds=[*finding.bounds, bound],
        bounded_by="ledger",
        estimate_capped=False,
        notes=[f"estimate lowered: {why}", *notes],
    )
