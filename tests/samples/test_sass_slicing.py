"""GPA-style blamer: reaching definitions through predicated code, barrier-, latency- and
opcode-based pruning, write-after-read dependencies and dependency kinds on small literal
listings; on the real samples (with their cubins) the blamed producer line of five kinds of
stall is the `// ROOT` line of the sample's source, and most stalls have a single source."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import root_line
from test_sass_binary import bad_profile_with_cubin, needs_nvdisasm
from drgpu_py.specs import loader as data
from drgpu_py.sass import blame_stalls, build_cfg, parse_instruction, parse_listing
from drgpu_py.sass.slicing import reaching_defs

LAT = data.load_arch("gh100")["latency"]


def _cfg(lines):
    return build_cfg([parse_instruction(16 * i, t) for i, t in enumerate(lines)])


def _df(n, stalls: dict[int, dict[str, float]]):
    reasons = sorted({r for d in stalls.values() for r in d} | {"selected"})
    rows = {f"stall_{r}": [float(stalls.get(i, {}).get(r, 0.0)) for i in range(n)] for r in reasons}
    return pd.DataFrame(rows, index=[16 * i for i in range(n)])


def _cw(stall=1, wb=None, rb=None, wait=0):
    return {"stall": stall, "yield": True, "write_barrier": wb, "read_barrier": rb, "wait_mask": wait, "reuse": 0}


# ---- reaching definitions through predicated code ------------------------------------------


def test_search_continues_past_predicated_defs_until_covered():
    cfg = _cfg(["MOV R1, 0x1", "@P0 MOV R1, 0x2", "@!P0 MOV R1, 0x3", "FADD R2, R1, R1"])
    assert [j for j, _ in reaching_defs(cfg, 3, "R1", 100)] == [1, 2]  # P0 and !P0 cover: MOV at 0 is dead
    cfg = _cfg(["MOV R1, 0x1", "@P0 MOV R1, 0x2", "FADD R2, R1, R1"])
    assert [j for j, _ in reaching_defs(cfg, 2, "R1", 100)] == [0, 1]
    cfg = _cfg(["MOV R1, 0x1", "@P0 MOV R1, 0x2", "@P0 FADD R2, R1, R1"])
    assert [j for j, _ in reaching_defs(cfg, 2, "R1", 100)] == [1]  # the consumer's own guard covers it


def test_reaching_defs_through_a_loop_back_edge():
    cfg = _cfg(["MOV R7, RZ", "FFMA R7, R2, R7, 0.5", "ISETP.NE.AND P0, PT, R0, 0x10, PT", "@P0 BRA 0x10", "EXIT"])
    defs = dict(reaching_defs(cfg, 1, "R7", 100))
    assert set(defs) == {0, 1} and defs[0] == 1 and defs[1] == 3  # before the loop, and itself one iteration back


# ---- pruning -----------------------------------------------------------------------------------

LOADS = ["LDG.E R2, desc[UR4][R8.64]", "LDG.E R3, desc[UR4][R10.64]", "FMUL R5, R2, R2", "FADD R4, R2, R3"]


def test_barrier_pruning_keeps_the_load_still_outstanding():
    cfg, df = _cfg(LOADS), _df(4, {3: {"long_scoreboard": 100}})
    plain = blame_stalls(cfg, df, latency=LAT)
    assert set(plain.edges["producer_pc"]) == {0, 16} and plain.single_dependency_coverage == 0
    # With control codes: the FMUL already waited on B0 (the first load), the FADD waits on B1 only.
    control = {0: _cw(wb=0), 16: _cw(wb=1), 32: _cw(wait=0b01, stall=4), 48: _cw(wait=0b10)}
    b = blame_stalls(cfg, df, control=control, latency=LAT)
    assert list(b.edges["producer_pc"]) == [16] and list(b.edges["kind"]) == ["global_memory"]
    assert b.single_dependency_coverage == 1.0 and b.source == "cubin"


def test_a_wait_on_the_barrier_in_between_clears_older_setters():
    cfg = _cfg(["LDG.E R2, desc[UR4][R8.64]", "FMUL R6, R2, R2", "LDG.E R3, desc[UR4][R10.64]", "FADD R4, R2, R3"])
    control = {0: _cw(wb=0), 16: _cw(wait=0b1), 32: _cw(wb=0), 48: _cw(wait=0b1)}
    b = blame_stalls(cfg, _df(4, {3: {"long_scoreboard": 10}}), control=control, latency=LAT)
    assert list(b.edges["producer_pc"]) == [32]


def test_opcode_pruning_by_stall_reason():
    cfg = _cfg(["LDS R2, [R8]", "LDG.E R3, desc[UR4][R10.64]", "FADD R4, R2, R3"])
    b = blame_stalls(cfg, _df(3, {2: {"long_scoreboard": 10, "short_scoreboard": 5}}), latency=LAT)
    e = b.edges.set_index("reason")
    assert e.loc["long_scoreboard", "producer_pc"] == 16 and e.loc["long_scoreboard", "kind"] == "global_memory"
    assert e.loc["short_scoreboard", "producer_pc"] == 0 and e.loc["short_scoreboard", "kind"] == "shared_memory"


def test_latency_pruning_drops_results_that_are_ready():
    far = ["FMUL R1, R2, R3"] + ["IADD3 R9, R9, 0x1, RZ"] * 10 + ["FADD R4, R1, R1"]
    b = blame_stalls(_cfg(far), _df(len(far), {11: {"wait": 10}}), latency=LAT)
    assert list(b.edges["producer_pc"]) == [160] and list(b.edges["kind"]) == ["stall_count"]  # not the FMUL
    near = ["FMUL R1, R2, R3", "IADD3 R9, R9, 0x1, RZ", "FADD R4, R1, R1"]
    b = blame_stalls(_cfg(near), _df(3, {2: {"wait": 10}}), latency=LAT)
    assert list(b.edges["producer_pc"]) == [0] and list(b.edges["kind"]) == ["arithmetic"]
    # With control codes the path's stall counts are its cycles: 2 instructions of 6 cycles each.
    control = {0: _cw(stall=6), 16: _cw(stall=6), 32: _cw()}
    b = blame_stalls(_cfg(near), _df(3, {2: {"wait": 10}}), control=control, latency=LAT)
    assert list(b.edges["kind"]) == ["stall_count"]


def test_write_after_read_on_a_store():
    lines = ["STG.E desc[UR4][R2.64], R5", "MOV R5, 0x1"]
    control = {0: _cw(rb=0), 16: _cw(wait=0b1)}
    for ctl in (None, control):
        b = blame_stalls(_cfg(lines), _df(2, {1: {"long_scoreboard": 7}}), control=ctl, latency=LAT)
        assert list(b.edges["producer_pc"]) == [0] and list(b.edges["kind"]) == ["war"]


def test_late_read_before_a_load_result_is_not_the_one_waited_on():
    lines = ["STG.E desc[UR4][R2.64], R5", "LDG.E R6, desc[UR4][R8.64]", "FADD R5, R6, R6"]
    control = {0: _cw(rb=0), 16: _cw(wb=0), 32: _cw(wait=0b1)}
    b = blame_stalls(_cfg(lines), _df(3, {2: {"long_scoreboard": 7}}), control=control, latency=LAT)
    assert list(b.edges["producer_pc"]) == [16]


def test_sync_and_own_stalls_stay_put():
    lines = ["BAR.SYNC.DEFER_BLOCKING 0x0", "FADD R4, R1, R1", "LDG.E R3, desc[UR4][R10.64]"]
    b = blame_stalls(_cfg(lines), _df(3, {1: {"barrier": 9}, 2: {"lg_throttle": 4}}), latency=LAT)
    e = b.edges.set_index("reason")
    assert (e.loc["barrier", "producer_pc"], e.loc["barrier", "kind"]) == (0, "synchronization")
    assert (e.loc["lg_throttle", "producer_pc"], e.loc["lg_throttle", "kind"]) == (32, "none")
    assert b.stalled_instructions == 0 and b.kind_shares() == {}


# ---- real samples ------------------------------------------------------------------------------


def _blame(case: str, with_cubin: bool = True):
    p, control, _ = bad_profile_with_cubin(case)
    k = p.kernels[0]
    df = k.instructions
    cfg = build_cfg(parse_listing(zip(df.index, df["sass"])))
    ctl = None
    if with_cubin:
        ctl = {k.function_base + off: cw for off, cw in control[k.mangled].items()}
    return k, cfg, blame_stalls(cfg, df, control=ctl, latency=data.load_arch(k.chip)["latency"])


def _top_line(k, cfg, edges) -> int:
    df = k.instructions
    by_line = edges.groupby(edges["producer_pc"].map(lambda pc: int(df.at[pc, "line"])))["samples"].sum()
    return int(by_line.idxmax())


@needs_nvdisasm
@pytest.mark.parametrize(
    "case,select,producer",
    [
        ("aos_gather", lambda e, ins: e["kind"] == "global_memory", ("LDG",)),
        ("local_hist", lambda e, ins: e["producer_pc"].map(lambda pc: ins[pc].is_local()), ("LDL", "STL")),
        ("smem_stride", lambda e, ins: e["kind"] == "shared_memory", ("LDS",)),
        ("double_literal", lambda e, ins: e["reason"] == "short_scoreboard", ("F2F",)),
        ("serial_norm", lambda e, ins: e["reason"] == "barrier", ("BAR",)),
    ],
)
def test_blamed_producer_line_is_the_root_line(case, select, producer):
    k, cfg, b = _blame(case)
    ins = {i.pc: i for i in cfg.insts}
    e = b.edges[select(b.edges, ins)]
    assert not e.empty
    assert _top_line(k, cfg, e) == root_line(case)
    heaviest = e.groupby("producer_pc")["samples"].sum().idxmax()
    assert ins[heaviest].opcode in producer, ins[heaviest].text
    if case == "local_hist":
        loc = b.edges[b.edges["kind"] == "local_memory"]
        assert root_line(case) in {int(k.instructions.at[pc, "line"]) for pc in loc["producer_pc"]}
    if case == "serial_norm":
        assert set(e["kind"]) == {"synchronization"}


@needs_nvdisasm
def test_cubin_slicing_mostly_single_dependency():
    """The goal for cubin slicing: on most samples, >= 80% of stalled instructions get one source."""
    cases = [
        "aos_gather",
        "local_hist",
        "smem_stride",
        "double_literal",
        "serial_norm",
        "fma_chain",
        "reload_rate",
        "global_atomics",
    ]
    cov = {c: _blame(c)[2].single_dependency_coverage for c in cases}
    assert sum(v >= 0.8 for v in cov.values()) >= 0.75 * len(cases), cov


@needs_nvdisasm
def test_kinds_cover_every_dependency_stall():
    k, cfg, b = _blame("smem_stride")
    shares = b.kind_shares()
    assert abs(sum(shares.values()) - 1.0) < 1e-3
    assert max(shares, key=shares.get) == "shared_memory"
    dep = b.edges[b.edges["reason"].isin(["long_scoreboard", "short_scoreboard", "wait"])]
    assert dep["samples"].sum() == pytest.approx(
        sum(float(k.instructions[f"stall_{r}"].sum()) for r in ("long_scoreboard", "short_scoreboard", "wait"))
    )
