"""Raw-page CSV of tens of thousands of launches: time and peak memory of ``drgpu analyze``.

Builds a synthetic raw-page export of ``--launches`` launches (default 50,000) by repeating
the 1,000 launch rows of ``benchmarks/data/many_kernels.raw.csv.xz`` (five kernels of
``many_kernels.cu`` profiled on an H100) with new, consecutive IDs, then runs, as child
processes, ``drgpu analyze X.raw.csv --format json -q -j 1`` (no source page: the raw
reader, kernel grouping and analysis at scale) and, with ``--per-launch``, the same with
every launch analyzed on its own. Each row gives the wall time and the child's peak
resident memory (``os.wait4``), also per launch and as a multiple of the file's size.

The bound it checks (``--bound-mib``; default 150 MiB + 64 KiB per launch, 3,275 MiB for
50,000): the grouped analysis stays under it. Memory grows linearly with launches: each
launch keeps its metrics (about 2,500 of them in this export) as a dict of floats, and the
file's cells are held as text while it is parsed. Exit 1 when a run exceeds it or fails.

Usage: python benchmarks/bench_csv_50k.py [--launches 50000] [--per-launch] [--bound-mib MIB]
This is a benchmark, not a test: it takes minutes.
"""

from __future__ import annotations

import argparse
import csv
import io
import lzma
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "data" / "many_kernels.raw.csv.xz"


def build(dest: Path, launches: int) -> Path:
    rows = list(csv.reader(io.StringIO(lzma.decompress(SOURCE.read_bytes()).decode("utf-8"))))
    header, units, body = rows[0], rows[1], rows[2:]
    id_col = header.index("ID")
    with open(dest, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(header)
        w.writerow(units)
        for i in range(launches):
            row = list(body[i % len(body)])
            row[id_col] = str(i)
            w.writerow(row)
    return dest


def run(argv: list[str], out: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS MiB) of a child process."""
    t0 = time.perf_counter()
    with open(out, "wb") as fh:
        p = subprocess.Popen(
            argv, stdout=fh, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(HERE.parent)}
        )
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode("utf-8", "replace") if p.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code:
        sys.stderr.write(err[-2000:])
    return code, wall, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--launches", type=int, default=50_000)
    ap.add_argument("--per-launch", action="store_true")
    ap.add_argument("--bound-mib", type=float, default=None)
    args = ap.parse_args()
    if args.bound_mib is None:
        args.bound_mib = 150 + args.launches / 16
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        f = build(Path(tmp) / "synthetic.raw.csv", args.launches)
        size_mib = f.stat().st_size / 2**20
        print(
            f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
            f"Python {platform.python_version()}"
        )
        print(f"Input: {args.launches:,} launches, {size_mib:.1f} MiB raw-page CSV\n")
        print("| run | launches | wall s | ms/launch | peak MiB | peak / input size | exit |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        modes = [("grouped", [])] + ([("per-launch", ["--per-launch"])] if args.per_launch else [])
        for label, extra in modes:
            argv = [sys.executable, "-m", "drgpu_py", "analyze", str(f), "-f", "json", "-q", "-j", "1", *extra]
            code, wall, peak = run(argv, Path(tmp) / "out.json")
            print(
                f"| {label} | {args.launches:,} | {wall:.1f} | {1000 * wall / args.launches:.2f} | {peak:.0f} | "
                f"{peak / size_mib:.1f} | {code} |"
            )
            if code or (label == "grouped" and peak > args.bound_mib):
                ok = False
    print(f"\nbound: grouped peak under {args.bound_mib:.0f} MiB: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
