"""The reader registry (drgpu_py.readers.registry): one reader per format ``sniff`` names,
and the paths into a report (open_report, list_launches, prefetch) going through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from drgpu_py.errors import ReportFormatError
from drgpu_py.readers import REGISTRY, list_launches, open_report, prefetch, reader_for
from drgpu_py.readers.registry import ReadRequest, Refusal
from drgpu_py.readers.sniffing import COMPRESSED, DETAILS_PAGE, FORMATS, RAW_PAGE, SOURCE_PAGE, UNKNOWN


def test_every_format_has_its_reader():
    assert set(REGISTRY) == set(FORMATS)
    for name, reader in REGISTRY.items():
        assert reader.format == name
        for step in ("start", "open", "launches"):
            assert callable(getattr(reader, step))


@pytest.mark.parametrize(
    ("head", "fmt", "says"),
    [
        ('"Section Name","Metric Name"\n', DETAILS_PAGE, "details-page CSV export"),
        ('"Kernel Name","Address"\n', SOURCE_PAGE, "source-page CSV export"),
        ("hello\n", UNKNOWN, "neither an Nsight Compute report"),
    ],
)
def test_a_format_that_is_no_report_is_refused_by_its_reader(tmp_path, head, fmt, says):
    path = tmp_path / "x.csv"
    path.write_text(head)
    reader = reader_for(path)
    assert reader is REGISTRY[fmt] and isinstance(reader, Refusal)
    assert reader.start(path, None, 1, None) is None
    for read in (lambda: open_report(path), lambda: list_launches(path), lambda: reader.open(path, ReadRequest())):
        with pytest.raises(ReportFormatError, match=says):
            read()


def test_a_compressed_file_inside_one_is_named_so():
    with pytest.raises(ReportFormatError, match="inside a compressed file"):
        REGISTRY[COMPRESSED].open(Path("x.xz"), ReadRequest(nested=True))


def test_prefetch_starts_nothing_but_for_one_readable_report(tmp_path):
    csv = tmp_path / "x.raw.csv"
    csv.write_text('"ID","Kernel Name"\n')
    assert reader_for(csv) is REGISTRY[RAW_PAGE]
    assert prefetch([csv]) is None  # the CSV reader starts nothing
    assert prefetch([csv, csv]) is None
    assert prefetch([tmp_path / "missing.ncu-rep"]) is None
    assert prefetch([tmp_path]) is None  # a folder
    empty = tmp_path / "empty.ncu-rep"
    empty.write_bytes(b"")
    assert prefetch([empty]) is None  # sniff refuses it: open_report says what is wrong
