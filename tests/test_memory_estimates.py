"""The memory-side estimators' mechanisms, checked on the real sample reports: what a fix
changes that the estimate must see (not the estimated number itself)."""
from __future__ import annotations

from conftest import analysis_of, report_path
from drgpu_py.readers import open_report
from drgpu_py.sass.cfg import build_cfg
from drgpu_py.sass.isa import parse_listing


def _finding(case: str, fid: str, variant: str = "bad"):
    k = analysis_of(case, variant).kernels[0]
    return next((f for f in k.findings if f.id == fid), None)


def _stores_in_loops(case: str, variant: str) -> int:
    k = open_report(report_path(case, variant)).kernels[0]
    cfg = build_cfg(parse_listing(zip(k.instructions.index, k.instructions["sass"])))
    return sum(1 for lp in cfg.loops for j in cfg.loop_instructions(lp) if cfg.insts[j].opcode in ("STG", "ST"))


def test_hoisting_the_reloads_also_keeps_a_one_address_store_in_a_register():
    """x = *p ... *p = x in a loop that reloads aliasing-blocked invariants: once the reloads
    leave the loop the compiler stores once after it (the fixed loops of lcg_state and
    oscillator_params hold no store); the estimate counts those stores as removed. Stores to
    several slots (reload_rate's s % 8) stay in memory and are not counted."""
    for case in ("lcg_state", "oscillator_params"):
        assert _stores_in_loops(case, "bad") > 0 and _stores_in_loops(case, "fixed") == 0, case
        f = _finding(case, "loop-invariant-load")
        assert f.evidence["promoted_accesses"] > 0, case
    f = _finding("reload_rate", "loop-invariant-load")
    assert f.evidence["promoted_accesses"] == 0

