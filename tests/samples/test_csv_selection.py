"""The CSV reader's early ``--kernel`` selection changes no result; a name pattern that picks
none of the report's library kernels says which exist, whether the reader or the selection
after it sees them.

``open_report(raw_csv, kernel=SEL)`` builds only the launches SEL may pick, and only their
source-page blocks become per-instruction tables; ``select_kernels`` then applies SEL. Each
test compares that against reading every launch and then selecting, on multi-launch exports
made here from the real sample exports: raw-page rows concatenated (ids renumbered), source-
page blocks in a chosen order. Blocks are matched to launches by kernel name in order, and
by position where names differ (the source page spells template arguments with casts), so
the order is chosen to make a skipped launch's block matter to a read one.
"""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path

import pandas as pd
import pytest

from conftest import HAVE_NCU_REPORT, ODD_NUMBER_CELLS, run_cli, sample_csv_cells

from drgpu_py.errors import NoKernelsError, SelectionHint, UsageError
from drgpu_py.readers import open_report, select_kernels

SAMPLES = Path(__file__).resolve().parents[2] / "sample_reports"
AOS = "scale_keys_aos(const Record *, float *, int)"


def _read_csv(p: Path) -> list[list[str]]:
    with open(p, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _case(name: str) -> Path:
    return SAMPLES / name.rsplit("_", 1)[0] / name


def _write(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)


def _export(
    folder: Path,
    launches: list[tuple[str, str | None]],
    blocks: list[tuple[str, str | None]],
    rep: list[str] | None = None,
    mangled: list[str] | None = None,
) -> Path:
    """Write folder/x.raw.csv with one launch per (sample, name) of ``launches`` and
    folder/x.source.csv with one block per (sample, name) of ``blocks`` (name None: the
    sample's own), with ``rep``, folder/x.ncu-rep holding those samples' launches, and with
    ``mangled``, a Function Name column (ncu writes one with some options) holding them."""
    folder.mkdir(parents=True, exist_ok=True)
    first = _read_csv(Path(f"{_case(launches[0][0])}.raw.csv"))
    header, units = first[0], first[1]
    rows = [header + ["Function Name"], units + [""]] if mangled else [header, units]
    for i, (sample, name) in enumerate(launches):
        raw = _read_csv(Path(f"{_case(sample)}.raw.csv"))
        assert raw[0] == header
        row = list(raw[2])
        row[header.index("ID")] = str(i)
        if name is not None:
            row[header.index("Kernel Name")] = name
        rows.append(row + [mangled[i]] if mangled else row)
    _write(folder / "x.raw.csv", rows)
    src: list[list[str]] = []
    for sample, name in blocks:
        block = _read_csv(Path(f"{_case(sample)}.source.csv"))
        assert block[0][0] == "Kernel Name"
        if name is not None:
            block[0] = ["Kernel Name", name, ""]
        src += block
    _write(folder / "x.source.csv", src)
    if rep:
        blobs = [Path(f"{_case(sample)}.ncu-rep").read_bytes() for sample in rep]
        with open(folder / "x.ncu-rep", "wb") as fh:
            fh.write(blobs[0])
            for b in blobs[1:]:
                (hlen,) = struct.unpack("<I", b[4:8])
                fh.write(b[8 + hlen :])
    return folder / "x.raw.csv"


def _same(a, b) -> None:
    assert a.notes == b.notes
    assert [k.id for k in a.kernels] == [k.id for k in b.kernels]
    for x, y in zip(a.kernels, b.kernels):
        pd.testing.assert_frame_equal(x.instructions, y.instructions, check_exact=True)
        assert list(x.metrics) == list(y.metrics)
        assert all(
            x.metrics[m] == y.metrics[m] or (x.metrics[m] != x.metrics[m] and y.metrics[m] != y.metrics[m])
            for m in x.metrics
        )
        assert list(x.strings.items()) == list(y.strings.items())
        for attr in (
            "name",
            "mangled",
            "device",
            "compute_capability",
            "chip",
            "sm_count",
            "grid",
            "block",
            "function_base",
            "source_text",
            "notes",
            "process",
        ):
            assert getattr(x, attr) == getattr(y, attr), attr


def _check(raw: Path, selector: str) -> list:
    """Selected-early equals read-all-then-select (or both raise the same error)."""
    try:
        everything = select_kernels(open_report(raw), selector)
    except (NoKernelsError, UsageError) as e:
        with pytest.raises(type(e)) as again:
            select_kernels(open_report(raw, kernel=selector), selector)
        assert (again.value.message, again.value.hint) == (e.message, e.hint)
        return []
    picked = select_kernels(open_report(raw, kernel=selector), selector)
    _same(picked, everything)
    return picked.kernels


# Launches: a templated kernel first (its source block spells the template value with a cast:
# it still takes its own block), then two launches named scale_keys_aos
# whose blocks differ (the second is the soa kernel's block under the aos name), then one
# more templated launch, and one launch too many for the blocks (it gets none).
LAUNCHES = [
    ("smem_stride_bad", None),
    ("aos_gather_bad", None),
    ("aos_gather_fixed", AOS),
    ("fma_chain_bad", None),
    ("double_literal_bad", None),
    ("serial_norm_bad", None),
]
BLOCKS = [
    ("aos_gather_bad", None),
    ("smem_stride_bad", None),
    ("aos_gather_fixed", AOS),
    ("fma_chain_bad", None),
    ("double_literal_bad", None),
]


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return _export(tmp_path_factory.mktemp("csvsel"), LAUNCHES, BLOCKS)


def test_the_export_exercises_the_join(export):
    ks = open_report(export).kernels
    assert [k.id for k in ks] == list(range(6))

    def sass(k):
        return k.instructions["sass"].tolist()

    blocks = {s: _read_csv(Path(f"{_case(s)}.source.csv")) for s, _ in BLOCKS}

    def first_sass(s):
        return " ".join(blocks[s][2][1].split())

    # Launch 0 (smooth_slots: the source page spells its template value with a cast) takes
    # its own block, block 1; launch 1 (aos) the first aos block, block 0; launch 2 (aos) the
    # next aos block, block 2 (the soa kernel's under the aos name). No launch takes another
    # function's block: the last launch (serial_norm) has none and gets no table.
    assert sass(ks[0])[0] == first_sass("smem_stride_bad")
    assert sass(ks[1])[0] == first_sass("aos_gather_bad")
    assert sass(ks[2]) == sass(
        open_report(_export(export.parent / "soa", [("aos_gather_fixed", None)], [("aos_gather_fixed", None)])).kernels[
            0
        ]
    )
    assert sass(ks[0]) != sass(ks[1]) != sass(ks[2])
    assert ks[5].instructions.empty and not ks[4].instructions.empty


@pytest.mark.parametrize("selector", ["0", "1", "2", "3", "5", "1:3", "2:", ":2", "4:6", "0:100"])
def test_id_selection_gives_what_reading_everything_gives(export, selector):
    assert _check(export, selector)


def test_id_selection_reads_only_the_selected_launches(export):
    assert [k.id for k in open_report(export, kernel="2").kernels] == [2]
    assert [k.id for k in open_report(export, kernel="1:3").kernels] == [1, 2]


@pytest.mark.parametrize("selector", ["scale_keys", "horner|relax", "smooth_slots<0>", "^void", "normalize"])
def test_name_selection_gives_what_reading_everything_gives(export, selector):
    assert _check(export, selector)
    assert len(open_report(export, kernel=selector).kernels) == len(
        select_kernels(open_report(export), selector).kernels
    )


@pytest.mark.parametrize("selector", ["40:50", "17", "no_such_kernel", "(unclosed"])
def test_selection_matching_nothing_fails_as_before(export, selector):
    assert _check(export, selector) == []
    if selector != "(unclosed":
        with pytest.raises(NoKernelsError) as e:
            select_kernels(open_report(export, kernel=selector), selector)
        assert "scale_keys_aos" in e.value.hint and "horner" in e.value.hint


@pytest.mark.parametrize("selector", ["_Z4", "_Z4lerp", "relax", "n/a", "^12", "horner|_Z"])
def test_mangled_name_selection_gives_what_reading_everything_gives(tmp_path, selector):
    """A pattern searches the mangled name too, when the Function Name cell is text."""
    raw = _export(tmp_path, LAUNCHES, BLOCKS, mangled=["_Z4lerpf", "n/a", "", "12", "_Z4stepPf", "_Z9normalizev"])
    _check(raw, selector)
    if selector == "_Z4":
        assert [k.id for k in open_report(raw, kernel=selector).kernels] == [0, 4]


def test_sass_only_note_counts_unread_launches(tmp_path):
    """Whether the export has per-instruction rows at all is a property of every launch:
    the 'SASS-only' note appears on a read launch without rows too."""
    raw = _export(tmp_path, [("aos_gather_bad", None), ("fma_chain_bad", None)], [("aos_gather_bad", None)])
    picked = select_kernels(open_report(raw, kernel="1"), "1")
    assert picked.kernels[0].instructions.empty
    assert any("SASS-only" in n for n in picked.kernels[0].notes)
    _check(raw, "1")


@pytest.mark.in_process_reader
def test_line_table_join_unchanged_by_selection(tmp_path):
    """With the .ncu-rep beside the CSV, its launches' line tables are matched to the CSV
    launches that have per-instruction rows, in order, by name, else by position when both
    hold as many launches: a skipped launch still takes its table."""
    if not HAVE_NCU_REPORT:
        pytest.skip("ncu_report is not installed")
    launches = [
        ("few_blocks_bad", None),
        ("aos_gather_bad", None),
        ("aos_gather_bad", None),
        ("few_blocks_fixed", None),
        ("fma_chain_bad", None),
    ]
    # The second aos launch finds no aos table left and takes the third table by position
    # (smem_stride's, whose SASS differs: no lines); the other launches match by name.
    rep = ["few_blocks_bad", "aos_gather_bad", "smem_stride_bad", "few_blocks_fixed", "fma_chain_bad"]
    raw = _export(tmp_path, launches, launches, rep=rep)
    full = open_report(raw)
    assert any("line table" in n for n in full.notes)
    assert [k.instructions["line"].notna().any() for k in full.kernels] == [True, True, False, True, True]
    assert any("SASS differs" in n for n in full.kernels[2].notes)
    for selector in ["2", "3", "1:3", "2:", "scale_keys", "saxpy|horner"]:
        _check(raw, selector)


@pytest.mark.in_process_reader
def test_line_table_reads_only_the_wanted_tables(tmp_path):
    if not HAVE_NCU_REPORT:
        pytest.skip("ncu_report is not installed")
    from drgpu_py.readers.ncu_rep import read_line_table

    launches = [("aos_gather_bad", None), ("fma_chain_bad", None), ("aos_gather_bad", None), ("few_blocks_bad", None)]
    raw = _export(tmp_path, launches, launches, rep=[s for s, _ in launches])
    rep = raw.with_name("x.ncu-rep")
    every = read_line_table(rep)
    seen = []
    some = read_line_table(rep, wanted=lambda names: seen.append(names) or [1, 2])
    assert seen == [[name for name, _, _ in every]]
    assert some[1:3] == every[1:3] and every[1][1]
    assert [t[1:] for t in some[::3]] == [({}, {}), ({}, {})] and [t[0] for t in some] == [t[0] for t in every]


def test_numbers_match_to_number():
    from drgpu_py.readers.locale_numbers import numbers, to_number

    cells = sample_csv_cells()
    odd = list(ODD_NUMBER_CELLS)
    plain = ["1", "2.5", "1,024", "-3e4", " 7 "]

    def same(a, b):
        return a == b or (a != a and b != b)

    for column in [sorted(cells), odd, plain, [c for c in cells if c[:1].isdigit()], [None, 3, 2.5, True, b"1"]]:
        got = numbers(column)
        assert len(got) == len(column)
        assert all(same(g, to_number(c)) for g, c in zip(got, column)), column


NVJET = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
MY_GEMM = "tiled_gemm(const float *, float *, int)"


def _hints(call) -> list[str]:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, SelectionHint)]


def test_a_pattern_missing_every_library_kernel_says_which_exist(tmp_path):
    """``-k gemm`` picks the program's GEMM but not cuBLAS's (named nvjet_*): a SelectionHint
    names the library kernels, from the CSV reader (which reads only the picked launches) as
    from selection after reading every launch; one line on stderr in the CLI. A pattern that
    picks a library kernel, or an id, says nothing; a pattern that picks nothing lists the
    library kernels in its error's hint."""
    named = [("aos_gather_bad", MY_GEMM), ("aos_gather_fixed", NVJET), ("fma_chain_bad", None)]
    raw = _export(tmp_path, named, named)
    expect = f"--kernel 'gemm' matched none of the 1 library kernel(s) of x.raw.csv: {NVJET};"
    assert [h.startswith(expect) for h in _hints(lambda: open_report(raw, kernel="gemm"))] == [True]
    assert [h.startswith(expect) for h in _hints(lambda: select_kernels(open_report(raw), "gemm"))] == [True]
    for quiet in ("gemm|nvjet", "nvjet", "1", "0:2"):
        assert _hints(lambda q=quiet: select_kernels(open_report(raw, kernel=q), q)) == [], quiet
    with pytest.raises(NoKernelsError) as e:
        select_kernels(open_report(raw, kernel="zzz"), "zzz")
    assert e.value.hint == (
        "kernels in the report: tiled_gemm, void horner<1>; its library kernels (named by their library: "
        f"cuBLAS's GEMMs are nvjet_*): {NVJET}"
    )
    r = run_cli("analyze", raw, "-k", "gemm", "-f", "json")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("drgpu: hint: ") == 1 and f"drgpu: hint: {expect}" in r.stderr
    assert [k["name"] for k in json.loads(r.stdout)["kernels"]] == [MY_GEMM]
    r = run_cli("list", raw, "-k", "zzz")
    assert r.returncode == 5 and NVJET in r.stderr and "hint: kernels in the report" in r.stderr, r.stderr
