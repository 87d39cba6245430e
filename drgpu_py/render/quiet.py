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
- ``Worth(hide_below, show_all)``: what is worth reading. A finding whose estimate is below
  ``hide_below`` (1.02x by default: a fix that saves under 2% of the kernel's time) and a
  source line whose share reads 0% are left out of the text and HTML (the tree, the findings,
  "fix first" and the summary's top finding), and each place says how many it left out
  (``hidden_phrase``: "2 findings under 1.02x hidden"); ``show_all`` shows everything. JSON,
  CSV, SARIF and gcc keep everything.
- ``split_notes(kernels)``: the notes two or more kernels carry word for word, or nearly
  (``merge_notes``), each once with the ids of the kernels that carry it, and each kernel's
  own notes. A report of 15 kernels repeated the same three notes 15 times; text and HTML
  print such a note once, in a report-level block, and JSON keeps every kernel's ``notes``
  whole.
- ``merge_notes(notes)``: notes that differ only in the findings they open with ("grid-too-small
  not evaluated fully: the report lacks ..." and "global-uncoalesced not evaluated fully: ..."
  with the same metrics) or in the items of a parenthesised list (the signs of a
  warp-specialized pipeline: "(NANOSLEEP, SYNCS, ...)" and "(NANOSLEEP, SYNCS, ..., BAR (named
  barriers))") are one note, naming the union. Every other difference (a number, a metric, a
  line) keeps them apart.
"""

from __future__ import annotations

import math
import re
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


#: The estimate below which a finding is not worth reading (text and HTML; --hide-below).
HIDE_BELOW = 1.02
#: How the text and HTML say that something was hidden and how to see it.
SHOW_ALL_HINT = "--show-all shows them"


@dataclass(frozen=True)
class Worth:
    """What the readable renderers show: findings estimated at ``hide_below`` or more, source
    lines whose share does not read 0%; everything with ``show_all``."""

    hide_below: float = HIDE_BELOW
    show_all: bool = False

    def finding(self, estimate) -> bool:
        """Whether a finding (or a summary row's finding) of this estimate is shown."""
        if self.show_all or not isinstance(estimate, (int, float)) or math.isnan(estimate):
            return True
        return estimate >= self.hide_below

    def share(self, share, digits: int = 0) -> bool:
        """Whether a source line of this share (0..1) is shown: it does not read 0% with
        ``digits`` decimals (the findings' locations show 0, the tree's lines 1)."""
        if self.show_all or not isinstance(share, (int, float)) or math.isnan(share):
            return True
        return float(f"{100 * share:.{digits}f}") != 0.0

    def node(self, node: Node) -> bool:
        """Whether a tree node is shown: a suggestion by its estimate, a line by its share."""
        if node.kind == "suggestion" and node.unit == "x":
            return self.finding(node.value)
        if node.kind == "line" and node.unit == "%" and isinstance(node.value, (int, float)):
            return self.share(node.value / 100.0, 1)
        return True

    def split_nodes(self, nodes: list[Node]) -> tuple[list[Node], list[Node]]:
        return [n for n in nodes if self.node(n)], [n for n in nodes if not self.node(n)]

    def split_findings(self, findings: list) -> tuple[list, list]:
        """(shown, hidden) findings (objects with ``estimated_speedup``), in their order."""
        return (
            [f for f in findings if self.finding(f.estimated_speedup)],
            [f for f in findings if not self.finding(f.estimated_speedup)],
        )

    def split_locations(self, locations: list) -> tuple[list, list]:
        """(shown, hidden) locations of a finding; the first is always shown."""
        shown = [loc for i, loc in enumerate(locations) if i == 0 or self.share(loc.get("share"))]
        return shown, [loc for loc in locations if not any(loc is x for x in shown)]

    def hidden_phrase(self, findings: int = 0, lines: int = 0) -> str:
        """'2 findings under 1.02x and 1 source line at 0% hidden' ('' when nothing was)."""
        parts = []
        if findings:
            parts.append(f"{findings} finding{'s' if findings != 1 else ''} under {self.hide_below:.2f}x")
        if lines:
            parts.append(f"{lines} source line{'s' if lines != 1 else ''} at 0%")
        return " and ".join(parts) + " hidden" if parts else ""


def worth_of(options) -> Worth:
    """The worth rule of render options (RenderOptions.hide_below, .show_all)."""
    return Worth(getattr(options, "hide_below", HIDE_BELOW), bool(getattr(options, "show_all", False)))


def hidden_findings_text(worth: Worth, hidden: list, lines: int = 0) -> str:
    """The line that says which findings (and how many lines) were hidden and how to see
    them: a finding that would be worth more made alone is one whose time the larger fixes
    above remove first."""
    phrase = worth.hidden_phrase(len(hidden), lines)
    if not phrase:
        return ""
    names = [
        f.id + " (its time is counted under the findings above)"
        if (f.estimated_speedup_alone or 0.0) >= worth.hide_below and f.bounded_by == "ledger"
        else f.id
        for f in hidden
    ]
    return phrase + (f": {', '.join(names)}" if names else "") + f"; {SHOW_ALL_HINT}"


@dataclass
class SplitNotes:
    """``shared``: (note, ids of the kernels carrying it), in order of first appearance;
    ``own``: per kernel, in the order given, the notes no other kernel carries."""

    shared: list[tuple[str, list[int]]] = field(default_factory=list)
    own: list[list[str]] = field(default_factory=list)


def split_notes(kernels) -> SplitNotes:
    """Notes of kernel analyses (``.notes``, ``.kernel.id``) split into shared and own; notes
    that are the same but for their opening findings or a list's items (``merge_notes``) are
    one shared note."""
    families: dict[tuple[bool, tuple[str, ...]], list[str]] = {}  # in order of first appearance
    carriers: dict[tuple[bool, tuple[str, ...]], list[int]] = {}
    for ka in kernels:
        for note in dict.fromkeys(ka.notes):
            key = _note_shape(note)[0]
            families.setdefault(key, [])
            if note not in families[key]:
                families[key].append(note)
            ids = carriers.setdefault(key, [])
            if ka.kernel.id not in ids:
                ids.append(ka.kernel.id)
    shared = {key for key, ids in carriers.items() if len(ids) > 1}
    return SplitNotes(
        shared=[(merge_notes(families[key])[0], carriers[key]) for key in families if key in shared],
        own=[[n for n in dict.fromkeys(ka.notes) if _note_shape(n)[0] not in shared] for ka in kernels],
    )


#: Findings a note opens with, before what it says of them ("a, b not evaluated fully: ...").
_OPENING_IDS = re.compile(
    r"^([a-z0-9]+(?:-[a-z0-9]+)*(?:, [a-z0-9]+(?:-[a-z0-9]+)*)*)(?= not (?:evaluated fully|reported): )"
)


def _top_level_groups(text: str) -> list[tuple[int, int]]:
    """(start, end) of the text inside each top-level pair of parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            if depth == 0:
                start = i + 1
            depth += 1
        elif ch == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append((start, i))
    return out


def _list_items(text: str) -> list[str] | None:
    """The items of a comma-separated list (commas inside parentheses do not count), or None
    when ``text`` has no top-level ', '."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if depth == 0 and text.startswith(", ", i):
            items.append(text[start:i])
            start = i + 2
    return items + [text[start:]] if items else None


def _note_shape(note: str) -> tuple[tuple[bool, tuple[str, ...]], list[str], list[list[str]]]:
    """((opens with findings, the note's text around its opening findings and the items of
    its parenthesised lists), the opening findings, each list's items)."""
    m = _OPENING_IDS.match(note)
    ids = m.group(1).split(", ") if m else []
    rest = note[m.end(1) :] if m else note
    parts, lists, at = [], [], 0
    for start, end in _top_level_groups(rest):
        items = _list_items(rest[start:end])
        if items is None:
            continue
        parts.append(rest[at:start])
        lists.append(items)
        at = end
    parts.append(rest[at:])
    return (bool(m), tuple(parts)), ids, lists


def merge_notes(notes: list[str]) -> list[str]:
    """``notes`` with those of one shape (``_note_shape``: the same but for their opening
    findings and their lists' items) merged into one that names the union of each, in order
    of first appearance; the others as they are."""
    shapes: dict[tuple[bool, tuple[str, ...]], tuple[list[str], list[list[str]]]] = {}
    for note in notes:
        key, ids, lists = _note_shape(note)
        have = shapes.get(key)
        if have is None:
            shapes[key] = (list(ids), [list(x) for x in lists])
            continue
        have[0].extend(i for i in ids if i not in have[0])
        for mine, theirs in zip(have[1], lists):
            mine.extend(i for i in theirs if i not in mine)
    out = []
    for (opens, parts), (ids, lists) in shapes.items():
        text = parts[0] + "".join(", ".join(items) + part for items, part in zip(lists, parts[1:]))
        out.append((", ".join(ids) if opens else "") + text)
    return out


def kernels_phrase(ids: list[int], total: int, every: str) -> str:
    """Which kernels a shared note is about: ``every`` when it is all ``total`` of them, else
    'ids 4, 1'."""
    return every if len(ids) == total else "ids " + ", ".join(map(str, ids))
