"""Who owns the time no finding claims: blamed stall samples by mechanism (GPA's matrix).

Contract: ``attribute(ctx, remainder_ns, useful_ns, elapsed_ns, claims, raised) -> Attribution`` is
pure. Every PC sample of the kernel has a stall reason and an instruction: the one where it was
taken, or, for a dependency stall, the producer the backward slice blames (sass/slicing.py; a
sample at no instruction of the table has none). The (reason, instruction class) pair selects
the first cell of specs/attribution.yaml that lists both: a mechanism ("waiting for global
loads", "dependent arithmetic") and the findings whose change acts on it, as GPA's optimizers
match blamed stall classes x instruction classes. A sample no cell matches is unexplained.

The ledger (ledger.py) gives this module the time left once the useful work at peak and the
findings' claims are counted. That remainder is split in proportion to the samples of each
mechanism after (1) a claiming finding's samples, elapsed-time equivalent (claim / elapsed x all
samples), are taken from its own mechanisms (they are what its claim already counts) and (2) the
useful time's samples are taken from the "work" cells (issue cycles of essential instructions).
Each part keeps its top line; the unexplained part keeps its top stall reasons. Without PC
samples the kernel-wide stall counters stand in, at no instruction (class ``none``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..sass.isa import ATOMICS, CONST_LOADS, Instruction, opcode_class
from ..sass.slicing import Edge
from ..specs import loader as data
from .context import KernelContext

#: One (stall reason, PC or None) -> samples.
Blamed = dict[tuple[str, int | None], float]


def instruction_class(inst: Instruction | None) -> str:
    """The instruction class attribution.yaml's cells name (loader.ATTRIBUTION_CLASSES)."""
    if inst is None:
        return "none"
    op = inst.opcode
    if inst.is_local():
        return "local"
    if op in ATOMICS and op not in ("ATOMS", "REDS"):
        return "atomic"
    if inst.is_shared():
        return "shared"
    if op in CONST_LOADS:
        return "constant"
    if op in ("STG", "ST"):
        return "global_store"
    if inst.is_global_load() or op.startswith("UTMA"):
        return "global_load"
    if op == "BAR":
        return "barrier"
    if op in ("MEMBAR", "FENCE", "ERRBAR"):
        return "fence"
    cls = opcode_class(inst)
    return cls if cls in data.ATTRIBUTION_CLASSES else "other"


def _add_column(out: Blamed, reason: str, pcs: list[int], values: list[float]) -> None:
    for pc, s in zip(pcs, values):
        if s == s and s > 0:  # NaN samples count as none
            out[(reason, int(pc))] = out.get((reason, int(pc)), 0.0) + s


def blamed_samples(ctx: KernelContext) -> Blamed:
    """Samples per (reason, PC): dependency stalls at the producer the slice blames, other
    stalls and issue cycles where they were taken; samples at no instruction under PC None.
    Without PC samples: the kernel-wide stall weights, all under PC None."""
    out: Blamed = {}
    if not ctx.sampling:
        return {(reason, None): v for reason, v in ctx.reasons.items() if v > 0}
    _, where, arr, pc_array = ctx.stall_matrix()
    pcs = pc_array.tolist()
    if ctx.blame is not None:
        _add_blame(out, ctx.blame.rows)
    else:
        for col, j in where.items():
            if col != "stall_selected":
                _add_column(out, col.removeprefix("stall_"), pcs, arr[:, j].tolist())
    if "stall_selected" in where:
        _add_column(out, "selected", pcs, arr[:, where["stall_selected"]].tolist())
    _add_unplaced(out, ctx.accounting)
    return out


def _add_blame(out: Blamed, rows: Iterable[Edge]) -> None:
    """The samples of each blame edge, at its producer (NaN samples count as none)."""
    for _consumer, producer, reason, s, _dist, _kind in rows:
        if s == s and s > 0:
            out[(reason, int(producer))] = out.get((reason, int(producer)), 0.0) + s


def _add_unplaced(out: Blamed, accounting: dict[str, Any] | None) -> None:
    """Samples the table could not place, by reason, under PC None."""
    for reason, v in ((accounting or {}).get("by_reason") or {}).items():
        if v > 0:
            out[(reason, None)] = out.get((reason, None), 0.0) + v


def _cell_of(reason: str, cls: str, cells: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
    for cell in cells:
        if reason in cell["reasons"] and ("*" in cell["classes"] or cls in cell["classes"]):
            return cell
    return None


@dataclass(frozen=True)
class Attributed:
    """The part of the unclaimed time one mechanism owns."""

    mechanism: str
    label: str
    owners: tuple[str, ...]  # the findings whose change acts on it (catalogue ids)
    raised: tuple[str, ...]  # those of ``owners`` this analysis raised
    work: bool  # issue cycles of essential instructions: work, not a loss
    ns: float
    top_line: dict[str, Any] | None = None

    @property
    def short_label(self) -> str:
        """The label without its parenthetical gloss (the text's time line)."""
        return self.label.split(" (")[0]

    def to_dict(self, elapsed_ns: float) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "label": self.label,
            "owners": list(self.owners),
            "raised": list(self.raised),
            "work": self.work,
            "ns": round(self.ns, 1),
            "share": round(self.ns / elapsed_ns, 4),
            "top_line": self.top_line,
        }


@dataclass(frozen=True)
class Attribution:
    parts: list[Attributed]  # largest first
    unexplained_ns: float
    unexplained_top: list[dict[str, Any]] = field(default_factory=list)


def _where(ctx: KernelContext, weights: Mapping[int, float]) -> dict[str, Any] | None:
    if not weights:
        return None
    # In PC order: of two instructions of a line with the same samples, the first names it
    # (the blame edges' order may differ between runs).
    locs = ctx.locations(dict(sorted(weights.items())), 1)
    if not locs:
        return None
    loc = locs[0]
    return {"file": loc.get("file"), "line": loc.get("line"), "pc_offset": loc.get("pc_offset")}


def _take(mass: dict[str, float], keys: Iterable[str], amount: float) -> None:
    """Take ``amount`` from the masses of ``keys``, in proportion, none below zero."""
    keys = [k for k in keys if mass.get(k, 0.0) > 0]
    have = sum(mass[k] for k in keys)
    if have <= 0 or amount <= 0:
        return
    f = min(1.0, amount / have)
    for k in keys:
        mass[k] -= mass[k] * f


@dataclass
class _Masses:
    """Samples by mechanism (and by PC within each), and those no cell matches, by reason."""

    mass: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    at: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    unmatched: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    unmatched_at: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(float)))


def _masses(ctx: KernelContext, blamed: Blamed, cells: tuple[dict[str, Any], ...]) -> _Masses:
    """Each (reason, PC)'s samples under the mechanism of the first cell that matches the
    reason and the instruction's class."""
    m = _Masses()
    for (reason, pc), s in blamed.items():
        cell = _cell_of(reason, instruction_class(ctx.by_pc.get(pc) if pc is not None else None), cells)
        if cell is None:
            m.unmatched[reason] += s
            if pc is not None:
                m.unmatched_at[reason][pc] += s
            continue
        m.mass[cell["mechanism"]] += s
        if pc is not None:
            m.at[cell["mechanism"]][pc] += s
    return m


def attribute(
    ctx: KernelContext,
    remainder_ns: float,
    useful_ns: float,
    elapsed_ns: float,
    claims: Mapping[str, float],
    raised: Iterable[str],
) -> Attribution:
    """Split ``remainder_ns`` (the time neither useful work nor a claim counts) by mechanism;
    ``claims`` maps each claiming finding's id to its claimed ns, ``raised`` lists every finding
    this analysis raised."""
    cells = data.attribution_cells()
    blamed = blamed_samples(ctx)
    total = sum(blamed.values())
    m = _masses(ctx, blamed, cells)
    if total > 0 and elapsed_ns > 0:
        _take_claimed(m.mass, cells, claims, useful_ns, total / elapsed_ns)
    left = sum(m.mass.values()) + sum(m.unmatched.values())
    if remainder_ns <= 1e-9 * elapsed_ns or left <= 0:
        return Attribution([], max(0.0, remainder_ns), _unexplained_top(ctx, m.unmatched, m.unmatched_at))
    scale = remainder_ns / left
    parts = _parts(ctx, cells, m, scale, set(raised))
    unexplained = sum(m.unmatched.values()) * scale
    return Attribution(parts, unexplained, _unexplained_top(ctx, m.unmatched, m.unmatched_at))


def _take_claimed(
    mass: dict[str, float],
    cells: tuple[dict[str, Any], ...],
    claims: Mapping[str, float],
    useful_ns: float,
    per_ns: float,
) -> None:
    """Take from the mechanisms what the claiming findings own, and what useful work is."""
    for owner, ns in claims.items():
        _take(mass, [c["mechanism"] for c in cells if owner in c["owners"]], ns * per_ns)
    _take(mass, [c["mechanism"] for c in cells if c.get("work")], useful_ns * per_ns)


def _parts(
    ctx: KernelContext, cells: tuple[dict[str, Any], ...], m: _Masses, scale: float, raised_ids: set[str]
) -> list[Attributed]:
    """The mechanisms left with time, largest first, each with its heaviest line."""
    parts = [
        Attributed(
            mechanism=c["mechanism"],
            label=c["label"],
            owners=tuple(c["owners"]),
            raised=tuple(o for o in c["owners"] if o in raised_ids),
            work=bool(c.get("work")),
            ns=m.mass[c["mechanism"]] * scale,
            top_line=_where(ctx, m.at.get(c["mechanism"], {})),
        )
        for c in cells
        if m.mass.get(c["mechanism"], 0.0) * scale > 0
    ]
    parts.sort(key=lambda p: -p.ns)
    return parts


def _unexplained_top(
    ctx: KernelContext, unmatched: Mapping[str, float], at: Mapping[str, Mapping[int, float]], limit: int = 3
) -> list[dict[str, Any]]:
    """The top stall reasons of the samples no cell matches (share of stall cycles) and the line
    that carries most of each."""
    labels = data.stall_reasons()
    stalls = {r: v for r, v in unmatched.items() if v > 0}
    out = []
    for reason in sorted(stalls, key=lambda r: -stalls[r])[:limit]:
        share = stalls[reason] / ctx.stall_total if ctx.stall_total > 0 and reason != "selected" else None
        out.append(
            {
                "reason": reason,
                "label": labels.get(reason, {}).get("label", reason),
                "stall_share": None if share is None or not math.isfinite(share) else round(share, 4),
                "top_line": _where(ctx, at.get(reason, {})),
            }
        )
    return out
