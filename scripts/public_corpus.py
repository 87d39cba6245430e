"""Select and stage the public real-code corpus (HeCBench's CUDA programs) by a fixed rule.

Contract: given a HeCBench checkout (a git directory) and its commit, writes
sample_reports/public/selection.yaml (every `src/*-cuda` program in the rule's order, with
the reason it was left out, or none) and copies the sources of the first N programs that pass
the static rule into sample_reports/public/src/NAME/ (build files, sources and licence only).
The rule is fixed before any program is profiled (sample_reports/public/README.md states it);
which programs pass it never depends on what drgpu says of them.

Usage: python scripts/public_corpus.py GIT_DIR COMMIT [N]
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import yaml

SALT = "drgpu-public-corpus:"
# Kept for evaluation from outside the project: not calibrated on here.
OUTSIDE_EVALUATION = re.compile(r"Rodinia|GPA-Benchmark|llm\.c|SGEMM_CUDA")
# Programs that measure a runtime or hardware feature (dispatch rate, allocation, copies,
# streams, an intrinsic's use, a layout comparison, memory tests) rather than compute a
# result: there is no fix of their computation to measure. Judged from the description only.
FEATURE_PROBES = frozenset(
    {"vote", "dispatch", "threadcpy", "mallocFree", "overlap", "streamCreateCopyDestroy", "memtest", "layout"}
)
# A program whose time is in a library's kernels cannot be fixed in its own code.
LIBRARY_LINKS = re.compile(r"-l(cu\w+|nccl|mpi|gdal|gfortran|z)\b")
MAX_FILES = 10
KEEP_SUFFIXES = (".cu", ".h", ".cuh", ".hpp", ".cpp", ".c", ".inc")
KEEP_NAMES = ("Makefile", "LICENSE", "COPYRIGHT", "README")


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True).stdout


def _descriptions(readme: str) -> dict[str, str]:
    pattern = re.compile(r"^### (\S+) \(([^)]*)\)\n(.*?)(?=^### |\Z)", re.M | re.S)
    return {m.group(1): " ".join(m.group(3).split()) for m in pattern.finditer(readme)}


def _run_line(makefile: str) -> str:
    match = re.search(r"^run:.*\n\t(.*)", makefile, re.M)
    return match.group(1).strip() if match else ""


def _run_args(run: str) -> list[str]:
    return re.sub(r"^\$\(LAUNCHER\)\s*", "", run).split()[1:]


def _names_a_file(arg: str) -> bool:
    if arg.startswith("-"):
        return False
    return re.search(r"/|\.[A-Za-z]|^[A-Za-z_]{3,}$|\$\(", arg) is not None


def left_out_because(name: str, files: list[str], makefile: str, description: str) -> str | None:
    """The first rule that leaves the program out, or None when it is taken."""
    run = _run_line(makefile)
    if OUTSIDE_EVALUATION.search(description):
        return "kept for outside evaluation"
    if "library-based" in description.lower():
        return "its time is in a library's kernels"
    if len(files) > MAX_FILES:
        return f"more than {MAX_FILES} files"
    if not re.match(r"(\$\(LAUNCHER\)\s*)?\./", run):
        return "no plain run line in its Makefile"
    links = LIBRARY_LINKS.findall(makefile)
    if links:
        return "links " + ", ".join("-l" + link for link in links)
    if name in FEATURE_PROBES:
        return "measures a runtime or hardware feature"
    if any(_names_a_file(arg) for arg in _run_args(run)):
        return "needs an input file"
    return None


def main(git_dir: str, commit: str, count: int) -> None:
    root = Path(__file__).resolve().parent.parent / "sample_reports" / "public"
    descriptions = _descriptions(_git(git_dir, "show", f"{commit}:README.md"))
    folders = [d for d in _git(git_dir, "ls-tree", "-d", "--name-only", f"{commit}:src").split() if d.endswith("-cuda")]
    ordered = sorted(folders, key=lambda d: hashlib.sha256((SALT + d[: -len("-cuda")]).encode()).hexdigest())
    rows, taken = [], []
    for rank, folder in enumerate(ordered):
        name = folder[: -len("-cuda")]
        files = _git(git_dir, "ls-tree", "-r", "--name-only", commit, f"src/{folder}").split()
        makefile = _git(git_dir, "show", f"{commit}:src/{folder}/Makefile") if f"src/{folder}/Makefile" in files else ""
        why = left_out_because(name, files, makefile, descriptions.get(name, ""))
        rows.append(
            {"rank": rank, "program": name, "left_out": why, "run": " ".join(_run_args(_run_line(makefile))) or None}
        )
        if why is None and len(taken) < count:
            taken.append((name, files))
    for name, files in taken:
        dest = root / "src" / name
        dest.mkdir(parents=True, exist_ok=True)
        for path in files:
            base = path.rsplit("/", 1)[-1]
            if base.endswith(KEEP_SUFFIXES) or base in KEEP_NAMES:
                (dest / base).write_bytes(
                    subprocess.run(
                        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], capture_output=True, check=True
                    ).stdout
                )
    header = {
        "schema": "drgpu.public_selection/1",
        "source": "github:zjin-lcf/HeCBench",
        "commit": commit,
        "order": f"sha256('{SALT}' + program name), ascending",
        "programs": rows,
    }
    (root / "selection.yaml").write_text(yaml.safe_dump(header, sort_keys=False, width=110))
    print(f"{sum(r['left_out'] is None for r in rows)} of {len(rows)} pass; staged {len(taken)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30)
