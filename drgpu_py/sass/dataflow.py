"""SASS data flow over a kernel's CFG: which registers vary with the thread or between loop
iterations, which branches the thread index decides, post-dominators, chains of dependent
loads, fast-intrinsic shapes.

Contract: pure functions of a :class:`~drgpu_py.sass.cfg.CFG` (and instruction indices,
registers, loops of it); they read nothing else and change nothing. Results that depend on
the CFG alone are memoized on it by ``reaching_defs`` (launches of one function share it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from .cfg import CFG, Loop
from .isa import Instruction
from .slicing import reaching_defs


LOAD_OPCODES = ("LDG", "LD", "LDS", "LDL", "ATOM", "ATOMG", "ATOMS", "LDGSTS", "TLD", "TEX")


def definitions(
    cfg: CFG, idx: int, regs: Iterable[str], follows: Callable[[str], bool] = lambda reg: True
) -> Iterator[int]:
    """The instructions whose results reach the registers ``regs`` of instruction ``idx``,
    through any chain of definitions (the registers each uses, those ``follows`` accepts):
    each index once, nearest chains first. A worklist, since chains in long straight-line code
    are deep; a caller that has its answer stops the walk."""
    todo = [(idx, r) for r in regs]
    seen: set[int] = set()
    while todo:
        at, reg = todo.pop()
        for j, _ in reaching_defs(cfg, at, reg, 10_000):
            if j in seen:
                continue
            seen.add(j)
            yield j
            todo.extend((j, u) for u in cfg.insts[j].uses if follows(u))


def _address_registers(ins: Instruction) -> set[str]:
    """The registers of an instruction's memory operands."""
    return {r for o in ins.operands if "[" in o for r in registers_in(o)}


def data_addressed_loads(cfg: CFG | None, pcs: Iterable[int]) -> list[int]:
    """Global loads among ``pcs`` whose address registers take their value, through any
    chain of arithmetic, selects or compares, from a memory load (not from thread and block
    indices and kernel parameters)."""
    if cfg is None:
        return []

    def from_memory(idx: int, regs: set[str]) -> bool:
        return any(cfg.insts[j].opcode in LOAD_OPCODES for j in definitions(cfg, idx, regs))

    out = []
    for pc in pcs:
        idx = cfg.index_of_pc.get(pc)
        if idx is None:
            continue
        ins = cfg.insts[idx]
        if not ins.is_global_load() or ins.is_atomic():
            continue
        regs = _address_registers(ins) & ins.uses
        if regs and from_memory(idx, regs):
            out.append(pc)
    return out


def promoted_by_hoisting(cfg: CFG, invariant: list[int]) -> list[int]:
    """Stores (and the loads of the same address) at one loop-invariant address in the loops
    that hold the invariant reloads, where every other global access of the loop is one of
    those reloads: with the reloads hoisted, nothing in the loop can alias the stored value,
    so it lives in a register. A store or load to a varying address, an atomic, a barrier or a
    fence in the loop keeps every access in memory."""
    out: list[int] = []
    inv = set(invariant)
    for loop in _loops_holding(cfg, invariant).values():
        body = cfg.loop_instructions(loop)
        if _keeps_memory(cfg, body):
            continue
        stores = [j for j in body if cfg.insts[j].opcode in ("STG", "ST")]
        addrs = _invariant_store_addresses(cfg, stores, loop) if stores else None
        if addrs is not None:
            out += _promoted(cfg, body, stores, addrs, inv)
    return out


def _promoted(cfg: CFG, body: list[int], stores: list[int], addrs: set[str | None], inv: set[int]) -> list[int]:
    """The PCs of the stores and of the other global loads of a loop when they all access the
    one address. One address for the whole body: the source loop stores to one location.
    Several fixed addresses are a varying source address spread over an unrolled body
    (reload_rate's s % 8 slots), and the compiler keeps those stores."""
    loads = [j for j in body if cfg.insts[j].is_global_load() and cfg.insts[j].pc not in inv]
    if len(addrs) == 1 and all(memory_operand(cfg.insts[j]) in addrs for j in loads):
        return [cfg.insts[j].pc for j in stores + loads]
    return []


def _loops_holding(cfg: CFG, pcs: list[int]) -> dict[int, Loop]:
    """The innermost loops of the instructions at ``pcs``, by header."""
    loops: dict[int, Loop] = {}
    for pc in pcs:
        idx = cfg.index_of_pc.get(pc)
        loop = cfg.innermost_loop(idx) if idx is not None else None
        if loop is not None:
            loops[loop.header] = loop
    return loops


def _keeps_memory(cfg: CFG, body: list[int]) -> bool:
    """A barrier, fence or atomic in a loop keeps every access of it in memory."""
    return any(cfg.insts[j].opcode in ("BAR", "MEMBAR", "FENCE") or cfg.insts[j].is_atomic() for j in body)


def _invariant_store_addresses(cfg: CFG, stores: list[int], loop: Loop) -> set[str | None] | None:
    """The memory operands of the stores when every store's address is loop-invariant, else None."""
    fixed_addr: dict[int, str | None] = {}
    for j in stores:
        ins = cfg.insts[j]
        regs = _address_registers(ins)
        if not regs or not all(loop_invariant(cfg, j, reg, loop, {}, 0) for reg in regs):
            return None
        fixed_addr[j] = memory_operand(ins)
    return set(fixed_addr.values())


STORE_OPCODES = ("STG", "ST", "ATOM", "ATOMG", "RED", "REDG")


def memory_operand(ins: Instruction) -> str | None:
    """The memory operand of a load or store without its descriptor ('[R2.64+0x10]')."""
    for o in ins.operands:
        if "[" in o:
            return re.sub(r"^desc\[[^\]]*\]", "", o.strip())
    return None


def written_in_loop(cfg: CFG, load: Instruction, loop: Loop) -> bool:
    """A store or atomic in the loop to the very address the load reads (same registers and
    offset): the value changes between iterations, so the load is not invariant and must not
    be hoisted. Also any global store in a loop that synchronizes the block (BAR): threads
    exchange data through memory there (a neighbour's store between barriers changes what
    this thread reads at another offset), which registers cannot prove absent."""
    addr = memory_operand(load)
    if addr is None:
        return False
    body = [cfg.insts[j] for j in cfg.loop_instructions(loop)]
    if any(i.opcode == "BAR" for i in body) and any(i.opcode in STORE_OPCODES for i in body):
        return True
    return any(i.opcode in STORE_OPCODES and memory_operand(i) == addr for i in body)


def registers_in(operand: str) -> set[str]:
    out: set[str] = set()
    for kind, num, suffix in re.findall(r"\b(U?R)(\d+)(\.64)?\b", operand):
        n = int(num)
        out.update({f"{kind}{n}", f"{kind}{n + 1}"} if suffix else {f"{kind}{n}"})
    return out


_VARYING = (
    "S2R",
    "S2UR",
    "CS2R",
    "LDG",
    "LD",
    "LDL",
    "LDS",
    "ATOM",
    "ATOMG",
    "ATOMS",
    "SHFL",
    "TLD",
    "TEX",
    "VOTE",
    "MATCH",
)


def loop_invariant(cfg: CFG, idx: int, reg: str, loop: Loop, memo: dict[int, bool], depth: int) -> bool:
    """Is ``reg`` as read by instruction ``idx`` the same in every iteration of ``loop``?
    True when every reaching definition lies outside the loop, or is itself computed inside
    the loop only from invariant values (e.g. a kernel parameter reloaded with LDC)."""
    if depth > 8:
        return False
    defs = reaching_defs(cfg, idx, reg, 10_000)
    if not defs:
        return True
    for j, _ in defs:
        if cfg.block_of[j] not in loop.blocks:
            continue
        if j in memo:
            if not memo[j]:
                return False
            continue
        d = cfg.insts[j]
        memo[j] = False  # a cycle through the loop's back edge means it varies
        if _varies_per_iteration(d):
            return False
        ok = all(loop_invariant(cfg, j, u, loop, memo, depth + 1) for u in d.uses)
        memo[j] = ok
        if not ok:
            return False
    return True


def _varies_per_iteration(d: Instruction) -> bool:
    """An instruction whose result differs between iterations whatever its inputs: a load
    from memory, a counter, or a constant-bank read at a computed index."""
    return d.opcode in _VARYING or (d.opcode == "LDC" and d.is_const_indexed())


_PASS_VALUES = ("IADD3", "IADD", "IMAD", "LEA", "SHF", "SHL", "SHR", "MOV")  # one value in, one value out per lane


def lane_values(cfg: CFG, idx: int, reg: str, depth: int = 0) -> int:
    """At most how many different values ``reg`` holds across a warp's lanes as instruction
    ``idx`` reads it: 1 if it cannot vary; 2^b where the varying part passes through an AND
    with a b-bit immediate mask (LOP3.LUT ... 0xc0, a & b) and then only through adds, shifts
    and moves with warp-uniform operands; else 32."""
    if not thread_varying(cfg, idx, reg):
        return 1
    defs = reaching_defs(cfg, idx, reg, 10_000)
    if depth > 8 or len(defs) != 1:
        return 32
    j = defs[0][0]
    d = cfg.insts[j]
    masked = _and_mask_lanes(d)
    if masked is not None:
        return masked
    if d.opcode in _PASS_VALUES:
        n = 1
        for u in d.uses:
            if not u.startswith("P"):
                n *= lane_values(cfg, j, u, depth + 1)
        return min(32, n)
    return 32


def _and_mask_lanes(d: Instruction) -> int | None:
    """2^b (at most 32) when ``d`` is an AND (LOP3.LUT ... 0xc0) with a b-bit immediate mask,
    else None."""
    if not (d.opcode == "LOP3" and len(d.operands) >= 5 and d.operands[-2].strip() == "0xc0"):
        return None
    masks = [o for o in d.operands[1:4] if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", o.strip())]
    if not masks:
        return None
    lanes: int = 2 ** bin(int(masks[0], 0)).count("1")  # int ** int is Any to mypy
    return min(32, lanes)


# Special registers that differ between the warps (or lanes) of one block; the block and
# grid indices (SR_CTAID, SR_NCTAID) are the same for every warp of a block.
_THREAD_INDEX = ("SR_TID", "SR_LANEID", "SR_WARPID", "SR_LTMASK", "SR_LEMASK", "SR_GTMASK", "SR_GEMASK")


def thread_tainted_branches(cfg: CFG, through_memory: bool = True) -> list[int]:
    """Indices of conditional branches whose predicate depends on the thread or warp index:
    a forward data-flow over the CFG from the S2R reads of those registers, through every
    instruction that uses a dependent register (with ``through_memory``, loads and shuffles
    included: a value read at a thread-dependent address, such as a segment bound indexed by
    the warp, differs too)."""
    return _thread_taint(cfg, through_memory)[0]


def thread_predicated(cfg: CFG, through_memory: bool = True) -> set[int]:
    """Indices of instructions other than branches guarded by a predicate that depends on the
    thread or warp index (the taint of ``thread_tainted_branches``): guarded work the
    compiler predicated instead of branching around (``@!P1 LDS`` in a tree reduction's
    ``if (tid < s)``), which every warp issues with some lanes switched off."""
    return _thread_taint(cfg, through_memory)[1]


def _thread_taint(cfg: CFG, through_memory: bool) -> tuple[list[int], set[int]]:
    """(tainted branches, predicated instructions), kept on the CFG: several detectors ask."""
    memo = cfg.__dict__.setdefault("_thread_taint_memo", {})
    if through_memory not in memo:
        memo[through_memory] = _thread_taint_walk(cfg, through_memory)
    branches, predicated = memo[through_memory]
    return list(branches), set(predicated)


def _thread_taint_walk(cfg: CFG, through_memory: bool) -> tuple[list[int], set[int]]:
    insts, blocks = cfg.insts, cfg.blocks
    entry: list[set[str] | None] = [None] * len(blocks)
    entry[0] = set()
    work = [0]
    branches: set[int] = set()
    predicated: set[int] = set()
    while work:
        b = work.pop()
        live = set(entry[b] or ())
        _walk_block(insts, range(blocks[b].start, blocks[b].end), live, through_memory, branches, predicated)
        for s in blocks[b].succs:
            if _merge_entry(entry, s, live):
                work.append(s)
    return sorted(branches), predicated


def _walk_block(
    insts: list[Instruction],
    span: range,
    live: set[str],
    through_memory: bool,
    branches: set[int],
    predicated: set[int],
) -> None:
    """Carry the thread-dependent registers ``live`` through a block, noting the branches and
    predicated instructions that depend on them."""
    for j in span:
        ins = insts[j]
        dep = _thread_dependent(ins, live, through_memory)
        if dep and _guarded_branch(ins):
            branches.add(j)
        elif _predicated_on(ins, live):
            predicated.add(j)
        if dep:
            live |= ins.defs
        elif ins.guard in (None, "PT"):
            live -= ins.defs  # a thread-independent value replaces it on every path


def _guarded_branch(ins: Instruction) -> bool:
    return ins.opcode in ("BRA", "BREAK") and ins.guard not in (None, "PT")


def _thread_dependent(ins: Instruction, live: set[str], through_memory: bool) -> bool:
    """Whether an instruction's result varies by thread: it reads the thread index, or a
    register that does (through a load or shuffle only when ``through_memory``)."""
    if ins.opcode in ("S2R", "CS2R") and any(o.startswith(_THREAD_INDEX) for o in ins.operands[1:]):
        return True
    return bool(ins.uses & live) and (through_memory or (not ins.is_memory() and ins.opcode != "SHFL"))


def _predicated_on(ins: Instruction, live: set[str]) -> bool:
    """A non-branch instruction guarded by a thread-dependent predicate."""
    guarded = ins.guard not in (None, "PT") and ins.guard.lstrip("!") in live
    return guarded and not ins.is_branch() and ins.opcode not in ("BSSY", "BSYNC", "NOP")


def _merge_entry(entry: list[set[str] | None], s: int, live: set[str]) -> bool:
    """Join ``live`` into block ``s``'s entry set; whether that changed it (the block is walked again)."""
    old = entry[s]
    new = live if old is None else old | live
    if old is None or new != old:
        entry[s] = set(new)
        return True
    return False


def postdominators(cfg: CFG) -> list[set[int]]:
    """Post-dominator sets of the CFG's blocks (blocks without successors are exits)."""
    blocks = cfg.blocks
    n = len(blocks)
    exits = [b.id for b in blocks if not b.succs]
    pdom = [set(range(n)) for _ in blocks]
    for e in exits:
        pdom[e] = {e}
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            if not b.succs:
                continue
            new = set.intersection(*(pdom[s] for s in b.succs)) | {b.id}
            if new != pdom[b.id]:
                pdom[b.id] = new
                changed = True
    return pdom


def thread_dependent_blocks(cfg: CFG) -> dict[int, int]:
    """Block id -> index of the thread-dependent branch that decides whether (or how many
    times) a warp runs it: the blocks between such a branch and the point every path from it
    reaches (its post-dominator). A loop whose exit depends on the thread index runs a
    different number of times in different warps; an if on it runs in some warps only."""
    pdom = postdominators(cfg)
    out: dict[int, int] = {}
    for j in thread_tainted_branches(cfg):
        b = cfg.block_of[j]
        stop = pdom[b] - {b}
        seen: set[int] = set()
        stack = list(cfg.blocks[b].succs)
        while stack:
            x = stack.pop()
            if x in seen or x in stop:
                continue
            seen.add(x)
            stack.extend(cfg.blocks[x].succs)
        for x in seen:
            out.setdefault(x, j)
    return out


def index_bound_branches(cfg: CFG) -> set[int]:
    """Conditional branches whose predicate the thread index decides through arithmetic
    alone: the taint of ``thread_tainted_branches`` without loads (a value read from memory,
    even at a thread-dependent address, is data, not the index)."""
    return set(thread_tainted_branches(cfg, through_memory=False))


def load_chain_depth(cfg: CFG, body: list[int]) -> int:
    """The longest chain of global loads in one pass over ``body`` where each load's address
    is computed from the previous one's value (pointer chasing, a binary search's probes):
    those loads are in flight one at a time however many the body holds."""
    depth: dict[str, int] = {}
    deepest = 1
    for j in body:
        ins = cfg.insts[j]
        d = max((depth.get(r, 0) for r in ins.uses), default=0)
        if ins.is_global_load() and not ins.is_atomic():
            d += 1
            deepest = max(deepest, d)
        for r in ins.defs:
            depth[r] = d
    return deepest


_LANE_SOURCES = ("SR_TID", "SR_LANEID", "SR_LANEMASK")


_PER_THREAD = ("LDG", "LD", "LDS", "LDL", "LDSM", "ATOM", "ATOMG", "ATOMS", "SHFL", "TLD", "TEX", "LDGSTS", "MATCH")


def thread_varying(cfg: CFG, idx: int, reg: str, memo: dict[int, bool] | None = None, depth: int = 0) -> bool:
    """Can ``reg``, as instruction ``idx`` reads it, differ between the lanes of a warp? Yes
    when it derives from the thread or lane index or from per-thread loaded data; no for
    uniform registers, kernel parameters, constants and loop counters built from them."""
    if _uniform_register(reg):
        return False
    memo = {} if memo is None else memo
    if depth > 16:
        return True  # too deep to tell: assume it varies
    for j, _ in reaching_defs(cfg, idx, reg, 10_000):
        if j not in memo:
            memo[j] = False  # a cycle (a loop counter) adds nothing new
            memo[j] = _definition_varies(cfg, j, memo, depth)
        if memo[j]:
            return True
    return False


def _definition_varies(cfg: CFG, j: int, memo: dict[int, bool], depth: int) -> bool:
    """Whether the value instruction ``j`` defines can differ between lanes: it is a per-lane
    source, or one of its (non-predicate) inputs can."""
    d = cfg.insts[j]
    return _per_lane_source(d) or any(
        thread_varying(cfg, j, u, memo, depth + 1) for u in d.uses if not u.startswith("P")
    )


def _uniform_register(reg: str) -> bool:
    """The uniform datapath holds one value per warp; RZ reads zero."""
    return reg.startswith("U") or reg in ("RZ", "URZ")


def _per_lane_source(d: Instruction) -> bool:
    """A read of the thread or lane index, or a per-thread load (or shuffle, vote...)."""
    return (d.opcode in ("S2R", "CS2R") and any(src in d.text for src in _LANE_SOURCES)) or d.opcode in _PER_THREAD


# The SFU takes sine and cosine arguments in revolutions and exponentials in base 2: the
# intrinsics __sinf/__cosf and __expf/__exp10f scale their argument by one multiply (by 1/2pi,
# log2(e) or log2(10)) straight into the MUFU, where the precise functions reduce the
# argument first (a polynomial or an FFMA chain defines the MUFU's operand).
_FAST_SCALE = {"SIN": (0.159154936,), "COS": (0.159154936,), "EX2": (1.44269502, 3.32192802)}


def fast_intrinsic(cfg: CFG, idx: int) -> bool:
    """Is the MUFU at ``idx`` a fast intrinsic (__sinf, __cosf, __expf, __exp10f, __logf)? Its operand
    is defined by a multiply by the SFU's scale constant, through at most the denormal guard
    of __expf (a predicated multiply by 0.5 of the same register)."""
    ins = cfg.insts[idx]
    if ins.modifiers[:1] == ("LG2",):
        return _scaled_after(cfg, idx)
    scales = _FAST_SCALE.get(ins.modifiers[0] if ins.modifiers else "")
    if not scales or len(ins.operands) < 2:
        return False
    reg = ins.operands[1].lstrip("-|").rstrip("|")
    todo = [j for j, _ in reaching_defs(cfg, idx, reg, 10_000)]
    return bool(todo) and _all_scaled(cfg, todo, reg, scales)


def _all_scaled(cfg: CFG, todo: list[int], reg: str, scales: tuple[float, ...]) -> bool:
    """Every definition of the operand (``todo``) multiplies by one of ``scales``, through at
    most __expf's denormal guard (a predicated multiply of ``reg`` by 0.5: its own
    definitions are followed)."""
    seen: set[int] = set()
    while todo:
        j = todo.pop()
        if j in seen:
            continue
        seen.add(j)
        d = cfg.insts[j]
        if d.opcode != "FMUL" or len(d.operands) < 3:
            return False
        const = float_operand(d.operands[2])
        if _near_any(const, scales):
            continue
        if d.guard is not None and const == 0.5 and d.operands[1] == reg:
            todo.extend(k for k, _ in reaching_defs(cfg, j, reg, 10_000))
            continue
        return False
    return True


def _near_any(const: float | None, constants: tuple[float, ...]) -> bool:
    """A constant equal in magnitude to one of ``constants`` (to a millionth of it)."""
    return const is not None and any(abs(abs(const) - c) <= 1e-6 * c for c in constants)


def _scaled_after(cfg: CFG, idx: int) -> bool:
    """__logf/__log10f/__log2f: the MUFU.LG2's result goes straight into a multiply by ln(2)
    or log10(2) (through at most the denormal guard's predicated add of -24), or is the
    result itself; the precise logf evaluates a polynomial instead of using the SFU."""
    ins = cfg.insts[idx]
    if not ins.operands:
        return False
    reg = ins.operands[0]
    block = cfg.blocks[cfg.block_of[idx]]
    for j in range(idx + 1, block.end):
        d = cfg.insts[j]
        if reg not in d.uses:
            continue
        if d.guard is not None and d.opcode == "FADD" and d.operands[:2] == [reg, reg]:
            continue
        const = float_operand(d.operands[2]) if d.opcode == "FMUL" and len(d.operands) >= 3 else None
        return _near_any(const, (0.693147181, 0.301029996))
    return False


def float_operand(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


# ---- loops stepped by the launch's dimensions --------------------------------------------------

# blockDim.{x,y,z} and gridDim.{x,y,z} in constant bank 0 (sm_70 and later: c[0x0][0x0..0x8]
# and c[0x0][0xc..0x14]; offset 0 is written c[0x0][RZ]).
_BLOCK_DIM = re.compile(r"c\[0x0\]\[(?:RZ|0x0|0x4|0x8)\]")
_GRID_DIM = re.compile(r"c\[0x0\]\[(?:0xc|0x10|0x14)\]")
_STEP_OPCODES = frozenset(
    {"IADD3", "IADD", "IMAD", "VIADD", "LEA", "UIADD3", "UIMAD", "ULEA"}
)  # modifiers (.X, .64) aside


def launch_dims_in(
    cfg: CFG, idx: int, reg: str, memo: dict[tuple[int, str], frozenset[str]], depth: int = 0
) -> frozenset[str]:
    """Which launch dimensions (``"block"``: blockDim, ``"grid"``: gridDim) the value of ``reg``
    as instruction ``idx`` reads it is computed from: through its reaching definitions and the
    integer arithmetic that makes a stride (``blockDim.x * gridDim.x``, scaled to bytes)."""
    key = (idx, reg)
    if key in memo:
        return memo[key]
    memo[key] = frozenset()  # a cycle (the loop's own update) adds nothing
    if depth > 8:
        return frozenset()
    found: set[str] = set()
    for j, _ in reaching_defs(cfg, idx, reg, 10_000):
        d = cfg.insts[j]
        text = " ".join(d.operands[1:])
        if _BLOCK_DIM.search(text):
            found.add("block")
        if _GRID_DIM.search(text):
            found.add("grid")
        if d.is_memory() or d.opcode in ("S2R", "S2UR", "CS2R"):
            continue
        for u in d.uses:
            if not u.startswith(("P", "UP")):
                found |= launch_dims_in(cfg, j, u, memo, depth + 1)
    memo[key] = frozenset(found)
    return memo[key]


def launch_strided_loops(cfg: CFG) -> dict[int, frozenset[str]]:
    """Loops (by header block) whose induction value steps by a launch dimension: a
    grid-stride loop (``i += blockDim.x * gridDim.x``; ``"grid"``) or a block-stride loop
    (``i += blockDim.x``; ``"block"``). Their iterations are independent work items that more
    threads or more blocks would take over; a loop stepping by a constant or a parameter is
    each thread's own serial work. The step is an add whose result feeds the same register it
    reads (the loop-carried induction value or a pointer), with another operand computed from
    the launch's dimensions."""
    memo: dict[tuple[int, str], frozenset[str]] = {}
    out: dict[int, frozenset[str]] = {}
    for loop in cfg.loops:
        kinds: set[str] = set()
        for j in cfg.loop_instructions(loop):
            ins = cfg.insts[j]
            if ins.opcode not in _STEP_OPCODES:
                continue
            carried = ins.defs & ins.uses
            if not carried:
                continue
            text = " ".join(ins.operands[1:])
            if _GRID_DIM.search(text):
                kinds.add("grid")
            if _BLOCK_DIM.search(text):
                kinds.add("block")
            for u in ins.uses - carried:
                if not u.startswith(("P", "UP")):
                    kinds |= launch_dims_in(cfg, j, u, memo)
        if kinds:
            out[loop.header] = frozenset(kinds)
    return out


# Associative updates: an accumulator combined with each iteration's value (sum, product,
# min/max, bitwise) can be split over threads and combined after.
_ACCUMULATE = (
    "FADD",
    "FFMA",
    "FMUL",
    "DADD",
    "DFMA",
    "DMUL",
    "HADD2",
    "HFMA2",
    "FMNMX",
    "IMNMX",
    "VIMNMX",
    "IADD3",
    "IADD",
    "VIADD",
    "LOP3",
    "IMAD",
    "FMNMX3",
    "VIMNMX3",
)


def splittable_loops(cfg: CFG) -> set[int]:
    """Loops (by header block) whose iterations are independent but for induction values and
    accumulators: every register carried from one iteration to the next is either stepped by
    a value that does not change in the loop (a counter, a pointer) or only combined into
    itself by an associative operation (``acc += f(x)``, a running max) and read by nothing
    else in the loop. Such a loop's iterations could run on different threads (with a
    combine of the accumulators after); a carried value that feeds anything else (a state
    ``x = f(x)``, an address from the previous iteration) makes it a serial recurrence."""
    out: set[int] = set()
    for loop in cfg.loops:
        body = cfg.loop_instructions(loop)
        if any(cfg.insts[j].opcode == "BAR" for j in body):
            continue
        if _iterations_independent(cfg, loop, body):
            out.add(loop.header)
    return out


def _iterations_independent(cfg: CFG, loop: Loop, body: list[int]) -> bool:
    """Every value carried across the back edge (a definition in the loop reaching a use at
    or before it) is a counter's step, or is read by exactly one instruction of the next
    iteration, as the accumulator of an associative update. Register names are reused within
    an unrolled body, so the test is per carried definition, not per register; a carried
    value read twice (a state ``x`` both updated and used, as a particle's position is) makes
    the loop a serial recurrence."""
    memo: dict[int, bool] = {}
    readers = _carried_readers(cfg, body)
    carried_defs = {d for d, _ in readers}
    for (d, reg), js in readers.items():
        if _steps_by_invariant(cfg, d, reg, loop, memo):
            continue
        if len(js) != 1 or not _accumulates(cfg.insts[js[0]], reg) or _feeds_back(cfg, js[0], body, carried_defs):
            return False
    return True


def _carried_readers(cfg: CFG, body: list[int]) -> dict[tuple[int, str], list[int]]:
    """(definition, register) -> the instructions of the next iteration that read it: the
    definitions in the loop that reach a use at or before them (predicates apart)."""
    inside = set(body)
    readers: dict[tuple[int, str], list[int]] = {}
    for j in body:
        for u in _value_registers(cfg.insts[j].uses):
            for d, _ in reaching_defs(cfg, j, u, 10_000):
                if d >= j and d in inside:
                    readers.setdefault((d, u), []).append(j)
    return readers


def _value_registers(regs: Iterable[str]) -> list[str]:
    """The registers of ``regs`` that hold values (predicates apart), in their order."""
    return [r for r in regs if not r.startswith(("P", "UP"))]


def _feeds_back(cfg: CFG, j: int, body: list[int], carried_defs: set[int]) -> bool:
    """Does the running value instruction ``j`` makes reach another carried value other than
    as an accumulator, within the iteration (in program order)? Then the loop is a scan or a
    state update (``th += w; x += v * cos(th)``): every later iteration depends on it. A sum
    finished by shuffles and stored does not feed back."""
    live = set(_value_registers(cfg.insts[j].defs))
    for k in body:
        if k <= j or not live:
            continue
        ins = cfg.insts[k]
        hit = ins.uses & live
        if not hit:
            if ins.guard in (None, "PT"):
                live -= ins.defs
            continue
        if k in carried_defs and not all(_accumulates(ins, r) for r in hit):
            return True
        live |= set(_value_registers(ins.defs))
    return False


_FMA_LIKE = ("FFMA", "DFMA", "HFMA2", "IMAD")


def _accumulates(ins: Instruction, reg: str) -> bool:
    """``reg`` is read once by ``ins``, as the value an associative update combines into:
    the addend of a fused multiply-add, any operand of an add, product, min/max or bitwise op."""
    if ins.opcode not in _ACCUMULATE:
        return False
    sources = [registers_in(o) for o in ins.operands[1:]]
    where = [k for k, regs in enumerate(sources) if reg in regs]
    if len(where) != 1:
        return False
    return ins.opcode not in _FMA_LIKE or where[0] == 2


_STEP_ANY = ("IADD3", "IADD", "VIADD", "UIADD3", "IADD.64", "MOV", "UMOV")
_STEP_ADDEND = {"IMAD": 2, "LEA": 1, "ULEA": 1}  # source index of the added operand


def _steps_by_invariant(cfg: CFG, j: int, reg: str, loop: Loop, memo: dict[int, bool]) -> bool:
    """Instruction ``j`` (which defines ``reg``) is a counter's or pointer's step: it adds
    values that do not change in the loop to at most one value that does (the previous
    count, perhaps under another register name), not scaled (``s = s * a + c`` is a
    recurrence)."""
    ins = cfg.insts[j]
    if ins.opcode not in _STEP_ANY and ins.opcode not in _STEP_ADDEND:
        return False
    sources = [registers_in(o) - {"RZ", "URZ"} for o in ins.operands[1:]]
    varying = [k for k, regs in enumerate(sources) if any(not loop_invariant(cfg, j, u, loop, memo, 0) for u in regs)]
    if len(varying) > 1:
        return False
    return not varying or ins.opcode not in _STEP_ADDEND or varying[0] == _STEP_ADDEND[ins.opcode]


_OPAQUE_DEFS = LOAD_OPCODES + ("SHFL", "VOTE", "CALL")
_SPECIAL = re.compile(r"\bSR_[A-Z_.0-9]+|c\[0x[0-9a-f]+\]\[0x[0-9a-f]+\]")


def address_leaves(cfg: CFG, idx: int) -> frozenset[str] | None:
    """What a memory access's address is computed from, through any chain of register
    arithmetic: the special registers (thread and block indices) and constant-bank words
    (kernel parameters, launch dimensions) at the leaves of its definitions. Two accesses with
    the same leaves index the same arrays by the same coordinates (their arithmetic and
    offsets may differ). None where a memory load, a shuffle, a vote or a clock feeds the
    address (the value is data, not code) or no leaf is found."""
    operand = memory_operand(cfg.insts[idx])
    if operand is None:
        return None
    leaves: set[str] = set(_SPECIAL.findall(operand))
    for j in definitions(cfg, idx, registers_in(operand), lambda reg: not reg.startswith(("P", "UP"))):
        d = cfg.insts[j]
        if d.opcode in _OPAQUE_DEFS or "CLOCK" in d.text or "GLOBALTIMER" in d.text:
            return None
        leaves.update(_SPECIAL.findall(d.text))
    return frozenset(leaves) or None
