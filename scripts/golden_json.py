#!/usr/bin/env python3
"""The JSON analysis of every shipped sample report, fingerprinted: a refactoring that must not
change behaviour keeps every fingerprint (tests/samples/test_golden_json.py checks the
reports; ``--check`` here checks every input, CSV exports included, and .ci/run runs it).

Inputs: each ``sample_reports/CASE/CASE_{bad,fixed}.ncu-rep`` (unpacked by
``sample_reports/unpack.py``) and its raw/source CSV pair, and the compressed reports of
``library/``, ``near_miss/``, ``ranks/`` and ``launch/`` (decompressed to a temporary folder).
A report's path inside the JSON is written relative to the repository, so fingerprints do not
depend on where the checkout or the temporary folder is.

Usage:
  python scripts/golden_json.py --write        rewrite tests/data/golden_json.sha256
  python scripts/golden_json.py --check        compare; exit 1 and list what changed
  python scripts/golden_json.py --dump DIR     also write each JSON document into DIR
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_reports"
GOLDEN = ROOT / "tests" / "data" / "golden_json.sha256"
COMPRESSED_ONLY = ("library", "near_miss", "ranks", "launch")


def inputs() -> list[str]:
    """Repository-relative names of every input, in a fixed order: a report, or a raw CSV
    (analyzed with the source CSV beside it)."""
    out = []
    for rep in sorted(SAMPLES.glob("*/*_*.ncu-rep.xz")) + sorted(SAMPLES.glob("*/*_*.ncu-rep")):
        if rep.parent.name in COMPRESSED_ONLY:
            continue
        name = rep.name.removesuffix(".xz")
        if not name.endswith(("_bad.ncu-rep", "_fixed.ncu-rep")):
            continue
        rel = str((rep.parent / name).relative_to(ROOT))
        if rel not in out:
            out.append(rel)
        raw = rep.parent / name.replace(".ncu-rep", ".raw.csv")
        if raw.exists() and str(raw.relative_to(ROOT)) not in out:
            out.append(str(raw.relative_to(ROOT)))
    for folder in COMPRESSED_ONLY:
        out += [str(p.relative_to(ROOT)) for p in sorted((SAMPLES / folder).glob("*.ncu-rep.xz"))]
    return sorted(set(out))


def json_text(analysis, path: Path | str, rel: str) -> str:
    """The JSON of an analysis of the input ``rel`` read from ``path``, its path made relative."""
    from drgpu_py.render import render

    return render(analysis, "json").replace(str(path), rel.removesuffix(".xz"))


def document(rel: str) -> str:
    """The JSON text ``drgpu analyze -f json`` writes for one input, its path made relative."""
    from drgpu_py.analysis import analyze
    from drgpu_py.analysis.groups import group_profile
    from drgpu_py.readers import open_report

    path = ROOT / rel
    tmp = None
    if rel.endswith(".xz") or not path.exists():
        xz = path if rel.endswith(".xz") else path.with_name(path.name + ".xz")
        tmp = Path(tempfile.mkdtemp(prefix="drgpu-golden-"))
        path = tmp / xz.name.removesuffix(".xz")
        with lzma.open(xz) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    try:
        profile = open_report(path)
        if rel.count("/") == 2 and not rel.startswith("sample_reports/library/"):
            # A sample's launches of one kernel are one group, as drgpu analyze makes them (and
            # the test suite's shared analyses): a whole launch sequence is analyzed once.
            profile = group_profile(profile)
        return json_text(analyze(profile), path, rel)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def fingerprint(rel: str) -> tuple[str, str, str]:
    text = document(rel)
    return rel, hashlib.sha256(text.encode()).hexdigest(), text


def fingerprints(jobs: int = 2, dump: Path | None = None) -> dict[str, str]:
    names = inputs()
    out = {}
    with ProcessPoolExecutor(jobs) as pool:
        for rel, digest, text in pool.map(fingerprint, names):
            out[rel] = digest
            if dump is not None:
                target = dump / (rel.replace("/", "__") + ".json")
                target.write_text(text)
    return out


def read_golden(path: Path = GOLDEN) -> dict[str, str]:
    rows = {}
    for line in path.read_text().splitlines():
        digest, rel = line.split(maxsplit=1)
        rows[rel] = digest
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--dump", type=Path)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import importlib.util

    spec = importlib.util.spec_from_file_location("sample_unpack", SAMPLES / "unpack.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.unpack()
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
    got = fingerprints(args.jobs, args.dump)
    if args.write:
        GOLDEN.write_text("".join(f"{d}  {rel}\n" for rel, d in sorted(got.items())))
        print(f"wrote {len(got)} fingerprints to {GOLDEN.relative_to(ROOT)}")
    if args.check:
        want = read_golden()
        changed = sorted(r for r in set(want) | set(got) if want.get(r) != got.get(r))
        for rel in changed:
            print(f"changed: {rel}")
        print(f"{len(got) - len(changed)} of {len(set(want) | set(got))} unchanged")
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
