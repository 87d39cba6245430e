"""The pruning rules of the instruction blamer (:mod:`drgpu_py.sass.slicing`): which
producers a stall of each reason can be waiting on, how long a producer's result may take at
most, and the kind of dependency each producer makes.

Contract: ``compatible(reason, producer)`` and ``reads_late(reason, producer)`` say whether a
read-after-write, or a write-after-read, dependency on ``producer`` can show up as ``reason``;
``latency_bound`` is an upper bound in cycles (with a margin for queueing) and
``fixed_latency`` a fixed-latency pipe's latency, both from the architecture's latencies
(``DEFAULT_LATENCY`` where it gives none); ``kind_of`` names the dependency's kind. Pure
functions of an instruction. Method: docs/slicing.md.
"""

from __future__ import annotations

from .isa import Instruction

# Latency bounds are upper bounds on how long a result may take, so they carry a margin for
# queueing: memory under contention (and shared memory with bank conflicts) takes several
# times its unloaded latency; fixed-latency pipes do not queue once issued.
_MEMORY_MARGIN = 4
_SHARED_MARGIN = 8
_VARIABLE_MARGIN = 8
_FIXED_MARGIN = 2
DEFAULT_LATENCY = {
    "l1": 33,
    "l2": 200,
    "dram": 500,
    "shared": 23,
    "fp32": 4,
    "fp64": 8,
    "mufu": 20,
    "constant_miss": 100,
}

_L1TEX_READERS = {
    "STG",
    "ST",
    "STL",
    "RED",
    "REDG",
    "ATOM",
    "ATOMG",
    "LDG",
    "LD",
    "LDL",
    "TEX",
    "TLD",
    "TLD4",
    "SULD",
    "SUST",
    "SURED",
    "SUATOM",
    "LDGSTS",
}


def _l1tex(p: Instruction) -> bool:
    return p.is_global_load() or p.is_local() or p.opcode in ("LD", "ATOM", "ATOMG")


def compatible(reason: str, producer: Instruction) -> bool:
    """Can a read-after-write dependency on ``producer`` show up as this stall reason?"""
    if reason == "long_scoreboard":
        return _l1tex(producer)
    if reason == "short_scoreboard":
        return producer.variable_latency() and not _l1tex(producer)
    if reason == "wait":
        return not producer.variable_latency() or producer.is_fp64()
    return True


def reads_late(reason: str | None, p: Instruction) -> bool:
    """Does ``p`` read its source registers after issue (so overwriting them waits)?"""
    l1tex = p.opcode in _L1TEX_READERS
    mio = (
        p.is_shared()
        or p.opcode in ("LDC", "SHFL", "MUFU")
        or (p.variable_latency() and not l1tex and not p.is_memory())
    )
    if reason == "long_scoreboard":
        return l1tex
    if reason == "short_scoreboard":
        return mio
    return l1tex or mio


def latency_bound(p: Instruction, lat: dict[str, float]) -> float:
    """Upper bound, in cycles, on the time ``p``'s result (or its late operand read) takes."""
    if _l1tex(p) or p.opcode in _L1TEX_READERS:
        return _MEMORY_MARGIN * lat["dram"]
    if p.is_shared():
        return _SHARED_MARGIN * lat["shared"] + 64
    if p.opcode in ("LDC", "ULDC"):
        return _MEMORY_MARGIN * lat["constant_miss"]
    if p.variable_latency() and not p.is_fp64():
        return _VARIABLE_MARGIN * max(lat["mufu"], lat["fp64"], lat["shared"])
    return _FIXED_MARGIN * fixed_latency(p, lat)


def fixed_latency(p: Instruction, lat: dict[str, float]) -> float:
    return lat["fp64"] if p.is_fp64() else lat["fp32"]


def kind_of(p: Instruction, war: bool = False) -> str:
    if war:
        return "war"
    if p.is_local():
        return "local_memory"
    if _l1tex(p) or p.opcode in _L1TEX_READERS:
        return "global_memory"
    if p.opcode in ("LDC", "ULDC"):
        return "constant_memory"
    if p.is_shared():
        return "shared_memory"
    return "arithmetic"
