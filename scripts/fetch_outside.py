"""Fetch the reports made by others (sample_reports/outside/manifest.yaml) into
sample_reports/outside/reports/, for tests/robustness/test_outside_reports.py.

Contract: each manifest entry names a public GitHub repository, a commit and a path; the file
is downloaded from that commit (raw.githubusercontent.com), checked against the manifest's
size and SHA-256, and written as ``reports/<id>.ncu-rep`` (or ``.csv``). Files already there
with the right digest are kept. The reports stay in their own repositories (none is committed
here); ``licence`` in the manifest says under which terms each repository publishes them
(``none``: no licence file, so the file may be read where it is published but not copied
into another repository). Exit 0 when every report is present afterwards, 1 otherwise
(a repository gone, no network), with one line per report that could not be had.

Usage: python scripts/fetch_outside.py [--only ID ...] [--redistributable] [--dest DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = ROOT / "sample_reports" / "outside"
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def target(entry: dict, dest: Path) -> Path:
    return dest / f"{entry['id']}.{'ncu-rep' if entry['format'] == 'ncu-rep' else 'csv'}"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _good(path: Path, entry: dict) -> bool:
    return path.is_file() and path.stat().st_size == entry["size"] and _digest(path.read_bytes()) == entry["sha256"]


def fetch_one(entry: dict, dest: Path, timeout: float = 60.0) -> str | None:
    """Download one report; None when it is there afterwards, else why not."""
    out = target(entry, dest)
    if _good(out, entry):
        return None
    url = RAW.format(repo=entry["repository"], commit=entry["commit"], path=urllib.parse.quote(entry["path"]))
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # a fixed https host, no other scheme
            data = r.read(entry["size"] + 1)
    except (urllib.error.URLError, OSError) as e:
        return f"{url}: {e}"
    if len(data) != entry["size"] or _digest(data) != entry["sha256"]:
        return f"{url}: not the file the manifest names (size {len(data)}, expected {entry['size']})"
    dest.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="report ids to fetch (default: all)")
    ap.add_argument("--redistributable", action="store_true", help="only reports under an open licence")
    ap.add_argument("--dest", type=Path, default=OUTSIDE / "reports")
    args = ap.parse_args(argv)
    entries = yaml.safe_load((OUTSIDE / "manifest.yaml").read_text(encoding="utf-8"))["reports"]
    if args.only:
        entries = [e for e in entries if e["id"] in set(args.only)]
    if args.redistributable:
        entries = [e for e in entries if e["redistributable"]]
    failed = 0
    for e in entries:
        why = fetch_one(e, args.dest)
        if why:
            failed += 1
            print(f"{e['id']}: {why}", file=sys.stderr)
    print(f"{len(entries) - failed} of {len(entries)} reports in {args.dest}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
