"""SASS from binaries: tool discovery, nvdisasm parsing, kernel matching, the cubin line
table (CSV input without an .ncu-rep, inlined code at its call site), --binary extraction
through cuobjdump, and the notes when the cubin does not fit the report.

Also holds the cached helpers the other test_sass_* files import (one nvdisasm run and one
report read per sample)."""

from __future__ import annotations

import functools
import json
import shutil
import struct

import pytest

from conftest import SAMPLES, analysis_of, report_path, root_line
from drgpu_py.errors import InputError, ToolNotFoundError
from drgpu_py.sass import binary
from drgpu_py.sass.binary import (
    control_from_binary,
    demangled_base,
    load_functions,
    mangled_base,
    normalize_sass,
    parse_disassembly,
)


def _have(tool: str) -> bool:
    try:
        binary.find_tool(tool)
        return True
    except ToolNotFoundError:
        return False


needs_nvdisasm = pytest.mark.skipif(
    not _have("nvdisasm"), reason="nvdisasm not installed (pip install nvidia-cuda-nvdisasm)"
)
needs_cuobjdump = pytest.mark.skipif(
    not _have("cuobjdump"), reason="cuobjdump not installed (pip install nvidia-cuda-cuobjdump)"
)


def cubin_path(case: str):
    return SAMPLES / case / f"{case}.sm_90.cubin"


@functools.cache
def functions(case: str) -> dict:
    """Cubin functions of a sample by mangled name (one nvdisasm run per case)."""
    funcs, _ = load_functions(cubin=cubin_path(case))
    return {f.name: f for f in funcs}


@functools.cache
def bad_profile_with_cubin(case: str):
    """(profile, control, note) of CASE_bad.ncu-rep after control_from_binary."""
    from drgpu_py.readers import open_report

    p = open_report(report_path(case, "bad"))
    control, note = control_from_binary(p, cubin=cubin_path(case))
    return p, control, note


def kernel_function(case: str):
    p, _, _ = bad_profile_with_cubin(case)
    return functions(case)[p.kernels[0].mangled]


# ---- pure helpers --------------------------------------------------------------------------


def test_name_bases():
    assert mangled_base("_Z6hornerILi1EEvPKfPf") == "horner"
    assert mangled_base("_ZN2ns6kernelEv") == "kernel"
    assert mangled_base("_Z14scale_keys_aosPK6RecordPfi") == "scale_keys_aos"
    assert demangled_base("void bin_count<(bool)0>(const unsigned int *, unsigned int *)") == "bin_count"
    assert demangled_base("void bin_count<0>(const unsigned int *, unsigned int *)") == "bin_count"
    assert demangled_base("ns::saxpy(float, const float *)") == "saxpy"


def test_normalize_sass_ignores_reuse_labels_and_branch_targets():
    assert normalize_sass("FFMA R5, R2.reuse, R5, 0.5 ;") == normalize_sass("FFMA R5, R2, R5, 0.5")
    assert normalize_sass("@P0 BRA `(.L_x_0) ;") == normalize_sass("@P0 BRA 0x7f09397ac2c0")
    assert normalize_sass("IMAD.WIDE R2, R7, 0x40, R2") != normalize_sass("IMAD.WIDE R2, R7, 0x4, R2")


def test_parse_disassembly_literal():
    text = """\t.target\tsm_90
\t.section\t.text._Z1kv,"ax",@progbits
_Z1kv:
\t//## File "/src/k.cu", line 3
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
                                                                          /* 0x000fe20000000800 */
\t//## File "/inc/h.hpp", line 112 inlined at "/src/k.cu", line 7
\t//## File "/src/k.cu", line 7
        /*0010*/                   REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;  /* 0x000000050200798e */
                                                                          /* 0x000fe2000c10e184 */
.L_x_0:
        /*0020*/                   BRA `(.L_x_0);                         /* 0xfffffffc00fc7947 */
                                                                          /* 0x000fc0000383ffff */
"""
    f = parse_disassembly(text)["_Z1kv"]
    assert f.sm == 90 and [i.offset for i in f.insts] == [0, 16, 32]
    assert f.insts[0].high == 0x000FE20000000800 and f.insts[0].low == 0x00000A00FF017B82
    assert (f.insts[0].file, f.insts[0].line, f.insts[0].inlined_at) == ("/src/k.cu", 3, [])
    red = f.insts[1]
    assert (red.file, red.line, red.inlined_at) == ("/inc/h.hpp", 112, [("/src/k.cu", 7)])
    # A location holds until the next //## line.
    assert (f.insts[2].file, f.insts[2].line, f.insts[2].inlined_at) == (red.file, red.line, red.inlined_at)
    assert f.insts[2].text.startswith("BRA")


def test_tool_not_found_has_hint(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    with pytest.raises(ToolNotFoundError) as e:
        binary.find_tool("nvdisasm")
    assert "nvidia-cuda-nvdisasm" in e.value.hint


def test_missing_cubin_is_an_input_error(tmp_path):
    from drgpu_py.profile import Profile

    with pytest.raises(InputError):
        control_from_binary(Profile(path="x", format="ncu-rep"), cubin=tmp_path / "nope.cubin")


# ---- real cubins ---------------------------------------------------------------------------


@needs_nvdisasm
def test_functions_of_a_sample_cubin():
    fs = functions("fma_chain")
    assert set(fs) == {"_Z6hornerILi1EEvPKfPf", "_Z6hornerILi4EEvPKfPf"}
    for f in fs.values():
        assert f.sm == 90
        offs = [i.offset for i in f.insts]
        assert offs == list(range(0, 16 * len(offs), 16))
        assert all(i.file and i.file.endswith("fma_chain.cu") for i in f.insts if i.text != "NOP")


@needs_nvdisasm
def test_report_kernel_matches_cubin_text_at_every_offset():
    p, control, note = bad_profile_with_cubin("fma_chain")
    k = p.kernels[0]
    fn = functions("fma_chain")[k.mangled]
    by = fn.by_offset()
    assert all(
        normalize_sass(by[int(o)].text) == normalize_sass(s)
        for o, s in zip(k.instructions["offset"], k.instructions["sass"])
    )
    assert set(control) == {k.mangled, k.name}
    assert set(control[k.mangled]) == {i.offset for i in fn.insts}
    assert "1 of 1 kernels matched" in note and "control codes and line table used" in note


@needs_nvdisasm
def test_mismatched_cubin_is_not_used_and_said_so():
    from drgpu_py.readers import open_report

    p = open_report(report_path("fma_chain", "bad"))
    k = p.kernels[0]
    k.mangled = "_Z6hornerILi4EEvPKfPf"  # the other instantiation: same name family, other code
    control, note = control_from_binary(p, cubin=cubin_path("fma_chain"))
    assert control == {}
    assert "not used" in note and "differs" in note
    assert any("differs from the report" in n for n in k.notes)


@needs_nvdisasm
def test_inlined_atomic_reported_at_its_call_site():
    case = "global_atomics"
    want = root_line(case)
    p, _, _ = bad_profile_with_cubin(case)
    df = p.kernels[0].instructions
    reds = df[df["sass"].str.startswith("REDG")]
    assert len(reds) > 0
    assert set(reds["line"].astype(int)) == {want}
    assert all(isinstance(x, dict) and x["file"].endswith("device_atomic_functions.hpp") for x in reds["inlined_from"])
    # The cubin's inline chain is the oracle: every instruction it marks inlined moved to the call site.
    fn = kernel_function(case)
    for ins in fn.insts:
        if ins.inlined_at:
            row = df[df["offset"] == ins.offset].iloc[0]
            assert (row["file"], int(row["line"])) == ins.inlined_at[-1]
            assert row["inlined_from"] == {"file": ins.file, "line": ins.line}


@needs_nvdisasm
def test_inlined_from_in_finding_locations():
    from drgpu_py.analysis import analyze
    from drgpu_py.sass.binary import with_control

    case = "global_atomics"
    p, control, _ = bad_profile_with_cubin(case)
    ka = analyze(with_control(p, control)).kernels[0]
    f = next(f for f in ka.findings if f.id == "atomic-contention")
    top = f.locations[0]
    assert top["line"] == root_line(case)
    assert top["inlined_from"]["file"].endswith("device_atomic_functions.hpp")
    assert ka.slicing["source"] == "cubin"


@needs_nvdisasm
def test_csv_without_ncu_rep_gets_lines_from_cubin(tmp_path):
    """`drgpu analyze X.raw.csv --cubin X.cubin` names lines without a sibling .ncu-rep."""
    from typer.testing import CliRunner
    from drgpu_py.cli import app

    case = "aos_gather"
    for ext in ("raw.csv", "source.csv"):
        shutil.copy(report_path(case, "bad", ext), tmp_path / f"{case}_bad.{ext}")
    csv = str(tmp_path / f"{case}_bad.raw.csv")
    runner = CliRunner()
    plain = runner.invoke(app, ["analyze", csv, "--format", "json"])
    assert plain.exit_code == 0, plain.output
    k0 = json.loads(plain.stdout)["kernels"][0]
    assert k0["slicing"]["source"] == "report"
    assert all(loc["line"] is None for f in k0["findings"] for loc in f["locations"])
    r = runner.invoke(app, ["analyze", csv, "--cubin", str(cubin_path(case)), "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    k = out["kernels"][0]
    assert k["slicing"]["source"] == "cubin"
    assert any("matched" in n for n in out["notes"])
    top = k["findings"][0]
    assert top["id"] == "global-uncoalesced"
    assert top["locations"][0]["line"] == root_line(case)
    assert not any("no file/line information" in n for n in k["notes"])


def test_analyze_without_binary_says_report_sass_only():
    ka = analysis_of("fma_chain", "bad").kernels[0]
    assert ka.slicing["source"] == "report"
    assert any("report's SASS only" in n for n in ka.notes)


def _fatbin(cubin: bytes, sm: int) -> bytes:
    """A fat binary holding one ELF image, laid out as `fatbinary --create` writes it:
    container header (magic, version, header size, payload size), then one 64-byte entry
    header (kind 2 = ELF, arch, 64-bit flag) before the cubin."""
    entry = (
        struct.pack("<HHIQ", 2, 0x0101, 0x40, len(cubin))
        + bytes(8)
        + struct.pack("<HHI", 8, 1, sm)
        + bytes(8)
        + struct.pack("<Q", 0x11)
        + bytes(16)
    )
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 0x10, len(entry) + len(cubin)) + entry + cubin


@needs_nvdisasm
@needs_cuobjdump
def test_binary_option_extracts_cubins(tmp_path):
    case = "fma_chain"
    fat = tmp_path / "app.fatbin"
    fat.write_bytes(_fatbin(cubin_path(case).read_bytes(), 90))
    from drgpu_py.readers import open_report

    p = open_report(report_path(case, "bad"))
    control, note = control_from_binary(p, binary=fat)
    assert p.kernels[0].mangled in control
    assert note.startswith("SASS from app.fatbin") and "1 of 1 kernels matched" in note
    # Same control codes as from the cubin directly.
    _, direct, _ = bad_profile_with_cubin(case)
    assert control[p.kernels[0].mangled] == direct[p.kernels[0].mangled]


@needs_cuobjdump
def test_binary_without_device_code_is_an_input_error(tmp_path):
    exe = shutil.which("true") or shutil.which("ls")
    if exe is None:
        pytest.skip("no host executable (true/ls) to try")
    from drgpu_py.profile import Profile

    with pytest.raises(InputError) as e:
        control_from_binary(Profile(path="x", format="ncu-rep"), binary=exe)
    assert "no cubin" in e.value.message


@needs_cuobjdump
def test_cli_non_cuda_file_given_as_cubin_exits_with_input_error(tmp_path):
    from typer.testing import CliRunner
    from drgpu_py.cli import app

    junk = tmp_path / "junk.cubin"
    junk.write_bytes(b"not an ELF at all")
    r = CliRunner().invoke(app, ["analyze", str(report_path("fma_chain", "bad")), "--cubin", str(junk)])
    assert r.exit_code == InputError.exit_code, r.output
    assert "no cubin found" in r.output
