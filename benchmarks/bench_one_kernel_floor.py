"""One-kernel start-up: whole-process ``drgpu analyze R -f json`` against its read floors.

For one report (default: sample_reports/aos_gather/aos_gather_bad.ncu-rep) it runs, as child
processes, ``--repeat`` rounds of:

* ``python -m drgpu_py analyze R -f json -q`` (stdout to a file), once per source tree given
  with ``--tree`` (default: this checkout), each tree first on PYTHONPATH;
* ``benchmarks/floor.py rep R``: the metrics and per-PC samples read through ncu_report;
* ``benchmarks/floor.py rep R --sass``: the same plus SASS, lines and sources (ncu_report's
  disassembler starts on the first SASS read), which drgpu's analysis needs;
* ``python -c "import pandas"``.

The commands of one round run one after the other in this order, so that the machine's drift
touches them alike. Each row gives the median and the range of the wall times, the median CPU
time (user + sys of the process and everything it started, ``os.wait4``), and the median wall
time as a multiple of the floor with SASS. Runs from a temporary folder (``python -m
drgpu_py`` would otherwise import the package of the current folder first). Each tree's
modules are compiled to bytecode first, as an installed package's are: a checkout run with
PYTHONDONTWRITEBYTECODE set would compile every module at every start.

Usage: python benchmarks/bench_one_kernel_floor.py [--report R] [--repeat 7]
       [--tree LABEL=PATH ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_REPORT = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the process tree, exit code) of one run."""
    with open(cwd / "stdout", "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    # ru_*time of wait4 counts the child and the descendants it waited for (readers, nvdisasm).
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", type=Path, default=DEFAULT_REPORT)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tree", action="append", default=[], help="LABEL=PATH of a source tree (repeatable)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    report = a.report.resolve()
    if not report.exists():
        ap.error(f"{report} not found (python sample_reports/unpack.py unpacks the samples)")
    trees = [t.partition("=")[::2] for t in a.tree] or [("this tree", str(ROOT))]
    py = sys.executable
    floor = str(HERE / "floor.py")
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmds: list[tuple[str, list[str], dict[str, str]]] = []
    for label, path in trees:
        env = {**base_env, "PYTHONPATH": str(Path(path).resolve())}
        cmds.append(
            (
                f"drgpu analyze -f json ({label})",
                [py, "-m", "drgpu_py", "analyze", str(report), "-f", "json", "-q"],
                env,
            )
        )
    env = {**base_env, "PYTHONPATH": str(Path(trees[0][1]).resolve())}
    cmds.append(("read floor (floor.py rep)", [py, floor, "rep", str(report)], env))
    cmds.append(("read floor with SASS (floor.py rep --sass)", [py, floor, "rep", str(report), "--sass"], env))
    cmds.append(('python -c "import pandas"', [py, "-c", "import pandas"], base_env))
    for _, path in trees:
        subprocess.run([py, "-m", "compileall", "-q", str(Path(path).resolve() / "drgpu_py")], check=True)
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _, _ in cmds}
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="drgpu-bench-") as tmp:
        for _ in range(a.repeat):
            for name, argv_, env in cmds:
                results[name].append(run(argv_, Path(tmp), env))
    sass_floor = statistics.median(w for w, _, _ in results[cmds[-2][0]])
    lines = [
        f"Report: {a.report.name}; {a.repeat} rounds; {os.cpu_count()} cores; load average before: {load}.",
        "",
        "| command | median wall s | min-max wall s | median CPU s | / floor with SASS |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, _, _ in cmds:
        runs = results[name]
        walls = [w for w, _, _ in runs]
        failed = " (failed)" if any(rc for _, _, rc in runs) else ""
        lines.append(
            f"| {name}{failed} | {statistics.median(walls):.2f} | {min(walls):.2f}-{max(walls):.2f} | "
            f"{statistics.median(c for _, c, _ in runs):.2f} | {statistics.median(walls) / sass_floor:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    if a.out:
        a.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
