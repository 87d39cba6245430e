"""The CFG and loops built from a report's SASS agree with nvdisasm's own basic-block CFG
(`nvdisasm -bbcfg -poff`) of the same cubin: the same loop headers and back edges and the
same loop bodies, for the horner loop of fma_chain and the unrolled trajectory loop of
reload_rate; the root-cause line lies in the loop."""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import root_line
from test_sass_binary import bad_profile_with_cubin, cubin_path, needs_nvdisasm
from drgpu_py.sass import build_cfg, parse_instruction, parse_listing
from drgpu_py.sass.binary import find_tool

_NODE = re.compile(r'^"([^"]+)"\s*$')
_OFF = re.compile(r"(?:\\l|>)([0-9a-f]{4,}):\\ ")
_EDGE = re.compile(r'^"([^"]+)":\w+:\w+\s*->\s*"([^"]+)":')
_CLUSTER = re.compile(r'^subgraph\s+"cluster_(\S+)"')


def nvdisasm_loops(case: str, function: str) -> dict[int, set[int]]:
    """Natural loops of nvdisasm's basic-block CFG: header offset -> offsets in the loop."""
    out = subprocess.run(
        [find_tool("nvdisasm"), "-bbcfg", "-poff", str(cubin_path(case))], capture_output=True, text=True, check=True
    ).stdout
    offs: dict[str, list[int]] = {}
    edges: list[tuple[str, str]] = []
    cur = node = None
    for line in out.splitlines():
        m = _CLUSTER.match(line)
        if m:
            cur = m.group(1)
            continue
        if cur != function:
            continue
        m = _NODE.match(line)
        if m:
            node = m.group(1)
            offs[node] = []
            continue
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2)))
            continue
        if node is not None:
            offs[node].extend(int(x, 16) for x in _OFF.findall(line))
    preds: dict[str, set[str]] = {}
    for a, b in edges:
        preds.setdefault(b, set()).add(a)
    loops: dict[int, set[int]] = {}
    for a, b in edges:
        if offs[b] and offs[a] and min(offs[b]) <= max(offs[a]):  # back edge a -> b
            body, stack = {a, b}, ([a] if a != b else [])  # a self-loop's body is its block
            while stack:
                for p in preds.get(stack.pop(), ()):
                    if p not in body:
                        body.add(p)
                        stack.append(p)
            loops.setdefault(min(offs[b]), set()).update(o for n in body for o in offs[n])
    return loops


def our_loops(case: str):
    p, _, _ = bad_profile_with_cubin(case)
    k = p.kernels[0]
    df = k.instructions
    cfg = build_cfg(parse_listing(zip(df.index, df["sass"])))
    off = dict(zip(df.index, df["offset"]))
    loops = {}
    for lp in cfg.loops:
        header = int(off[cfg.insts[cfg.blocks[lp.header].start].pc])
        loops[header] = {int(off[cfg.insts[i].pc]) for i in cfg.loop_instructions(lp)}
    return k, cfg, loops


@needs_nvdisasm
@pytest.mark.parametrize("case", ["fma_chain", "reload_rate"])
def test_loops_match_nvdisasm(case):
    k, cfg, ours = our_loops(case)
    theirs = nvdisasm_loops(case, k.mangled)
    assert theirs, "nvdisasm shows no loop"
    assert set(ours) == set(theirs)
    for h in theirs:
        assert ours[h] == theirs[h]
    # The loop's lines contain the root-cause line.
    df = k.instructions
    lines = {int(df.at[cfg.insts[i].pc, "line"]) for lp in cfg.loops for i in cfg.loop_instructions(lp)}
    assert root_line(case) in lines


def test_literal_cfg_loop_and_dominators():
    text = [
        (0x00, "MOV R0, RZ"),
        (0x10, "ISETP.GE.AND P0, PT, R0, 0x10, PT"),
        (0x20, "@P0 BRA 0x60"),
        (0x30, "IADD3 R0, R0, 0x1, RZ"),
        (0x40, "FFMA R2, R2, R3, 0.5"),
        (0x50, "BRA 0x10"),
        (0x60, "EXIT"),
    ]
    cfg = build_cfg([parse_instruction(pc, t) for pc, t in text])
    assert [(b.start, b.end) for b in cfg.blocks] == [(0, 1), (1, 3), (3, 6), (6, 7)]
    assert cfg.blocks[1].succs == [3, 2] and cfg.blocks[2].succs == [1]
    assert len(cfg.loops) == 1 and cfg.loops[0].header == 1 and cfg.loops[0].blocks == {1, 2}
    assert cfg.dom[3] == {0, 1, 3}
    assert cfg.innermost_loop(4) is cfg.loops[0] and cfg.innermost_loop(6) is None


def test_self_loop_body_is_its_block_only():
    """A one-block loop (the block branches to itself) holds that block alone, not the code
    before it (fma_chain's horner loop)."""
    text = [
        (0x00, "MOV R0, RZ"),
        (0x10, "FADD R7, RZ, R2"),
        (0x20, "FFMA R7, R2, R7, 0.5"),
        (0x30, "IADD3 R0, R0, 0x1, RZ"),
        (0x40, "ISETP.NE.AND P0, PT, R0, 0x10, PT"),
        (0x50, "@P0 BRA 0x20"),
        (0x60, "EXIT"),
    ]
    cfg = build_cfg([parse_instruction(pc, t) for pc, t in text])
    assert len(cfg.loops) == 1 and cfg.loops[0].header == 1
    assert cfg.loops[0].blocks == {1}
    assert cfg.loop_instructions(cfg.loops[0]) == [2, 3, 4, 5]
    assert cfg.innermost_loop(0) is None
