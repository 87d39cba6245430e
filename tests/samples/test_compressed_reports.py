"""The sample reports as shipped (most are ``.ncu-rep.xz``) open as they are (issue 34, item 3):
an ``.ncu-rep.xz`` analyzes as the report inside it, the name without ``.xz`` reads the
``.xz`` beside it with a note, a folder of compressed reports stands for them, and
``sample_reports/unpack.py`` (run by hand) covers library/, near_miss/ and benchmarks/data."""

from __future__ import annotations

import importlib.util
import shutil

from conftest import ROOT, SAMPLES, analysis_of, report_path
from drgpu_py.analysis import analyze
from drgpu_py.pipeline import expand_reports
from drgpu_py.readers import open_report


def _without_path(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "report"}


def test_an_xz_report_analyzes_as_the_report_inside(tmp_path):
    xz = report_path("aos_gather", "fixed").with_name("aos_gather_fixed.ncu-rep.xz")
    got = analyze(open_report(xz)).to_dict()
    assert got["report"] == str(xz)
    assert _without_path(got) == _without_path(analysis_of("aos_gather", "fixed").to_dict())


def test_the_name_without_xz_reads_the_xz_beside_it(tmp_path):
    shutil.copy(SAMPLES / "aos_gather" / "aos_gather_fixed.ncu-rep.xz", tmp_path / "r.ncu-rep.xz")
    profile = open_report(tmp_path / "r.ncu-rep")
    assert profile.path == str(tmp_path / "r.ncu-rep.xz")
    assert profile.notes[0].startswith("r.ncu-rep does not exist: read r.ncu-rep.xz beside it"), profile.notes
    assert [k.name for k in profile.kernels] == [k.name for k in analysis_of("aos_gather", "fixed").profile.kernels]


def test_a_folder_of_compressed_reports_stands_for_them(tmp_path):
    shutil.copy(SAMPLES / "aos_gather" / "aos_gather_fixed.ncu-rep.xz", tmp_path / "b.ncu-rep.xz")
    shutil.copy(report_path("aos_gather", "bad"), tmp_path / "a.ncu-rep")
    shutil.copy(SAMPLES / "aos_gather" / "aos_gather_fixed.ncu-rep.xz", tmp_path / "a.ncu-rep.xz")  # a.ncu-rep wins
    assert expand_reports([tmp_path]) == [tmp_path / "a.ncu-rep", tmp_path / "b.ncu-rep.xz"]


def test_unpack_by_hand_covers_library_near_miss_and_the_benchmark_data():
    spec = importlib.util.spec_from_file_location("sample_unpack", SAMPLES / "unpack.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    by_tests = {p.parent.name for p in mod.targets()}
    by_hand = mod.targets(everything=True)
    assert "library" not in by_tests and "near_miss" not in by_tests  # the suite reads those from copies
    assert {"library", "near_miss"} <= {p.parent.name for p in by_hand}
    bench = ROOT / "benchmarks" / "data"
    assert sorted(bench.glob("*.xz")) == [p for p in by_hand if p.parent == bench]
    assert set(mod.targets()) < set(by_hand)
