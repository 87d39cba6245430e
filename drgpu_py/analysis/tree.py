"""The analysis tree: a plain, render-agnostic node structure.

Node kinds: ``root``, ``group`` (a cause), ``reason`` (a warp stall reason), ``metric``
(a measured value), ``line`` (a source line carrying a stall), ``suggestion`` (advice),
``missing`` (a metric the report lacks; ``attrs['section']`` says which ncu section collects
it). ``value`` is a number (or None for missing), ``unit`` its unit. Renderers only read this.

``name`` is a display label and may change; a node that another output looks up (the diff,
the HTML charts) carries a stable ``key`` (the ``KEY_*`` constants) and is found by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterator
from typing import Any, TypedDict


class LineRef(TypedDict):
    file: str | None
    line: int | None


class Location(TypedDict, total=False):
    """A source line (or SASS offset) a finding or a tree node points at: the JSON
    contract's location object (docs/json-schema.md). ``share`` is of the weight ranked."""

    file: str | None
    line: int | None
    share: float
    sass: str
    pc_offset: int
    note: str  # why only the SASS offset is given
    code: str  # the source line's text, when the report embeds the source
    inlined_from: Any  # the cubin's inline chain (sass.binary), with --cubin/--binary
    stalled_at: list[LineRef]  # consumer lines where the stall was observed, if different
    role: str  # what the line is to the finding (e.g. the work before a barrier)


def location_text(loc: Location | dict[str, Any]) -> str:
    """'file.cu:LINE' for a location dict of a finding or tree node, 'SASS +0xOFF' without a file."""
    if loc.get("file"):
        return f"{str(loc['file']).rsplit('/', 1)[-1]}:{loc.get('line')}"
    return f"SASS +0x{int(loc.get('pc_offset') or 0):x}"


#: Stable keys of the nodes other outputs look up; JSON carries them as the node's "key".
KEY_MEMORY_SPLIT = "memory_latency_split"
KEY_MEMORY_L1 = "memory_l1_hits"
KEY_MEMORY_L2 = "memory_l2_hits"
KEY_MEMORY_DRAM = "memory_dram"
KEY_OCCUPANCY_THEORETICAL = "occupancy_theoretical"
KEY_OCCUPANCY_ACHIEVED = "occupancy_achieved"
KEY_OCCUPANCY_LIMITER = "occupancy_limiter"


@dataclass
class Node:
    name: str
    value: float | None = None
    unit: str = ""
    kind: str = "metric"
    children: list["Node"] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    key: str | None = None  # stable identity for lookups (KEY_*); None for most nodes

    def __repr__(self) -> str:
        # The dataclass repr would print the whole subtree.
        value = "" if self.value is None else f", {self.value}{self.unit and ' ' + self.unit}"
        key = f", key={self.key!r}" if self.key is not None else ""
        return f"Node({self.name[:80]!r}{value}, kind={self.kind!r}{key}, {len(self.children)} children)"

    def add(self, child: "Node") -> "Node":
        self.children.append(child)
        return child

    def walk(self) -> Iterator["Node"]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, name: str) -> "Node | None":
        return next((n for n in self.walk() if n.name == name), None)

    def by_key(self, key: str) -> "Node | None":
        return next((n for n in self.walk() if n.key == key), None)

    def to_dict(self) -> dict[str, Any]:
        # Every node carries "attrs", empty or not: one shape for readers (docs/json-schema.md);
        # "key" only where a node has one.
        out: dict[str, Any] = {"name": self.name, "value": self.value, "unit": self.unit, "kind": self.kind}
        if self.key is not None:
            out["key"] = self.key
        out.update(attrs=self.attrs, children=[c.to_dict() for c in self.children])
        return out


#: Kinds whose value is a share of stall cycles, so a small one may be folded away (a line's
#: % is relative to its parent, which is judged instead).
FOLDABLE = ("group", "reason")


def split_folded(node: Node, fold_share: float) -> tuple[list[Node], list[Node]]:
    """(children to show, children folded away): every renderer folds by this rule. A share
    node is folded when its whole subtree stays below the fold share; suggestions and the
    highlighted path (the top finding's) never are."""
    shown, folded = [], []
    for child in node.children:
        small = child.kind in FOLDABLE and child.unit == "%" and subtree_total(child) < fold_share * 100.0
        if small and not child.attrs.get("highlight"):
            folded.append(child)
        else:
            shown.append(child)
    return shown, folded


def subtree_total(node: Node) -> float:
    """The share a subtree stands for: its own value when it is a share, else the largest
    share below it. Folding judges a subtree by this, so a large grandchild is not lost."""
    if node.kind == "line":
        return 0.0  # a line's % is relative to its parent, not a share of the kernel
    own = node.value if node.unit == "%" and isinstance(node.value, (int, float)) else 0.0
    return max([own] + [subtree_total(c) for c in node.children])
