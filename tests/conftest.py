"""Shared fixtures: the real sample reports (sample_reports/manifest.yaml) and a per-session
cache of their analyses, so each report is read and analyzed once per test run."""
from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_reports"


def manifest() -> dict:
    return yaml.safe_load((SAMPLES / "manifest.yaml").read_text())["cases"]


CASES = sorted(manifest())


def root_line(case: str) -> int | None:
    """The line marked `// ROOT` in the sample's source (the planted root cause)."""
    for i, line in enumerate((SAMPLES / "src" / f"{case}.cu").read_text().splitlines(), 1):
        if re.search(r"//\s*ROOT(?!-)", line):
            return i
    return None


def report_path(case: str, variant: str, ext: str = "ncu-rep") -> Path:
    return SAMPLES / case / f"{case}_{variant}.{ext}"


@functools.cache
def analysis_of(case: str, variant: str, ext: str = "ncu-rep"):
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report
    return analyze(open_report(report_path(case, variant, ext)))


@pytest.fixture(scope="session")
def samples_manifest() -> dict:
    return manifest()


@functools.cache
def library_report(stem: str = "library") -> Path:
    """sample_reports/library/STEM.ncu-rep.xz, decompressed once per test run into a
    temporary folder: library (16 real library kernels), step (one inference step of a small
    PyTorch model), full_set (three library kernels under ncu --set full)."""
    import atexit
    import lzma
    import shutil
    import tempfile
    folder = Path(tempfile.mkdtemp(prefix=f"drgpu-{stem}-"))
    atexit.register(shutil.rmtree, folder, True)
    out = folder / f"{stem}.ncu-rep"
    with lzma.open(SAMPLES / "library" / f"{stem}.ncu-rep.xz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return out


@functools.cache
def library_analysis(stem: str = "library"):
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report
    return analyze(open_report(library_report(stem)))
