"""What-ifs: the hot loop unrolled or its invariant work hoisted, more resident warps.

Contract: ``what_if(model, change, **params) -> dict | None`` re-evaluates a built :class:`KernelModel`
(core.py) with a changed hot loop (``unroll``, ``hoist``: the loop body transformed and
simulated again, sim.py) or occupancy (``warps``) and returns the predicted cycles and speedup
(None when the change does not apply); ``default_what_ifs(m)`` the ones every model carries;
``measured_speedup(model, change)`` a what-if's speedup of the measured kernel. The loop-body roles
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
    for idx in reversed(body[:-1]):
        ins = insts[idx]
        if ins.defs & need and ins.opcode in ("ISETP", "IADD3", "VIADD", "UISETP", "UIADD3", "IADD"):
            # Only when every use of its result in the body is loop control.
            users = [u for u in body if insts[u].uses & ins.defs and u not in out and u != idx]
            if all(insts[u].opcode in ("ISETP", "IADD3", "VIADD", "UISETP", "UIADD3", "IADD") for u in users):
                out.append(idx)
                need |= ins.uses
    return sorted(out)


def loop_invariant(insts: list[Instruction], body: list[int]) -> list[int]:
    """Instructions whose operands are all defined outside the loop (or by other invariant
    instructions): hoistable. Stores, branches, synchronization, atomics and loads from
    memory the loop writes are not."""
    defined: dict[str, list[int]] = {}
    for idx in body:
        for reg in insts[idx].defs:
            defined.setdefault(reg, []).append(idx)
    stores = any(insts[j].opcode in ("STG", "ST", "STS", "STL", "RED", "REDG", "ATOM", "ATOMG", "ATOMS") for j in body)
    inv: set[int] = set()
    changed = True
    while changed:
        changed = False
        for idx in body:
            ins = insts[idx]
            if idx in inv or ins.is_branch() or ins.is_sync() or ins.is_atomic() or not ins.defs:
                continue
            if ins.opcode in ("STG", "ST", "STS", "STL", "S2R", "CS2R", "SHFL", "VOTE", "MATCH"):
                continue
            if ins.is_memory() and (stores or ins.opcode == "LDS"):
                continue
            if any(len(defined.get(r, [])) > 1 for r in ins.defs):
                continue
            if all(all(p in inv for p in defined.get(r, [])) for r in ins.uses):
                inv.add(idx)
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
        for reg, wide in re.findall(r"\b(U?R\d+)(\.64)?\b", part):
            out.add(reg)
            if wide:
                base = "UR" if reg.startswith("UR") else "R"
                out.add(f"{base}{int(reg[len(base) :]) + 1}")
    return out


def unroll_roles(insts: list[Instruction], body: list[int], invariant: list[int]) -> dict[int, str]:  # noqa: C901, PLR0912, PLR0915 - one fixed-point pass per role, each reading the roles before it
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
    body_len = len(body)

    def reaching(reader: int, reg: str) -> int | None:
        """The body instruction whose value of r instruction j reads (itself for a value
        carried around the loop), None when r comes from outside the loop."""
        for step in range(1, body_len + 1):
            producer = body[(pos[reader] - step) % body_len]
            if reg in insts[producer].defs:
                return producer
        return None

    def outside(reader: int, reg: str, ok: set[int]) -> bool:
        producer = reaching(reader, reg)
        return producer is None or producer in inv or producer in ok

    def users(producer: int) -> list[int]:
        return [u for u in body if any(reaching(u, r) == producer for r in insts[u].uses & insts[producer].defs)]

    ctl = set(loop_control(insts, body))
    roles: dict[int, str] = {j: "invariant" for j in inv}
    roles.update({j: "control" for j in ctl})
    induction: set[int] = set()
    changed = True
    while changed:
        changed = False
        for idx in body:
            ins = insts[idx]
            if (
                idx in roles
                and roles[idx] != "control"
                or idx in induction
                or ins.guard
                or ins.opcode not in _ADD_OPS | {"IMAD"}
            ):
                continue
            if ins.opcode == "IMAD" and not set(ins.modifiers) & {"X", "IADD"}:
                continue  # a multiply-add of itself is a recurrence (x = a*x + c), not a step
            regs = [r for r in ins.defs if not r.startswith(("P", "UP"))]
            if len(regs) != 1 or reaching(idx, regs[0]) != idx:
                continue
            if all(outside(idx, u, induction) for u in ins.uses - {regs[0]}):
                induction.add(idx)
                changed = True
    for idx in induction:
        roles.setdefault(idx, "induction")
    # Index arithmetic: affine in induction variables (and invariants).
    base = set(induction) | ctl
    index: set[int] = set()
    changed = True
    while changed:
        changed = False
        for idx in body:
            ins = insts[idx]
            if idx in roles or idx in index or ins.guard or ins.opcode not in _AFFINE_OPS or not ins.defs:
                continue
            inside = [u for u in ins.uses if not outside(idx, u, set())]
            if not inside or not all(outside(idx, u, base | index) for u in ins.uses):
                continue
            if ins.opcode == "IMAD" and len(inside) > 1 and not set(ins.modifiers) & {"X", "IADD"}:
                continue  # a product of two indices is not affine
            index.add(idx)
            changed = True
    guards: set[int] = set()
    changed = True
    while changed:
        changed = False
        for idx in body:
            ins = insts[idx]
            if idx in roles or idx in guards or idx in index or ins.opcode not in _COMPARE_OPS:
                continue
            if all(outside(idx, u, base | index | guards) for u in ins.uses):
                guards.add(idx)
                changed = True

    # A guard's predicate only guards instructions or feeds other guards; an index only
    # feeds addresses, guards, control or other (folded) indices.
    def predicate_only(producer: int, user: int) -> bool:
        guard = (insts[user].guard or "").lstrip("!")
        return not (insts[producer].defs & insts[user].uses) - {guard}

    guards = {j for j in guards if all(u in guards or predicate_only(j, u) for u in users(j))}
    folded = set(index)
    changed = True
    while changed:
        changed = False
        for idx in list(folded):
            for consumer in users(idx):
                shared_regs = insts[idx].defs & insts[consumer].uses
                if consumer in folded or consumer in guards or consumer in ctl or consumer in induction:
                    continue
                if insts[consumer].is_memory() and not (shared_regs - _address_regs(insts[consumer])):
                    continue
                folded.discard(idx)
                changed = True
                break
    for idx in body:
        roles.setdefault(idx, "index" if idx in folded else "guard" if idx in guards else "work")
    return roles


def _kept(role: str, unroll_k: int, hoist: bool) -> float:
    """Copies of an instruction per original iteration after unrolling by k (and hoisting)."""
    if role in ("control", "induction", "index"):
        return 1.0 / unroll_k
    if role in ("guard", "invariant"):
        return 0.0 if hoist else 1.0
    return 1.0


def _transformed(
    model: KernelModel, ctx: KernelContext, lm: LoopModel, unroll_k: int, hoist: bool
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
    def ren(regs: Iterable[str], copy_index: int) -> set[str]:
        return {f"{r}~{copy_index}" if not r.startswith(("UR", "UP")) else r for r in regs}

    for idx in lm.body:
        kept = _kept(roles[idx], unroll_k, hoist)
        if kept <= 0:
            continue
        n_copies = unroll_k if kept >= 1.0 else 1
        for copy_index in range(unroll_k - n_copies, unroll_k):
            ins = insts[idx]
            if idx in lm.constant_misses:
                # each copy reads its own iteration's constants: the misses stay per iteration
                blocking[len(copies)] = lm.constant_misses[idx]
            copies.append(replace(ins, defs=ren(ins.defs, copy_index), uses=ren(ins.uses, copy_index)))
    # The back-edge branch must be last for the redirect cost.
    order = [i for i in range(len(copies)) if not copies[i].is_branch()] + [
        i for i in range(len(copies)) if copies[i].is_branch()
    ]
    lat = dict(ctx.arch.get("latency") or {})
    one = simulate(copies, order, lat, model.global_latency, issue_gap=1.0, control=None, blocking=blocking)
    dep = simulate(copies, order, lat, model.global_latency, issue_gap=0.0, control=None, branch=0.0, blocking=blocking)
    removed = {
        insts[j].pc: 1.0 - _kept(roles[j], unroll_k, hoist) for j in lm.body if _kept(roles[j], unroll_k, hoist) < 1.0
    }
    gone = sum(executed_count(executed, pc) * f for pc, f in removed.items())
    per_iter = max(1.0, lm.issue_per_iteration - gone / lm.iterations) if lm.iterations > 0 else lm.issue_per_iteration
    return replace(
        lm,
        single_warp_cycles=one.cycles / unroll_k,
        critical_path_cycles=dep.cycles / unroll_k,
        issue_per_iteration=per_iter,
    ), removed


def what_if(model: KernelModel, change: str, **params: float) -> dict[str, Any] | None:  # noqa: PLR0912 - one branch per what-if change
    """Predicted cycles after a change: ``unroll`` (k: independent accumulators; loop control,
    induction steps and index arithmetic once per k iterations; ``hoist=True`` also hoists),
    ``hoist`` (the hot loop's loop-invariant instructions and range checks leave it),
    ``warps`` (w: resident warps per scheduler). None when the change does not apply."""
    if not model.available or not model.predicted_cycles > 0:
        return None
    hot = model.hot
    loops, warps, inst_total, pipes = list(model.loops), None, model.inst_total, dict(model.pipe_counts)
    ctx = model.ctx
    if ctx is None:  # an available model keeps its context
        return None
    hoist = change == "hoist" or bool(params.get("hoist"))
    if change in ("unroll", "hoist"):
        if hot is None:
            return None
        unroll_k = int(params.get("k", 4)) if change == "unroll" else 1
        new, removed_pcs = _transformed(model, ctx, hot, unroll_k, hoist)
        if change == "hoist":
            if not removed_pcs:
                return None
            label = f"hoist {len(removed_pcs)} loop-invariant instruction(s) and range check(s) out of the hot loop"
        else:
            label = f"unroll the hot loop by {unroll_k} with {unroll_k} independent accumulators" + (
                ", loop-invariant work and range checks hoisted"
                if hoist and any(f >= 1.0 for f in removed_pcs.values())
                else ""
            )
        executed = ctx.executed()
        for pc, frac in removed_pcs.items():
            count = executed_count(executed, pc) * frac
            inst_total -= count
            pp = pipe_of(ctx.by_pc[pc], model.f2f64_pipe)
            if pp in pipes:
                pipes[pp] -= count
        loops[0] = new
    elif change == "warps":
        # A scheduler cannot hold more warps than the launch gives it.
        cap = min(model.max_warps_per_scheduler, model.warps_run_per_scheduler)
        warps = min(cap, float(params.get("w", 2 * model.warps_per_scheduler)))
        if not warps > model.warps_per_scheduler + 0.5:
            return None
        label = f"{warps:g} resident warps per scheduler instead of {model.warps_per_scheduler:.2f}"
    else:
        raise ValueError(f"unknown what-if change {change!r}")
    pred, name, _ = evaluate_terms(model, loops=loops, warps=warps, inst_total=inst_total, pipe_counts=pipes)
    if not pred > 0:
        return None
    return {
        "change": change,
        "description": label,
        "predicted_cycles": round(pred, 1),
        "speedup": round(max(1.0, model.predicted_cycles / pred), 3),
        "bottleneck_after": name,
        **({"k": int(params.get("k", 4))} if change == "unroll" else {}),
        **({"warps_per_scheduler": warps} if change == "warps" else {}),
    }


def measured_speedup(model: KernelModel, change: dict[str, Any] | None) -> float:
    """A what-if's speedup of the measured kernel. Where the counters confirm the model's
    bottleneck class, the measured cycles the model does not explain are that same limit
    running below its ideal rate and shrink with it: the ratio of the predictions. Where the
    counters name another cause (or none), the model leaves that cause out and its time stays:
    the cycles the model says the change saves come off the measured cycles."""
    if change is None or not model.available or not model.predicted_cycles > 0 or not change["predicted_cycles"] > 0:
        return 1.0
    after: float = change["predicted_cycles"]
    ratio = model.predicted_cycles / after
    meas = model.measured_cycles
    if model.family == model.verdict or not (meas == meas and meas >= model.predicted_cycles):
        return max(1.0, ratio)
    return max(1.0, meas / (meas - (model.predicted_cycles - after)))


def default_what_ifs(model: KernelModel) -> list[dict[str, Any]]:
    out = []
    for change, params in (("unroll", {"k": 4}), ("hoist", {}), ("warps", {})):
        got = what_if(model, change, **params)
        if got is not None:
            out.append(got)
    return out
