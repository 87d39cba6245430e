#!/usr/bin/env python3
"""Unpack the sample reports kept compressed in the repository.

Most `CASE/CASE_{bad,fixed}.ncu-rep` files are stored as `.ncu-rep.xz` (about 20x smaller) and
unpacked beside themselves, once, by this script; the test suite calls it at start-up. Two
reports stay unpacked for the README's commands (aos_gather_bad, serial_norm_bad).

Usage: python sample_reports/unpack.py      (idempotent; prints what it unpacked)
"""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent


def unpack(root: Path = HERE, quiet: bool = True) -> list[Path]:
    done = []
    for xz in sorted(root.glob("*/*.ncu-rep.xz")):
        if xz.parent.name in ("library", "near_miss"):
            continue  # analyzed straight from a temporary copy by the tests that use them
        out = xz.with_suffix("")
        if out.exists() and out.stat().st_mtime >= xz.stat().st_mtime:
            continue
        tmp = out.with_name(out.name + ".part")
        with lzma.open(xz) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        tmp.replace(out)
        done.append(out)
        if not quiet:
            print(out.relative_to(root))
    return done


if __name__ == "__main__":
    unpack(quiet=False)
