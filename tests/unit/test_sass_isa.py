"""SASS text -> defs/uses: register pairs and quads, predicate destinations and guards,
stores and address-first operands define nothing, unparseable text never raises."""

from __future__ import annotations

import pytest

from drgpu_py.sass.isa import parse_instruction


@pytest.mark.parametrize(
    "text,defs,uses",
    [
        ("IMAD.WIDE R2, R7, 0x4, R2", {"R2", "R3"}, {"R7", "R2"}),
        ("LDG.E.128 R4, desc[UR4][R8.64]", {"R4", "R5", "R6", "R7"}, {"UR4", "R8", "R9"}),
        ("ISETP.GE.AND P0, PT, R7, UR4, PT", {"P0"}, {"R7", "UR4"}),
        ("@!P1 FADD R3, R3, R2", {"R3"}, {"P1", "R3", "R2"}),
        ("IADD3 R6, P0, R4, 0x1000000, RZ", {"R6", "P0"}, {"R4"}),
        ("DFMA R8, R8, UR6, R2", {"R8", "R9"}, {"R8", "R9", "UR6", "UR7", "R2", "R3"}),
        ("F2F.F64.F32 R6, R17", {"R6", "R7"}, {"R17"}),
        ("STG.E desc[UR4][R4.64], R7", set(), {"UR4", "R4", "R5", "R7"}),
        ("LDGSTS.E.BYPASS.128 [R5+0x10], desc[UR4][R2.64]", set(), {"R5", "UR4", "R2", "R3"}),
        ("LDC R2, c[0x3][R2]", {"R2"}, {"R2"}),
    ],
)
def test_defs_and_uses(text, defs, uses):
    i = parse_instruction(0, text)
    assert i.defs == defs and i.uses == uses


def test_branch_target_guard_and_junk():
    b = parse_instruction(0x160, "@P0 BRA 0x7f09397ac2c0")
    assert b.opcode == "BRA" and b.guard == "P0" and b.target == 0x7F09397AC2C0 and b.is_branch()
    assert parse_instruction(0, "@P0 BRA `(.L_x_0)").target is None
    junk = parse_instruction(0, "/* nothing here */")
    assert junk.opcode == "?" and not junk.defs and not junk.uses
