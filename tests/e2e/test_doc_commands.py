"""Every command shown in README.md and docs/*.md runs as written.

The fenced blocks are read and each line that is a command (``drgpu ...``, ``python ...``,
``pip ...``, ``pytest``, ``mpirun ...``, ``ruff ...``; a leading ``$ `` prompt and a trailing comment are
dropped) is run with ``bash -c`` in a fresh folder holding what the documentation's names
stand for: ``REPORT.ncu-rep``, ``before.ncu-rep`` and the like are sample reports, ``./app``
and ``train.py`` small programs, ``ncu`` the stand-in (tests/standin/ncu) and ``drgpu`` this
tree's command. A command must exit 0 (or the code listed for it in ``EXIT``), without a
traceback or an option the parser does not know. A command that cannot run here is listed in
``NOT_RUN`` with the reason; a reason whose command left the docs fails the test.

The output examples (a ```text block after an ``<!-- example: COMMAND -->`` marker) are made by
scripts/doc_examples.py; ``test_output_example_is_current`` runs each example whose inputs ship
as they are and compares its block with the output, as ``doc_examples.py --check`` does. Those
commands are not run a second time by ``test_documented_command_runs``. An example whose input
is a benchmark is listed in ``SLOW_EXAMPLES`` with its measured time and left to the script.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Slow, left out of the fast tier (pytest -m "not slow"): every documented command and output example, run.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SAMPLES = ROOT / "sample_reports"
_COMMAND = re.compile(r"^(drgpu(?=\s|$)(?!:)|python |pip |pytest|mpirun |ruff |pre-commit )")

# Commands that do not run here, and why (keys: the command without prompt and comment).
NOT_RUN = {
    "pip install . && drgpu analyze sample_reports/aos_gather/aos_gather_bad.ncu-rep": "installs into the environment; the analyze half runs as the README's usage lines do",
    'pip install -e ".[test]" && pytest': "installs, then runs the whole suite, which this test is part of",
    'pytest -m "not slow"': "the fast tier of the suite (this test is in the other tier)",
    "pytest": "the whole suite, which this test is part of",
    "mpirun -np 4 drgpu profile -d prof -- ./mpi_app": "needs an MPI launcher; tests/e2e/test_profile.py::test_one_report_per_rank_in_a_shared_folder runs ranks by hand",
    "mpirun -np 64 sh -c 'drgpu analyze reports/app.rank${OMPI_COMM_WORLD_RANK}.ncu-rep -j 1 -q -o json/rank${OMPI_COMM_WORLD_RANK}.json'": "needs an MPI launcher; the same command with SLURM_ARRAY_TASK_ID runs",
    "drgpu profile [OPTIONS] -- APP [ARGS...]": "a synopsis, not a command",
    "ruff check .": "the linter over the whole tree: .ci/run runs it before the tests",
    "ruff format --check .": "the formatter's check over the whole tree: .ci/run runs it before the tests",
    "python benchmarks/bench_analyze.py --repeat 3": "a benchmark: minutes of CPU on the 1,000-launch report",
    "python benchmarks/bench_analyze.py --repeat 3 --no-rep": "a benchmark: minutes of CPU on the 1,000-launch report",
    "python benchmarks/standin.py /tmp/bench --launches 1000": "writes a 1,000-launch stand-in report (a benchmark input)",
    "python benchmarks/bench_analyze.py --report /tmp/bench/standin_1000.ncu-rep --repeat 2": "a benchmark on the stand-in report written by the command before it",
    "python benchmarks/compose_report.py /tmp/composed.ncu-rep --repeat 6": "composes a 196 MB benchmark report",
    "python benchmarks/bench_jobs.py --report /tmp/composed.ncu-rep --jobs 1,2 --out /tmp/jobs": "a benchmark on the composed report",
    "python benchmarks/bench_one_kernel_floor.py --repeat 9": "a benchmark: nine rounds of drgpu and both read floors, a minute of CPU",
    "python tests/e2e/test_browser.py sample_reports/aos_gather/aos_gather_bad.ncu-rep docs/img/report.png": "rewrites the committed screenshot; tests/e2e/test_browser.py renders and screenshots the same report",
    "python tests/e2e/test_browser.py --docs": "rewrites the six committed screenshots; tests/e2e/test_browser.py loads the same pages at the same widths and checks the PNGs",
}
# Output examples not checked here, and why (scripts/doc_examples.py --check, run by .ci/run,
# checks them).
SLOW_EXAMPLES = {
    "drgpu analyze many_kernels.ncu-rep": "the 1,000-launch benchmark report (87 MB once unpacked from "
    "benchmarks/data): 13 s of CPU to analyze, 9 s of wall time on 2 cores, 40 s on a loaded machine; "
    "scripts/doc_examples.py --check (.ci/run) checks its example",
}
# Commands whose documented outcome is not exit 0.
EXIT = {
    "drgpu analyze REPORT.ncu-rep --fail-on high": 9,  # the sample has a high finding
    "drgpu analyze REPORT.ncu-rep -k 'gemm|conv'": 5,  # no such kernel in the sample
    "drgpu list run.ncu-rep -k 'gemm|softmax' --format json": 5,
    "drgpu profile -k 'gemm|conv' -c 3 -- ./app": 13,  # the stand-in's app launches no such kernel
    # The sample's fix renamed its kernel (scale_keys_aos -> scale_keys_soa): nothing is compared.
    "drgpu diff base.json new.ncu-rep --fail-on-regression": 15,
}
# What the documentation's placeholder names stand for.
BAD, FIXED = SAMPLES / "aos_gather" / "aos_gather_bad", SAMPLES / "aos_gather" / "aos_gather_fixed"
RANK0, RANK1 = SAMPLES / "ranks" / "precise_math.rank0.ncu-rep", SAMPLES / "ranks" / "precise_math.rank1.ncu-rep"
LINKS = {
    **{
        n: f"{BAD}.ncu-rep"
        for n in (
            "REPORT.ncu-rep",
            "app.ncu-rep",
            "run.ncu-rep",
            "R1.ncu-rep",
            "base.ncu-rep",
            "before.ncu-rep",
            "old.ncu-rep",
            "runs/a.ncu-rep",
        )
    },
    **{n: f"{FIXED}.ncu-rep" for n in ("R2.ncu-rep", "new.ncu-rep", "after.ncu-rep", "runs/b.ncu-rep")},
    "X.raw.csv": f"{BAD}.raw.csv",
    "X.source.csv": f"{BAD}.source.csv",
    "app.sm_90.cubin": str(SAMPLES / "aos_gather" / "aos_gather.sm_90.cubin"),
    "rank0.ncu-rep": RANK0,
    "rank1.ncu-rep": RANK1,
    "app.rank0.ncu-rep": RANK0,
    "app.rank1.ncu-rep": RANK1,
    "app.rank2.ncu-rep": RANK1,
    "reports/app.rank0.ncu-rep": RANK0,
    "reports/app.rank1.ncu-rep": RANK1,
    "sample_reports": SAMPLES,
    "benchmarks": ROOT / "benchmarks",
    "tests": ROOT / "tests",
    "docs": ROOT / "docs",
}
WORDS = {"COMMAND": "analyze"}  # a placeholder inside a command line


def doc_commands() -> list[tuple[str, str]]:
    """(where, command) for each command line in a fenced block of the docs."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"^```([^\n]*)\n(.*?)^```", text, re.S | re.M):
            first = text.count("\n", 0, m.start(2)) + 1
            # In a ```text block (output shown after a prompt) only the "$ " lines are commands:
            # an output line may begin with "drgpu" (diff's header).
            output = m.group(1).strip() == "text"
            for i, line in enumerate(m.group(2).splitlines()):
                line = line.strip()
                if output and not line.startswith("$ "):
                    continue
                line = line[2:] if line.startswith("$ ") else line
                if not _COMMAND.match(line):
                    continue
                out.append((f"{doc.relative_to(ROOT)}:{first + i}", _strip_comment(line)))
    return out


def _strip_comment(line: str) -> str:
    """The line without a trailing ``# comment``: a # after a blank, outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i and line[i - 1] in " \t":
            return line[:i].rstrip()
    return line.rstrip()


COMMANDS = doc_commands()

_spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "scripts" / "doc_examples.py")
doc_examples = importlib.util.module_from_spec(_spec)
sys.modules["doc_examples"] = doc_examples  # dataclasses look their module up by name
_spec.loader.exec_module(doc_examples)
EXAMPLES = doc_examples.examples()


@pytest.fixture(scope="module")
def baselines(tmp_path_factory) -> Path:
    """base.json / baseline.json: the JSON analysis of the 'before' report."""
    d = tmp_path_factory.mktemp("baseline")
    p = subprocess.run(
        [sys.executable, "-m", "drgpu_py", "analyze", f"{BAD}.ncu-rep", "-q", "-o", str(d / "base.json")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return d / "base.json"


def _workdir(tmp: Path, baseline: Path, command: str) -> dict:
    for name, target in LINKS.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).symlink_to(target)
    for name in ("base.json", "baseline.json"):
        if f"-o {name}" not in command:  # unless the command is the one that writes it
            shutil.copy(baseline, tmp / name)
    for d in ("json", "bin"):
        (tmp / d).mkdir()
    (tmp / "app").write_text('#!/bin/sh\necho the app ran "$@"\n')
    (tmp / "app").chmod(0o755)
    (tmp / "train.py").write_text("print('one training step')\n")
    (tmp / "bin" / "drgpu").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m drgpu_py "$@"\n')
    (tmp / "bin" / "drgpu").chmod(0o755)
    (tmp / "bin" / "ncu").symlink_to(ROOT / "tests" / "standin" / "ncu")
    (tmp / "bin" / "python").symlink_to(sys.executable)
    return {
        **os.environ,
        "PATH": f"{tmp / 'bin'}:{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "120",
        "SLURM_ARRAY_TASK_ID": "0",
        "STANDIN_NCU_SCENARIO": "ok",
        # The stand-in's report's kernel by its mangled name, as ncu knows it: a second run's
        # filter names kernels exactly (--kernel-name-base mangled).
        "STANDIN_NCU_KERNELS": "_Z14scale_keys_aosPK6RecordPfi",
    }


def test_commands_are_found_and_reasons_are_current():
    found = {c for _, c in COMMANDS}
    assert len(COMMANDS) >= 40, COMMANDS
    assert set(NOT_RUN) <= found, set(NOT_RUN) - found
    assert set(EXIT) <= found, set(EXIT) - found
    assert "drgpu profile -d out/ -- ./app args" in found


@pytest.mark.parametrize("where, command", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_command_runs(tmp_path, baselines, where, command):
    if command in NOT_RUN:
        pytest.skip(NOT_RUN[command])
    if command in {ex.command for ex in EXAMPLES}:
        pytest.skip("an output example: test_output_example_is_current runs it and checks its output")
    if re.search(r"\bdot\b|-o \S+\.(svg|png)\b", command) and not shutil.which("dot"):
        pytest.skip("needs Graphviz dot")
    env = _workdir(tmp_path, baselines, command)
    line = command
    for word, value in WORDS.items():
        line = re.sub(rf"\b{word}\b", value, line)
    p = subprocess.run(
        ["bash", "-c", "set -o pipefail; " + line], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600
    )
    out = p.stdout + p.stderr
    assert "Traceback" not in out and "No such option" not in out and "internal error" not in out, out[-3000:]
    assert p.returncode == EXIT.get(command, 0), (where, command, p.returncode, out[-3000:])


def test_examples_are_found_and_slow_ones_named():
    commands = [ex.command for ex in EXAMPLES]
    assert "drgpu analyze sample_reports/serial_norm/serial_norm_bad.ncu-rep --fold 0.05" in commands
    assert any(c.startswith("drgpu diff ") and "--pair" in c for c in commands), commands
    # Every example left to the script is named here with its reason, and every reason's
    # example is still in the docs.
    assert {ex.command for ex in EXAMPLES if not ex.shipped} == set(SLOW_EXAMPLES), commands


@pytest.mark.parametrize("ex", EXAMPLES, ids=[ex.where for ex in EXAMPLES])
def test_output_example_is_current(ex):
    """The block is what the command prints today (rerun `python scripts/doc_examples.py
    --write` after changing the output on purpose)."""
    if ex.command in SLOW_EXAMPLES:
        pytest.skip(SLOW_EXAMPLES[ex.command])
    made = doc_examples.run(ex)
    assert not doc_examples.differences(ex, made), doc_examples.differences(ex, made)
