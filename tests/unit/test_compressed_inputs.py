"""Compressed inputs (drgpu_py/readers/compressed.py): xz, gzip and bzip2 files read through a
temporary decompressed copy that is removed however the read ends; the copy bounded by size
(a decompression bomb) and by the disk's free space; zip and zstd refused with the command
that unpacks them; ``PATH.xz`` read when ``PATH`` does not exist; a compressed raw CSV finds
its compressed companions. Inputs: the small CSV export of tests/data/bad, compressed here."""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import tempfile
from collections import namedtuple
from pathlib import Path

import pytest

from drgpu_py.errors import OutputError, ReportFormatError
from drgpu_py.readers import compressed, open_report

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
MINI = BAD / "mini.raw.csv"
MINI_SOURCE = BAD / "mini.source.csv"
COMPRESS = {".xz": lzma.compress, ".gz": gzip.compress, ".bz2": bz2.compress}


@pytest.fixture
def tmpdir_of_copies(tmp_path, monkeypatch):
    """The temporary folder where copies go, empty at the start: a test can see what is left."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _kernels(profile):
    return [(k.id, k.name, sorted(k.metrics.items())) for k in profile.kernels]


@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_a_compressed_export_reads_as_the_export(tmp_path, tmpdir_of_copies, ext):
    packed = tmp_path / ("r.raw.csv" + ext)
    packed.write_bytes(COMPRESS[ext](MINI.read_bytes()))
    plain = open_report(MINI, source_csv=MINI_SOURCE)
    got = open_report(packed, source_csv=MINI_SOURCE)
    assert got.path == str(packed) and _kernels(got) == _kernels(plain)
    assert list(tmpdir_of_copies.iterdir()) == []  # the copy is gone


def test_compressed_companions_beside_a_compressed_export_are_found(tmp_path, tmpdir_of_copies):
    """benchmarks/data's layout: X.raw.csv.xz and X.source.csv.xz side by side."""
    (tmp_path / "x.raw.csv.xz").write_bytes(lzma.compress(MINI.read_bytes()))
    (tmp_path / "x.source.csv.gz").write_bytes(gzip.compress(MINI_SOURCE.read_bytes()))
    got = open_report(tmp_path / "x.raw.csv.xz")
    assert any("per-instruction data from x.source.csv" in n for n in got.notes), got.notes
    assert _kernels(got) == _kernels(open_report(MINI, source_csv=MINI_SOURCE))
    assert list(tmpdir_of_copies.iterdir()) == []


def test_a_missing_path_is_read_from_its_xz_twin_with_a_note(tmp_path, tmpdir_of_copies):
    shutil.copy(MINI_SOURCE, tmp_path / "r.source.csv")
    (tmp_path / "r.raw.csv.xz").write_bytes(lzma.compress(MINI.read_bytes()))
    got = open_report(tmp_path / "r.raw.csv")
    assert got.path == str(tmp_path / "r.raw.csv.xz")
    assert got.notes[0].startswith("r.raw.csv does not exist: read r.raw.csv.xz beside it"), got.notes
    assert f"xz -dk {tmp_path / 'r.raw.csv.xz'}" in got.notes[0]
    assert any("per-instruction data from r.source.csv" in n for n in got.notes), got.notes


def test_errors_name_the_file_given_and_leave_no_copy(tmp_path, tmpdir_of_copies):
    header_only = b"\n".join(MINI.read_bytes().splitlines()[:2]) + b"\n"
    p = tmp_path / "h.raw.csv.gz"
    p.write_bytes(gzip.compress(header_only))
    with pytest.raises(Exception) as e:
        open_report(p)
    assert str(p) in str(e.value) and str(tmpdir_of_copies) not in str(e.value), e.value
    assert list(tmpdir_of_copies.iterdir()) == []


@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_truncated_data_is_a_format_error(tmp_path, tmpdir_of_copies, ext):
    p = tmp_path / ("cut.raw.csv" + ext)
    p.write_bytes(COMPRESS[ext](MINI.read_bytes() * 20)[:-40])
    with pytest.raises(ReportFormatError, match="truncated or corrupt"):
        open_report(p)
    assert list(tmpdir_of_copies.iterdir()) == []


def test_a_decompression_bomb_is_refused_at_its_bound(tmp_path, tmpdir_of_copies, monkeypatch):
    """Zeros compress 1,000s of times: past max(floor, 1,000 x the compressed size) the copy
    is removed and the input refused. The floor is lowered here from 1 GiB to 1 MiB."""
    monkeypatch.setattr(compressed, "FLOOR_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.ncu-rep.xz"
    bomb.write_bytes(lzma.compress(b"\0" * (64 << 20), preset=1))
    assert bomb.stat().st_size * compressed.MAX_RATIO < 64 << 20
    with pytest.raises(ReportFormatError, match="refused as a decompression bomb") as e:
        open_report(bomb)
    assert "xz -dk" in e.value.hint
    assert list(tmpdir_of_copies.iterdir()) == []


def test_the_copy_never_fills_the_disk(tmp_path, tmpdir_of_copies, monkeypatch):
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(
        compressed.shutil, "disk_usage", lambda path: Usage(1 << 40, 0, compressed.DISK_RESERVE_BYTES + (1 << 16))
    )
    p = tmp_path / "big.raw.csv.xz"
    p.write_bytes(lzma.compress(MINI.read_bytes() * 40))  # 80 KB+ decompressed: over the 64 KiB left
    with pytest.raises(OutputError, match="larger than the .* free") as e:
        open_report(p)
    assert "TMPDIR" in e.value.hint
    assert list(tmpdir_of_copies.iterdir()) == []


def test_size_limit():
    gib = 1 << 30
    assert compressed.size_limit(1000, 100 * gib) == (compressed.FLOOR_BYTES, "ratio")
    assert compressed.size_limit(10 * gib // 1000 + 1, 100 * gib)[0] > 10 * gib
    assert compressed.size_limit(10, gib + gib // 2) == (gib // 2, "disk")  # 1 GiB of the disk kept free
    assert compressed.size_limit(10, gib // 2) == (0, "disk")


@pytest.mark.parametrize(
    "name, content, needle",
    [
        ("r.ncu-rep.zip", b"PK\x03\x04" + b"\0" * 40, "is a zip file, not a report"),
        ("r.ncu-rep.zst", b"\x28\xb5\x2f\xfd" + b"\0" * 40, "is a zstd file, not a report"),
    ],
)
def test_archives_not_read_say_how_to_unpack(tmp_path, name, content, needle):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(ReportFormatError, match=needle) as e:
        open_report(p)
    assert e.value.hint.startswith("unpack it first (") and str(p) in e.value.hint


def test_compressed_inside_compressed_is_named(tmp_path):
    p = tmp_path / "twice.raw.csv.xz"
    p.write_bytes(lzma.compress(gzip.compress(MINI.read_bytes())))
    with pytest.raises(ReportFormatError, match="a compressed file inside a compressed file"):
        open_report(p)


def test_twin_and_inner_names(tmp_path):
    (tmp_path / "a.ncu-rep.gz").write_bytes(b"")
    assert compressed.compressed_twin(tmp_path / "a.ncu-rep") == tmp_path / "a.ncu-rep.gz"
    (tmp_path / "a.ncu-rep").write_bytes(b"")
    assert compressed.compressed_twin(tmp_path / "a.ncu-rep") is None  # it exists: read as it is
    assert compressed.compressed_twin(tmp_path / "none.ncu-rep") is None
    assert compressed.inner_name(Path("x/r.ncu-rep.xz")) == "r.ncu-rep"
    assert compressed.inner_name(Path("gzipped.ncu-rep")) == "gzipped.ncu-rep"
