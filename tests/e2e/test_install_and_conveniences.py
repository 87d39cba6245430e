"""What a user meets in the first hour (issue 34, items 12 and 13): an install without NVIDIA's
SASS tools (macOS has no wheels of them) still reads and analyzes a report and says what it
lacks; shell completion offers commands and option values; an output file written is
confirmed with its size; ``-v`` logs the steps; a decompression bomb given on the command
line is refused and leaves nothing in the temporary folder."""

from __future__ import annotations

import json
import lzma
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drgpu_py.cli import app
from drgpu_py.cli.options import human_size

from conftest import ROOT, report_path

runner = CliRunner()
AOS = report_path("aos_gather", "bad")
CUBIN = ROOT / "sample_reports" / "aos_gather" / "aos_gather.sm_90.cubin"


def _without_sass_tools(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    """``drgpu ARGV`` as on a machine without nvdisasm and cuobjdump: NVIDIA's wheels hidden
    (the ``nvidia`` package made unimportable, where sass.cubin.find_tool looks first), PATH
    an empty folder, no CUDA_HOME."""
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env.update(PATH=str(empty), PYTHONPATH=str(ROOT), COLUMNS="200")
    code = (
        "import sys; sys.modules['nvidia'] = None; sys.argv = ['drgpu', *sys.argv[1:]]\n"
        "from drgpu_py.cli import main; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )


def test_without_the_sass_tools_a_report_is_analyzed_and_a_note_says_what_is_missing(tmp_path):
    r = _without_sass_tools(tmp_path, "analyze", str(AOS), "-f", "json", "-q")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["kernels"] and d["kernels"][0]["findings"]
    assert any(n.startswith("nvdisasm is not installed") and "--cubin/--binary" in n for n in d["notes"]), d["notes"]
    # Slicing from a cubin is what needs them: refused with what to install.
    r = _without_sass_tools(tmp_path, "analyze", str(AOS), "-q", "--cubin", str(CUBIN))
    assert r.returncode == 7, r.stderr
    assert (
        r.stderr.startswith("drgpu: tool-missing: nvdisasm not found")
        and "pip install nvidia-cuda-nvdisasm" in r.stderr
    )


def test_with_the_sass_tools_there_is_no_such_note():
    from drgpu_py.sass.cubin import find_tool

    if find_tool("nvdisasm") is None:
        pytest.skip("nvdisasm is not installed here")
    r = runner.invoke(app, ["analyze", str(AOS), "-f", "json", "-q"])
    assert not any(n.startswith("nvdisasm is not installed") for n in json.loads(r.stdout)["notes"])


def test_shell_completion_offers_commands_and_option_values():
    def complete(words: str, cword: int) -> list[str]:
        env = {"_DRGPU_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
        r = runner.invoke(app, [], prog_name="drgpu", env=env)
        assert r.exit_code == 0, r.output
        return r.output.split()

    assert complete("drgpu ana", 1) == ["analyze"]
    assert complete("drgpu analyze r.ncu-rep --format ", 4) == [
        "text",
        "json",
        "csv",
        "sarif",
        "gcc",
        "dot",
        "svg",
        "png",
        "html",
    ]
    assert complete("drgpu list r.ncu-rep --sort ", 4) == ["duration", "stall", "name"]
    r = runner.invoke(app, ["--help"])
    assert "--install-completion" in r.stdout and "DRGPU_<COMMAND>_<OPTION>" in r.stdout


def test_an_output_file_is_confirmed_with_its_size(tmp_path):
    out = tmp_path / "report.json"
    r = runner.invoke(app, ["analyze", str(AOS), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert f"drgpu: wrote {out} ({human_size(out.stat().st_size)})" in r.stderr.splitlines(), r.stderr
    r = runner.invoke(app, ["analyze", str(AOS), "-o", str(out), "--force", "-q"])
    assert r.exit_code == 0 and "wrote" not in r.stderr
    rows = tmp_path / "rows.csv"
    r = runner.invoke(app, ["list", str(AOS), "-o", str(rows)])
    assert r.exit_code == 0 and f"drgpu: wrote {rows} (" in r.stderr, r.output
    r = runner.invoke(app, ["analyze", str(AOS), "-f", "json"])  # standard output: nothing to confirm
    assert r.exit_code == 0 and "wrote" not in r.stderr


def test_verbose_logs_the_steps_with_timings(tmp_path):
    r = runner.invoke(app, ["analyze", str(AOS), "-f", "json", "-q", "-v"], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    err = " ".join(r.stderr.split())
    assert re.search(r"read \S*aos_gather_bad\.ncu-rep \(ncu-rep\): 1 kernel launches in [\d.]+ s", err), err
    assert re.search(r"analyzed 1 kernel groups in [\d.]+ s", err), err
    assert json.loads(r.stdout)["kernels"]  # the log stays off standard output


def test_a_decompression_bomb_on_the_command_line_leaves_the_disk_as_it_was(tmp_path):
    """64 MiB of zeros in 10 KB of xz, with the floor lowered from 1 GiB to 16 MiB (the
    bound itself is tests/unit/test_compressed_inputs.py's): refused once the copy passes
    16 MiB, and the temporary copy is gone. TMPDIR is the test's own folder, so what is
    left there is what drgpu left."""
    bomb = tmp_path / "bomb.ncu-rep.xz"
    bomb.write_bytes(lzma.compress(b"\0" * (64 << 20), preset=0))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
    code = (
        "import sys; import drgpu_py.readers.compressed as c; c.FLOOR_BYTES = 16 << 20\n"
        "sys.argv = ['drgpu', *sys.argv[1:]]; from drgpu_py.cli import main; main()"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, "analyze", str(bomb), "-q"], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 4, r.stderr
    assert "decompresses to over 16 MiB" in r.stderr and "refused as a decompression bomb" in r.stderr, r.stderr
    assert "xz -dk" in r.stderr
    assert list(tmp.iterdir()) == []
