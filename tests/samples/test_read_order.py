"""Reading at the speed of the reader (issue 45 item 3): the ``.ncu-rep`` reader reads every
launch's metrics and per-PC samples before it asks for any launch's SASS, so that a listing
nvdisasm is still writing (``sass.cubin.SassSource``) is waited for once the rest is read,
not at the first launch; and a JSON analysis, whole process, loads no renderer, template
engine or terminal library that only other outputs use (pandas it needs: the analysis's
tables). The profile itself is the same (tests/samples/test_started_read.py,
tests/samples/test_perf_equivalence.py, scripts/golden_json.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT, SAMPLES, needs_ncu_report

MULTI = SAMPLES / "launch" / "serial_steps_floor.ncu-rep"
ONE = SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep"

#: Modules only the HTML, text, Graphviz or terminal outputs need.
NOT_FOR_JSON = (
    "jinja2",
    "markupsafe",
    "graphviz",
    "rich.console",
    "rich.table",
    "drgpu_py.render.html",
    "drgpu_py.render.text",
    "drgpu_py.render.dot",
    "drgpu_py.render.sarif",
)


@needs_ncu_report
def test_sass_is_asked_for_once_every_launch_is_read():
    from drgpu_py.readers.ncu_rep import read_ncu_rep

    read: list[int] = []
    asked: list[int] = []

    class Running:
        """Stands in for a SassSource whose nvdisasm has not finished: records when it is
        first asked, then lists nothing (the reader takes ncu_report's SASS)."""

        def function(self, mangled, sm):
            asked.append(len(read))

    profile = read_ncu_rep(MULTI, progress=lambda n, total: read.append(n), sass=Running(), frames=False)
    assert len(profile.kernels) >= 2
    assert len(asked) == len(profile.kernels)
    assert min(asked) == len(profile.kernels)  # every launch read before the first SASS asked for
    assert all(k.instructions.sass for k in profile.kernels)  # and the code still read


@needs_ncu_report
def test_json_analysis_loads_no_renderer_it_does_not_write(tmp_path):
    out = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "drgpu_py", "analyze", str(ONE), "-f", "json", "-o", str(out), "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=True,
    )
    loaded = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "drgpu_py.render.json_" in loaded and "pandas" in loaded  # the probe sees the run's imports
    assert sorted(m for m in NOT_FOR_JSON if m in loaded) == []
    assert out.stat().st_size > 0


@needs_ncu_report
def test_an_early_listing_is_the_listing_the_reader_starts_itself():
    from drgpu_py.sass import early
    from drgpu_py.sass.cubin import SassSource, cubins_in_report, max_cubins

    assert early.report_of(["analyze", str(ONE), "-f", "json"]) == ONE
    assert early.report_of(["analyze", str(ONE), "--line-report", str(ONE)]) is None  # not the report read
    assert early.report_of(["analyze", str(ONE), "--cubin", str(MULTI)]) is None  # two reports: which one?
    assert early.report_of(["analyze", "-k", "0", str(ONE), "--cubin=k.cubin", "-o", "out.json"]) == ONE
    assert early.report_of(["list", str(ONE)]) is None
    assert early.take(ONE) is None  # nothing started
    early.start(["analyze", str(ONE), "-q"])
    got = early.take(ONE)
    assert got is not None and early.take(ONE) is None  # taken once
    try:
        mine = SassSource.start(cubins_in_report(ONE, limit=max_cubins())).result()
        theirs = got.result()
        assert mine is not None and theirs is not None
        assert {k: (f.insts, f.labels) for k, f in theirs._by.items() if f} == {
            k: (f.insts, f.labels) for k, f in mine._by.items() if f
        }
    finally:
        got.close()
    assert not os.path.exists(got._tmp.name)


@needs_ncu_report
def test_an_early_listing_nobody_takes_is_stopped_and_removed():
    script = (
        "import os, sys\n"
        "from drgpu_py.sass import early\n"
        "early.start(['analyze', sys.argv[1]])\n"
        "e = early._started\n"
        "print(e._tmp.name, e._pid)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", script, str(ONE)], capture_output=True, text=True, env=env, check=True)
    folder, *pids = r.stdout.split()
    assert pids and not os.path.exists(folder)  # closed at exit: files removed
    # and its helper stopped and reaped (left alone, it would wait on nvdisasm for 0.2-0.5 s)
    assert [pid for pid in pids if os.path.exists(f"/proc/{pid}")] == []


@needs_ncu_report
def test_drgpu_analyze_takes_the_listing_it_started_as_the_process_started(tmp_path):
    """The whole command: the read's child takes the early listing (a SassSource started
    anywhere would fail here) and the JSON is the one the library gives."""
    script = (
        "import runpy, sys\n"
        "from drgpu_py.sass import cubin\n"
        "def refuse(cls, *args, **kwargs):\n"
        "    raise RuntimeError('nvdisasm started again: the early listing was not taken')\n"
        "cubin.SassSource.start = classmethod(refuse)\n"
        "sys.argv = ['drgpu', *sys.argv[1:]]\n"
        "runpy.run_module('drgpu_py', run_name='__main__')\n"
    )
    out = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-c", script, "analyze", str(ONE), "-f", "json", "-o", str(out), "-q"]
    r = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    from drgpu_py import analyze
    from drgpu_py.render import render

    assert out.read_text() == render(analyze([ONE]), "json")
