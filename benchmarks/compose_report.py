"""A many-kernel benchmark report made only of real launches: every kernel type of
``sample_reports/`` in one ``.ncu-rep``.

An ``.ncu-rep`` is a file header followed by self-contained result blocks, so appending the
blocks of several reports gives one report holding all their launches (the same
construction as tests/samples/test_perf_equivalence.py). The report holds, ``--repeat`` times and
interleaved as an application launches them: both launches (bad and fixed) of every case in
``sample_reports/CASE/``, the two rank reports and the two launch-bound ones (all H100 profiles
made with ncu's full set), and, with ``--library``, once, the 16 library kernels (cuBLAS,
cuDNN, Triton; drgpu's set with tensor-operation counters) of ``sample_reports/library``.
It is not a profile of one application: it is every kind of kernel drgpu has real data for,
including the transcendental-heavy ones (precise_math) a synthetic benchmark lacked.

Usage: python benchmarks/compose_report.py OUT.ncu-rep [--repeat 6] [--library]
Prints the launch count and size. Run ``python sample_reports/unpack.py`` first.
"""

from __future__ import annotations

import argparse
import lzma
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_reports"


def parts() -> list[Path]:
    found = sorted(p for p in SAMPLES.glob("*/*.ncu-rep") if p.parent.name not in ("library", "near_miss"))
    if not found:
        sys.exit("no sample reports: run python sample_reports/unpack.py first")
    return found


def blocks(path: Path) -> tuple[bytes, bytes]:
    """(file header, result blocks) of one report."""
    blob = lzma.decompress(path.read_bytes()) if path.suffix == ".xz" else path.read_bytes()
    (hlen,) = struct.unpack("<I", blob[4:8])
    return blob[: 8 + hlen], blob[8 + hlen :]


def compose(out: Path, repeat: int = 6, library: bool = False) -> Path:
    reps = parts()
    bodies = [blocks(p) for p in reps]
    header = bodies[0][0]
    order = []
    for r in range(repeat):
        # Interleave differently each round, as an application's phases would.
        order += bodies if r % 2 == 0 else bodies[::-1]
    tmp = out.with_name(out.name + ".part")
    with open(tmp, "wb") as fh:
        fh.write(header)
        for _, body in order:
            fh.write(body)
        if library:
            fh.write(blocks(SAMPLES / "library" / "library.ncu-rep.xz")[1])
    tmp.replace(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--repeat", type=int, default=6, help="rounds of every sample launch (default 6)")
    ap.add_argument("--library", action="store_true", help="append the 16 library kernels once (67 MB)")
    a = ap.parse_args(argv)
    compose(a.out, a.repeat, a.library)
    import ncu_report

    ctx = ncu_report.load_report(str(a.out))
    n = sum(ctx.range_by_idx(r).num_actions() for r in range(ctx.num_ranges()))
    print(f"{a.out}: {n} launches, {a.out.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
