"""Decode the scheduling control information of Volta-and-later SASS instructions (bits
41..61 of each instruction's high 64-bit word; field layout: docs/slicing.md).

Contract: ``decode_control(high)`` is a pure function of the high 64-bit word and never
raises; ``control_table(encodings)`` maps ``(offset, low, high)`` triples to
``{offset: control dict}`` with exactly the keys ``stall``, ``yield``, ``write_barrier``,
``read_barrier``, ``wait_mask``, ``reuse`` (barriers are ``None`` where the field is 7).
``supports_control(sm)`` says whether an ``sm_XY`` target uses this encoding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # the record type only: importing the profile model loads pandas
    from ..profile import ControlCode

NO_BARRIER = 7
NUM_BARRIERS = 6
_SHIFT = 41  # bit 105 of the 128-bit instruction is bit 41 of its high word


def decode_control(high: int) -> ControlCode:
    """Control fields of one instruction from the high 64 bits of its encoding."""
    c = (int(high) >> _SHIFT) & ((1 << 21) - 1)
    wb = (c >> 5) & 7
    rb = (c >> 8) & 7
    return {
        "stall": c & 0xF,
        "yield": bool((c >> 4) & 1),
        "write_barrier": None if wb == NO_BARRIER else wb,
        "read_barrier": None if rb == NO_BARRIER else rb,
        "wait_mask": (c >> 11) & 0x3F,
        "reuse": (c >> 17) & 0xF,
    }


def control_table(encodings: Iterable[tuple[int, int, int]]) -> dict[int, ControlCode]:
    """``{offset: control}`` for ``(offset, low word, high word)`` triples."""
    return {int(off): decode_control(hi) for off, _lo, hi in encodings}


def waits_on(cw: ControlCode | None) -> set[int]:
    """Scoreboard barriers an instruction waits on before issuing."""
    mask = (cw.get("wait_mask") if cw else None) or 0
    return {b for b in range(NUM_BARRIERS) if mask >> b & 1}


def sets_barriers(cw: ControlCode | None) -> set[int]:
    """Scoreboard barriers an instruction sets (write and read barrier)."""
    if not cw:
        return set()
    return {b for b in (cw.get("write_barrier"), cw.get("read_barrier")) if b is not None and b < NUM_BARRIERS}


def format_control(cw: ControlCode) -> str:
    """Compact form used in notes and debugging, e.g. ``W2:R-:B--2---:Y:S01``."""
    wb, rb = cw.get("write_barrier"), cw.get("read_barrier")
    mask = "".join(str(b) if cw.get("wait_mask", 0) >> b & 1 else "-" for b in range(NUM_BARRIERS))
    return (
        f"W{'-' if wb is None else wb}:R{'-' if rb is None else rb}:B{mask}:"
        f"{'Y' if cw.get('yield') else '-'}:S{cw.get('stall', 0):02d}"
    )


def supports_control(sm: int | None) -> bool:
    """Volta (sm_70) and later embed control bits in each 128-bit instruction."""
    return sm is not None and sm >= 70
