"""Finding ``slow-math``: source lines whose floating-point math runs as slow routines
(precise division, square root, pow, transcendentals), many instructions per special-function
instruction.

Contract: ``slow_math(ctx, passes) -> Detection | None``, pure, registered by ``@detector``
(detectors/base.py).

Mechanism: a precise routine wraps each MUFU (the special-function unit's approximation) in
range reduction, refinement and a slow path; an intrinsic (``__expf``, ``__fdividef``) or
``--use_fast_math`` keeps the MUFU and few instructions around it. A pow with a literal
integer exponent is a few multiplications instead (GPA's strength reduction).

Evidence: the math MUFUs (``_math_mufus``: transcendentals, and reciprocals and roots only on
lines that call a slow-path subroutine or carry an inlined accurate logarithm; not fast
intrinsics, not an integer division's reciprocal). Per source line, with a called
subroutine's instructions charged to its call site (``_subroutines_at_call_sites``): executed
instructions per math MUFU at least ``slow_math_ratio``, and those lines' samples at least
``slow_math_share``. Lines whose MUFUs are all a double's reciprocal or root seeds
(``_only_fp64_seeds``) are fp64-conversion's, unless the routine is a pow with a literal
integer exponent (``_literal_integer_exponent``: the literal set before the call, an
immediate inside the specialised routine, or the inlined product).

Estimate: the fix keeps about 3 instructions per MUFU: ``eliminate`` of the larger of the
lines' sample share and instruction share times ``1 - 3 / ratio``. With a literal exponent
(variant ``integer_power``): each line keeps ``max(3, |n| - 1)`` instructions per routine
(8 more for a negative power), and the logarithm's MUFUs leave the XU pipe (partial relief of
``xu``; 0 otherwise, since intrinsics keep the MUFUs). Limit (``within_limit``):
``removed_limit`` of the lines' whole share (every sample or instruction gone).

Metrics (declared): none (SASS, per-instruction counts and samples).

Helpers (this rule's own): ``_math_mufus``, ``_immediate_lines``,
``_subroutines_at_call_sites``, ``_literal_integer_exponent``, ``_integer_immediate``,
``_only_fp64_seeds`` and the opcode and immediate tables they read.
"""

from __future__ import annotations

import struct
from collections.abc import Collection, Iterable

import numpy as np
import pandas as pd

from ....sass.isa import Instruction
from ....sass.dataflow import fast_intrinsic
from ....sass.slicing import reaching_defs
from ...context import KernelContext, LineKey
from ...passes import Passes
from ..base import (
    Detection,
    at_call_sites,
    detector,
    eliminate,
    removed_limit,
    within_limit,
)


_TRANSCENDENTAL = ("SIN", "COS", "EX2", "LG2", "TANH")


_MATH_MUFU = _TRANSCENDENTAL + ("RCP", "RSQ", "SQRT", "RCP64H", "RSQ64H")


#: a double's reciprocal and root seeds: no intrinsic or --use_fast_math makes a double division
#: or square root faster, so lines whose only MUFUs are these are slow math only where the
#: routine is a pow with a literal integer exponent (multiplications replace it)
_FP64_SEEDS = ("RCP64H", "RSQ64H")


#: log2(e) as nvdisasm prints a float immediate (1.4426950216293334961)
_LOG2_E = "1.44269502"


#: ln(2) as a float immediate and as a double's high word (0x3fe62e42fefa39ef)
_LN2 = ("0.693147", "-0.693147", "0x3fe62e42")


def _immediate_lines(
    ctx: KernelContext, prefixes: tuple[str, ...], opcodes: Collection[str] | None = None
) -> set[LineKey | None]:
    """Source lines of the instructions (those of ``opcodes``; all when None) with a source
    operand that starts with one of ``prefixes`` (a constant as nvdisasm prints it, hex in
    lower case)."""
    return {
        ctx.line_of(i.pc)
        for i in ctx.insts
        if (opcodes is None or i.opcode in opcodes)
        and any(op.strip().lower().startswith(prefixes) for op in i.operands[1:])
    }


def _math_mufus(ctx: KernelContext) -> set[int]:
    """PCs of MUFUs that do floating-point math: transcendentals, reciprocals and roots of
    precise division, sqrt and pow. A MUFU.RCP whose operand an I2F.RP defines is the setup
    of an integer division (integer-division), not math."""
    out = set()
    cfg = ctx.cfg
    # Precise division and square root call a slow-path subroutine from their line; the
    # fast forms (rsqrtf, __fdividef) are a lone MUFU and are not slow math.
    call_lines = {ctx.line_of(i.pc) for i in ctx.insts if i.opcode == "CALL"} - {None}
    # An inlined accurate logarithm (powf, logf without a call): its reciprocal feeds a
    # polynomial scaled by log2(e) and ln(2), immediates no division or square root uses (a fast
    # __expf scales by log2(e) alone).
    scales = ("FFMA", "FMUL")
    call_lines |= (_immediate_lines(ctx, (_LOG2_E,), scales) & _immediate_lines(ctx, _LN2, scales)) - {None}
    in_subroutine = ctx.call_sites()
    for ins in ctx.insts:
        if not (ins.is_mufu() and ins.modifiers and ins.modifiers[0] in _MATH_MUFU):
            continue
        if (
            ins.modifiers[0] not in _TRANSCENDENTAL
            and ctx.line_of(ins.pc) not in call_lines
            and ins.pc not in in_subroutine
        ):
            continue
        idx = cfg.index_of_pc.get(ins.pc) if cfg is not None else None
        if cfg is not None and idx is not None:
            if fast_intrinsic(cfg, idx):
                continue
            if ins.modifiers[0] == "RCP" and any(
                cfg.insts[j].opcode == "I2F" and "RP" in cfg.insts[j].modifiers
                for r in ins.uses
                for j, _ in reaching_defs(cfg, idx, r, 10_000)
            ):
                continue
        out.add(ins.pc)
    return out


def _subroutines_at_call_sites(ctx: KernelContext, df: pd.DataFrame) -> pd.DataFrame:
    """The per-instruction table with the lines of called subroutines replaced by the line
    of their call site (KernelContext.call_sites), so that their cost lands on the call."""
    sites = ctx.call_sites()
    if not sites or "line" not in df:
        return df
    lines = df["line"].copy()
    hit = lines.index.isin(list(sites))
    at = {pc: ctx.line_of(site) for pc, site in sites.items()}
    lines[hit] = [line[1] if (line := at[pc]) else None for pc in lines.index[hit]]
    return df.assign(line=lines)


# Bit patterns of the small integers 2..16 as a float32 and as the high word of a float64:
# how a literal exponent reaches a called pow in a register (IMAD.MOV.U32 R5, RZ, RZ, 0x40000000).
_SMALL_INTEGER_BITS = {
    **{struct.unpack("<I", struct.pack("<f", float(n)))[0]: n for n in range(2, 17)},
    **{struct.unpack("<Q", struct.pack("<d", float(n)))[0] >> 32: n for n in range(2, 17)},
}


def _literal_integer_exponent(ctx: KernelContext, lines: Collection[LineKey]) -> int | None:
    """The small integer a slow line passes to a called math subroutine as a literal, or None.
    GPA's strength reduction: an integer power is a few multiplications. Two forms: the literal
    set in the exponent's register before the CALL (pow(d, 2.0) with the exponent's bits,
    IMAD.MOV.U32 R5, RZ, RZ, 0x40000000), or, where nvcc specialises the routine for the
    constant, the exponent as an immediate that multiplies log(x) inside the routine
    (DMUL R22, R16, 2), called from a slow line."""
    sites = ctx.call_sites()
    # A power is exp2(y * log2(x)): its routine carries ln(2) (a float immediate, or a double's
    # high word moved into a register, often hoisted off the line) or a MUFU.LG2 on the line;
    # a division or square root by a literal (dt / 6.0) does not, and its literal is no exponent.
    if not _immediate_lines(ctx, _LN2) and not any(
        i.is_mufu() and i.modifiers[:1] == ("LG2",) and ctx.line_of(i.pc) in lines for i in ctx.insts
    ):
        return None
    calls = {ctx.line_of(i.pc) for i in ctx.insts if i.opcode == "CALL"} - {None}
    for ins in ctx.insts:
        if ins.pc in sites or ctx.line_of(ins.pc) not in calls or ctx.line_of(ins.pc) not in lines:
            continue
        if not (ins.opcode in ("MOV", "UMOV") or (ins.opcode == "IMAD" and "MOV" in ins.modifiers)) or not ins.operands:
            continue
        try:
            bits = int(ins.operands[-1].strip(), 16) if ins.operands[-1].strip().startswith("0x") else None
        except ValueError:
            bits = None
        if bits in _SMALL_INTEGER_BITS:
            return _SMALL_INTEGER_BITS[bits]
    for ins in ctx.insts:
        site = sites.get(ins.pc)
        if site is None or ins.opcode not in _PRODUCTS or ctx.line_of(site) not in lines:
            continue
        literal = _integer_immediate(ins)
        if literal is not None:
            return literal
    # Inlined (powf without a call): the routine's exact product y * log2(x) on the slow line
    # itself, hi = l * y then lo = fma(l, y, -hi), the exponent an immediate of both.
    products = [ins for ins in ctx.insts if ins.pc not in sites and ctx.line_of(ins.pc) in lines]
    for ins in products:
        if ins.opcode != "FMUL" or len(ins.operands) < 3:
            continue
        literal = _integer_immediate(ins)
        dest, factor = ins.operands[0].strip(), ins.operands[1].strip()
        if literal is not None and any(
            other.opcode == "FFMA"
            and len(other.operands) == 4
            and other.operands[1].strip() == factor
            and _integer_immediate(other) == literal
            and other.operands[3].strip() == f"-{dest}"
            for other in products
        ):
            return literal
    return None


_PRODUCTS = ("DMUL", "DFMA", "FMUL", "FFMA")


def _integer_immediate(ins: Instruction) -> int | None:
    """A small integer (2..16, either sign) among a multiply's source operands, written as an
    immediate."""
    for op in ins.operands[1:]:
        text = op.strip()
        if text.lstrip("-").isdigit() and 2 <= abs(int(text)) <= 16:
            return int(text)
    return None


def _only_fp64_seeds(ctx: KernelContext, mufu_pcs: Iterable[int]) -> bool:
    """The slow lines' MUFUs are all a double's reciprocal or root seeds."""
    ops = {ctx.by_pc[int(pc)].modifiers[:1] for pc in mufu_pcs}
    return bool(ops) and all(op and op[0] in _FP64_SEEDS for op in ops)


@detector()
def slow_math(ctx: KernelContext, passes: Passes) -> Detection | None:
    df = ctx.df
    if df.empty or not ctx.sampling:
        return None
    mufu = _math_mufus(ctx)
    if not mufu:
        return None
    df = _subroutines_at_call_sites(ctx, df)
    lined = df["line"].notna().to_numpy()
    table = df[lined] if lined.any() else df.assign(line=0)
    # Per source line (file, line; in groupby's order), summed with arrays over the rows:
    # executed instructions, those on transcendental MUFUs, and stall samples (all reasons).
    gid = table.groupby(["file", "line"], dropna=False).ngroup().to_numpy()
    n_lines = int(gid.max()) + 1 if len(gid) else 0
    pcs = table.index.to_numpy()
    ex = np.nan_to_num(table["inst_executed"].to_numpy(dtype=float))
    is_mufu = np.isin(pcs, np.fromiter(mufu, dtype=pcs.dtype, count=len(mufu)))
    _, _, arr, _ = ctx.stall_matrix()
    row_sums = np.nansum(arr, axis=1) if arr.shape[1] else np.zeros(len(arr))
    samples_of = row_sums[lined] if lined.any() else row_sums
    mu_by = np.bincount(gid, weights=np.where(is_mufu, ex, 0.0), minlength=n_lines)
    ex_by = np.bincount(gid, weights=ex, minlength=n_lines)
    samples_by = np.bincount(gid, weights=samples_of, minlength=n_lines)
    rows = []
    for line_group in np.flatnonzero(mu_by > 0).tolist():
        ratio = float(ex_by[line_group]) / float(mu_by[line_group])
        if ratio >= ctx.th["slow_math_ratio"]:
            rows.append((line_group, ratio, float(samples_by[line_group])))
    if not rows:
        return None
    tot = ctx.samples_total
    samples = sum(r[2] for r in rows)
    frac = samples / tot if tot else 0.0
    if frac < ctx.th["slow_math_share"]:
        return None
    ratio = max(r[1] for r in rows)
    # The slow lines' executed instructions: each one the fix removes frees its issue slot and
    # the dependent waits on it, which the samples of a long dependent sequence (a called pow)
    # undercount against the few instructions left around it. The fix keeps about 3
    # instructions per MUFU.
    ex_total = float(ex.sum())
    inst = sum(float(ex_by[row[0]]) for row in rows) / ex_total if ex_total > 0 else 0.0
    removed_share = max(frac, inst) * max(0.0, 1.0 - 3.0 / ratio)
    # Weights line by line, each line's PCs in table order (as a loop over the groups gave).
    at = np.flatnonzero(np.isin(gid, [row[0] for row in rows]))
    at = at[np.argsort(gid[at], kind="stable")]
    weights = at_call_sites(dict(zip(pcs[at].tolist(), samples_of[at].tolist())), ctx.call_sites())
    # Fast intrinsics run on the same special-function unit: the MUFUs stay, so the XU pipe
    # keeps at least today's load and bounds the gain (partial relief 0).
    lines: set[LineKey] = set()
    if "line" in table:
        keys = table[["file", "line"]].to_numpy()
        lines = {(f, ln) for f, ln in keys[np.isin(gid, [row[0] for row in rows])].tolist()}
    exponent = _literal_integer_exponent(ctx, lines)
    if exponent is None and _only_fp64_seeds(ctx, pcs[is_mufu & np.isin(gid, [row[0] for row in rows])]):
        return None  # double division or sqrt: double-precision work (fp64-conversion's)
    evidence = {"instructions_per_mufu": round(ratio, 1), "slow_line_instruction_share": round(inst, 3)}
    xu_relief = 0.0
    if exponent is not None:
        evidence["literal_integer_exponent"] = exponent
        # Multiplications replace the whole routine: its logarithm's MUFUs (all but EX2, which
        # an exp on the same line may also use) leave the XU pipe.
        all_mufu = sum(float(ex[k]) for k in np.flatnonzero(is_mufu))
        logs = sum(
            float(ex[k])
            for k in np.flatnonzero(is_mufu & np.isin(gid, [row[0] for row in rows]))
            if ctx.by_pc[int(pcs[k])].modifiers[:1] != ("EX2",)
        )
        xu_relief = logs / all_mufu if all_mufu > 0 else 0.0
        # What the multiplications keep per routine (one logarithm MUFU each): |n| - 1 of them,
        # and a division (about 8 instructions) for a negative power; line by line, since a
        # slow line beside the pow (a square root) keeps its own routine's share.
        keep = max(3.0, abs(exponent) - 1.0 + (8.0 if exponent < 0 else 0.0))
        gone = sum(float(ex_by[row[0]]) * max(0.0, 1.0 - keep / row[1]) for row in rows) / ex_total
        removed_share = max(frac * gone / inst if inst > 0 else 0.0, gone)
    # The slow lines' whole time (their samples, or their instructions) gone is the most the
    # change gives.
    return Detection(
        stall_share=frac,
        speedup=within_limit(
            eliminate(removed_share),
            removed_limit(max(frac, inst)),
            f"1 / (1 - {max(frac, inst):.3f}): the slow lines' every {'instruction' if inst > frac else 'sample'} gone",
            evidence,
        ),
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"ratio": ratio, "exponent": exponent or 0},
        partial_relief={"xu": xu_relief},
        variant="integer_power" if exponent is not None else None,
    )
