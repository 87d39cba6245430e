"""Parse SASS text (as ncu or nvdisasm prints it) into :class:`Instruction` records with the
registers, uniform registers and predicates each instruction defines and uses.

Contract: ``parse_instruction(pc, text)`` never raises; text it cannot understand yields an
instruction with opcode ``"?"`` and no defs/uses. Register widths follow the operand
modifiers: ``R2.64`` and 64-bit opcodes (DFMA, IMAD.WIDE, LDG.E.64, F2F.F64.*) use register
pairs, ``.128`` quads. The classification helpers (``is_global_load`` ...) are what the
slicer's opcode-based pruning and the detectors use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import SupportsInt

_REG = re.compile(r"(?<![\w.])(U?R)(\d+|Z)(\.64|\.128)?(?![\w])")
_PRED = re.compile(r"(?<![\w.])(!?)(U?P)(\d|T)(?![\w])")
_GUARD = re.compile(r"^@(!?)(U?P)(\d|T)\s+")
#: A branch target's label annotation in a SASS line (`(.L_x_3)): not part of the instruction.
SASS_LABEL = re.compile(r"`\(\.?L_x_\d+\)\s*")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_SPACES = re.compile(r"\s+")


def clean_sass(text: str) -> str:
    """Normalise a SASS line: drop label annotations (`(.L_x_3)) and collapse spaces."""
    return _SPACES.sub(" ", SASS_LABEL.sub("", text or "")).strip()


# Opcodes whose first operand is not a destination.
_NO_DEST = {
    "ST",
    "STG",
    "STL",
    "STS",
    "STSM",
    "RED",
    "REDG",
    "REDS",
    "BAR",
    "BRA",
    "BRX",
    "JMP",
    "JMX",
    "EXIT",
    "RET",
    "CALL",
    "MEMBAR",
    "FENCE",
    "ERRBAR",
    "NOP",
    "BSYNC",
    "BSSY",
    "WARPSYNC",
    "YIELD",
    "CCTL",
    "CCTLL",
    "SYNCS",
    "ARRIVES",
    "DEPBAR",
    "BPT",
    "KILL",
    "NANOSLEEP",
    "UTMASTG",
    "UBLKCP",
    "UTMALDG",
    "UTMAPF",
    "WARPGROUP",
    "ACQBULK",
    "BREAK",
    "BMOV",
    "STTM",
    "RPCMOV",
}
# Compares: leading predicate operands are destinations.
_PRED_DEST = {
    "ISETP",
    "FSETP",
    "DSETP",
    "HSETP2",
    "PSETP",
    "PLOP3",
    "UISETP",
    "UPLOP3",
    "UPSETP",
    "FCHK",
    "R2P",
    "VOTE",
    "VOTEU",
    "LEPC",
}
_WIDE64_OPS = {"DADD", "DMUL", "DFMA", "DMNMX", "DSETP", "DMMA"}

GLOBAL_LOADS = {"LDG", "LD", "LDGSTS", "TLD", "TEX", "TLD4", "TXD", "TXQ", "SULD", "LDGDEPBAR"}
LOCAL_OPS = {"LDL", "STL"}
SHARED_OPS = {"LDS", "STS", "LDSM", "ATOMS", "REDS", "STSM"}
ATOMICS = {"ATOM", "ATOMG", "RED", "REDG", "ATOMS"}
CONST_LOADS = {"LDC", "ULDC"}
SYNC_OPS = {"BAR", "MEMBAR", "FENCE", "ERRBAR", "WARPSYNC", "BSYNC", "SYNCS", "DEPBAR", "ARRIVES"}
MUFU_OPS = {"MUFU"}
CONVERSIONS = {"F2F", "F2I", "I2F", "I2I", "F2FP", "I2FP", "F2IP", "FRND"}
FP64_OPS = {"DADD", "DMUL", "DFMA", "DMNMX", "DSETP", "DMMA"}
BRANCHES = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BREAK"}


@dataclass
class Instruction:
    pc: int
    text: str
    opcode: str = "?"
    modifiers: tuple[str, ...] = ()
    guard: str | None = None  # predicate guarding the instruction, e.g. "P0" or "!P0"
    defs: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)
    target: int | None = None  # branch target PC (absolute, as in the listing)
    operands: list[str] = field(default_factory=list)

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode,) + self.modifiers)

    # Classification used by pruning and detectors.
    def is_global_load(self) -> bool:
        return self.opcode in GLOBAL_LOADS or (self.opcode in ("ATOM", "ATOMG") and bool(self.defs))

    def is_local(self) -> bool:
        return self.opcode in LOCAL_OPS

    def is_shared(self) -> bool:
        return self.opcode in SHARED_OPS

    def is_atomic(self) -> bool:
        return self.opcode in ATOMICS

    def is_global_atomic(self) -> bool:
        return self.opcode in ("ATOM", "ATOMG", "RED", "REDG")

    def const_index(self) -> str | None:
        """The index of the instruction's constant-bank address as written (``Rx + 0x10`` of
        ``c[0x3][Rx + 0x10]``); None when it reads no constant bank."""
        m = re.search(r"c\[[^\]]*\]\[([^\]]*)\]", self.text)
        return m.group(1) if m else None

    def is_const_indexed(self) -> bool:
        """LDC whose address has a register part (c[bank][Rx]): divergent if Rx varies by lane."""
        if self.opcode != "LDC":
            return False
        index = self.const_index()
        return bool(
            index is not None and re.search(r"\bU?R(\d+)\b", index) and not re.search(r"\bRZ\b", index.split("+")[0])
        )

    def is_memory(self) -> bool:
        return (
            self.is_global_load()
            or self.is_local()
            or self.is_shared()
            or self.is_atomic()
            or self.opcode in ("STG", "ST", "LDC")
            or self.opcode.startswith("UTMA")
        )

    def is_sync(self) -> bool:
        return self.opcode in SYNC_OPS

    def is_fp64(self) -> bool:
        return self.opcode in FP64_OPS

    def is_f2f64(self) -> bool:
        return self.opcode == "F2F" and any("F64" in m for m in self.modifiers)

    def is_mufu(self) -> bool:
        return self.opcode in MUFU_OPS

    def is_branch(self) -> bool:
        return self.opcode in BRANCHES

    def variable_latency(self) -> bool:
        """Results delivered through a scoreboard rather than after a fixed latency."""
        return (
            self.is_memory()
            or self.is_mufu()
            or self.opcode in CONVERSIONS
            or self.is_fp64()
            or self.opcode
            in (
                "S2R",
                "S2UR",
                "SHFL",
                "CS2R",
                "BMOV",
                "POPC",
                "FLO",
                "BREV",
                "MATCH",
                "REDUX",
                "HMMA",
                "IMMA",
                "QGMMA",
                "HGMMA",
                "IGMMA",
            )
        )


def _regs(operand: str, wide: int) -> list[str]:
    out: list[str] = []
    for kind, num, suffix in _REG.findall(operand):
        if num == "Z":
            continue
        n = int(num)
        width = {".64": 2, ".128": 4}.get(suffix, wide)
        out.extend(f"{kind}{n + i}" for i in range(width))
    return out


def _preds(operand: str) -> list[str]:
    return [f"{kind}{num}" for neg, kind, num in _PRED.findall(operand) if num != "T"]


def _split_operands(s: str) -> list[str]:
    ops, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return ops


def _dest_width(opcode: str, mods: tuple[str, ...]) -> int:
    if _wide_result(opcode, mods):
        return 2
    if "128" in mods:
        return 4
    if "64" in mods:
        return 2
    return 1


def _wide_result(opcode: str, mods: tuple[str, ...]) -> bool:
    """A 64-bit result: the wide ops, IMAD.WIDE, and conversions to a 64-bit type."""
    if opcode in _WIDE64_OPS or (opcode in ("IMAD", "IMAD_WIDE", "UIMAD") and "WIDE" in mods):
        return True
    if opcode == "F2F" and mods and mods[0] == "F64":
        return True
    return opcode in ("I2F", "F2I") and any(m in ("F64", "S64", "U64") for m in mods[:1])


def _src_width(opcode: str, mods: tuple[str, ...]) -> int:
    if opcode in _WIDE64_OPS:
        return 2
    if opcode == "F2F" and len(mods) > 1 and mods[1] == "F64":
        return 2
    return 1


def parse_instruction(pc: int, text: str) -> Instruction:
    inst = Instruction(pc=pc, text=text)
    s = text.strip().rstrip(";").strip()
    s = _take_guard(inst, SASS_LABEL.sub("", s))
    parts = s.split(None, 1)
    if not parts or not re.match(r"^[A-Z][A-Z0-9_]*(\.[A-Za-z0-9_]+)*$", parts[0]):
        return inst
    names = parts[0].split(".")
    inst.opcode, inst.modifiers = names[0], tuple(names[1:])
    ops = _split_operands(parts[1]) if len(parts) > 1 else []
    inst.operands = ops
    _take_branch_target(inst, ops)
    dw, sw = _dest_width(inst.opcode, inst.modifiers), _src_width(inst.opcode, inst.modifiers)
    # A memory operand first (LDGSTS [R4], desc[..], UBLKCP [UR4], ...) is an address, not a destination.
    if inst.opcode in _NO_DEST or not ops or "[" in ops[0]:
        _add_sources(inst, ops, sw)
        return inst
    if inst.opcode in _PRED_DEST:
        first_src = _predicate_dests(inst, ops, dw)
    elif _atomic_with_predicate(inst.opcode, ops):
        # ATOMG.E.ADD PT, R5, desc[UR4][R4.64], R7: a predicate, then the returned value.
        inst.defs.update(_preds(ops[0]))
        inst.defs.update(_regs(ops[1], dw))
        first_src = 2
    else:
        first_src = _register_dest(inst, ops, dw)
    _add_sources(inst, ops[first_src:], sw)
    return inst


def _take_guard(inst: Instruction, s: str) -> str:
    """Record the instruction's guard predicate (``@!P0``; PT is no register) and return the
    text after it."""
    g = _GUARD.match(s)
    if not g:
        return s
    neg, kind, num = g.groups()
    inst.guard = f"{neg}{kind}{num}"
    if num != "T":
        inst.uses.add(f"{kind}{num}")
    return s[g.end() :]


def _take_branch_target(inst: Instruction, ops: list[str]) -> None:
    """The address a direct branch, call, break or jump goes to."""
    if inst.opcode not in BRANCHES or not ops:
        return
    m = _HEX.search(ops[-1])
    if m and inst.opcode in ("BRA", "CALL", "BREAK", "JMP"):
        inst.target = int(m.group(0), 16)


def _add_sources(inst: Instruction, ops: list[str], sw: int) -> None:
    """Registers and predicates read by source operands (an address's registers are 32-bit)."""
    for o in ops:
        inst.uses.update(_regs(o, 1 if "[" in o else sw))
        inst.uses.update(_preds(o))


def _predicate_dests(inst: Instruction, ops: list[str], dw: int) -> int:
    """The leading predicate destinations (or a register one, e.g. VOTE.ANY R0, PT, P0);
    returns where the sources start."""
    i = 0
    while i < len(ops) and _PRED.fullmatch(ops[i].strip()):
        inst.defs.update(_preds(ops[i]))
        i += 1
    if i == 0 and ops:
        inst.defs.update(_regs(ops[0], dw))
        i = 1
    return i


def _atomic_with_predicate(opcode: str, ops: list[str]) -> bool:
    return opcode in ATOMICS and len(ops) > 1 and bool(_PRED.fullmatch(ops[0].strip())) and "[" not in ops[1]


def _register_dest(inst: Instruction, ops: list[str], dw: int) -> int:
    """The destination, then the carry-out predicates right after it (IADD3 R2, P0, R2, ...);
    returns where the sources start."""
    inst.defs.update(_regs(ops[0], dw))
    inst.defs.update(_preds(ops[0]))
    i = 1
    while i < len(ops) - 1 and _PRED.fullmatch(ops[i].strip()) and not ops[i].startswith("!"):
        inst.defs.update(_preds(ops[i]))
        i += 1
    return i


def parse_listing(items: Iterable[tuple[SupportsInt, str]]) -> list[Instruction]:
    """Parse ``(pc, text)`` pairs, sorted by PC."""
    return [parse_instruction(int(pc), t) for pc, t in sorted(items, key=lambda x: int(x[0]))]


def opcode_class(inst: Instruction) -> str:
    """Instruction-mix class: fp32, fp64, fp16, int, conversion, sfu, memory, control, uniform,
    tensor, other."""
    op = inst.opcode
    if op in FP64_OPS:
        return "fp64"
    if op in ("FADD", "FMUL", "FFMA", "FMNMX", "FSETP", "FSEL", "FSET", "FCHK", "FSWZADD"):
        return "fp32"
    if op.startswith("H") and op[1:] in ("ADD2", "MUL2", "FMA2", "SETP2", "MNMX2"):
        return "fp16"
    if op in CONVERSIONS:
        return "conversion"
    if op in MUFU_OPS:
        return "sfu"
    if op in ("HMMA", "IMMA", "DMMA", "HGMMA", "QGMMA", "IGMMA", "BMMA"):
        return "tensor"
    if inst.is_memory() or op in ("ST", "STG"):
        return "memory"
    if op in BRANCHES or op in SYNC_OPS or op in ("BSSY", "BSYNC", "WARPSYNC", "NOP", "YIELD"):
        return "control"
    if op.startswith("U"):
        return "uniform"
    if op in (
        "IADD3",
        "IMAD",
        "IMUL",
        "LEA",
        "LOP3",
        "SHF",
        "SHL",
        "SHR",
        "ISETP",
        "IMNMX",
        "IABS",
        "SEL",
        "MOV",
        "PRMT",
        "POPC",
        "FLO",
        "BREV",
        "IDP",
        "VIADD",
        "VIMNMX",
        "IADD",
        "ISCADD",
        "S2R",
        "CS2R",
        "SHFL",
        "PLOP3",
        "P2R",
        "R2P",
        "VOTE",
        "MATCH",
        "REDUX",
        "LOP",
        "BMSK",
    ):
        return "int"
    return "other"
