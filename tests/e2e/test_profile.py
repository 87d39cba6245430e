"""drgpu profile and drgpu metrics without a GPU: metric sets and their catalogue checks, set
selection per chip, the ncu command line, output naming, ncu's console output, and every
failure mapping, driven through a stand-in ncu (tests/standin/ncu) that replays what the
real ncu 2025.3.1 printed and copies a real sample report."""

from __future__ import annotations

import json
import re
import shutil
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import HAVE_NCU_REPORT, STANDIN, slow, standin_profile
from typer.testing import CliRunner

from drgpu_py.ncu import console as ncu_console
from drgpu_py.ncu import outcome as ncu_outcome
from drgpu_py.ncu import run as ncu_run
from drgpu_py.ncu import session as ncu_session
from drgpu_py.specs import metric_sets as msets
from drgpu_py.cli import app
from drgpu_py.errors import (
    ApplicationFailedError,
    CounterPermissionError,
    DataFileError,
    InputError,
    NoKernelProfiledError,
    ToolNotFoundError,
    UsageError,
)

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "scripts" / "device" / "facts"
SAMPLE = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"
CHIPS = ["tu102", "ga100", "ga102", "ad102", "gh100", "gb100", "gb202"]


# --------------------------------------------------------------------------- metric sets
def test_every_shipped_set_loads_and_selects_the_needed_sections():
    assert set(msets.available_sets()) == set(CHIPS) | {"base"}
    for name in msets.available_sets():
        ms = msets.load_metric_set(name)
        sel = ms.selection()
        assert sel.sections == ["SourceCounters", "LaunchStats", "Occupancy"], name
        # the metrics the analysis reads most are in every default selection
        for m in (
            "gpu__time_duration.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active",
            "smsp__warps_eligible.avg.per_cycle_active",
        ):
            assert m in sel.metrics, (name, m)
        assert "WarpStateStats" not in sel.sections  # optional: PC samples give the stall mix
        assert all(g.why for g in ms.groups.values())
        assert all(why for g in ms.groups.values() for why in list(g.metrics.values()) + list(g.provides.values()))


def test_optional_groups_only_on_request_and_their_absence_is_noted(tmp_path):
    ms = msets.load_metric_set("gh100")
    default = ms.selection()
    # the SM and L1 unit throughputs are in the default set: findings' estimates read them
    assert "sm__throughput.avg.pct_of_peak_sustained_elapsed" in default.metrics
    assert "l1tex__throughput.avg.pct_of_peak_sustained_elapsed" in default.metrics
    assert not default.notes  # no optional group of the shipped sets changes a result
    full = ms.selection(["unit_throughput", "stall_counters"])  # naming a default group is allowed
    assert "WarpStateStats" in full.sections and "WarpStateStats" not in default.sections
    assert "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio" in full.metrics  # gh100 overlay
    assert not full.notes
    own = tmp_path / "own.yaml"
    own.write_text(
        "schema: drgpu.metric_set/1\nname: own\ninherits: base\ngroups:\n  extra:\n    optional: true\n"
        "    why: a test group\n    absent_note: extra left out\n"
        "    metrics: {sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active: tensor pipe}\n"
    )
    mine = msets.load_metric_set(own)
    assert mine.selection().notes == ["extra left out"] and not mine.selection(["extra"]).notes
    with pytest.raises(UsageError, match="unknown metric group"):
        ms.selection(["no_such_group"])
    args = default.ncu_args()
    assert args[:2] == ["--section", "SourceCounters"] and args[-2] == "--metrics"
    assert args[-1].split(",") == default.metrics


def test_overlays_follow_chip_naming():
    gb202 = msets.load_metric_set("gb202").selection(["context"]).metrics
    assert "dram__bytes_op_read.sum" in gb202 and "dram__bytes_read.sum" not in gb202
    gh100 = msets.load_metric_set("gh100").selection(["context"]).metrics
    assert "dram__bytes_read.sum" in gh100
    assert (
        "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active"
        not in msets.load_metric_set("ga102").selection(["context"]).metrics
    )


def test_user_set_file_inherits_adds_drops_and_renames(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text(
        "schema: drgpu.metric_set/1\nname: mine\ninherits: base\n"
        "add: {pipes: {sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active: tensor pipe}}\n"
        "drop: [sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active]\n"
        "rename: {smsp__inst_executed.sum: smsp__inst_executed.avg}\n"
    )
    ms = msets.load_metric_set(f)
    assert not ms.shipped
    m = ms.selection().metrics
    assert "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active" in m
    assert "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active" not in m
    assert "smsp__inst_executed.avg" in m and "smsp__inst_executed.sum" not in m
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: drgpu.metric_set/1\ninherits: base\ndrop: [not_collected.sum]\n")
    with pytest.raises(DataFileError, match="drop"):
        msets.load_metric_set(bad)
    bad.write_text("schema: drgpu.metric_set/1\ngroups: {g: {why: x, metrics: {a.sum: ''}}}\n")
    with pytest.raises(DataFileError, match="what drgpu uses it for"):
        msets.load_metric_set(bad)
    bad.write_text("schema: other/1\n")
    with pytest.raises(DataFileError, match="schema"):
        msets.load_metric_set(bad)
    with pytest.raises(UsageError, match="unknown metric set"):
        msets.load_metric_set("gz999")


@pytest.mark.parametrize("chip", CHIPS)
def test_each_chip_set_exists_in_its_ncu_catalogue(chip):
    cat = msets.load_catalogue(chip)
    assert len(cat) > 1000
    assert msets.check_metric_set(msets.load_metric_set(chip), cat) == []
    assert msets.check_metric_set(msets.load_metric_set("base"), cat) == []  # base is portable


def test_metric_name_rules_by_type():
    cat = msets.load_catalogue("gh100")
    assert msets.metric_problem("sm__throughput.avg.pct_of_peak_sustained_elapsed", cat) is None
    assert msets.metric_problem("l1tex__t_sector_hit_rate.pct", cat) is None
    assert msets.metric_problem("smsp__inst_executed.sum.per_cycle_active", cat) is None
    assert "not valid for a ratio" in msets.metric_problem("l1tex__t_sector_hit_rate.sum", cat)
    assert "not valid for a throughput" in msets.metric_problem("sm__throughput.avg.per_second", cat)
    assert "not valid for a counter" in msets.metric_problem("smsp__inst_executed.pct", cat)
    assert "needs a suffix" in msets.metric_problem("smsp__inst_executed", cat)
    assert msets.metric_problem("sm__no_such_metric.sum", cat) == "no such metric on this chip"
    assert msets.metric_problem("dram__bytes_read.sum", msets.load_catalogue("gb202")) == "no such metric on this chip"


def test_committed_check_output_is_current():
    if not HAVE_NCU_REPORT:
        pytest.skip("ncu_report is not installed")
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_metric_sets.py")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout
    assert p.stdout == (ROOT / "metric_sets" / "check_output.txt").read_text()


# --------------------------------------------------------------------------- chip detection
def _fake_smi(tmp_path, lines: str, code: int = 0) -> dict:
    b = tmp_path / "bin"
    b.mkdir(exist_ok=True)
    smi = b / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '{lines}'\nexit {code}\n")
    smi.chmod(0o755)
    return {"PATH": str(b)}


def test_set_selection_per_detected_chip(tmp_path):
    env = _fake_smi(tmp_path, "0, NVIDIA H100 80GB HBM3, 9.0\\n1, NVIDIA GeForce RTX 4090, 8.9\\n")
    gpu = ncu_session.detect_gpu(env)
    assert (gpu.chip, gpu.compute_capability, gpu.name) == ("gh100", "9.0", "NVIDIA H100 80GB HBM3")
    assert ncu_session.detect_gpu({**env, "CUDA_VISIBLE_DEVICES": "1"}).chip == "ad102"
    assert ncu_session.detect_gpu(_fake_smi(tmp_path, "0, Some GPU, 8.6\\n")).chip == "ga102"
    assert ncu_session.detect_gpu(_fake_smi(tmp_path, "", code=9)) is None
    assert ncu_session.detect_gpu({"PATH": str(tmp_path / "empty")}) is None
    assert msets.load_metric_set("8.6").name == "ga102" and msets.load_metric_set("12.0").name == "gb202"
    from drgpu_py.ncu.session import choose_set as _choose_set

    ms, notes = _choose_set(None, ncu_session.GpuInfo("Future GPU", "13.0", None))
    assert ms.name == "base" and "no metric set" in notes[0]
    ms, notes = _choose_set(None, None)
    assert ms.name == "base" and "not detected" in notes[0]
    ms, notes = _choose_set("tu102", gpu)
    assert ms.name == "tu102" and not notes


# --------------------------------------------------------------------------- command line
def _req(tmp_path, **kw) -> ncu_session.ProfileRequest:
    base = dict(app=["/bin/app", "--size", "4 096", "a;b"], output_dir=tmp_path / "out", stem="app")
    base.update(kw)
    return ncu_session.ProfileRequest(**base)


def test_ncu_argv_carries_every_option_and_the_app_unchanged(tmp_path):
    sel = msets.load_metric_set("gh100").selection()
    req = _req(
        tmp_path,
        kernel="gemm|conv",
        kernel_name_base="demangled",
        launch_skip=2,
        launch_count=3,
        replay_mode="application",
        clock_control="none",
        target_processes="application-only",
        extra_ncu_args=["--cache-control", "none"],
        force=True,
    )
    argv = ncu_session.build_ncu_argv("/opt/ncu", req, sel)
    assert argv[0] == "/opt/ncu"
    assert argv[-4:] == ["/bin/app", "--size", "4 096", "a;b"]
    joined = " ".join(argv)
    for frag in (
        "--section SourceCounters",
        "--import-source yes",
        "--kernel-name-base demangled -k regex:gemm|conv",
        "-s 2",
        "-c 3",
        "--replay-mode application",
        "--clock-control none",
        "--target-processes application-only",
        "--cache-control none",
        f"-o {tmp_path / 'out' / 'app'} -f",
    ):
        assert frag in joined, frag
    plain = ncu_session.build_ncu_argv("ncu", _req(tmp_path, import_source=False), sel)
    assert "-k" not in plain and "-f" not in plain and "--import-source" not in plain and "-c" not in plain


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"replay_mode": "fast"}, "--replay-mode"),
        ({"clock_control": "max"}, "--clock-control"),
        ({"launch_count": 0}, "--launch-count"),
        ({"launch_skip": -1}, "--launch-skip"),
        ({"kernel": "("}, "regular expression"),
        ({"stem": "a b"}, "--name"),
        ({"rank_var": "1X"}, "--rank-var"),
        ({"target_processes": "some"}, "--target-processes"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path, kw, msg):
    with pytest.raises(UsageError, match=msg):
        ncu_session.build_ncu_argv("ncu", _req(tmp_path, **kw), msets.load_metric_set("base").selection())


def test_output_naming_and_rank_placeholders(tmp_path):
    assert ncu_session.default_stem(["/x/y/my app!"]) == "my_app"
    req = _req(tmp_path, rank_var="OMPI_COMM_WORLD_RANK")
    assert req.output_base == tmp_path / "out" / "app.rank%q{OMPI_COMM_WORLD_RANK}"
    assert req.report_glob({"OMPI_COMM_WORLD_RANK": "3"}) == str(tmp_path / "out" / "app.rank3.ncu-rep")
    assert req.report_glob({}) == str(tmp_path / "out" / "app.rank*.ncu-rep")
    assert ncu_session.pick_rank_var("auto", {"SLURM_PROCID": "2"}) == "SLURM_PROCID"
    assert (
        ncu_session.pick_rank_var("auto", {"OMPI_COMM_WORLD_RANK": "0", "SLURM_PROCID": "2"}) == "OMPI_COMM_WORLD_RANK"
    )
    assert ncu_session.pick_rank_var("auto", {}) is None
    assert ncu_session.pick_rank_var("none", {"PMI_RANK": "1"}) is None
    assert ncu_session.pick_rank_var("MY_RANK", {}) == "MY_RANK"


def test_ncu_found_from_option_env_or_path(tmp_path):
    assert ncu_run.find_ncu(str(STANDIN), {"PATH": ""}) == str(STANDIN)
    assert ncu_run.find_ncu(None, {"PATH": "", "NCU": str(STANDIN)}) == str(STANDIN)
    assert ncu_run.find_ncu(None, {"PATH": str(STANDIN.parent)}) == str(STANDIN)
    with pytest.raises(ToolNotFoundError, match="not installed") as e:
        ncu_run.find_ncu(None, {"PATH": str(tmp_path), "CUDA_HOME": str(tmp_path)})
    assert "nsight-compute" in e.value.hint
    with pytest.raises(ToolNotFoundError, match="not found"):
        ncu_run.find_ncu(str(tmp_path / "ncu"), {"PATH": ""})


def test_app_resolution(tmp_path):
    assert ncu_session.resolve_app(["sh", "-c", "x"], {"PATH": "/bin:/usr/bin"})[0].endswith("/sh")
    with pytest.raises(InputError, match="not found on PATH"):
        ncu_session.resolve_app(["no_such_program_xyz"], {"PATH": str(tmp_path)})
    with pytest.raises(InputError, match="does not exist"):
        ncu_session.resolve_app([str(tmp_path / "missing")])
    f = tmp_path / "notexec"
    f.write_text("x")
    with pytest.raises(InputError, match="not executable"):
        ncu_session.resolve_app([str(f)])
    with pytest.raises(UsageError):
        ncu_session.resolve_app([])


# --------------------------------------------------------------------------- console output
def _events(text: str, step: int = 1) -> list[ncu_console.Event]:
    p = ncu_console.OutputParser()
    evs: list[ncu_console.Event] = []
    for i in range(0, len(text), step):
        evs += p.feed(text[i : i + step])
    return evs + p.close()


@pytest.mark.parametrize("step", [1, 7, 10_000])
def test_progress_lines_without_a_launch_id_under_a_kernel_filter(step):
    """Real ncu 2025.3.1 output (scripts/device/facts/filtered_console.txt): with -k ncu
    prints 'Profiling "damp": ...' without ' - ID'; without a filter ' - 0 (1/1): ...'.
    Every launch is recorded with its passes either way."""
    text = (ROOT / "scripts" / "device" / "facts" / "filtered_console.txt").read_text()
    done = [e for e in _events(text, step) if e.kind == "kernel_done"]
    assert [(e.kernel, e.passes) for e in done] == [
        ("damp", 1),
        ("void gather_sum<(bool)0>(const unsigned int *, const float *, float *)", 1),
        ("damp", 1),
    ]
    starts = [e for e in _events(text, step) if e.kind == "kernel"]
    assert len(starts) == 3 and starts[2].index == (1, 1)


def test_progress_parsed_from_a_recorded_log_fed_byte_by_byte():
    text = (ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu.log").read_text()
    evs = _events(text)
    kinds = [e.kind for e in evs]
    assert kinds.count("kernel") == 1 and kinds.count("kernel_done") == 1
    start = next(e for e in evs if e.kind == "kernel")
    assert (start.kernel, start.launch, start.index) == ("scale_keys_aos", 0, (1, 1))
    pcts = [e.pct for e in evs if e.kind == "progress"]
    assert pcts == sorted(pcts) and pcts[0] == 0 and pcts[-1] == 100 and 50 in pcts
    assert next(e for e in evs if e.kind == "kernel_done").passes == 38
    assert any(e.kind == "report" and e.text == "aos_gather_bad.ncu-rep" for e in evs)
    assert any(e.kind == "output" and e.text.startswith("aos_gather bad") for e in evs)


def test_recorded_failures_are_parsed():
    ev = _events((FACTS / "fail_app_exit.txt").read_text(), step=7)
    done = [e for e in ev if e.kind == "kernel_done"]
    assert [(e.kernel, e.passes) for e in done] == [("doomed(float *)", 10)]
    assert any(e.kind == "error" and "error code (3)" in e.text for e in ev)
    shut = _events(
        '==PROF== Profiling "k" - 8: 0%....50%..==PROF== Trying to shutdown target application\n - 14 passes\n'
    )
    assert [e.kind for e in shut][-3:] == ["kernel_done", "shutdown", "output"]
    assert shut[-3].passes is None


def test_ncu_warning_names_unavailable_metrics():
    text = (ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu.log").read_text()
    res = ncu_run.RunResult(
        argv=[],
        returncode=0,
        log_path=Path("x"),
        wall_s=0,
        warnings=[e.text for e in _events(text) if e.kind == "warning"],
    )
    assert res.ncu_unavailable_metrics[:2] == [
        "ctc__rx_bytes_data_user.sum",
        "ctc__rx_bytes_data_user.sum.pct_of_peak_sustained_elapsed",
    ]
    assert len(res.ncu_unavailable_metrics) == 6


def test_unavailable_metrics_in_a_real_report():
    if not HAVE_NCU_REPORT:
        pytest.skip("ncu_report is not installed")
    missing = ncu_outcome.unavailable_metrics(
        SAMPLE,
        [
            "launch__grid_size",
            "sm__no_such_metric.sum",
            "inst_executed",
            "smsp__pcsamp_warps_issue_stalled_*",
            "nope__*",
        ],
    )
    assert list(missing.values()) == [["sm__no_such_metric.sum", "nope__*"]]
    assert "scale_keys_aos" in next(iter(missing))
    assert ncu_outcome.unavailable_metrics(SAMPLE, ["launch__grid_size"]) == {}


# --------------------------------------------------------------------------- the command, with the stand-in ncu
runner = CliRunner()


def run_profile(tmp_path, *args, scenario="ok", env=None, app_argv=None, monkeypatch=None):
    e = {"STANDIN_NCU_SCENARIO": scenario, "PATH": os.environ.get("PATH", ""), "COLUMNS": "250"}
    e.update(env or {})
    for k, v in e.items():
        monkeypatch.setenv(k, v)
    for k in ncu_session.RANK_VARS:
        if k not in e:
            monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    argv = standin_profile(tmp_path / "out", "-q", *args, "--", *(app_argv or ["/bin/echo", "app says hi"]))
    return runner.invoke(app, argv)


def test_closing_table_is_readable_at_80_columns(tmp_path, monkeypatch):
    # Ten boxed columns at 80 columns once cut every cell to five characters ("scal…").
    r = run_profile(tmp_path, env={"COLUMNS": "80"}, monkeypatch=monkeypatch)
    assert r.exit_code == 0, r.output
    table = r.output[r.output.index("drgpu profile:") : r.output.index("kept:") if "kept:" in r.output else None]
    assert "…" not in table, table
    assert all(len(line) <= 80 for line in table.splitlines()), table
    words = " ".join(table.split())
    for cell in ("scale_keys_aos", "excellent", "memory", "global-uncoalesced"):
        assert cell in words, table
    assert re.search(r"\d+\.\d\dx", table), table  # the estimated speedup column is kept


def test_success_keeps_report_log_and_analysis(tmp_path, monkeypatch):
    r = run_profile(tmp_path, monkeypatch=monkeypatch)
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    for name in ("echo.ncu-rep", "echo.ncu.log", "echo.json", "echo.profile.json"):
        assert (out / name).is_file(), name
    assert "global-uncoalesced" in r.output and "12" in r.output
    doc = json.loads((out / "echo.json").read_text())
    assert doc["kernels"][0]["findings"][0]["id"] == "global-uncoalesced"
    # the stand-in's report (ncu --set full) lacks nothing a finding reads
    assert not any("not evaluated fully" in n for k in doc["kernels"] for n in k["notes"] + doc["notes"])
    rec = json.loads((out / "echo.profile.json").read_text())
    assert rec["kernels"] == [{"name": "scale_keys_aos", "launch": 0, "passes": 12}]
    assert rec["exit_code"] == 0 and rec["metric_set"] == "gh100"
    assert "app says hi" in (out / "echo.ncu.log").read_text()
    # a second run refuses to overwrite, and runs nothing
    r2 = run_profile(tmp_path, monkeypatch=monkeypatch)
    assert r2.exit_code == 6 and "--force" in r2.output
    r3 = run_profile(tmp_path, "--force", monkeypatch=monkeypatch)
    assert r3.exit_code == 0, r3.output


def test_arguments_reach_the_app_unchanged(tmp_path, monkeypatch):
    dump = tmp_path / "argv.json"
    script = tmp_path / "app.py"
    script.write_text("import json, sys\njson.dump(sys.argv[1:], open(sys.argv[1], 'w'))\n")
    weird = [str(dump), "two words", 'it\'s "quoted"', "a;b", "$(touch pwned)", "`id`", "*", "", "--flag=x y"]
    r = run_profile(
        tmp_path,
        scenario="no_kernel",
        app_argv=[sys.executable, str(script), *weird],
        monkeypatch=monkeypatch,
        env={"STANDIN_NCU_ARGV_OUT": str(tmp_path / "ncu_argv.json")},
    )
    assert r.exit_code == 13, r.output
    assert json.loads(dump.read_text()) == weird
    ncu_argv = json.loads((tmp_path / "ncu_argv.json").read_text())
    assert ncu_argv[-len(weird) :] == weird and ncu_argv[-len(weird) - 2] == sys.executable
    assert not (tmp_path / "pwned").exists()


def test_counter_permission_maps_to_11(tmp_path, monkeypatch):
    r = run_profile(tmp_path, scenario="perm", monkeypatch=monkeypatch)
    assert r.exit_code == CounterPermissionError.exit_code == 11
    assert "ERR_NVGPUCTRPERM" in r.output and "NVreg_RestrictProfilingToAdminUsers=0" in r.output
    assert (tmp_path / "out" / "echo.ncu.log").is_file()


def test_failing_app_is_still_analyzed_then_12(tmp_path, monkeypatch):
    r = run_profile(tmp_path, scenario="app_fail", monkeypatch=monkeypatch)
    assert r.exit_code == ApplicationFailedError.exit_code == 12, r.output
    assert "exited with code 3" in r.output
    assert (tmp_path / "out" / "echo.ncu-rep").is_file() and (tmp_path / "out" / "echo.json").is_file()
    assert json.loads((tmp_path / "out" / "echo.profile.json").read_text())["exit_code"] == 12


def test_no_kernel_matched_maps_to_13(tmp_path, monkeypatch):
    r = run_profile(tmp_path, "-k", "no_kernel_has_this_name", monkeypatch=monkeypatch)
    assert r.exit_code == NoKernelProfiledError.exit_code == 13
    assert "matched no launch" in r.output and "--list-kernels" in r.output
    assert not list((tmp_path / "out").glob("*.ncu-rep"))
    r = run_profile(tmp_path, "--force", scenario="no_kernel", monkeypatch=monkeypatch)
    assert r.exit_code == 13 and "launched no CUDA kernel" in r.output


def test_app_failing_before_any_kernel_maps_to_12(tmp_path, monkeypatch):
    r = run_profile(tmp_path, scenario="no_kernel", app_argv=["/bin/sh", "-c", "exit 3"], monkeypatch=monkeypatch)
    assert r.exit_code == 12 and "before any kernel" in r.output


def test_list_kernels_runs_cheaply_without_filter(tmp_path, monkeypatch):
    argv_out = tmp_path / "argv.json"
    r = run_profile(
        tmp_path,
        "--list-kernels",
        "-k",
        "ignored",
        monkeypatch=monkeypatch,
        env={"STANDIN_NCU_KERNELS": "gemm,softmax,gemm", "STANDIN_NCU_ARGV_OUT": str(argv_out)},
    )
    assert r.exit_code == 0, r.output
    assert "gemm" in r.output and "softmax" in r.output
    argv = json.loads(argv_out.read_text())
    assert "-k" not in argv and argv[argv.index("--metrics") + 1] == "gpu__time_duration.sum"


def test_tool_and_input_failures(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["profile", "--ncu", str(tmp_path / "nope"), "--", "/bin/echo"])
    assert r.exit_code == ToolNotFoundError.exit_code == 7 and "--ncu" in r.output
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    r = runner.invoke(app, ["profile", "--", "/bin/echo"])
    assert r.exit_code == 7 and "not installed" in r.output
    r = runner.invoke(app, ["profile", "--ncu", str(STANDIN), "--", str(tmp_path / "missing_app")])
    assert r.exit_code == InputError.exit_code == 3
    r = runner.invoke(app, ["profile", "--ncu", str(STANDIN)])
    assert r.exit_code == 2 and "no application" in r.output


def test_missing_metrics_warn_or_fail_with_14(tmp_path, monkeypatch):
    # preflight: a name the chip's catalogue lacks stops before ncu runs
    argv_out = tmp_path / "argv.json"
    r = run_profile(
        tmp_path,
        "--add-metrics",
        "sm__no_such_metric.sum",
        monkeypatch=monkeypatch,
        env={"STANDIN_NCU_ARGV_OUT": str(argv_out)},
    )
    assert r.exit_code == 14 and "sm__no_such_metric.sum" in r.output and not argv_out.exists()
    # past the check, ncu accepts it silently (exit 0); the report lacks it: 14 with --strict-metrics
    r = run_profile(
        tmp_path,
        "--strict-metrics",
        "--skip-metric-check",
        "--add-metrics",
        "sm__no_such_metric.sum",
        monkeypatch=monkeypatch,
    )
    if not _has_ncu_report():
        pytest.skip("ncu_report is not installed: the report cannot be inspected")
    assert r.exit_code == 14, r.output
    assert "sm__no_such_metric.sum" in r.output
    assert (tmp_path / "out" / "echo.json").is_file()  # analyzed and written before failing
    rec = json.loads((tmp_path / "out" / "echo.profile.json").read_text())
    assert any("sm__no_such_metric.sum" in v for m in rec["missing_metrics"].values() for v in m.values())


def _has_ncu_report() -> bool:
    return HAVE_NCU_REPORT  # found without importing it into the test process (conftest)


def test_explicit_rank_var_must_be_set_here(tmp_path, monkeypatch):
    r = run_profile(tmp_path, "--rank-var", "OMPI_COMM_WORLD_RANK", monkeypatch=monkeypatch)
    assert r.exit_code == 2 and "mpirun" in r.output


def test_one_report_per_rank_in_a_shared_folder(tmp_path, monkeypatch):
    """mpirun -np 2 drgpu profile ...: each rank's drgpu finds its rank variable, names its
    report with %q{VAR} and analyzes its own report only."""
    for rank in ("0", "1"):
        r = run_profile(
            tmp_path,
            "--name",
            "job",
            env={"OMPI_COMM_WORLD_RANK": rank, "STANDIN_NCU_ARGV_OUT": str(tmp_path / f"argv{rank}.json")},
            monkeypatch=monkeypatch,
        )
        assert r.exit_code == 0, r.output
        assert "1 kernel launch (1 kernel) in 1 report" in r.output  # its own report only
        argv = json.loads((tmp_path / f"argv{rank}.json").read_text())
        assert argv[argv.index("-o") + 1] == str(tmp_path / "out" / "job.rank%q{OMPI_COMM_WORLD_RANK}")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.glob("*.ncu-rep")) == ["job.rank0.ncu-rep", "job.rank1.ncu-rep"]
    assert (out / "job.rank0.json").is_file() and (out / "job.rank1.json").is_file()
    assert (out / "job.rank1.ncu.log").is_file()
    rec1 = json.loads((out / "job.rank1.profile.json").read_text())
    assert rec1["reports"] == [str(out / "job.rank1.ncu-rep")]


def test_dry_run_prints_the_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(
        app,
        [
            "profile",
            "--dry-run",
            "--ncu",
            str(STANDIN),
            "--metric-set",
            "ad102",
            "-c",
            "2",
            "--",
            "/bin/echo",
            "a b",
            "c;d",
        ],
    )
    assert r.exit_code == 0
    assert "--section SourceCounters" in r.output and "-c 2" in r.output and "'a b' 'c;d'" in r.output
    assert not (tmp_path / "drgpu-echo").exists()


def test_metrics_command_lists_sets_and_purposes(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    r = runner.invoke(app, ["metrics", "gh100", "--with", "stall_counters"])
    assert r.exit_code == 0, r.output
    for text in (
        "gb202",
        "Blackwell",
        "sampling",
        "smsp__pcsamp_sample_count",
        "PC samples per instruction",
        "context (optional)",
        "unit_throughput",
        "--section WarpStateStats",
    ):
        assert text in r.output, text
    assert runner.invoke(app, ["metrics", "nope"]).exit_code == 2


def _slow_profile_running(tmp_path, launcher: list[str], cwd):
    """Start `drgpu profile` of `sleep 30` under the slow stand-in ncu in its own session and
    wait until ncu has begun replaying (its log names the passes): (process, out dir, log)."""
    env = {**os.environ, "STANDIN_NCU_SCENARIO": "slow", "STANDIN_NCU_KERNELS": "k1,k2,k3,k4", "PYTHONUNBUFFERED": "1"}
    for k in ncu_session.RANK_VARS:
        env.pop(k, None)
    out = tmp_path / "out"
    p = subprocess.Popen(
        [
            sys.executable,
            *launcher,
            "profile",
            "--ncu",
            str(STANDIN),
            "--metric-set",
            "gh100",
            "-d",
            str(out),
            "--",
            "/bin/sleep",
            "30",
        ],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log = out / "sleep.ncu.log"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "- 12 passes" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    return p, out, log


@slow
def test_ctrl_c_keeps_the_partial_report(tmp_path):
    """Ctrl-C reaches drgpu, ncu and the app (one process group, as from a terminal): ncu
    writes what it profiled, drgpu keeps it and exits 130 without analyzing."""
    p, out, log = _slow_profile_running(tmp_path, ["-c", "from drgpu_py.cli import main; main()"], cwd=tmp_path)
    os.killpg(p.pid, signal.SIGINT)
    text = p.communicate(timeout=60)[0].decode()
    assert p.returncode == 130, text
    assert "interrupted" in text and "sleep.ncu-rep" in text
    assert (out / "sleep.ncu-rep").is_file() and not (out / "sleep.json").exists()
    rec = json.loads((out / "sleep.profile.json").read_text())
    assert rec["interrupted"] and rec["exit_code"] == 130 and rec["kernels"][0]["passes"] == 12


def test_nvtx_filters_and_profiler_range_reach_ncu(tmp_path, monkeypatch):
    """Profiling one step of a PyTorch program: NVTX range filters and the cudaProfilerStart/
    Stop range go to ncu as its own options, in order, before the application."""
    out = tmp_path / "ncu_argv.json"
    r = run_profile(
        tmp_path,
        "--nvtx-include",
        "step/",
        "--nvtx-include",
        "train@fwd*",
        "--nvtx-exclude",
        "warmup/",
        "--no-from-start",
        monkeypatch=monkeypatch,
        env={"STANDIN_NCU_ARGV_OUT": str(out)},
    )
    assert r.exit_code == 0, r.output
    argv = json.loads(out.read_text())
    app_at = argv.index("/bin/echo")
    opts = argv[:app_at]
    assert opts.count("--nvtx") == 1
    i = opts.index("--nvtx-include")
    assert opts[i : i + 4] == ["--nvtx-include", "step/", "--nvtx-include", "train@fwd*"]
    assert opts[opts.index("--nvtx-exclude") + 1] == "warmup/"
    assert opts[opts.index("--profile-from-start") + 1] == "off"
    r2 = run_profile(tmp_path, "--force", monkeypatch=monkeypatch, env={"STANDIN_NCU_ARGV_OUT": str(out)})
    assert r2.exit_code == 0 and "--nvtx" not in json.loads(out.read_text())


def test_a_report_line_printed_by_the_app_is_not_trusted(tmp_path, monkeypatch):
    """The application shares ncu's console: a '==PROF== Report: PATH' line it prints must
    not make drgpu read that report or write outputs beside it, even with --force."""
    foreign = tmp_path / "elsewhere"
    foreign.mkdir()
    shutil.copy(ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep", foreign / "victim.ncu-rep")
    (foreign / "victim.json").write_text("precious")
    r = run_profile(
        tmp_path,
        "--force",
        monkeypatch=monkeypatch,
        app_argv=["/bin/echo", f"==PROF== Report: {foreign / 'victim.ncu-rep'}"],
    )
    assert r.exit_code == 0, r.output
    assert (foreign / "victim.json").read_text() == "precious"
    assert sorted(p.name for p in foreign.iterdir()) == ["victim.json", "victim.ncu-rep"]
    rec = json.loads((tmp_path / "out" / "echo.profile.json").read_text())
    assert rec["reports"] == [str(tmp_path / "out" / "echo.ncu-rep")]


@pytest.mark.parametrize("ext", [".html", ".dot", ".svg", ".profile.json", ".txt", ".json", ".ncu.log"])
def test_no_output_of_an_earlier_run_is_replaced_without_force(tmp_path, monkeypatch, ext):
    """Every file profile writes is checked before ncu runs: any one of them existing stops
    the run (exit 6) and leaves it untouched."""
    out = tmp_path / "out"
    out.mkdir()
    old = out / f"echo{ext}"
    old.write_text("earlier run")
    r = run_profile(tmp_path, monkeypatch=monkeypatch)
    assert r.exit_code == 6 and "--force" in r.output, r.output
    assert old.read_text() == "earlier run" and not (out / "echo.ncu-rep").exists()


def test_a_metric_set_name_is_never_a_file_in_the_working_directory(tmp_path, monkeypatch):
    """A planted file or folder named like a shipped set ('gh100', 'base') in the current
    directory is not loaded; a path (a separator or .yaml) still is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gh100").write_text(
        "schema: drgpu.metric_set/1\nname: evil\ngroups: {x: {why: w, metrics: {evil__metric.sum: e}}}\n"
    )
    (tmp_path / "base").mkdir()
    ms = msets.load_metric_set("gh100")
    assert ms.name == "gh100" and ms.shipped and "evil__metric.sum" not in ms.selection().metrics
    assert msets.load_metric_set("base").shipped
    own = tmp_path / "mine.yaml"
    own.write_text((ROOT / "metric_sets" / "gh100.yaml").read_text().replace("name: gh100", "name: mine"))
    assert msets.load_metric_set(str(own)).name == "mine"
    assert msets.load_metric_set("./gh100").name == "evil"


def test_report_that_crashes_the_reader_keeps_the_record(tmp_path):
    """ncu wrote a report ncu_report crashes on (one damaged byte in its cubin): drgpu says so
    (no silent exit 139) and keeps the report, ncu's log and the run record."""
    buf = bytearray((ROOT / "sample_reports/fma_chain/fma_chain_bad.ncu-rep").read_bytes())
    buf[buf.find(b"\x7fELF") + 63] = 230
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(bytes(buf))
    env = {**os.environ, "STANDIN_NCU_REPORT": str(bad), "PYTHONPATH": str(ROOT)}
    for k in ncu_session.RANK_VARS:
        env.pop(k, None)
    out = tmp_path / "out"
    # Its own process: this one may have loaded ncu_report, and then reads unguarded.
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "drgpu_py",
            "profile",
            "--ncu",
            str(STANDIN),
            "--metric-set",
            "gh100",
            "-d",
            str(out),
            "-q",
            "--",
            "/bin/echo",
            "hi",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 10, r.stderr
    assert "ncu_report crashed reading it (signal 11, SIGSEGV)" in r.stderr
    rec = json.loads((out / "echo.profile.json").read_text())
    assert rec["exit_code"] == 10
    assert (out / "echo.ncu-rep").is_file() and (out / "echo.ncu.log").is_file()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@slow
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_stop_ncu_and_keep_the_record(tmp_path, sig, code):
    """A signal sent to drgpu alone (kill PID, a scheduler, a closed terminal) stops ncu and
    the application it runs, keeps what was written and the run record, and exits 128+N."""
    p, out, log = _slow_profile_running(tmp_path, ["-m", "drgpu_py"], cwd=ROOT)
    app_pid = int(re.search(r"Connected to process (\d+)", log.read_text()).group(1))
    os.kill(p.pid, sig)
    text = p.communicate(timeout=60)[0].decode()
    assert p.returncode == code, text
    assert f"drgpu: interrupted: ncu stopped by {sig.name}" in text and "interrupted: interrupted" not in text
    rec = json.loads((out / "sleep.profile.json").read_text())
    assert rec["interrupted"] and rec["signal"] == sig.name and rec["exit_code"] == code
    assert not _alive(app_pid), "the profiled application still runs"
    assert not [f for f in os.listdir(out) if f.endswith(".tmp")]


def test_timeout_stops_a_hanging_ncu(tmp_path, monkeypatch):
    t0 = time.monotonic()
    r = run_profile(
        tmp_path, "--timeout", "1.5", scenario="hang", monkeypatch=monkeypatch, app_argv=["/bin/sleep", "60"]
    )
    assert time.monotonic() - t0 < 30
    assert r.exit_code == 10, r.output
    assert "ncu did not finish within --timeout 1.5 s and was stopped" in r.output
    rec = json.loads((tmp_path / "out" / "sleep.profile.json").read_text())
    assert rec["timed_out"] and rec["exit_code"] == 10
    assert "did not finish within 1.5 s" in (tmp_path / "out" / "sleep.ncu.log").read_text()
    assert run_profile(tmp_path, "--timeout", "0", monkeypatch=monkeypatch).exit_code == 2


def test_parser_is_linear_on_output_without_newlines():
    """An application printing 20 MB without a newline (63 s before: the unfinished line was
    searched again for every chunk): parsed in seconds, and ncu's lines after it still count."""
    p = ncu_console.OutputParser()
    chunk = "x" * 65536
    t0 = time.monotonic()
    events = []
    for _ in range(320):
        events += p.feed(chunk)
    events += p.feed('\n==PROF== Profiling "k" - 0: 0%....50%....100% - 9 passes\n==PROF== Report: /o/r.ncu-rep\n')
    events += p.close()
    assert time.monotonic() - t0 < 10  # generous: about 0.1 s here
    assert [e.kind for e in events] == ["output", "kernel", "kernel_done", "report"]
    assert events[2].passes == 9 and events[3].text == "/o/r.ncu-rep"
    # a Profiling line growing over many chunks still reports progress
    p = ncu_console.OutputParser()
    evs = p.feed('==PROF== Profiling "k" - 0: 0%') + p.feed("....50%") + p.feed("....100% - 3 passes\n")
    assert [e.kind for e in evs] == ["kernel", "progress", "progress", "kernel_done"] and evs[-1].passes == 3
