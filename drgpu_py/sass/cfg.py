"""Control-flow graph over a function's SASS: basic blocks split at branch targets and after
branches/EXIT, dominators (iterative data-flow), and natural loops from back edges.

Contract: ``build_cfg(instructions)`` takes instructions sorted by PC (one function) and
never raises on odd code: indirect branches (BRX/JMX) end a block with no known successor.
Loops are those of the code reachable from the entry (the compiler's ``BRA`` self-loop
padding after the last EXIT is not a loop), matching ``nvdisasm -bbcfg``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .isa import Instruction


@dataclass
class Block:
    id: int
    start: int  # index of the first instruction
    end: int  # index one past the last instruction
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


@dataclass
class Loop:
    header: int  # block id
    blocks: set[int]
    depth: int = 1


@dataclass
class CFG:
    insts: list[Instruction]
    blocks: list[Block]
    block_of: list[int]  # instruction index -> block id
    index_of_pc: dict[int, int]
    dom: list[set[int]]
    loops: list[Loop]

    def loops_containing(self, idx: int) -> list[Loop]:
        b = self.block_of[idx]
        return [lp for lp in self.loops if b in lp.blocks]

    def innermost_loop(self, idx: int) -> Loop | None:
        ls = self.loops_containing(idx)
        return min(ls, key=lambda lp: len(lp.blocks)) if ls else None

    def loop_instructions(self, loop: Loop) -> list[int]:
        return [i for b in sorted(loop.blocks) for i in range(self.blocks[b].start, self.blocks[b].end)]


def build_cfg(insts: list[Instruction]) -> CFG:
    """The classic construction: leaders, the blocks they start, the edges between them."""
    n = len(insts)
    index_of_pc = {ins.pc: i for i, ins in enumerate(insts)}
    starts = sorted(_leaders(insts, index_of_pc))
    blocks = [Block(id=b, start=s, end=(starts[b + 1] if b + 1 < len(starts) else n)) for b, s in enumerate(starts)]
    block_of = [0] * n
    for b in blocks:
        for i in range(b.start, b.end):
            block_of[i] = b.id
    for b in blocks:
        succ = [block_of[i] for i in _successors(insts[b.end - 1], b.end, n, index_of_pc)]
        b.succs = list(dict.fromkeys(succ))
    for b in blocks:
        for s in b.succs:
            blocks[s].preds.append(b.id)
    dom = _dominators(blocks)
    loops = _natural_loops(blocks, dom)
    return CFG(insts=insts, blocks=blocks, block_of=block_of, index_of_pc=index_of_pc, dom=dom, loops=loops)


def _leaders(insts: list[Instruction], index_of_pc: dict[int, int]) -> set[int]:
    """The first instruction, each branch target, and each instruction after a branch."""
    n = len(insts)
    leaders = {0} if n else set()
    for i, ins in enumerate(insts):
        if ins.target is not None and ins.target in index_of_pc:
            leaders.add(index_of_pc[ins.target])
        if ins.is_branch() and i + 1 < n:
            leaders.add(i + 1)
    return leaders


def _successors(last: Instruction, end: int, n: int, index_of_pc: dict[int, int]) -> list[int]:
    """The indices where the block ending in ``last`` (before index ``end``) goes: a branch's
    target, the next block when a guarded exit, return or branch is not taken or when the
    block just runs on; nowhere known after an indirect branch (BRX, JMX)."""
    falls = end < n
    if last.opcode in ("EXIT", "RET"):
        return [end] if _guarded_fall(last, falls) else []
    if last.opcode in ("BRA", "JMP", "BREAK"):
        taken = [index_of_pc[last.target]] if last.target is not None and last.target in index_of_pc else []
        return taken + ([end] if _guarded_fall(last, falls) else [])
    if last.opcode in ("BRX", "JMX"):
        return []
    return [end] if falls else []


def _guarded_fall(last: Instruction, falls: bool) -> bool:
    """A guarded exit, return or branch falls through when not taken (if a block follows)."""
    unconditional = last.guard is None or last.guard in ("PT",)
    return not unconditional and falls


def reachable(blocks: list[Block]) -> set[int]:
    """Blocks reachable from the entry block."""
    seen, stack = ({0}, [0]) if blocks else (set(), [])
    while stack:
        for s in blocks[stack.pop()].succs:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def _dominated_by(b: Block, dom: list[set[int]], live: set[int]) -> set[int]:
    """A block's dominators as its reachable predecessors' sets give them: their common
    dominators, and the block itself."""
    preds = [dom[p] for p in b.preds if p in live]
    return (set.intersection(*preds) if preds else set()) | {b.id}


def _dominators(blocks: list[Block]) -> list[set[int]]:
    """Dominator sets; an unreachable block (the padding ``BRA`` self-loop after EXIT, code
    only reached through an indirect branch) is dominated by itself alone, so it forms no loop."""
    if not blocks:
        return []
    live = reachable(blocks)
    dom = [set(live) if b.id in live else {b.id} for b in blocks]
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in blocks[1:]:
            if b.id not in live:
                continue
            new = _dominated_by(b, dom, live)
            if new != dom[b.id]:
                dom[b.id] = new
                changed = True
    return dom


def _loop_body(blocks: list[Block], header: int, tail: int) -> set[int]:
    """The blocks of the natural loop of the back edge tail -> header: those that reach the
    tail without passing the header. A self-loop (the tail is the header) must not walk the
    header's preds: they lead out of the loop (to the entry), not around it."""
    body = {header, tail}
    stack = [tail] if tail != header else []
    while stack:
        x = stack.pop()
        for p in blocks[x].preds:
            if p not in body:
                body.add(p)
                stack.append(p)
    return body


def _natural_loops(blocks: list[Block], dom: list[set[int]]) -> list[Loop]:
    live = reachable(blocks)
    by_header: dict[int, set[int]] = {}
    for b in blocks:
        for s in b.succs:
            if b.id in live and s in dom[b.id]:  # back edge b -> s
                by_header.setdefault(s, set()).update(_loop_body(blocks, s, b.id))
    loops = [Loop(header=h, blocks=body) for h, body in by_header.items()]
    for lp in loops:
        lp.depth = sum(1 for other in loops if lp.blocks <= other.blocks)
    return sorted(loops, key=lambda lp: (blocks[lp.header].start, -len(lp.blocks)))
