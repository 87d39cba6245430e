"""Analysis budgets for large functions (issue 48 item 5): what a budget cut leaves out, said
once in each kernel's notes.

Contract: ``budget_note(kind, budget, left, share)`` is the note for a cut of ``kind`` (a key
of ``BUDGETS``): ``budget`` the threshold's value, ``left`` how many items the cut left out,
``share`` their share (0..1) of what the pass weighs (samples, executed instructions). Pure.
The cuts themselves are made where the work is: sass.slicing.blame_stalls (sampled
instructions, most samples first) and perfmodel.build.kernel_model (loops, most executed
instructions first), each bounded by its threshold in specs/thresholds.yaml.
"""

from __future__ import annotations

from typing import NamedTuple


class Budget(NamedTuple):
    threshold: str  # specs/thresholds.yaml key
    done: str  # what was done within the budget
    left: str  # what the items left out are
    weight: str  # what their share is of


BUDGETS: dict[str, Budget] = {
    "slicing": Budget(
        "slicing_budget_instructions",
        "SASS slicing went through the {budget:,} sampled instructions with the most samples",
        "sampled instructions were not sliced",
        "the PC samples",
    ),
    "model": Budget(
        "model_budget_instructions",
        "the performance model simulated the loops with the most executed instructions, {budget:,} loop-body instructions in all",
        "loops were not modeled",
        "the executed instructions",
    ),
}


def budget_note(kind: str, budget: int, left: int, share: float) -> str:
    b = BUDGETS[kind]
    return (
        f"analysis budget reached: {b.done.format(budget=budget)}; {left:,} other {b.left} "
        f"({100 * share:.1f}% of {b.weight}); to go further: -t {b.threshold}=N"
    )
