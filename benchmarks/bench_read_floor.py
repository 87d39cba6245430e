"""Analysis at the speed of the reader (issue 45 item 3): whole-process ``drgpu analyze -f json``
against its read floors, for one kernel and for 250 launches, and against ``ncu -i`` itself
where ``ncu`` is on PATH.

Commands, each a child process run from a temporary folder (``python -m drgpu_py`` would
otherwise import the package of the current folder first), one after the other in every round
so that the machine's drift touches them alike:

one kernel (``--report``, default sample_reports/aos_gather/aos_gather_bad.ncu-rep):

* ``python -m drgpu_py analyze R -f json -q`` (stdout to a file), once per ``--tree``;
* ``benchmarks/floor.py rep R``: its metrics and per-PC samples through ncu_report, nothing
  else (the read floor without SASS);
* ``benchmarks/floor.py rep R --sass``: the same plus each function's SASS, lines and sources
  through ncu_report and its disassembler (the read floor with SASS: what the analysis needs);
* ``ncu -i R --page details`` and ``ncu -i R --page raw`` when ``ncu`` is on PATH;
* ``python -c "import pandas"`` (for scale);

many launches (``--many``, default benchmarks/data/many_kernels.ncu-rep.xz, unpacked to a
temporary folder; ``--launches 250``): the same drgpu command and both floors with
``--kernel 0:N``, and ``ncu -i R --page details --launch-count N`` when ``ncu`` is on PATH.

Each row: median and range of the wall times, median CPU (user + sys of the process and all
it waited for: readers, nvdisasm; ``os.wait4``), and the median as a multiple of each floor
and of ncu's details page (where measured). Targets (issue 45): one kernel within 1.5x of the
floor with SASS and within 2x of ``ncu --page details``; 250 launches within 1.3x of the floor
with SASS. Each tree's modules are compiled to bytecode first, as an installed package's are.

Usage: python benchmarks/bench_read_floor.py [--repeat 7] [--tree LABEL=PATH ...]
       [--report R] [--many R] [--launches 250] [--no-many] [--out FILE]
On the GPU host (ncu on PATH), from the repository root:
       python benchmarks/bench_read_floor.py --repeat 7 --out /tmp/read_floor.md
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench_one_kernel_floor import run  # one child's wall and CPU time (os.wait4)
from default_set_parity import readable  # a .xz report decompressed into the scratch folder

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_REPORT = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"
DEFAULT_MANY = HERE / "data" / "many_kernels.ncu-rep.xz"
FLOOR = "read floor with SASS (floor.py rep --sass)"
BARE_FLOOR = "read floor without SASS (floor.py rep)"
NCU_DETAILS = "ncu -i R --page details"


@dataclass
class Command:
    name: str
    argv: list[str]
    env: dict[str, str]
    runs: list[tuple[float, float, int]] = field(default_factory=list)  # (wall s, CPU s, exit code)

    def median(self) -> float:
        return statistics.median(w for w, _, _ in self.runs)


def commands(report: Path, trees, base_env, kernel: str | None, ncu: str | None) -> list[Command]:
    """The commands of one table, in the order of each round."""
    py = sys.executable
    floor = str(HERE / "floor.py")
    sel = ["--kernel", kernel] if kernel else []
    out = []
    for label, path in trees:
        env = {**base_env, "PYTHONPATH": str(Path(path).resolve())}
        argv = [py, "-m", "drgpu_py", "analyze", str(report), *sel, "-f", "json", "-q"]
        out.append(Command(f"drgpu analyze -f json ({label})", argv, env))
    env = {**base_env, "PYTHONPATH": str(Path(trees[0][1]).resolve())}
    out.append(Command(BARE_FLOOR, [py, floor, "rep", str(report), *sel], env))
    out.append(Command(FLOOR, [py, floor, "rep", str(report), *sel, "--sass"], env))
    if ncu:
        count = ["--launch-count", kernel.partition(":")[2]] if kernel else []
        out.append(Command(NCU_DETAILS, [ncu, "-i", str(report), "--page", "details", *count], base_env))
        if not kernel:
            out.append(Command("ncu -i R --page raw", [ncu, "-i", str(report), "--page", "raw"], base_env))
    if not kernel:
        out.append(Command('python -c "import pandas"', [py, "-c", "import pandas"], base_env))
    return out


def table(title: str, cmds: list[Command], repeat: int, scratch: Path) -> str:
    for _ in range(repeat):
        for c in cmds:
            c.runs.append(run(c.argv, scratch, c.env))
    by_name = {c.name: c for c in cmds}
    refs = [(n, by_name[n].median()) for n in (FLOOR, BARE_FLOOR, NCU_DETAILS) if n in by_name]
    head = " | ".join(f"/ {n.split(' (')[0].removeprefix('read ')}" for n, _ in refs)
    lines = [
        f"{title}; {repeat} rounds.",
        "",
        f"| command | median wall s | min-max wall s | median CPU s | {head} |",
        "|---|---:|---:|---:|" + "---:|" * len(refs),
    ]
    for c in cmds:
        walls = [w for w, _, _ in c.runs]
        failed = " (failed)" if any(rc for _, _, rc in c.runs) else ""
        ratios = " | ".join(f"{c.median() / ref:.2f}" for _, ref in refs)
        lines.append(
            f"| {c.name}{failed} | {c.median():.2f} | {min(walls):.2f}-{max(walls):.2f} | "
            f"{statistics.median(u for _, u, _ in c.runs):.2f} | {ratios} |"
        )
    return "\n".join(lines) + "\n"


def machine(py_env: dict[str, str], report: Path) -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        cpu = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if "model name" in ln
            ),
            cpu,
        )
    probe = (
        "import importlib.metadata as m\n"
        "def v(n):\n"
        "    try: return m.version(n)\n"
        "    except m.PackageNotFoundError: return '?'\n"
        "import subprocess, sys\n"
        "from drgpu_py.sass.cubin import SassSource, cubins_in_report, find_tool\n"
        "tool = find_tool('nvdisasm')\n"
        "ver = subprocess.run([tool, '--version'], capture_output=True, text=True).stdout.split()[-1] if tool else ''\n"
        "used = SassSource.start(cubins_in_report(sys.argv[1])).result() is not None\n"
        "print(f\"pandas {v('pandas')}, ncu_report {v('ncu_report')}, nvdisasm {tool or 'none'} {ver} \"\n"
        "      f\"(the report's SASS from nvdisasm: {'yes' if used else 'no, from ncu_report'})\")"
    )
    tools = subprocess.run(
        [sys.executable, "-c", probe, str(report)], capture_output=True, text=True, env=py_env
    ).stdout.strip()
    return f"{cpu}, {os.cpu_count()} cores; Linux {platform.release()}; Python {platform.python_version()}; {tools}"


def commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    )
    return (r.stdout.strip() or "?") + (" (modified)" if dirty.stdout.strip() else "")


def ncu_version(ncu: str | None) -> str:
    if not ncu:
        return "ncu: not on PATH (its rows are left out)"
    r = subprocess.run([ncu, "--version"], capture_output=True, text=True)
    return "ncu: " + (r.stdout.strip().splitlines() or ["?"])[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", type=Path, default=DEFAULT_REPORT)
    ap.add_argument("--many", type=Path, default=DEFAULT_MANY)
    ap.add_argument("--launches", type=int, default=250)
    ap.add_argument("--no-many", action="store_true", help="one kernel only")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tree", action="append", default=[], help="LABEL=PATH of a source tree (repeatable)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    for p in [a.report] + ([] if a.no_many else [a.many]):
        if not p.exists():
            ap.error(f"{p} not found (python sample_reports/unpack.py unpacks the samples)")
    trees = [t.partition("=")[::2] for t in a.tree] or [("this tree", str(ROOT))]
    for _, path in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(path).resolve() / "drgpu_py")], check=True)
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ncu = shutil.which("ncu")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    parts = [
        f"Date: {time.strftime('%Y-%m-%d %H:%M %Z')}; commit {commit()}; load average before: {load}.",
        f"Machine: {machine({**base_env, 'PYTHONPATH': str(Path(trees[0][1]).resolve())}, a.report.resolve())}; "
        f"{ncu_version(ncu)}.",
        "",
    ]
    with tempfile.TemporaryDirectory(prefix="drgpu-bench-") as tmp:
        scratch = Path(tmp)
        report = a.report.resolve()
        parts.append(
            table(f"One kernel: {report.name}", commands(report, trees, base_env, None, ncu), a.repeat, scratch)
        )
        if not a.no_many:
            many = readable(a.many.resolve(), scratch)
            sel = f"0:{a.launches}"
            cmds = commands(many, trees, base_env, sel, ncu)
            parts += ["", table(f"Many launches: {a.many.name}, --kernel {sel}", cmds, a.repeat, scratch)]
    text = "\n".join(parts)
    if a.out:
        a.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
