"""Control-flow graph over a function's SASS: basic blocks split at branch targets and after
branches/EXIT, dominators (the immediate-dominator tree), and natural loops from back edges,
each in time near linear in the blocks (large template functions have tens of thousands).

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
    dom: Dominators
    loops: list[Loop]
    #: block id -> the loops holding it, in ``loops``' order (made on first use: one pass
    #: over the loops instead of one per question, which was quadratic on large functions).
    _loops_of_block: dict[int, list[Loop]] | None = field(default=None, repr=False, compare=False)

    def loops_containing(self, idx: int) -> list[Loop]:
        if self._loops_of_block is None:
            by_block: dict[int, list[Loop]] = {}
            for lp in self.loops:
                for blk in lp.blocks:
                    by_block.setdefault(blk, []).append(lp)
            self._loops_of_block = by_block
        return list(self._loops_of_block.get(self.block_of[idx], ()))

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


class Dominators:
    """Dominance of a CFG's blocks from the immediate-dominator tree (Cooper, Harvey and
    Kennedy's iteration over reverse post-order), with the tree's pre/post numbers, so that
    ``dominates(a, b)`` costs O(1) and the whole costs O(blocks) for the code compilers emit.
    Sets of dominators per block cost O(blocks^2): a function of tens of thousands of blocks
    (large template code) spent most of its analysis there. ``dom[b]`` still gives b's set
    (for readers and tests); an unreachable block is dominated by itself alone."""

    def __init__(self, blocks: list[Block]) -> None:
        self.idom = _immediate_dominators(blocks)
        self._pre, self._post = _tree_numbers(self.idom)

    def dominates(self, a: int, b: int) -> bool:
        if a == b:
            return True
        pa, pb = self._pre.get(a), self._pre.get(b)
        if pa is None or pb is None:  # unreachable: dominated by itself alone
            return False
        return pa <= pb and self._post[b] <= self._post[a]

    def __getitem__(self, b: int) -> set[int]:
        out, x = {b}, b
        while self.idom.get(x, x) != x:
            x = self.idom[x]
            out.add(x)
        return out

    def __len__(self) -> int:
        return len(self.idom)


def _reverse_post_order(blocks: list[Block]) -> list[int]:
    """Reachable blocks in reverse post-order of a depth-first walk from the entry (iterative:
    a long chain of blocks would overflow Python's recursion)."""
    if not blocks:
        return []
    seen, order, stack = {0}, [], [(0, iter(blocks[0].succs))]
    while stack:
        b, it = stack[-1]
        nxt = next((s for s in it if s not in seen), None)
        if nxt is None:
            order.append(b)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(blocks[nxt].succs)))
    return order[::-1]


def _immediate_dominators(blocks: list[Block]) -> dict[int, int]:
    """Each reachable block's immediate dominator (the entry's is itself)."""
    rpo = _reverse_post_order(blocks)
    rank = {b: i for i, b in enumerate(rpo)}
    idom: dict[int, int] = {rpo[0]: rpo[0]} if rpo else {}

    def meet(a: int, b: int) -> int:
        while a != b:
            while rank[a] > rank[b]:
                a = idom[a]
            while rank[b] > rank[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            done = [p for p in blocks[b].preds if p in idom]
            new = done[0]
            for p in done[1:]:
                new = meet(p, new)
            if idom.get(b) != new:
                idom[b] = new
                changed = True
    return idom


def _tree_numbers(idom: dict[int, int]) -> tuple[dict[int, int], dict[int, int]]:
    """Pre- and post-order numbers of the dominator tree (a dominates b iff b's interval lies
    inside a's)."""
    children: dict[int, list[int]] = {}
    root = None
    for b, d in idom.items():
        if b == d:
            root = b
        else:
            children.setdefault(d, []).append(b)
    pre: dict[int, int] = {}
    post: dict[int, int] = {}
    if root is None:
        return pre, post
    clock, stack = 0, [(root, False)]
    while stack:
        b, leaving = stack.pop()
        clock += 1
        if leaving:
            post[b] = clock
            continue
        pre[b] = clock
        stack.append((b, True))
        stack.extend((c, False) for c in children.get(b, ()))
    return pre, post


def _dominators(blocks: list[Block]) -> Dominators:
    """Dominance; an unreachable block (the padding ``BRA`` self-loop after EXIT, code only
    reached through an indirect branch) is dominated by itself alone, so it forms no loop."""
    return Dominators(blocks)


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


def _natural_loops(blocks: list[Block], dom: Dominators) -> list[Loop]:
    live = reachable(blocks)
    by_header: dict[int, set[int]] = {}
    for b in blocks:
        for s in b.succs:
            if b.id in live and dom.dominates(s, b.id):  # back edge b -> s
                by_header.setdefault(s, set()).update(_loop_body(blocks, s, b.id))
    loops = [Loop(header=h, blocks=body) for h, body in by_header.items()]
    # A loop's depth: the loops that hold all its blocks (itself included). Only loops that
    # hold its header can, so each loop is compared with those alone (a function of
    # thousands of loops made every pair quadratic).
    holding: dict[int, list[Loop]] = {}
    for other in loops:
        for blk in other.blocks:
            holding.setdefault(blk, []).append(other)
    for lp in loops:
        lp.depth = sum(1 for other in holding[lp.header] if lp.blocks <= other.blocks)
    return sorted(loops, key=lambda lp: (blocks[lp.header].start, -len(lp.blocks)))
