"""Analysis speed at scale: ``drgpu analyze --format json`` against the read floor.

For a many-launch report (default: benchmarks/data/many_kernels.ncu-rep.xz, unpacked to a
temporary folder; or ``--report PATH``), and for each subset size N (``--kernel 0:N``), it
runs as child processes, ``--repeat`` times each:

* ``drgpu analyze REPORT --kernel 0:N --format json -q`` (stdout to a file): the whole
  process, start-up included, as a user runs it;
* ``benchmarks/floor.py rep REPORT --kernel 0:N``: a script that reads the same metrics and
  per-PC samples through ncu_report and does nothing else;
* the same two on the CSV exports (raw page + source page, without the .ncu-rep beside them,
  so no line table is read): ``drgpu analyze X.raw.csv`` and ``floor.py csv``.

Each row gives the best wall time of the repeats, kernels per second, the ratio to the floor,
the marginal milliseconds per kernel between consecutive sizes (linear scaling keeps it
flat), and the peak resident memory of the child (``os.wait4``), also as a multiple of the
input's size. Output: a Markdown table (stdout, or ``--out FILE``) headed by the machine.

Usage: python benchmarks/bench_analyze.py [--report R] [--sizes 10,100,1000] [--repeat 3]
       [--no-csv | --no-rep] [--out FILE]
This is a benchmark, not a test: it takes minutes on a large report.
"""

from __future__ import annotations

import argparse
import lzma
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_REPORT = HERE / "data" / "many_kernels.ncu-rep.xz"


@dataclass
class Run:
    seconds: float
    peak_kib: int
    rc: int


def run_child(argv: list[str], stdout_path: Path) -> Run:
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stderr.write(f"{' '.join(argv)} -> exit {p.returncode}\n{err[-2000:]}\n")
    return Run(seconds, usage.ru_maxrss, p.returncode)  # ru_maxrss: KiB on Linux


def best(argv: list[str], repeat: int, scratch: Path) -> Run:
    runs = [run_child(argv, scratch / "stdout") for _ in range(repeat)]
    return Run(min(r.seconds for r in runs), max(r.peak_kib for r in runs), max(r.rc for r in runs))


def drgpu_argv() -> list[str]:
    exe = Path(sys.executable).with_name("drgpu")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "drgpu_py.cli"]


def count_launches(report: Path) -> int:
    import ncu_report

    ctx = ncu_report.load_report(str(report))
    return sum(ctx.range_by_idx(r).num_actions() for r in range(ctx.num_ranges()))


def unpack(path: Path, scratch: Path) -> Path:
    if path.suffix != ".xz":
        return path
    out = scratch / path.stem
    with lzma.open(path) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    for suffix in (".raw.csv.xz", ".source.csv.xz"):
        sib = path.with_name(path.name.replace(".ncu-rep.xz", suffix))
        if sib.exists():
            with lzma.open(sib) as src, open(scratch / sib.name[:-3], "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    return out


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / (1 << 20):.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        pd = version("pandas")
    except PackageNotFoundError:
        import pandas

        pd = pandas.__version__
    try:
        nr = version("ncu_report")
    except PackageNotFoundError:  # the module shipped with ncu (its extras/python folder)
        import ncu_report

        nr = "from ncu's extras/python" if "extras" in str(getattr(ncu_report, "__file__", "")) else "?"
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; Linux {platform.release()}; Python {platform.python_version()}, "
        f"pandas {pd}, ncu_report {nr}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", type=Path, default=DEFAULT_REPORT)
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-csv", action="store_true", help="skip the CSV path")
    ap.add_argument("--no-rep", action="store_true", help="skip the .ncu-rep path (time the CSV exports only)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    if not a.report.exists():
        ap.error(f"{a.report} not found (run benchmarks/make_report.sh on a GPU machine, or benchmarks/standin.py)")
    scratch = Path(tempfile.mkdtemp(prefix="drgpu-bench-"))
    try:
        report = unpack(a.report, scratch)
        total = count_launches(report)
        sizes = [n for n in (int(x) for x in a.sizes.split(",")) if n <= total] or [total]
        raw = report.with_name(report.name.replace(".ncu-rep", ".raw.csv"))
        src = report.with_name(report.name.replace(".ncu-rep", ".source.csv"))
        csv_dir = scratch / "csv"
        if not a.no_csv and raw.exists() and src.exists():
            csv_dir.mkdir()  # without the .ncu-rep beside them: the pure CSV path
            (csv_dir / "r.raw.csv").symlink_to(raw.resolve())
            (csv_dir / "r.source.csv").symlink_to(src.resolve())
        else:
            csv_dir = None
        floor = [sys.executable, str(HERE / "floor.py")]
        rows = []
        paths = (
            []
            if a.no_rep
            else [
                (
                    "ncu-rep",
                    report.stat().st_size,
                    lambda n: drgpu_argv() + ["analyze", str(report), "--kernel", f"0:{n}", "--format", "json", "-q"],
                    lambda n: floor + ["rep", str(report), "--kernel", f"0:{n}"],
                )
            ]
        )
        if csv_dir is not None:
            paths.append(
                (
                    "csv",
                    raw.stat().st_size + src.stat().st_size,
                    lambda n: (
                        drgpu_argv()
                        + ["analyze", str(csv_dir / "r.raw.csv"), "--kernel", f"0:{n}", "--format", "json", "-q"]
                    ),
                    lambda n: (
                        floor + ["csv", str(csv_dir / "r.raw.csv"), str(csv_dir / "r.source.csv"), "--kernel", f"0:{n}"]
                    ),
                )
            )
        for name, size, tool, base in paths:
            prev = None
            for n in sizes:
                d = best(tool(n), a.repeat, scratch)
                f = best(base(n), a.repeat, scratch)
                marginal = "" if prev is None else f"{1e3 * (d.seconds - prev[1]) / (n - prev[0]):.1f}"
                rows.append((name, n, d, f, marginal, size))
                prev = (n, d.seconds)
                print(
                    f"{name} {n}: drgpu {d.seconds:.2f} s {d.peak_kib / 1024:.0f} MiB, floor {f.seconds:.2f} s "
                    f"{f.peak_kib / 1024:.0f} MiB",
                    file=sys.stderr,
                )
        lines = [
            f"Machine: {machine()}.",
            f"Report: {a.report.name} ({total} launches, {report.stat().st_size / 1e6:.1f} MB unpacked); "
            f"best of {a.repeat} runs per cell.",
            "",
            "| input | kernels | drgpu s | kernels/s | floor s | drgpu / floor | marginal ms/kernel "
            "| drgpu peak MiB | floor peak MiB | peak / input size |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, n, d, f, marginal, size in rows:
            bad = " (failed)" if d.rc or f.rc else ""
            lines.append(
                f"| {name}{bad} | {n} | {d.seconds:.2f} | {n / d.seconds:.0f} | {f.seconds:.2f} | "
                f"{d.seconds / f.seconds:.2f} | {marginal} | {d.peak_kib / 1024:.0f} | {f.peak_kib / 1024:.0f} | "
                f"{d.peak_kib * 1024 / size:.2f} |"
            )
        text = "\n".join(lines) + "\n"
        if a.out:
            a.out.write_text(text, encoding="utf-8")
        sys.stdout.write(text)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
