#!/usr/bin/env python3
"""Unpack the sample reports and benchmark data kept compressed in the repository.

Most `CASE/CASE_{bad,fixed}.ncu-rep` files are stored as `.ncu-rep.xz` (about 20x smaller) and
unpacked beside themselves, once, by this script; the test suite calls it at start-up for
those. Two reports stay unpacked for the README's commands (aos_gather_bad, serial_norm_bad).
Run by hand it also unpacks `library/` and `near_miss/` (the tests read those from temporary
copies) and `benchmarks/data/` (the 1,000-launch report and its CSV exports: about 140 MB).

drgpu reads the `.xz` files as they are (`drgpu analyze sample_reports/chan40/chan40_bad.ncu-rep.xz`,
or the name without `.xz`), through a temporary copy each time; unpacking saves that time.

Usage: python sample_reports/unpack.py      (idempotent; prints what it unpacked)
"""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Folders the test suite leaves compressed (it reads them from temporary copies).
READ_COMPRESSED_BY_THE_TESTS = ("library", "near_miss")


def targets(root: Path = HERE, everything: bool = False) -> list[Path]:
    """The `.xz` files to unpack: every sample report's, less those the tests read from
    temporary copies unless ``everything`` (which adds the benchmark data beside ``root``)."""
    found = sorted(root.glob("*/*.ncu-rep.xz"))
    if not everything:
        return [xz for xz in found if xz.parent.name not in READ_COMPRESSED_BY_THE_TESTS]
    bench = root.parent / "benchmarks" / "data"
    return found + sorted(bench.glob("*.xz"))


def unpack(root: Path = HERE, quiet: bool = True, everything: bool = False) -> list[Path]:
    done = []
    for xz in targets(root, everything):
        out = xz.with_suffix("")
        if out.exists() and out.stat().st_mtime >= xz.stat().st_mtime:
            continue
        tmp = out.with_name(out.name + ".part")
        try:
            with lzma.open(xz) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            tmp.replace(out)
        finally:
            tmp.unlink(missing_ok=True)  # an interrupted or failed copy leaves nothing behind
        done.append(out)
        if not quiet:
            print(out.relative_to(root.parent))
    return done


if __name__ == "__main__":
    unpack(quiet=False, everything=True)
