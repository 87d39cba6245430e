"""The speed-ups for large reports change no result.

The .ncu-rep reader shares SASS listings, line tables and sources between launches of one
function, the analysis shares parsed listings, CFGs and slicing searches, and ``--kernel`` id
ranges skip launches before they are read. Each test computes the uncached (or unselected)
path here and compares: profiles column by column, analyses as JSON. Multi-launch reports are
made from the real sample reports by appending their result blocks (an ``.ncu-rep`` is a
file header followed by self-contained blocks), so launches of one function repeat.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pandas as pd
import pytest

from conftest import ODD_NUMBER_CELLS, needs_ncu_report, sample_csv_cells, slow

from drgpu_py.analysis import AnalysisCache, analyze
from drgpu_py.sass.cubin import SassSource, cubins_in_report, find_tool, sm_of
from drgpu_py.errors import NoKernelsError
from drgpu_py.readers import open_report, select_kernels
from drgpu_py.readers.ncu_rep import FunctionCache, read_line_table, read_ncu_rep

pytestmark = [needs_ncu_report, pytest.mark.in_process_reader]

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_reports"
# Different shapes: global gather, shared-memory conflicts, barriers, FMA chain, atomics, fences.
MIX = [
    "aos_gather/aos_gather_bad",
    "smem_stride/smem_stride_bad",
    "serial_norm/serial_norm_fixed",
    "fma_chain/fma_chain_bad",
    "global_atomics/global_atomics_bad",
    "fence_loop/fence_loop_bad",
]


def _concat(out: Path, parts: list[Path]) -> Path:
    """A report holding the launches of ``parts`` in order."""
    blobs = [p.read_bytes() for p in parts]
    with open(out, "wb") as fh:
        fh.write(blobs[0])
        for b in blobs[1:]:
            (hlen,) = struct.unpack("<I", b[4:8])
            fh.write(b[8 + hlen :])
    return out


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """Fourteen launches: six functions, each repeated, interleaved as an application does."""
    parts = [SAMPLES / f"{m}.ncu-rep" for m in MIX]
    order = parts + parts[:4] + parts[::-1][:4]
    return _concat(tmp_path_factory.mktemp("many") / "many.ncu-rep", order)


def _same_profile(a, b) -> None:
    assert [k.id for k in a.kernels] == [k.id for k in b.kernels]
    for x, y in zip(a.kernels, b.kernels):
        pd.testing.assert_frame_equal(x.instructions, y.instructions, check_exact=True)
        assert list(x.metrics) == list(y.metrics)
        assert all(
            x.metrics[m] == y.metrics[m] or (x.metrics[m] != x.metrics[m] and y.metrics[m] != y.metrics[m])
            for m in x.metrics
        )
        for attr in (
            "name",
            "mangled",
            "device",
            "compute_capability",
            "chip",
            "sm_count",
            "grid",
            "block",
            "strings",
            "function_base",
            "source_text",
            "notes",
        ):
            assert getattr(x, attr) == getattr(y, attr), attr


def _json(analysis) -> str:
    return json.dumps(analysis.to_dict(), sort_keys=True)


def test_multi_launch_report_reads_and_analyzes_the_same_cached_and_uncached(many):
    functions = FunctionCache()
    cached = read_ncu_rep(many, cache=functions)
    uncached = read_ncu_rep(many, cache=False)
    assert len(cached.kernels) == 14
    # Six functions: the first launch of each walks the SASS, the eight repeats reuse it.
    assert (functions.misses, functions.hits) == (6, 8)
    _same_profile(cached, uncached)
    shared = AnalysisCache()
    a_cached = analyze(cached, cache=shared)
    assert shared.hits == 8 and shared.misses == 6
    a_plain = analyze(uncached, cache=False)
    assert _json(a_cached) == _json(a_plain)
    # The repeats are real analyses: the same function's launches give the same findings ids.
    ids = {k.kernel.name: [f.id for f in k.findings] for k in a_cached.kernels}
    assert ids[a_cached.kernels[0].kernel.name] == [f.id for f in a_cached.kernels[6].findings]


def test_shared_sources_are_copies(many):
    prof = read_ncu_rep(many)
    first, again = prof.kernels[0], prof.kernels[6]
    assert first.source_text and first.source_text == again.source_text
    again.source_text["extra.cu"] = ["x"]  # e.g. the cubin path adds files it reads
    assert "extra.cu" not in first.source_text


# Reports whose launches repeat functions, where the caches share something (in a report of
# one launch every lookup misses, and the cached path computes what the uncached one does):
# launch sequences profiled with the full set and the default set.
REPEATED = [
    "launch/serial_steps_bad",
    "ho4_sgd_pertensor_nm/ho4_sgd_pertensor_nm_bad_default",
    "ho4_cholesky_serial/ho4_cholesky_serial_bad_default",
]


@pytest.mark.parametrize(
    "report",
    # The held-out launch sequences are slow; the fast tier keeps one repeated sequence.
    [pytest.param(SAMPLES / f"{r}.ncu-rep", marks=[slow] if r.startswith("ho") else []) for r in REPEATED + MIX[:2]],
    ids=lambda p: p.stem,
)
def test_sample_reports_unchanged_by_caching(report):
    functions = FunctionCache()
    cached, uncached = read_ncu_rep(report, cache=functions), read_ncu_rep(report, cache=False)
    assert (functions.hits > 0) == (report.stem in {Path(r).name for r in REPEATED})
    _same_profile(cached, uncached)  # compares, changes neither: the uncached read is analyzed as read
    assert _json(analyze(cached)) == _json(analyze(uncached, cache=False))


# Listings with operand reuse, branches, convergence barriers, subroutine calls and returns, spills.
LISTED = MIX + [
    "bucket_u64/bucket_u64_bad",
    "blur_grid2d/blur_grid2d_bad",
    "precise_math/precise_math_bad",
    "spill_tile/spill_tile_bad",
    "rare_regs/rare_regs_fixed",
]
needs_nvdisasm = pytest.mark.skipif(find_tool("nvdisasm") is None, reason="nvdisasm is not installed")


def _listed_everywhere(profile, listings) -> None:
    assert listings is not None
    assert all(listings.function(k.mangled, sm_of(k.compute_capability)) is not None for k in profile.kernels)


@needs_nvdisasm
@pytest.mark.parametrize("stem", [LISTED[0], *(pytest.param(s, marks=slow) for s in LISTED[1:])])  # a sweep of shapes
def test_sass_from_the_reports_cubin_is_ncu_reports(stem):
    report = SAMPLES / f"{stem}.ncu-rep"
    plain = read_ncu_rep(report)
    listings = SassSource.start(cubins_in_report(report)).result()
    _listed_everywhere(plain, listings)
    from_cubin = read_ncu_rep(report, sass=listings)
    _same_profile(from_cubin, plain)
    assert _json(analyze(from_cubin)) == _json(analyze(plain))


@slow
@needs_nvdisasm
def test_sass_from_several_cubins_of_a_multi_launch_report(many, monkeypatch):
    monkeypatch.setattr("drgpu_py.sass.cubin.max_cubins", lambda: 8)
    listings = SassSource.start(cubins_in_report(many)).result()
    assert len(cubins_in_report(many)) == 6
    plain = read_ncu_rep(many, cache=False)
    _listed_everywhere(plain, listings)
    _same_profile(read_ncu_rep(many, sass=listings), plain)


def test_line_table_cached_and_uncached_agree(many):
    functions = FunctionCache()
    assert read_line_table(many, cache=functions) == read_line_table(many, cache=False)
    assert functions.hits == 8


def test_csv_analysis_unchanged_by_caching(tmp_path):
    case = SAMPLES / "smem_stride"
    raw = tmp_path / "s.raw.csv"
    raw.write_bytes((case / "smem_stride_bad.raw.csv").read_bytes())
    (tmp_path / "s.source.csv").write_bytes((case / "smem_stride_bad.source.csv").read_bytes())
    (tmp_path / "s.ncu-rep").write_bytes((case / "smem_stride_bad.ncu-rep").read_bytes())
    prof = open_report(raw)
    assert prof.kernels[0].instructions["line"].notna().any()  # lines came from the .ncu-rep
    assert _json(analyze(prof)) == _json(analyze(open_report(raw), cache=False))


@pytest.mark.parametrize("selector", ["3", *(pytest.param(s, marks=slow) for s in ("2:5", "10:", ":2"))])
def test_id_selection_reads_only_the_selected_launches(many, selector):
    seen = []
    picked = select_kernels(open_report(many, kernel=selector, progress=lambda d, t: seen.append((d, t))), selector)
    everything = select_kernels(open_report(many), selector)
    _same_profile(picked, everything)
    n = len(everything.kernels)
    assert seen == [(i + 1, n) for i in range(n)]  # the reader read (and reported) only those


def test_selection_matching_nothing_still_names_the_kernels(many):
    with pytest.raises(NoKernelsError) as e:
        select_kernels(open_report(many, kernel="40:50"), "40:50")
    assert "scale_keys_aos" in (e.value.hint or "")


def test_regex_selection_unaffected(many):
    picked = select_kernels(open_report(many, kernel="horner"), "horner")
    assert [k.id for k in picked.kernels] == [3, 9, 12]


def _strict(text):
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": []},
        {"a": {}},
        {"k": [{"n": [[], {}]}]},
        (1, (2, ())),
        "plain",
        7,
        1.5,
        [1, 2.5, -0.0, 1e16, 1e-7, 2**70, True, False, None, float("nan"), float("inf"), -float("inf")],
        {"é": 'tab\there "quoted" back\\slash \u2028 \x00 ünï', "n": None, 3: "int key", None: "none key"},
    ],
)
def test_json_encoder_writes_what_the_json_module_reads_back(value):
    """orjson (or the standard library) writes strict, indented JSON whose content is the
    cleaned value: NaN/inf as null, keys as text, text unescaped."""
    from drgpu_py.render.json_ import _clean, dumps

    text = dumps(value)
    assert _strict(text) == json.loads(json.dumps(_clean(value)))
    if isinstance(value, dict) and value:
        assert text.startswith('{\n  "')  # two-space indent, as before
    if isinstance(value, dict) and "é" in value:
        assert "ünï" in text  # UTF-8 text as is, not \u escapes


def test_json_encoder_cleans_numpy_values():
    import numpy as np
    from drgpu_py.render.json_ import _clean, dumps

    value = {
        "i": np.int64(3),
        "f": np.float64(0.1),
        "nan": np.float64("nan"),
        "b": np.bool_(True),
        "s": np.str_("x"),
        "arr": (np.int32(1), [np.float32(2.5)]),
        "vec": np.array([1.0, np.nan]),
        np.int64(4): "numpy key",
    }
    got = _strict(dumps(value))
    assert got == json.loads(json.dumps(_clean(value)))
    assert got["nan"] is None and got["vec"] == [1.0, None] and got["4"] == "numpy key"


def test_json_renderer_output_is_the_analysis_dict(many):
    from drgpu_py.render.json_ import _clean, render_json

    analysis = analyze(read_ncu_rep(many))
    assert _strict(render_json(analysis, None)) == json.loads(json.dumps(_clean(analysis.to_dict())))


@pytest.mark.parametrize("pcs,base", [([0x120, 0x100, 0x110, 0x110], None), ([0x200, 0x210], 0x1F0), ([], None)])
def test_instruction_frame_joins_columns_by_pc(pcs, base):
    from drgpu_py.specs import loader as data
    from drgpu_py.profile import INSTRUCTION_COLUMNS
    from drgpu_py.readers.frame import instruction_frame

    columns = {
        "inst_executed": {0x100: 4, 0x120: 2.5, 0x999: 7.0},
        "stall_wait": {0x110: 1.0},
        "samples": {p: 1.0 for p in pcs},
    }
    sass = {0x100: "IMAD R1, R2, R3, R4", 0x200: "EXIT"}
    lines = {0x100: ("k.cu", 12), 0x110: ("k.cu", 13)}
    df = instruction_frame(pcs, columns, sass, lines, base)
    want = sorted(set(pcs))
    assert df.index.tolist() == want and df.index.name == "pc"
    if not want:
        return
    start = want[0] if base is None else base
    assert df["offset"].tolist() == [p - start for p in want]
    assert df["sass"].tolist() == [sass.get(p, "") for p in want]
    assert df["file"].tolist() == [lines.get(p, (None, None))[0] for p in want]  # None, not NaN
    assert [None if pd.isna(v) else v for v in df["line"]] == [lines.get(p, (None, None))[1] for p in want]
    for name, values in columns.items():
        assert df[name].tolist() == [float(values.get(p, 0.0)) for p in want]
    for col in [f"stall_{r}" for r in data.stall_reasons()] + INSTRUCTION_COLUMNS:
        assert col in df
    assert (df["stall_barrier"] == 0.0).all() and df["stall_barrier"].dtype == float
    assert list(df.columns[:4]) == ["offset", "sass", "file", "line"]


def _reference_to_number(v) -> float:
    """to_number as first written, before its fast path for plain numeric text."""
    import math

    if v is None:
        return math.nan
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip().replace(",", "")
    if not s or s.lower() in ("n/a", "nan", "-", "none"):
        return math.nan
    try:
        return float(s)
    except ValueError:
        return math.nan


def test_to_number_fast_path_matches_the_cleanup():
    import math
    from drgpu_py.readers.locale_numbers import to_number

    cells = sample_csv_cells() | set(ODD_NUMBER_CELLS)
    assert len(cells) > 1000
    for c in sorted(cells) + [None, 3, 2.5, True, b"1"]:
        got, want = to_number(c), _reference_to_number(c)
        assert got == want or (math.isnan(got) and math.isnan(want)), repr(c)
