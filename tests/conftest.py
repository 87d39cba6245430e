"""Shared fixtures: the real sample reports (sample_reports/manifest.yaml) and a per-session
cache of their analyses, so each report is read and analyzed once per test run."""

from __future__ import annotations

import importlib.util
import functools
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_reports"


def _unpack_samples() -> None:
    """The sample reports are stored compressed; unpack them beside themselves, once."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sample_unpack", SAMPLES / "unpack.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.unpack()


_unpack_samples()


def manifest() -> dict:
    return yaml.safe_load((SAMPLES / "manifest.yaml").read_text())["cases"]


CASES = sorted(manifest())

# Whether NVIDIA's ncu_report is installed, found without importing it: once imported into
# the test process, every later read runs in-process (readers.isolate) and its memory stays.
HAVE_NCU_REPORT = importlib.util.find_spec("ncu_report") is not None
needs_ncu_report = pytest.mark.skipif(not HAVE_NCU_REPORT, reason="ncu_report is not installed")


def pytest_collection_modifyitems(items):
    """Tests that call the .ncu-rep reader in the test process run last: from then on every
    read is in-process (readers.isolate) and ncu_report keeps each report's memory."""
    items.sort(key=lambda item: item.get_closest_marker("in_process_reader") is not None)


def near_misses() -> dict:
    return yaml.safe_load((SAMPLES / "manifest.yaml").read_text()).get("near_misses") or {}


def cases_for(check, names=None, table=None) -> list:
    """Sample names as pytest params; a check the manifest lists under the sample's `known`
    is a strict expected failure with the manifest's reason (so a fix turns it into a test
    failure to update, not a silent pass)."""
    table = manifest() if table is None else table
    out = []
    for name in sorted(table) if names is None else names:
        known = table[name].get("known") or {}
        why = next((known[c] for c in ((check,) if isinstance(check, str) else check) if c in known), None)
        out.append(pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=why)) if why else name)
    return out


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
def xz_report(relpath: str) -> Path:
    """sample_reports/RELPATH.ncu-rep.xz decompressed once per test run into a temporary
    folder (reports kept compressed to keep the tree small)."""
    import atexit
    import lzma
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="drgpu-xz-"))
    atexit.register(shutil.rmtree, folder, True)
    out = folder / (Path(relpath).name + ".ncu-rep")
    with lzma.open(SAMPLES / f"{relpath}.ncu-rep.xz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return out


def library_report(stem: str = "library") -> Path:
    """A report of sample_reports/library: library (16 real library kernels), step (one
    inference step of a small PyTorch model), full_set (three library kernels under ncu
    --set full)."""
    return xz_report(f"library/{stem}")


@functools.cache
def library_analysis(stem: str = "library"):
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report

    return analyze(open_report(library_report(stem)))


# ---- every JSON document the tests make is validated against the shipped schemas ----------
SCHEMA_CHECKED: dict[str, int] = {"analysis": 0, "list": 0, "diff": 0}


@pytest.fixture(scope="session", autouse=True)
def _validate_every_json_output():
    """Wrap the JSON writers (analyze/merge, list, diff) so whatever a test renders, through
    the CLI runner or the library, is checked against drgpu_py/specs/schema/*.schema.json.
    (Outputs of drgpu run as a separate process are checked by the tests that read them.)"""
    import json as _json

    from drgpu_py import render
    from drgpu_py.specs import output_schema as schema
    from drgpu_py.render import diff as diff_mod
    from drgpu_py.render import list_ as list_mod

    render._load_all()
    spec = render.RENDERERS["json"]
    orig_json, orig_list, orig_diff = spec.render, list_mod.render_list_json, diff_mod.render_diff

    def checked(text, name):
        schema.validate(_json.loads(text), name)
        SCHEMA_CHECKED[name] += 1
        return text

    spec.render = lambda analysis, options: checked(orig_json(analysis, options), "analysis")
    list_mod.render_list_json = lambda rows: checked(orig_list(rows), "list")
    diff_mod.render_diff = lambda d, fmt: checked(orig_diff(d, fmt), "diff") if fmt == "json" else orig_diff(d, fmt)
    yield
    spec.render, list_mod.render_list_json, diff_mod.render_diff = orig_json, orig_list, orig_diff


def timed_speedup(case: str) -> float:
    """The bad/fixed ratio of a sample pair's median kernel times (sample_reports/timings.txt)."""
    t = {}
    for line in (SAMPLES / "timings.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == case:
            t[parts[1]] = float(parts[2])
    return t["bad"] / t["fixed"]


def rep_blocks(buf: bytes) -> list[tuple[int, int]]:
    """(start, end) of each block of an intact .ncu-rep (see readers.common.rep_framing_problem)."""
    import struct

    from drgpu_py.readers.common import _payload_size

    (hlen,) = struct.unpack("<I", buf[4:8])
    pos, out = 8 + hlen, []
    while pos < len(buf):
        (n,) = struct.unpack("<I", buf[pos : pos + 4])
        end = pos + 4 + n + _payload_size(buf[pos + 4 : pos + 4 + n])
        out.append((pos, end))
        pos = end
    return out


#: Cells a number parser meets in ncu's CSV exports and in damaged or localized ones:
#: blanks, placeholders, NaN spellings, separators, signs, units and stray characters.
ODD_NUMBER_CELLS = (
    "",
    " ",
    "n/a",
    "-",
    "none",
    "nan",
    "-nan",
    "1,234.5",
    " 12 ",
    "1_000",
    "inf",
    "-Infinity",
    "1e5",
    "\u00a012\u00a0",
    "0x10",
    "12%",
    "(1, 2)",
    "+5",
    "--1",
    "1,2,3",
    ".5",
    "5.",
    ",",
    "1,",
    " 1, 2 ",
    ".",
    "+",
    "1 2",
    "\t3\n",
    " none",
)


def sample_csv_cells(case: str = "smem_stride") -> set[str]:
    """Every cell of a sample's CSV exports (raw and source pages)."""
    import csv

    cells: set[str] = set()
    for f in (SAMPLES / case).glob("*.csv"):
        with open(f, newline="", encoding="utf-8") as fh:
            cells.update(c for r in csv.reader(fh) for c in r)
    return cells
