"""SASS listings from cubins (drgpu_py.sass.cubin) in ncu_report's form; the warm-up that
``drgpu profile`` runs while ncu profiles. The texts are compared with ncu_report's own on
real reports in test_perf_equivalence.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from drgpu_py.sass.cubin import Listings, SassSource, cubins_in_report, find_tool, parse_listing

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_reports"
needs_nvdisasm = pytest.mark.skipif(find_tool("nvdisasm") is None, reason="nvdisasm is not installed")

LISTING = """\
\t.target\tsm_90
\t.section\t.text._Z1kPi,"ax",@progbits
_Z1kPi:
.text._Z1kPi:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   IMAD R14, R15.reuse, UR6, R14 ;
        /*0018*/                   STL.64 [R1+0x1120], R10 (*"SpillRefill"*) ;
        /*0020*/                   BSSY B0, `(.L_x_0) ;
        /*0030*/              @!P0 BRA `(.L_x_1) ;
        /*0040*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_rem_u64) ;
.L_x_1:
        /*0050*/                   BSYNC B0 ;
.L_x_0:
        /*0060*/                   EXIT ;
$__internal_0_$__cuda_sm20_rem_u64:
        /*0070*/                   RET.REL.NODEC R14 `(_Z1kPi) ;
.L_x_2:
        /*0080*/                   BRA `(.L_x_2);
"""


def test_listing_texts_are_ncu_reports_form():
    fn = parse_listing(LISTING)["_Z1kPi"]
    assert fn.sm == 90 and fn.resolved()
    base = 0x7F0000001000
    walk, capped = fn.walk(base, base + 0x80, 1 << 22)
    texts = dict(walk)
    # The forms ncu_report prints (after clean_sass), seen on the sample reports.
    assert texts[base] == "LDC R1, c[0x0][0x28]"
    assert texts[base + 0x10] == "IMAD R14, R15, UR6, R14"
    assert fn._text(fn.insts[0x18], base) == "STL.64 [R1+0x1120], R10"
    assert texts[base + 0x20] == "BSSY B0, 0x7f0000001060"
    assert texts[base + 0x30] == "@!P0 BRA 0x7f0000001050"
    assert texts[base + 0x40] == "CALL.REL.NOINC 0x7f0000001070"
    assert texts[base + 0x70] == "RET.REL.NODEC R14, 0x7f0000001000"
    assert texts[base + 0x80] == "BRA 0x7f0000001080"
    # The walk ends at the first PC past the highest sampled one without SASS.
    assert walk[-1] == (base + 0x90, None) and not capped


def test_walk_continues_to_sampled_pcs_past_the_function():
    fn = parse_listing(LISTING)["_Z1kPi"]
    walk, _ = fn.walk(0, 0xB0, 1 << 22)
    assert [pc for pc, t in walk if t is None] == [0x90, 0xA0, 0xB0, 0xC0]


def test_unresolved_label_or_two_different_listings_are_not_used():
    text = LISTING.replace("`(_Z1kPi)", "`(elsewhere)")
    assert Listings(list(parse_listing(text).values())).function("_Z1kPi", 90) is None
    one = parse_listing(LISTING)["_Z1kPi"]
    other = parse_listing(LISTING.replace("EXIT", "NOP"))["_Z1kPi"]
    assert Listings([one, parse_listing(LISTING)["_Z1kPi"]]).function("_Z1kPi", 90) is one
    assert Listings([one, other]).function("_Z1kPi", 90) is None
    assert Listings([one]).function("_Z1kPi", 80) is None
    assert Listings([one]).function("", 90) is None


def test_cubins_found_in_a_report_and_not_elsewhere(tmp_path):
    rep = SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep"
    cubins = cubins_in_report(rep)
    assert len(cubins) == 1
    img = cubins[0]
    assert img[:4] == b"\x7fELF" and int.from_bytes(img[18:20], "little") == 190
    # The whole image: the section header table is inside it.
    assert int.from_bytes(img[0x28:0x30], "little") + 64 * int.from_bytes(img[0x3C:0x3E], "little") <= len(img)
    junk = tmp_path / "junk.ncu-rep"
    junk.write_bytes(b"NVR\x00" + b"\x7fELF" + b"\x00" * 100)
    assert cubins_in_report(junk) == []
    assert cubins_in_report(tmp_path / "missing.ncu-rep") == []
    (tmp_path / "empty.ncu-rep").write_bytes(b"")
    assert cubins_in_report(tmp_path / "empty.ncu-rep") == []


def test_scan_stops_once_there_are_too_many(tmp_path):
    imgs = [(SAMPLES / c / f"{c}.sm_90.cubin").read_bytes() for c in ("aos_gather", "bucket_u64", "serial_norm")]
    many = tmp_path / "three.ncu-rep"
    many.write_bytes(b"NVR\x00" + b"pad".join(imgs + imgs[:1]))
    assert cubins_in_report(many) == imgs  # each once, in file order
    assert cubins_in_report(many, limit=1) == imgs[:2]


@needs_nvdisasm
def test_nvdisasm_lists_the_reports_kernels():
    listings = SassSource.start(cubins_in_report(SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep")).result()
    fn = listings.function("_Z14scale_keys_aosPK6RecordPfi", 90)
    assert fn is not None and fn.insts[0xC0] == "LDG.E.CONSTANT R2, desc[UR4][R2.64]"


def test_no_cubin_means_no_listing():
    assert SassSource.start([]).result() is None


@needs_nvdisasm
def test_more_cubins_than_half_the_cores_are_left_to_ncu_report(monkeypatch):
    cubin = cubins_in_report(SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep")[0]
    monkeypatch.setattr("drgpu_py.sass.cubin.max_cubins", lambda: 1)
    assert SassSource.start([cubin, cubin]).result() is None
    assert SassSource.start([cubin]).result() is not None


def test_warmup_imports_the_analysis_without_ncu_report():
    code = (
        "import sys; from drgpu_py.ncu.warmup import Warmup; w = Warmup().start(); assert w.join() is None; "
        "from drgpu_py.render.html.page import template_environment; "
        "print(sorted(m for m in ('pandas', 'drgpu_py.pipeline', 'drgpu_py.render.html', 'ncu_report') if m in sys.modules), "
        "sorted(template_environment().cache._mapping and [k[1] for k in template_environment().cache._mapping]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("] ")[0] + "]" == "['drgpu_py.pipeline', 'drgpu_py.render.html', 'pandas']"
    assert "report.html.j2" in out.stdout and "_macros.html.j2" in out.stdout
