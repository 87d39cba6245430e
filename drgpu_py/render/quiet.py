"""What the readable renderers (text, HTML, DOT) leave out or say once; JSON keeps it all.

Contract, pure functions of the analysis:

- ``changes_nothing(change)``: a what-if of the static performance model (a tree node or a
  ``model.what_if`` entry) whose speedup rounds to 1.00x. It is not shown: a line that says a
  change gains nothing reads as advice to make it.
- ``split_shown(node, fold)``: ``analysis.tree.split_folded``'s (shown, folded) children
  without such what-ifs, for every renderer that draws the tree.
- ``model_error_text(predicted, measured)``: the model's predicted cycles as a phrase that
  states how far they are from the measured ones, or None when no measurement can say
  (then no renderer shows the prediction).
- ``ROOT_BASE``, ``CAUSES_BASE``: what the tree root's percentage is of (the issue slots) and
  what its causes' are of (the stall cycles), said at the root: a cause at 57% under a root at
  26% is not a child larger than its parent.
- ``split_notes(kernels)``: the notes two or more kernels carry word for word, each once with
  the ids of the kernels that carry it, and each kernel's own notes. A report of 15 kernels
  repeated the same three notes 15 times; text and HTML print such a note once, in a
  report-level block, and JSON keeps every kernel's ``notes`` whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..analysis.tree import Node, split_folded


ROOT_BASE = "of issue slots"
CAUSES_BASE = "causes below: % of the stall cycles"


def changes_nothing(change) -> bool:
    """Whether ``change`` (a what-if tree node or a ``what_if`` entry) rounds to 1.00x."""
    if isinstance(change, Node):
        if "change" not in change.attrs:
            return False
        speedup = change.value
    else:
        speedup = change.get("speedup")
    return isinstance(speedup, (int, float)) and f"{speedup:.2f}" == "1.00"


def split_shown(node: Node, fold: float) -> tuple[list[Node], list[Node]]:
    """(children to show, children folded away), what-ifs that change nothing left out."""
    shown, folded = split_folded(node, fold)
    return [c for c in shown if not changes_nothing(c)], [c for c in folded if not changes_nothing(c)]


def model_error_text(predicted, measured) -> str | None:
    """'model 70,570 cycles, 25% above it' (or below), said after the measured cycles; None
    without both numbers."""
    if not (isinstance(predicted, (int, float)) and isinstance(measured, (int, float))):
        return None
    if not (math.isfinite(predicted) and math.isfinite(measured)) or predicted <= 0 or measured <= 0:
        return None
    err = 100.0 * (predicted - measured) / measured
    side = "above" if err >= 0 else "below"
    return f"model {predicted:,.0f} cycles, {abs(err):.0f}% {side} it"


@dataclass
class SplitNotes:
    """``shared``: (note, ids of the kernels carrying it), in order of first appearance;
    ``own``: per kernel, in the order given, the notes no other kernel carries."""

    shared: list[tuple[str, list[int]]] = field(default_factory=list)
    own: list[list[str]] = field(default_factory=list)


def split_notes(kernels) -> SplitNotes:
    """Notes of kernel analyses (``.notes``, ``.kernel.id``) split into shared and own."""
    carriers: dict[str, list[int]] = {}
    for ka in kernels:
        for note in dict.fromkeys(ka.notes):
            carriers.setdefault(note, []).append(ka.kernel.id)
    shared = {n: ids for n, ids in carriers.items() if len(ids) > 1}
    return SplitNotes(
        shared=list(shared.items()),
        own=[[n for n in dict.fromkeys(ka.notes) if n not in shared] for ka in kernels],
    )


def kernels_phrase(ids: list[int], total: int, every: str) -> str:
    """Which kernels a shared note is about: ``every`` when it is all ``total`` of them, else
    'ids 4, 1'."""
    return every if len(ids) == total else "ids " + ", ".join(map(str, ids))
