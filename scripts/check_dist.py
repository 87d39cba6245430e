#!/usr/bin/env python3
"""Check a built wheel and sdist of drgpu (``python -m build``): each holds what an install
needs to run, which the repository's layout alone does not prove.

The wheel must hold every module and data file of ``drgpu_py/`` (the specs' YAML and JSON
schemas) and, under ``drgpu_py/_share/``, every file of ``metric_sets/`` and ``templates/``
(pyproject.toml's force-include; ``specs.loader.share_dir`` looks there first); its
metadata must mark the SASS tools (NVIDIA wheels for Linux and Windows only) for those
platforms, so that ``pip install drgpu`` works on macOS. The sdist must hold the same
sources, so that the wheel built from it (as ``python -m build`` does) is complete.

Usage: python scripts/check_dist.py DIST_FOLDER   (exit 1 and one line per problem)
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Folders copied into the wheel under drgpu_py/_share/ (pyproject.toml's force-include).
SHARED = ("metric_sets", "templates")
#: Requirements that must carry a platform marker (no macOS wheels exist).
PLATFORM_ONLY = ("nvidia-cuda-nvdisasm", "nvidia-cuda-cuobjdump")


def expected_files(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(paths the wheel must hold, paths the sdist must hold, relative to its top folder)."""
    package = [
        str(p.relative_to(root))
        for p in sorted((root / "drgpu_py").rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]
    shared = [str(p.relative_to(root)) for d in SHARED for p in sorted((root / d).rglob("*")) if p.is_file()]
    wheel = package + [f"drgpu_py/_share/{p}" for p in shared]
    sdist = package + shared + ["README.md", "pyproject.toml"]
    return wheel, sdist


def problems(dist: Path, root: Path = ROOT) -> list[str]:
    wheels, sdists = sorted(dist.glob("drgpu-*.whl")), sorted(dist.glob("drgpu-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        return [f"{dist}: expected one wheel and one sdist, found {len(wheels)} and {len(sdists)}"]
    want_wheel, want_sdist = expected_files(root)
    out = []
    with zipfile.ZipFile(wheels[0]) as zf:
        names = set(zf.namelist())
        out += [f"{wheels[0].name}: lacks {p}" for p in want_wheel if p not in names]
        meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode("utf-8") if meta else ""
    requires = [ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Requires-Dist:")]
    for name in PLATFORM_ONLY:
        req = next((r for r in requires if r.startswith(name)), None)
        if req is None:
            out.append(f"{wheels[0].name}: no requirement {name}")
        elif "sys_platform" not in req or "darwin" in req:
            out.append(f"{wheels[0].name}: {name} is required on every platform ({req}); NVIDIA ships no macOS wheel")
    with tarfile.open(sdists[0]) as tf:
        top = sdists[0].name.removesuffix(".tar.gz")
        names = {m.name.removeprefix(top + "/") for m in tf.getmembers()}
    out += [f"{sdists[0].name}: lacks {p}" for p in want_sdist if p not in names]
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    found = problems(Path(argv[0]))
    for line in found:
        print(f"check_dist: {line}")
    if not found:
        print(f"check_dist: wheel and sdist in {argv[0]} hold the package, its data and its share folders")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
