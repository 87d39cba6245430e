"""``-j N`` (drgpu_py.pipeline.parallel) changes no result: the JSON, text and HTML of an analysis made
in worker processes are byte-identical to the one-process run, for kernel groups, launches
analyzed one by one, several reports read in workers and merged, and folders of reports;
an error raised in a worker reaches the user as the same typed error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import needs_ncu_report, slow

from drgpu_py.errors import ReportFormatError
from drgpu_py.pipeline.parallel import _chunks
from drgpu_py.pipeline import analyze_reports, expand_reports
from drgpu_py.render import RenderOptions, render

pytestmark = [needs_ncu_report, slow]  # worker processes
from test_perf_equivalence import SAMPLES, _concat  # noqa: E402  (same folder)

KINDS = sorted(SAMPLES.glob("*/*_bad.ncu-rep"))[:8]


@pytest.fixture(autouse=True)
def workers_for_any_size(monkeypatch):
    """Workers even for these small reports (``analysis_workers`` leaves groups of fewer rows
    than a worker costs in one process), so that what is compared ran in workers."""
    monkeypatch.setattr("drgpu_py.pipeline.parallel.ROWS_PER_WORKER", 1)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """Eight kernel types, each launched twice, interleaved."""
    return _concat(tmp_path_factory.mktemp("mixed") / "mixed.ncu-rep", KINDS + KINDS[::-1])


def _outputs(result) -> dict[str, str]:
    opts = RenderOptions(top_kernels=0)
    return {fmt: render(result, fmt, opts) for fmt in ("json", "text", "html")}


@pytest.mark.parametrize("per_launch", [False, True])
def test_workers_give_the_one_process_result(mixed, per_launch):
    one = analyze_reports([mixed], per_launch=per_launch, jobs=1)
    two = analyze_reports([mixed], per_launch=per_launch, jobs=3)
    assert len(two.kernels) == (16 if per_launch else 8)
    assert [ka.kernel for ka in two.kernels] == list(two.profile.kernels)
    a, b = _outputs(one), _outputs(two)
    for fmt in a:
        assert a[fmt] == b[fmt], fmt


def test_a_report_read_in_parts_gives_the_one_process_result(mixed, monkeypatch):
    import drgpu_py.readers.rep_open as rep_open

    monkeypatch.setattr(rep_open, "MIN_BLOCKS_PER_PART", 4)
    assert (
        rep_open.read_parts(16, 3, False),
        rep_open.read_parts(16, 3, True),
        rep_open.read_parts(16, 1, False),
        rep_open.read_parts(7, 8, False),
    ) == (3, 1, 1, 1)
    # No more readers than the free memory holds, at READER_MEMORY_PER_BYTE times the report each.
    assert rep_open.read_parts(1600, 16, False, report_bytes=1 << 60) == 1
    assert (rep_open.available_memory() or 0) > 0
    # The parts themselves, whatever memory the other tests leave free at this moment.
    monkeypatch.setattr(rep_open, "available_memory", lambda: 1 << 40)
    sizes = []
    real = rep_open.in_children

    def spy(calls, what):
        sizes.append(len(calls))
        return real(calls, what)

    monkeypatch.setattr(rep_open, "in_children", spy)
    one = analyze_reports([mixed], per_launch=True, jobs=1)
    three = analyze_reports([mixed], per_launch=True, jobs=3)
    assert sizes == [1, 3]
    assert [k.id for k in three.profile.kernels] == list(range(16))
    a, b = _outputs(one), _outputs(three)
    for fmt in a:
        assert a[fmt] == b[fmt], fmt


def test_reports_read_in_workers_merge_as_in_one_process(tmp_path):
    ranks = sorted((SAMPLES / "ranks").glob("*.ncu-rep"))
    one = analyze_reports(ranks, jobs=1)
    two = analyze_reports(ranks, jobs=2)
    assert one.profile.format == "merged"
    assert _outputs(one)["json"] == _outputs(two)["json"]


def test_a_folder_stands_for_its_reports_in_name_order(tmp_path):
    for p in sorted((SAMPLES / "ranks").glob("*.ncu-rep")):
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "notes.txt").write_text("not a report\n")
    assert [p.name for p in expand_reports([tmp_path])] == ["precise_math.rank0.ncu-rep", "precise_math.rank1.ncu-rep"]
    files = analyze_reports(sorted(tmp_path.glob("*.ncu-rep")), jobs=1)
    folder = analyze_reports([tmp_path], jobs=2)
    assert _outputs(files)["json"].replace(str(tmp_path), "") == _outputs(folder)["json"].replace(str(tmp_path), "")


def test_an_error_in_a_worker_is_the_same_typed_error(tmp_path):
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(b"NVIDIA Nsight Compute, but not really" * 10)
    good = SAMPLES / "ranks" / "precise_math.rank0.ncu-rep"
    with pytest.raises(ReportFormatError) as serial:
        analyze_reports([good, bad], jobs=1)
    with pytest.raises(ReportFormatError) as workers:
        analyze_reports([good, bad], jobs=2)
    assert workers.value.message == serial.value.message and workers.value.hint == serial.value.hint


def test_chunks_keep_one_function_together_and_cover_every_kernel(mixed):
    profile = analyze_reports([mixed], per_launch=True, jobs=1).profile
    chunks = _chunks(profile.kernels, 3)
    assert sorted(i for c in chunks for i in c) == list(range(len(profile.kernels)))
    for c in chunks:
        names = {profile.kernels[i].mangled for i in c}
        assert not any(profile.kernels[j].mangled in names for other in chunks if other is not c for j in other)


def test_workers_only_for_enough_rows(monkeypatch):
    from types import SimpleNamespace

    from drgpu_py.pipeline import parallel

    monkeypatch.setattr(parallel, "ROWS_PER_WORKER", 100)
    groups = [SimpleNamespace(instructions=[0] * 150) for _ in range(4)]  # 600 rows
    assert parallel.analysis_workers(groups, 16) == 4  # no more than the groups
    assert parallel.analysis_workers(groups, 2) == 2  # nor the jobs
    assert parallel.analysis_workers(groups[:1], 16) == 1  # one group: this process
    assert parallel.analysis_workers(groups[:2], 16) == 2
    monkeypatch.setattr(parallel, "ROWS_PER_WORKER", 400)
    assert parallel.analysis_workers(groups, 16) == 1  # 600 rows: one worker's worth, so none
    monkeypatch.setattr(parallel, "ROWS_PER_WORKER", 300)
    assert parallel.analysis_workers(groups, 16) == 2
