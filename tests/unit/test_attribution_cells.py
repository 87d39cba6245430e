"""specs/attribution.yaml's matrix (analysis/attribution.py): a blamed sample's (stall reason,
instruction class) pair picks the mechanism a performance engineer would name."""

from __future__ import annotations

import pytest

from drgpu_py.analysis.attribution import _cell_of, instruction_class
from drgpu_py.sass.isa import parse_instruction
from drgpu_py.specs import loader as data


@pytest.mark.parametrize(
    "sass,cls",
    [
        ("LDG.E R2, desc[UR4][R2.64]", "global_load"),
        ("STG.E desc[UR4][R2.64], R5", "global_store"),
        ("LDL R3, [R1+0x10]", "local"),
        ("LDS R4, [R2]", "shared"),
        ("ATOMS.ADD RZ, [R2], R3", "shared"),
        ("RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R5", "atomic"),
        ("LDC R4, c[0x0][R2+0x210]", "constant"),
        ("FFMA R1, R2, R3, R4", "fp32"),
        ("DFMA R2, R4, R6, R2", "fp64"),
        ("MUFU.SIN R3, R2", "sfu"),
        ("F2F.F64.F32 R2, R3", "conversion"),
        ("IMAD R2, R3, R4, RZ", "int"),
        ("BAR.SYNC.DEFER_BLOCKING 0x0", "barrier"),
        ("MEMBAR.SC.GPU", "fence"),
        ("BRA 0x120", "control"),
    ],
)
def test_instruction_classes(sass, cls):
    assert instruction_class(parse_instruction(0x100, sass)) == cls
    assert cls in data.ATTRIBUTION_CLASSES


@pytest.mark.parametrize(
    "reason,cls,mechanism",
    [
        ("long_scoreboard", "global_load", "global-latency"),
        ("long_scoreboard", "local", "local-memory"),
        ("lg_throttle", "global_store", "global-queue"),
        ("wait", "fp32", "dependency-chains"),
        ("short_scoreboard", "sfu", "special-functions"),
        ("mio_throttle", "shared", "shared-memory"),
        ("barrier", "none", "barriers"),
        ("selected", "int", "overhead-issue"),
        ("selected", "fp32", "essential-issue"),
        ("long_scoreboard", "int", None),  # a long scoreboard on integer math: no mechanism
        ("sleeping", "none", None),
    ],
)
def test_cells(reason, cls, mechanism):
    cell = _cell_of(reason, cls, data.attribution_cells())
    assert (cell["mechanism"] if cell else None) == mechanism


def test_every_owner_is_a_catalogue_finding_and_work_cells_have_none():
    ids = {f["id"] for f in data.findings_catalogue()["findings"]}
    for cell in data.attribution_cells():
        assert set(cell["owners"]) <= ids
        assert bool(cell.get("work")) == (not cell["owners"])
