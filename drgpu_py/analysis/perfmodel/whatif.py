"""What-ifs: the hot loop unrolled or its invariant work hoisted, more resident warps.

Contract: ``what_if(m, change, **p) -> dict | None`` re-evaluates a built :class:`KernelModel`
(core.py) with a changed hot loop (``unroll``, ``hoist``: the loop body transformed and
simulated again, sim.py) or occupancy (``warps``) and returns the predicted cycles and speedup
(None when the change does not apply); ``default_what_ifs(m)`` the ones every model carries;
``measured_speedup(m, change)`` a what-if's speedup of the measured kernel. The loop-body roles
they rest on: ``loop_control``, ``loop_invariant`` and ``unroll_roles`` (instruction indices of
a loop body -> what unrolling and hoisting do to each).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ...sass.isa import Instruction
from ..context import KernelContext
from .core import KernelModel, LoopModel, evaluate_terms, executed_count
from .sim import pipe_of, simulate


def loop_control(insts: list[Instruction], body: list[int]) -> list[int]:
    """The back edge's branch and the integer instructions that only feed its predicate
    (compare, counter increment): what unrolling by k removes k - 1 times of k."""
    if not body or not insts[body[-1]].is_branch():
        return []
    out = [body[-1]]
    need = set(insts[body[-1]].uses)
    for j in reversed(body[:-1]):
        ins = insts[j]
        if ins.defs & need and ins.opcode in ("ISETP", "IADD3", "VIADD", "UISETP", "UIADD3", "IADD"):
            # Only when every use of its result in the body is loop control.
            users = [u for u in body if insts[u].uses & ins.defs and u not in out and u != j]
            if all(insts[u].opcode in ("ISETP", "IADD3", "VIADD", "UISETP", "UIADD3", "IADD") for u in users):
                out.append(j)
                need |= ins.uses
    return sorted(out)


def loop_invariant(insts: list[Instruction], body: list[int]) -> list[int]:
    """Instructions whose operands are all defined outside the loop (or by other invariant
    instructions): hoistable. Stores, branches, synchronization, atomics and loads from
    memory the loop writes are not."""
    defined: dict[str, list[int]] = {}
    for j in body:
        for r in insts[j].defs:
            defined.setdefault(r, []).append(j)
    stores = any(insts[j].opcode in ("STG", "ST", "STS", "STL", "RED", "REDG", "ATOM", "ATOMG", "ATOMS") for j in body)
    inv: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if j in inv or ins.is_branch() or ins.is_sync() or ins.is_atomic() or not ins.defs:
                continue
            if ins.opcode in ("STG", "ST", "STS", "STL", "S2R", "CS2R", "SHFL", "VOTE", "MATCH"):
                continue
            if ins.is_memory() and (stores or ins.opcode == "LDS"):
                continue
            if any(len(defined.get(r, [])) > 1 for r in ins.defs):
                continue
            if all(all(p in inv for p in defined.get(r, [])) for r in ins.uses):
                inv.add(j)
                changed = True
    return sorted(inv)


# Opcodes that add (an induction variable's step, a carry into its high half), that are affine
# in their register operands (index arithmetic: adds, shifts and multiplies by constants,
# moves), and that compare integers.
_ADD_OPS = {"IADD3", "VIADD", "IADD", "UIADD3", "ISCADD"}
_AFFINE_OPS = _ADD_OPS | {"IMAD", "LEA", "SHL", "MOV", "UMOV", "ULEA", "UIMAD"}
_COMPARE_OPS = {"ISETP", "UISETP"}


def _address_regs(ins: Instruction) -> set[str]:
    """Registers a memory instruction uses in its address (inside brackets; R4.64 is R4:R5)."""
    out: set[str] = set()
    for part in re.findall(r"\[([^\]]*)\]", ins.text):
        for r, wide in re.findall(r"\b(U?R\d+)(\.64)?\b", part):
            out.add(r)
            if wide:
                base = "UR" if r.startswith("UR") else "R"
                out.add(f"{base}{int(r[len(base) :]) + 1}")
    return out


def unroll_roles(insts: list[Instruction], body: list[int], invariant: list[int]) -> dict[int, str]:  # noqa: C901 - one fixed-point pass per role, each reading the roles before it
    """What each instruction of a loop body becomes when the loop is unrolled by k:

    * ``control``: the back edge's branch and the compare and counter that feed it (once per k);
    * ``induction``: an induction variable's step, r = r + (loop-invariant), with the carry into
      a 64-bit high half (once per k: the copies use r + c*step, folded into the consumers);
    * ``index``: arithmetic affine in induction variables whose results only feed addresses,
      range checks, loop control or other such arithmetic (once per k: a copy's offset is the
      address's immediate, or the compare's bound minus c, computed before the loop);
    * ``guard``: a compare of such an index against a loop-invariant bound, used only as a
      predicate or by other guards (a range check: per copy when unrolled; decided once
      before the loop when hoisted, as loop versioning does);
    * ``invariant``: loop-invariant (hoistable, loop_invariant);
    * ``work``: everything else (per copy)."""
    inv = set(invariant)
    pos = {j: i for i, j in enumerate(body)}
    n = len(body)

    def reaching(j: int, r: str) -> int | None:
        """The body instruction whose value of r instruction j reads (itself for a value
        carried around the loop), None when r comes from outside the loop."""
        for step in range(1, n + 1):
            q = body[(pos[j] - step) % n]
            if r in insts[q].defs:
                return q
        return None

    def outside(j: int, r: str, ok: set[int]) -> bool:
        q = reaching(j, r)
        return q is None or q in inv or q in ok

    def users(j: int) -> list[int]:
        return [u for u in body if any(reaching(u, r) == j for r in insts[u].uses & insts[j].defs)]

    ctl = set(loop_control(insts, body))
    roles: dict[int, str] = {j: "invariant" for j in inv}
    roles.update({j: "control" for j in ctl})
    induction: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if (
                j in roles
                and roles[j] != "control"
                or j in induction
                or ins.guard
                or ins.opcode not in _ADD_OPS | {"IMAD"}
            ):
                continue
            if ins.opcode == "IMAD" and not set(ins.modifiers) & {"X", "IADD"}:
                continue  # a multiply-add of itself is a recurrence (x = a*x + c), not a step
            regs = [r for r in ins.defs if not r.startswith(("P", "UP"))]
            if len(regs) != 1 or reaching(j, regs[0]) != j:
                continue
            if all(outside(j, u, induction) for u in ins.uses - {regs[0]}):
                induction.add(j)
                changed = True
    for j in induction:
        roles.setdefault(j, "induction")
    # Index arithmetic: affine in induction variables (and invariants).
    base = set(induction) | ctl
    index: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if j in roles or j in index or ins.guard or ins.opcode not in _AFFINE_OPS or not ins.defs:
                continue
            inside = [u for u in ins.uses if not outside(j, u, set())]
            if not inside or not all(outside(j, u, base | index) for u in ins.uses):
                continue
            if ins.opcode == "IMAD" and len(inside) > 1 and not set(ins.modifiers) & {"X", "IADD"}:
                continue  # a product of two indices is not affine
            index.add(j)
            changed = True
    guards: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in body:
            ins = insts[j]
            if j in roles or j in guards or j in index or ins.opcode not in _COMPARE_OPS:
                continue
            if all(outside(j, u, base | index | guards) for u in ins.uses):
                guards.add(j)
                changed = True

    # A guard's predicate only guards instructions or feeds other guards; an index only
    # feeds addresses, guards, control or other (folded) indices.
    def predicate_only(j: int, u: int) -> bool:
        guard = (insts[u].guard or "").lstrip("!")
        return not (insts[j].defs & insts[u].uses) - {guard}

    guards = {j for j in guards if all(u in guards or predicate_only(j, u) for u in users(j))}
    folded = set(index)
    changed = True
    while changed:
        changed = False
        for j in list(folded):
            for u in users(j):
                d = insts[j].defs & insts[u].uses
                if u in folded or u in guards or u in ctl or u in induction:
                    continue
                if insts[u].is_memory() and not (d - _address_regs(insts[u])):
                    continue
                folded.discard(j)
                changed = True
                break
    for j in body:
        roles.setdefault(j, "index" if j in folded else "guard" if j in guards else "work")
    return roles


def _kept(role: str, k: int, hoist: bool) -> float:
    """Copies of an instruction per original iteration after unrolling by k (and hoisting)."""
    if role in ("control", "induction", "index"):
        return 1.0 / k
    if role in ("guard", "invariant"):
        return 0.0 if hoist else 1.0
    return 1.0


def _transformed(
    m: KernelModel, ctx: KernelContext, lm: LoopModel, k: int, hoist: bool
) -> tuple[LoopModel, dict[int, float]]:
    """The loop unrolled by k with k independent chains (registers renamed per copy, copies
    interleaved as the compiler's scheduler does), loop control, induction steps and index
    arithmetic once per k iterations; with ``hoist``, loop-invariant instructions and range
    checks leave the loop. Cycles and instructions per original iteration, and the share of
    each instruction's executions the change removes (by PC). ``ctx``: the model's context."""
    insts = ctx.insts
    roles = unroll_roles(insts, lm.body, lm.invariant)
    executed = ctx.executed()
    copies: list[Instruction] = []
    blocking: dict[int, float] = {}

    # Copies interleaved, as the compiler's scheduler interleaves independent chains; what
    # runs once per k iterations is in the last copy only.
    def ren(regs: Iterable[str], c: int) -> set[str]:
        return {f"{r}~{c}" if not r.startswith(("UR", "UP")) else r for r in regs}

    for j in lm.body:
        kept = _kept(roles[j], k, hoist)
        if kept <= 0:
            continue
        n = k if kept >= 1.0 else 1
        for c in range(k - n, k):
            ins = insts[j]
            if j in lm.constant_misses:
                # each copy reads its own iteration's constants: the misses stay per iteration
                blocking[len(copies)] = lm.constant_misses[j]
            copies.append(replace(ins, defs=ren(ins.defs, c), uses=ren(ins.uses, c)))
    # The back-edge branch must be last for the redirect cost.
    order = [i for i in range(len(copies)) if not copies[i].is_branch()] + [
        i for i in range(len(copies)) if copies[i].is_branch()
    ]
    lat = dict(ctx.arch.get("latency") or {})
    one = simulate(copies, order, lat, m.global_latency, issue_gap=1.0, control=None, blocking=blocking)
    dep = simulate(copies, order, lat, m.global_latency, issue_gap=0.0, control=None, branch=0.0, blocking=blocking)
    removed = {insts[j].pc: 1.0 - _kept(roles[j], k, hoist) for j in lm.body if _kept(roles[j], k, hoist) < 1.0}
    gone = sum(executed_count(executed, pc) * f for pc, f in removed.items())
    per_iter = max(1.0, lm.issue_per_iteration - gone / lm.iterations) if lm.iterations > 0 else lm.issue_per_iteration
    return replace(
        lm, single_warp_cycles=one.cycles / k, critical_path_cycles=dep.cycles / k, issue_per_iteration=per_iter
    ), removed


def what_if(m: KernelModel, change: str, **p: float) -> dict[str, Any] | None:
    """Predicted cycles after a change: ``unroll`` (k: independent accumulators; loop control,
    induction steps and index arithmetic once per k iterations; ``hoist=True`` also hoists),
    ``hoist`` (the hot loop's loop-invariant instructions and range checks leave it),
    ``warps`` (w: resident warps per scheduler). None when the change does not apply."""
    if not m.available or not m.predicted_cycles > 0:
        return None
    hot = m.hot
    loops, warps, inst_total, pipes = list(m.loops), None, m.inst_total, dict(m.pipe_counts)
    ctx = m._ctx
    if ctx is None:  # an available model keeps its context
        return None
    hoist = change == "hoist" or bool(p.get("hoist"))
    if change in ("unroll", "hoist"):
        if hot is None:
            return None
        k = int(p.get("k", 4)) if change == "unroll" else 1
        new, removed_pcs = _transformed(m, ctx, hot, k, hoist)
        if change == "hoist":
            if not removed_pcs:
                return None
            label = f"hoist {len(removed_pcs)} loop-invariant instruction(s) and range check(s) out of the hot loop"
        else:
            label = f"unroll the hot loop by {k} with {k} independent accumulators" + (
                ", loop-invariant work and range checks hoisted"
                if hoist and any(f >= 1.0 for f in removed_pcs.values())
                else ""
            )
        executed = ctx.executed()
        for pc, frac in removed_pcs.items():
            n = executed_count(executed, pc) * frac
            inst_total -= n
            pp = pipe_of(ctx.by_pc[pc], m.f2f64_pipe)
            if pp in pipes:
                pipes[pp] -= n
        loops[0] = new
    elif change == "warps":
        # A scheduler cannot hold more warps than the launch gives it.
        cap = min(m.max_warps_per_scheduler, m.warps_run_per_scheduler)
        warps = min(cap, float(p.get("w", 2 * m.warps_per_scheduler)))
        if not warps > m.warps_per_scheduler + 0.5:
            return None
        label = f"{warps:g} resident warps per scheduler instead of {m.warps_per_scheduler:.2f}"
    else:
        raise ValueError(f"unknown what-if change {change!r}")
    pred, name, _ = evaluate_terms(m, loops=loops, warps=warps, inst_total=inst_total, pipe_counts=pipes)
    if not pred > 0:
        return None
    return {
        "change": change,
        "description": label,
        "predicted_cycles": round(pred, 1),
        "speedup": round(max(1.0, m.predicted_cycles / pred), 3),
        "bottleneck_after": name,
        **({"k": int(p.get("k", 4))} if change == "unroll" else {}),
        **({"warps_per_scheduler": warps} if change == "warps" else {}),
    }


def measured_speedup(m: KernelModel, change: dict[str, Any] | None) -> float:
    """A what-if's speedup of the measured kernel. Where the counters confirm the model's
    bottleneck class, the measured cycles the model does not explain are that same limit
    running below its ideal rate and shrink with it: the ratio of the predictions. Where the
    counters name another cause (or none), the model leaves that cause out and its time stays:
    the cycles the model says the change saves come off the measured cycles."""
    if change is None or not m.available or not m.predicted_cycles > 0 or not change["predicted_cycles"] > 0:
        return 1.0
    after: float = change["predicted_cycles"]
    ratio = m.predicted_cycles / after
    meas = m.measured_cycles
    if m.family == m.verdict or not (meas == meas and meas >= m.predicted_cycles):
        return max(1.0, ratio)
    return max(1.0, meas / (meas - (m.predicted_cycles - after)))


def default_what_ifs(m: KernelModel) -> list[dict[str, Any]]:
    out = []
    for change, params in (("unroll", {"k": 4}), ("hoist", {}), ("warps", {})):
        got = what_if(m, change, **params)
        if got is not None:
            out.append(got)
    return out
