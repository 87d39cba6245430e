"""Same input, same bytes: the JSON of an analysis does not depend on the process that made
it (Python's per-process hash seed, which orders sets of register names), on ``-j``, or on
where the SASS came from (nvdisasm on the report's cubins or ncu_report's disassembler).

The simulated critical chain picks, of several producers ready at the same cycle, the one
whose register comes first; that order must not be a set's iteration order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, needs_ncu_report, slow
from drgpu_py.analysis.perfmodel import simulate
from drgpu_py.sass import parse_instruction

LAT = {"fp32": 4, "alu": 4, "branch": 7, "shared": 23, "l1": 33, "l2": 260, "dram": 600}


class _Ordered(set):
    """A set that iterates in the order given: the order another hash seed could give."""

    def __init__(self, items):
        super().__init__(items)
        self._order = list(items)

    def __iter__(self):
        return iter(self._order)


def _chain(order_of_uses):
    # Four independent FFMAs finish at the same cycle; the fifth waits on all of them.
    body = [parse_instruction(0x10 * i, f"FFMA R{4 + i}, R2, R3, 0.5") for i in range(4)]
    last = parse_instruction(0x40, "FADD R8, R4, R5")
    body.append(last)
    last.uses = _Ordered(order_of_uses)
    sim = simulate(body, list(range(len(body))), LAT, 600.0, issue_gap=0.0, branch=0.0, loop=False)
    return [body[j].text for j in sim.chain]


def test_the_critical_chain_does_not_follow_a_sets_order():
    regs = ["R4", "R5", "R6", "R7"]
    chains = {tuple(_chain(order)) for order in (regs, regs[::-1], regs[1:] + regs[:1])}
    assert len(chains) == 1, chains
    assert next(iter(chains))  # the tie is on the chain: some producer holds the FADD


TIE_REPORTS = [SAMPLES / "tri_scan" / "tri_scan_bad.ncu-rep", SAMPLES / "skew_segments" / "skew_segments_fixed.ncu-rep"]


def _cli_json(report: Path, out: Path, seed: str, *extra: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "drgpu_py",
            "analyze",
            str(report),
            "-f",
            "json",
            "-o",
            str(out),
            "--force",
            "-q",
            *extra,
        ],
        check=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    return out.read_bytes()


@needs_ncu_report
@pytest.mark.parametrize("report", [TIE_REPORTS[0], pytest.param(TIE_REPORTS[1], marks=slow)], ids=lambda p: p.stem)
def test_two_processes_give_the_same_bytes(report, tmp_path):
    # Seeds 0 and 1 ordered these reports' tied registers differently before the chain was
    # made independent of set order (the loop's critical_path and its tree node differed).
    a = _cli_json(report, tmp_path / "a.json", "0")
    b = _cli_json(report, tmp_path / "b.json", "1", "-j", "2")
    assert a == b


@needs_ncu_report
def test_sass_from_nvdisasm_or_ncu_report_gives_the_same_bytes(tmp_path):
    from drgpu_py.sass.cubin import SassSource, cubins_in_report, find_tool
    from drgpu_py.pipeline import analyze_reports
    from drgpu_py.render import RenderOptions, render

    if find_tool("nvdisasm") is None:
        pytest.skip("nvdisasm is not installed")
    report = TIE_REPORTS[0]
    sass = SassSource.start(cubins_in_report(report))
    assert sass.result() is not None
    opts = RenderOptions(top_kernels=0)
    via_cubin = render(analyze_reports([report], sass=sass), "json", opts)
    via_ncu = render(analyze_reports([report]), "json", opts)
    assert via_cubin == via_ncu
