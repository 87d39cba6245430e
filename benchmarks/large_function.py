"""A large function for the bounded-analysis benchmark (issue 48 item 5), made from a sample's
CSV exports: ``large_function.py SOURCE_CSV COPIES OUT_DIR`` writes OUT_DIR/large.raw.csv (the
sample's raw page, unchanged) and OUT_DIR/large.source.csv, whose function is the sample's body
(every instruction before its first EXIT) repeated COPIES times, then the rest of the listing.
Each copy's addresses, and the branch and BSSY targets inside the body, move by the body's
length, so every copy keeps its loops; each copy holds 1/COPIES of the original's counts and
samples (averages unchanged), so that the function's totals still match the raw page's.

A 56-instruction sample repeated 2,000 times gives about 90,000 instructions: a function of the
size large template libraries (Kokkos, CUTLASS) make, which ``benchmarks/floor.py csv`` reads
in well under a second. ``bench_large_function.py`` times ``drgpu analyze`` on it against that
read floor.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from pathlib import Path

#: An address operand (branch, BSSY, call targets) in the listing's SASS text.
_TARGET = re.compile(r"0x[0-9a-fA-F]{6,}")


def _shift_targets(sass: str, lo: int, hi: int, by: int) -> str:
    """``sass`` with each address operand inside [lo, hi) moved by ``by`` bytes."""

    def move(m: re.Match) -> str:
        v = int(m.group(0), 16)
        return hex(v + by) if lo <= v < hi else m.group(0)

    return _TARGET.sub(move, sass)


def _share(value: str, copies: int) -> str:
    """One copy's share of a count cell; text cells ('-') unchanged."""
    try:
        # Fixed-point (ncu writes no exponents): 3 decimals, trailing zeros dropped.
        return f"{float(value) / copies:.3f}".rstrip("0").rstrip(".")
    except ValueError:
        return value


def enlarge(source_csv: Path, copies: int) -> str:
    """The source CSV's text with its function body repeated ``copies`` times."""
    rows = list(csv.reader(io.StringIO(source_csv.read_text(encoding="utf-8"))))
    head, names, body = rows[0], rows[1], rows[2:]
    addr, sass = names.index("Address"), names.index("Source")
    first = int(body[0][addr], 16)
    end = next(i for i, r in enumerate(body) if r[sass].strip() == "EXIT")
    loop, tail = body[:end], body[end:]
    span = 16 * len(loop)
    lo, hi = first, first + span
    # Averages per thread stay as they are; every other number is a count split over the copies.
    counts = [i for i, n in enumerate(names) if i not in (addr, sass) and "Avg." not in n]
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(head)
    w.writerow(names)
    for c in range(copies):
        for r in loop:
            row = list(r)
            row[addr] = hex(int(r[addr], 16) + c * span)
            row[sass] = _shift_targets(r[sass], lo, hi, c * span)
            for i in counts:
                row[i] = _share(r[i], copies)
            w.writerow(row)
    for r in tail:
        row = list(r)
        row[addr] = hex(int(r[addr], 16) + (copies - 1) * span)
        row[sass] = _shift_targets(r[sass], hi, hi + 16 * len(tail), (copies - 1) * span)
        w.writerow(row)
    return out.getvalue()


def main(argv: list[str]) -> int:
    source, copies, out_dir = Path(argv[0]), int(argv[1]), Path(argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = source.with_name(source.name.replace(".source.csv", ".raw.csv"))
    (out_dir / "large.raw.csv").write_bytes(raw.read_bytes())
    (out_dir / "large.source.csv").write_text(enlarge(source, copies), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
