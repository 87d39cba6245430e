"""Single-warp SASS simulation: issue pipes, latencies, per-iteration cycles, critical chain.

Contract: ``pipe_of(ins)`` and ``latency_of(ins, lat, global_latency)`` classify one
:class:`Instruction` (latencies from ``specs/arch/*.yaml`` ``latency``);
``simulate(insts, body, lat, global_latency, ...) -> Sim`` issues the instruction indices
``body`` in order for a few iterations and returns the steady-state cycles per iteration and
the critical chain of the last one. Pure functions of their arguments; nothing else in the
model is imported here.
"""

from __future__ import annotations

import math

from dataclasses import dataclass

from ...profile import ControlCode
from ...sass.control import sets_barriers, waits_on
from ...sass.isa import Instruction


_SIM_ITERATIONS = 12
_FMA_OPS = {
    "FFMA",
    "FADD",
    "FMUL",
    "IMAD",
    "IMUL",
    "HFMA2",
    "HADD2",
    "HMUL2",
    "IDP",
    "FFMA2",
    "FADD2",
    "FMUL2",
    "FSWZADD",
    "IMAD_WIDE",
}
_ALU_OPS = {
    "IADD3",
    "LOP3",
    "ISETP",
    "FSETP",
    "SHF",
    "LEA",
    "SEL",
    "FSEL",
    "FMNMX",
    "IMNMX",
    "PRMT",
    "MOV",
    "PLOP3",
    "P2R",
    "R2P",
    "VIADD",
    "VIMNMX",
    "BMSK",
    "ISCADD",
    "IABS",
    "FSET",
    "LOP",
    "IADD",
    "SHL",
    "SHR",
    "HSETP2",
    "HMNMX2",
    "FCHK",
    "VOTE",
    "CS2R",
}
_XU_OPS = {"MUFU", "F2F", "F2I", "I2F", "I2I", "F2FP", "I2FP", "F2IP", "FRND", "POPC", "FLO", "BREV"}
_TENSOR_OPS = {"HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "QGMMA", "IGMMA", "BGMMA"}


def pipe_of(ins: Instruction, f2f64_pipe: str = "fp64") -> str | None:
    """The issue pipe an instruction occupies (None: uniform datapath, branch unit, other).
    ``f2f64_pipe``: where the chip issues conversions to and from FP64 (specs/arch
    ``f2f64_pipe``). LDC is on the address divergence unit, not the load/store pipe (ncu's
    pipeline docs: the ADU serves constant loads), and has no rate here."""
    op = ins.opcode
    if op in _TENSOR_OPS:
        return "tensor"
    if ins.is_f2f64() and not ins.is_fp64():
        return f2f64_pipe
    if ins.is_fp64():
        return "fp64"
    if op == "LDC":
        return "adu"
    if op in _XU_OPS:
        return "xu"
    if ins.is_memory() or op in ("SHFL", "MATCH", "LDSM", "STSM"):
        return "lsu"
    if op in _FMA_OPS:
        return "fma"
    if op in _ALU_OPS:
        return "alu"
    return None


def latency_of(ins: Instruction, lat: dict[str, float], global_latency: float) -> float:
    """Cycles from an instruction's issue until its results can be read."""
    op = ins.opcode
    if ins.is_global_load() or op in ("ATOM", "ATOMG"):
        return global_latency
    if ins.is_local():
        return float(lat.get("l1", 33))
    if ins.is_shared() or op in ("LDC", "SHFL", "S2R", "S2UR", "LDSM", "MATCH", "REDUX"):
        return float(lat.get("shared", 23))
    if ins.is_mufu():
        return float(lat.get("mufu", 20))
    if ins.is_fp64() or ins.is_f2f64():
        return float(lat.get("fp64", 8))
    if op in _XU_OPS:
        return float(lat.get("conversion", lat.get("mufu", 20)))
    if op in _TENSOR_OPS:
        return float(lat.get("tensor", 32))
    if op.startswith(("F", "H")):
        return float(lat.get("fp32", 4))
    return float(lat.get("alu", lat.get("fp32", 4)))


def _memory_latency(ins: Instruction) -> bool:
    return ins.is_global_load() or ins.is_local() or ins.opcode in ("ATOM", "ATOMG")


# ---- single-warp simulation ---------------------------------------------------------------


@dataclass
class Sim:
    cycles: float  # cycles per iteration (steady state)
    chain: list[int]  # instruction indices on the critical chain, in order
    chain_memory: bool  # the chain waits on a memory-latency producer


def simulate(
    insts: list[Instruction],
    body: list[int],
    lat: dict[str, float],
    global_latency: float,
    issue_gap: float = 1.0,
    control: dict[int, ControlCode] | None = None,
    loop: bool = True,
    branch: float | None = None,
    blocking: dict[int, float] | None = None,
) -> Sim:
    """In-order issue of ``body`` (instruction indices) for a few iterations; per-iteration
    cycles in the steady state (the second half of the iterations) and the critical chain
    of the last iteration: from its last instruction back through the producers that held
    each instruction (an instruction held by issue order only continues at its predecessor).
    ``blocking``: cycles an instruction holds the warp after it issues (an immediate-constant
    cache miss: nothing issues until the line arrives), by instruction index."""
    if not body:
        return Sim(0.0, [], False)
    iters = _SIM_ITERATIONS if loop else 1
    branch = float(lat.get("branch", 0)) if branch is None else branch
    read_free = float(lat.get("alu", 4))
    # What each instruction waits on, takes and sets is the same in every iteration: worked out
    # once, not per iteration. Sorted: of producers ready at the same cycle the first key holds
    # the instruction, and a set's order of strings changes with the hash seed of each process
    # (the critical chain, hence the JSON, would change from run to run).
    # Registers, predicates and barriers become dense slots of two lists (the cycle a value is
    # ready, its producer): the loop below runs iterations x instructions x operands times.
    slot: dict[str, int] = {}
    plan: list[tuple[int, list[int], float, float | None, list[int], list[tuple[int, bool]]]] = []
    for idx in body:
        ins = insts[idx]
        keys = sorted(ins.uses)
        cw = control.get(ins.pc) if control else None
        sets: list[tuple[str, bool]] = []
        if cw:
            keys += [f"B{b}" for b in waits_on(cw)]
            wb, rb = cw.get("write_barrier"), cw.get("read_barrier")
            # A read barrier frees the source registers soon after issue (True: at issue plus
            # an ALU latency; else when the results are ready).
            sets = [(f"B{barrier}", barrier != wb and barrier == rb) for barrier in sets_barriers(cw)]
        held_for = blocking[idx] if blocking and idx in blocking else None
        plan.append(
            (
                idx,
                [slot.setdefault(k, len(slot)) for k in keys],
                latency_of(ins, lat, global_latency),
                held_for,
                [slot.setdefault(r, len(slot)) for r in ins.defs],
                [(slot.setdefault(b, len(slot)), read) for b, read in sets],
            )
        )
    redirect = loop and insts[body[-1]].is_branch()
    ready_at = [-math.inf] * len(slot)  # slot -> the cycle its value is ready
    producer: list[int | None] = [None] * len(slot)  # slot -> the instruction that sets it
    cycle = -issue_gap
    marks = []
    last_held: list[tuple[int, int | None]] = []  # (index, producer that held it) in the last iteration
    for _ in range(iters):
        marks.append(cycle)
        last_held = []
        for idx, keys_at, latency, held_for, defs_at, sets_at in plan:
            at, held = cycle + issue_gap, None
            for k in keys_at:
                if ready_at[k] > at:
                    at, held = ready_at[k], producer[k]
            cycle = max(at, cycle + issue_gap)
            if held_for is not None:
                cycle += held_for
            done = cycle + latency
            for k in defs_at:
                ready_at[k], producer[k] = done, idx
            for k, read in sets_at:
                ready_at[k], producer[k] = (cycle + read_free if read else done), idx
            last_held.append((idx, held))
        if redirect:
            cycle += branch
    marks.append(cycle)
    half = iters // 2
    cycles = (marks[-1] - marks[half]) / (iters - half) if loop else marks[-1] + issue_gap
    chain, chain_memory = _critical_chain(insts, last_held, blocking)
    # A warp held on constant misses for most of each iteration waits on memory, whichever
    # producer the last instruction's chain ends at.
    waited = sum(blocking.get(j, 0.0) for j in body) if blocking and loop else 0.0
    chain_memory = chain_memory or 2.0 * waited >= cycles > 0
    return Sim(max(0.0, cycles), list(dict.fromkeys(chain)), chain_memory)


def _critical_chain(
    insts: list[Instruction], last_held: list[tuple[int, int | None]], blocking: dict[int, float] | None
) -> tuple[list[int], bool]:
    """The critical chain of the last simulated iteration (see simulate) and whether it waits
    on a memory-latency producer (or one that held the warp on a constant miss)."""
    held_of = dict(last_held)
    order = [j for j, _ in last_held]
    # Each instruction's first position, looked up instead of searched: the straight-line
    # code of a large function has tens of thousands of instructions (a quadratic walk).
    first_at: dict[int, int] = {}
    for p, j in enumerate(order):
        first_at.setdefault(j, p)
    chain, chain_memory = [], False
    pos = len(order) - 1
    seen = set()
    while pos >= 0 and order[pos] not in seen:
        idx = order[pos]
        seen.add(idx)
        producer = held_of.get(idx)
        if producer is not None:
            chain.append(producer)
            chain_memory = (
                chain_memory
                or _memory_latency(insts[producer])
                or insts[producer].is_shared()
                or bool(blocking and producer in blocking)
            )
            nxt = first_at.get(producer)
            if nxt is None:
                break
            if nxt >= pos:  # loop-carried: the producer is in the previous iteration
                break
            pos = nxt
        else:
            pos -= 1
    chain.reverse()
    return chain, chain_memory
