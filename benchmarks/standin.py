"""Build a stand-in many-launch report from drgpu's real single-launch sample reports.

Until benchmarks/make_report.sh has been run on a GPU machine (benchmarks/RESULTS.md says
whether it has), the analysis-speed benchmark needs a report with about a thousand launches.
This script makes one out of real data: an ``.ncu-rep`` is a file header followed by
self-contained blocks (one per profiled result), so appending the blocks of several reports
gives a report that ncu_report reads as one range with all their launches in order. The CSV
exports are concatenated the same way (raw page: rows renumbered; source page: blocks).

The stand-in cycles through a few sample kernels (default five of different shape, like
benchmarks/many_kernels.cu), so launches of the same function repeat as in a real
application. It is heavier per launch than a lean profile (the samples were taken with
``--set full``: about 1-2 MB per launch instead of tens of KB).

Usage: python benchmarks/standin.py OUTDIR [--launches 1000] [--cases a,b,...]
Writes OUTDIR/standin_N.ncu-rep, .raw.csv, .source.csv.
"""

from __future__ import annotations

import argparse
import csv
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CASES = ("aos_gather_bad", "smem_stride_bad", "serial_norm_bad", "fma_chain_bad", "global_atomics_bad")


def _blocks(rep: bytes) -> bytes:
    """Everything after the file header: magic, u32 size, header."""
    if rep[:4] != b"NVR\x00":
        raise ValueError("not an Nsight Compute report")
    (hlen,) = struct.unpack("<I", rep[4:8])
    return rep[8 + hlen :]


def build(out: Path, launches: int, cases: list[str]) -> Path:
    reps, raws, srcs = [], [], []
    for c in cases:
        folder = ROOT / "sample_reports" / c.rsplit("_", 1)[0]
        reps.append((folder / f"{c}.ncu-rep").read_bytes())
        with open(folder / f"{c}.raw.csv", newline="", encoding="utf-8") as fh:
            raws.append(list(csv.reader(fh)))
        with open(folder / f"{c}.source.csv", newline="", encoding="utf-8") as fh:
            srcs.append(list(csv.reader(fh)))
    header, units = raws[0][0], raws[0][1]
    for r in raws[1:]:
        if r[0] != header:
            raise SystemExit("the sample raw CSVs have different columns; cannot concatenate")
    id_col = header.index("ID")
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"standin_{launches}"
    rep_path = stem.with_suffix(".ncu-rep")
    with open(rep_path, "wb") as fh:
        fh.write(reps[0])
        for i in range(1, launches):
            fh.write(_blocks(reps[i % len(reps)]))
    with open(stem.with_suffix(".raw.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(header)
        w.writerow(units)
        for i in range(launches):
            row = list(raws[i % len(raws)][2])
            row[id_col] = str(i)
            w.writerow(row)
    with open(stem.with_suffix(".source.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for i in range(launches):
            for row in srcs[i % len(srcs)]:
                w.writerow(row)
    return rep_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--launches", type=int, default=1000)
    ap.add_argument(
        "--cases", default=",".join(DEFAULT_CASES), help="sample reports to cycle through (CASE_bad / CASE_fixed names)"
    )
    a = ap.parse_args(argv)
    path = build(a.outdir, a.launches, [c for c in a.cases.split(",") if c])
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
