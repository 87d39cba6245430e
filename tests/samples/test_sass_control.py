"""Volta+ control codes decoded from the 128-bit encodings of the sample cubins, checked
against what nvdisasm prints (the raw hex, `.reuse` flags) and against what the hardware
requires: every reader of a scoreboarded result waits on that scoreboard, every overwrite of
a register still being read late waits on the read barrier, and fixed-latency results are
not read before the architecture's latency has elapsed."""

from __future__ import annotations

import re

import pytest

from test_sass_binary import functions, needs_nvdisasm
from drgpu_py.specs import loader as data
from drgpu_py.sass.cfg import build_cfg
from drgpu_py.sass.control import control_table, decode_control, format_control, sets_barriers, waits_on
from drgpu_py.sass.isa import parse_instruction

CASES = ("fma_chain", "smem_stride", "local_hist", "const_lookup", "global_atomics")


def _pack(stall, yld, wb, rb, mask, reuse) -> int:
    return (stall | yld << 4 | wb << 5 | rb << 8 | mask << 11 | reuse << 17) << 41


def test_decode_literal_fields():
    cw = decode_control(_pack(5, 1, 2, 7, 0b100001, 0b0010) | 0x1234)  # low bits of the word are opcode bits
    assert cw == {
        "stall": 5,
        "yield": True,
        "write_barrier": 2,
        "read_barrier": None,
        "wait_mask": 0b100001,
        "reuse": 2,
    }
    assert waits_on(cw) == {0, 5} and sets_barriers(cw) == {2}
    none = decode_control(_pack(1, 0, 7, 7, 0, 0))
    assert none["write_barrier"] is None and none["read_barrier"] is None and not none["yield"]
    assert format_control(cw) == "W2:R-:B0----5:Y:S05"


def test_decode_known_encodings():
    # From nvdisasm -hex of aos_gather: LDG sets SB2; the FFMA reading its result waits on it.
    ldg = decode_control(0x000EA2000C1E9900)
    ffma = decode_control(0x004FCA0000000009)
    assert ldg["write_barrier"] == 2 and ldg["stall"] == 1
    assert waits_on(ffma) == {2} and ffma["stall"] == 5


def _functions():
    for case in CASES:
        yield from functions(case).values()


@needs_nvdisasm
def test_fields_match_the_raw_hex_and_reuse_text():
    n = 0
    for f in _functions():
        cw = f.control()
        for ins in f.insts:
            word = ins.low | ins.high << 64  # the 128-bit instruction
            ctrl = word >> 105 & ((1 << 21) - 1)  # bits 105..125
            c = cw[ins.offset]
            assert c["stall"] == ctrl & 15 and c["wait_mask"] == ctrl >> 11 & 63
            assert (c["write_barrier"] if c["write_barrier"] is not None else 7) == ctrl >> 5 & 7
            assert (c["read_barrier"] if c["read_barrier"] is not None else 7) == ctrl >> 8 & 7
            assert (c["reuse"] != 0) == (".reuse" in ins.text), (f.name, ins.offset, ins.text)
            n += 1
    assert n > 500


def _blocks(f):
    insts = [parse_instruction(i.offset, i.text) for i in f.insts]
    return insts, build_cfg(insts), f.control()


@needs_nvdisasm
def test_every_reader_of_a_scoreboarded_result_waits_on_its_barrier():
    checked = 0
    for f in _functions():
        insts, cfg, cw = _blocks(f)
        for b in cfg.blocks:
            for p in range(b.start, b.end):
                wb = cw[insts[p].pc]["write_barrier"]
                regs = insts[p].defs
                if wb is None or not regs:
                    continue
                for q in range(p + 1, b.end):
                    if insts[q].uses & regs:
                        assert any(wb in waits_on(cw[insts[x].pc]) for x in range(p + 1, q + 1)), (
                            f.name,
                            insts[p].text,
                            insts[q].text,
                        )
                        checked += 1
                        break
                    if insts[q].defs & regs:
                        break
    assert checked > 100


@needs_nvdisasm
def test_overwriting_a_late_read_register_waits_on_the_read_barrier():
    checked = 0
    for f in _functions():
        insts, cfg, cw = _blocks(f)
        for b in cfg.blocks:
            for p in range(b.start, b.end):
                rb = cw[insts[p].pc]["read_barrier"]
                if rb is None:
                    continue
                assert insts[p].is_memory() or insts[p].variable_latency(), insts[p].text
                regs = {r for r in insts[p].uses if "P" not in r}
                for q in range(p + 1, b.end):
                    if insts[q].defs & regs:
                        assert any(rb in waits_on(cw[insts[x].pc]) for x in range(p + 1, q + 1)), (
                            f.name,
                            insts[p].text,
                            insts[q].text,
                        )
                        checked += 1
                        break
    assert checked > 10


@needs_nvdisasm
def test_fixed_latency_results_are_not_read_early():
    """Between an FP32/integer ALU result and its first reader, the stall counts add up to at
    least the architecture's FP32 latency (specs/arch/gh100.yaml)."""
    lat = data.load_arch("gh100")["latency"]["fp32"]
    alu = re.compile(r"^(FFMA|FADD|FMUL|IADD3|LOP3|SHF|LEA|FSETP|ISETP|FSEL|VIADD)$")
    checked = 0
    for f in _functions():
        insts, cfg, cw = _blocks(f)
        for b in cfg.blocks:
            for p in range(b.start, b.end):
                if not alu.match(insts[p].opcode) or insts[p].guard or cw[insts[p].pc]["write_barrier"] is not None:
                    continue
                for q in range(p + 1, b.end):
                    if insts[q].uses & insts[p].defs:
                        assert sum(cw[insts[x].pc]["stall"] for x in range(p, q)) >= lat, (
                            f.name,
                            insts[p].text,
                            insts[q].text,
                        )
                        checked += 1
                        break
                    if insts[q].defs & insts[p].defs:
                        break
    assert checked > 100


def test_control_table_keys_by_offset():
    t = control_table([(0, 0, _pack(1, 1, 0, 7, 0, 0)), (16, 0, _pack(4, 1, 7, 7, 1, 0))])
    assert set(t) == {0, 16} and t[16]["wait_mask"] == 1 and t[0]["write_barrier"] == 0


@pytest.mark.parametrize("sm,ok", [(61, False), (70, True), (90, True), (None, False)])
def test_supports_control(sm, ok):
    from drgpu_py.sass.control import supports_control

    assert supports_control(sm) is ok
