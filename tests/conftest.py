"""Shared fixtures: the real sample reports (sample_reports/manifest.yaml) and a per-session
cache of their analyses, so each report is read and analyzed once per test run."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import functools
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_reports"
#: The stand-in ncu (tests/standin/ncu) that `drgpu profile` runs in place of Nsight Compute.
STANDIN = ROOT / "tests" / "standin" / "ncu"


def standin_profile(out_dir, *args, metric_set: str | None = "gh100") -> list[str]:
    """``drgpu profile`` argv through the stand-in ncu, writing into ``out_dir``, with ``args``
    (options, then ``--`` and the application) after it."""
    set_args = ["--metric-set", metric_set] if metric_set else []
    return ["profile", "--ncu", str(STANDIN), *set_args, "-d", str(out_dir), *args]


# ---- drgpu's command line run in the test process ------------------------------------------------


@dataclasses.dataclass
class CliResult:
    """What ``run_cli`` gave: the fields of ``subprocess.CompletedProcess`` that tests read."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


class _CliTimeout(BaseException):
    """run_cli's time limit passed (not an Exception: drgpu's own handlers catch those)."""


def run_cli(*argv, input: str | bytes | None = None, env=None, cwd=None, timeout: float | None = 300) -> CliResult:
    """``python -m drgpu_py ARGV`` run in the test process (typer's CliRunner), as the child
    would run it, without its ~0.6 s of interpreter start-up and imports: the same program name
    in messages, standard output and error separate and written with ``errors="replace"``
    (drgpu_py.cli.main), exit codes from ``SystemExit`` as the interpreter makes them, an
    exception that escapes the CLI a traceback on standard error and exit 1, Python's warnings
    on standard error under a fresh interpreter's filters (not pytest's). ``env`` is the
    whole environment, ``cwd`` the working folder, both for this call only (as
    ``subprocess.run``'s); ``timeout`` fails the test when the command runs past it (a FIFO
    opened by mistake blocks for ever), as the child's ``timeout`` did.

    Not for what only a process has: signals and drgpu's handlers of them, a closed or
    non-pipe standard stream, memory limits, the ``python -m``/console-script entry itself,
    the interpreter's start and exit, or a native crash of ncu_report (whether a damaged
    report crashes it depends on the memory of the process that forks the reader)."""
    import os
    import signal
    import threading
    import traceback
    import warnings

    import typer
    from typer._click import formatting  # typer's own click (typer is pinned)
    from typer.testing import CliRunner

    from drgpu_py.cli import app, options

    args = [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in argv]
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    alarm = timeout is not None and threading.current_thread() is threading.main_thread()
    old_handler = None
    code, out, err = 0, b"", b""

    def expire(signum, frame):
        raise _CliTimeout

    try:
        if env is not None:
            os.environ.clear()
            os.environ.update({k: str(v) for k, v in env.items()})
        if cwd is not None:
            os.chdir(cwd)
        if alarm:
            old_handler = signal.signal(signal.SIGALRM, expire)
            signal.setitimer(signal.ITIMER_REAL, timeout)
        with CliRunner().isolation(input=input) as (stdout, stderr, _), warnings.catch_warnings():
            formatting.FORCED_WIDTH = None  # help text as wide as a child's (the runner restores it)
            for stream in (sys.stdout, sys.stderr):
                stream.reconfigure(errors="replace")  # as drgpu_py.cli.main does
            warnings.resetwarnings()  # a fresh interpreter's filters, its warnings on standard error
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                warnings.simplefilter("ignore", category)
            warnings.showwarning = warnings._showwarning_orig
            try:
                typer.main.get_command(app).main(args=args, prog_name="python -m drgpu_py")
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    code = e.code or 0
                else:  # sys.exit("message"): the interpreter prints it and exits 1
                    print(e.code, file=sys.stderr)
                    code = 1
            except Exception:  # noqa: BLE001 - what escapes the CLI: the interpreter's traceback, exit 1
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                out, err = stdout.getvalue(), stderr.getvalue()
    except _CliTimeout:
        pytest.fail(f"drgpu {' '.join(args)[:500]} ran past {timeout} s")
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if old_handler is None else old_handler)
        os.chdir(saved_cwd)
        if os.environ != saved_env:  # ``env``, or what the command set: not the test's
            os.environ.clear()
            os.environ.update(saved_env)
        # What one command leaves for the next in this process (a child starts afresh).
        options._Command.started = options._Command.finished = False
        options._Command.signalled = 0
        options.setup_logging(0)
    return CliResult(args, code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def _unpack_samples() -> None:
    """The sample reports are stored compressed; unpack them beside themselves, once."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sample_unpack", SAMPLES / "unpack.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.unpack()


_unpack_samples()


@functools.cache
def _yaml_doc(path: Path):
    """PATH parsed once per process (libyaml's parser when present: the manifest is read at
    collection by many modules and by tests, about 0.2 s a parse with the Python parser)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_yaml(path: Path):
    """A fresh copy of ``yaml.safe_load`` of PATH (callers may change what they get)."""
    import copy

    return copy.deepcopy(_yaml_doc(Path(path).resolve()))


def manifest() -> dict:
    return load_yaml(SAMPLES / "manifest.yaml")["cases"]


CASES = sorted(manifest())

# Whether NVIDIA's ncu_report is installed, found without importing it: once imported into
# the test process, every later read runs in-process (readers.isolate) and its memory stays.
HAVE_NCU_REPORT = importlib.util.find_spec("ncu_report") is not None
needs_ncu_report = pytest.mark.skipif(not HAVE_NCU_REPORT, reason="ncu_report is not installed")


# Tests of these kinds read only the intact shipped reports: they read them in the test process
# (one ncu_report start-up per process instead of one per read in a child, about 1 s of CPU
# each), unless marked child_reader (a module reading reports too large to keep: ncu_report
# holds every in-process read's memory, 1.4 GB for the 1,000-launch report). unit/,
# robustness/ and e2e/ keep the child-process reader that a user's drgpu has.
IN_PROCESS_KINDS = ("samples",)


def _in_process(item) -> bool:
    return item.get_closest_marker("in_process_reader") is not None


def pytest_collection_modifyitems(config, items):
    """Tests that call the .ncu-rep reader in the test process run last: from then on every
    read is in-process (readers.isolate) and ncu_report keeps each report's memory. With
    pytest-xdist (``--dist loadfile``, scopes in collection order) a module goes whole to one
    worker, so a module's tests are all in-process or none."""
    tests = Path(__file__).resolve().parent
    for item in items:
        kind = item.path.parent.name if item.path.parent.parent == tests else None
        if kind in IN_PROCESS_KINDS and not item.get_closest_marker("child_reader"):
            item.add_marker(pytest.mark.in_process_reader)
    items.sort(key=_in_process)
    if getattr(config.option, "dist", "no") != "no":
        kinds: dict = {}
        for item in items:
            kinds.setdefault(item.path, set()).add(_in_process(item))
        mixed = sorted(str(p.relative_to(tests)) for p, k in kinds.items() if len(k) > 1)
        if mixed:
            raise pytest.UsageError(
                f"in_process_reader marks only some tests of {', '.join(mixed)}: under pytest-xdist a module "
                "runs on one worker, so mark the whole module (pytestmark) or move the tests to tests/samples/"
            )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """An in-process test loads ncu_report before its fixtures read anything."""
    if HAVE_NCU_REPORT and _in_process(item) and "ncu_report" not in sys.modules:
        import ncu_report  # noqa: F401


def near_misses() -> dict:
    return load_yaml(SAMPLES / "manifest.yaml").get("near_misses") or {}


# ---- the two test tiers ------------------------------------------------------------------------
# `pytest -m "not slow"` is the fast tier a contributor runs while working; `pytest` (README,
# .ci/run) runs everything. A test marked `slow` is left out of the fast tier: the sweeps over
# every sample, every damaged input or every documented command, and each per-sample
# parametrization beyond its finding's representative (``representatives``).
slow = pytest.mark.slow


def held_out() -> dict:
    """The held-out pairs of every round (sample_reports/heldout*.yaml), in the files' order."""
    out: dict = {}
    for path in sorted(SAMPLES.glob("heldout*.yaml")):
        out.update(load_yaml(path)["held_out"])
    return out


@functools.cache
def representatives() -> frozenset[str]:
    """The samples of the fast tier: for each finding, the first bad/fixed pair that plants it
    (the manifest's pairs in the file's order, where a finding's original sample comes first,
    then the held-out rounds' pairs for a finding without one, e.g. serial-kernel) and the
    first near miss of it. Every other sample's parametrizations are marked slow."""
    doc = load_yaml(SAMPLES / "manifest.yaml")
    pairs: dict[str, str] = {}
    for table in (doc["cases"], {k: v for k, v in held_out().items() if not v.get("near_miss")}):
        for name, spec in table.items():
            pairs.setdefault(spec["finding"], name)
    near: dict[str, str] = {}
    for name, spec in (doc.get("near_misses") or {}).items():
        near.setdefault(spec["finding"], name)
    return frozenset(pairs.values()) | frozenset(near.values())


def tier_marks(case: str) -> list:
    """[slow] unless CASE is its finding's representative: the marks of a per-sample param."""
    return [] if case in representatives() else [slow]


def sample_param(case: str, *values, marks=(), id: str | None = None):
    """``pytest.param(case, *values)``, marked slow unless CASE is its finding's representative."""
    marks = [*(marks if isinstance(marks, (list, tuple)) else (marks,)), *tier_marks(case)]
    return pytest.param(case, *values, marks=marks, id=id)


def sample_params(cases) -> list:
    """Sample names as pytest params, each marked slow unless it is a representative."""
    return [sample_param(case) for case in cases]


def cases_for(check, names=None, table=None) -> list:
    """Sample names as pytest params; a check the manifest lists under the sample's `known`
    is a strict expected failure with the manifest's reason (so a fix turns it into a test
    failure to update, not a silent pass). A sample other than its finding's representative
    is marked slow."""
    table = manifest() if table is None else table
    out = []
    for name in sorted(table) if names is None else names:
        known = table[name].get("known") or {}
        why = next((known[c] for c in ((check,) if isinstance(check, str) else check) if c in known), None)
        out.append(sample_param(name, marks=[pytest.mark.xfail(strict=True, reason=why)] if why else []))
    return out


def root_line(case: str) -> int | None:
    """The line marked `// ROOT` in the sample's source (the planted root cause)."""
    for i, line in enumerate((SAMPLES / "src" / f"{case}.cu").read_text().splitlines(), 1):
        if re.search(r"//\s*ROOT(?!-)", line):
            return i
    return None


def report_path(case: str, variant: str, ext: str = "ncu-rep") -> Path:
    return SAMPLES / case / f"{case}_{variant}.{ext}"


# ---- one read and analysis of each report per test run, shared by pytest-xdist's workers ----
SHARED_ENV = "DRGPU_TESTS_SHARED"  # the folder the workers share (set by the controller)


def pytest_configure(config):
    """Under pytest-xdist the controller makes the folder its workers share results through."""
    import os
    import tempfile

    if hasattr(config, "workerinput") or getattr(config.option, "dist", "no") == "no":
        return
    config._drgpu_shared = tempfile.mkdtemp(prefix="drgpu-tests-")
    os.environ[SHARED_ENV] = config._drgpu_shared


def pytest_unconfigure(config):
    import os
    import shutil

    folder = getattr(config, "_drgpu_shared", None)
    if folder:
        os.environ.pop(SHARED_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _shared_slot(key: str):
    """(path or None) for KEY in the workers' shared folder, held under an exclusive lock: the
    first worker to ask makes the file, the others wait for it and read it."""
    import fcntl
    import os

    folder = os.environ.get(SHARED_ENV)
    if not folder or not Path(folder).is_dir():
        yield None
        return
    path = Path(folder) / re.sub(r"[^\w.-]", "_", key)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield path


def shared(key: str, compute):
    """``compute()``, made once per test run: under pytest-xdist the first worker to need it
    pickles it for the others (an unpicklable result is made by each worker)."""
    import pickle

    with _shared_slot(key + ".pickle") as path:
        if path is not None and path.exists():
            return pickle.loads(path.read_bytes())
        value = compute()
        if path is not None:
            try:
                data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - not shareable: each worker makes its own
                return value
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return value


def _analyze_path(path: Path, grouped: bool = False):
    """The analysis of one report; ``grouped``: launches of one kernel as one group, as
    drgpu analyze does (a report of a whole launch sequence is analyzed once, not per launch)."""
    from drgpu_py.analysis import analyze
    from drgpu_py.analysis.groups import group_profile
    from drgpu_py.readers import open_report

    profile = open_report(path)
    return analyze(group_profile(profile) if grouped else profile)


@functools.cache
def analysis_of(case: str, variant: str, ext: str = "ncu-rep"):
    path = report_path(case, variant, ext)
    return shared(f"analysis-{case}-{variant}.{ext}", lambda: _analyze_path(path, grouped=True))


@pytest.fixture(scope="session")
def samples_manifest() -> dict:
    return manifest()


@functools.cache
def xz_report(relpath: str) -> Path:
    """sample_reports/RELPATH.ncu-rep.xz decompressed once per test run into a temporary
    folder (reports kept compressed to keep the tree small)."""
    return _unxz(SAMPLES / f"{relpath}.ncu-rep.xz", Path(relpath).name + ".ncu-rep", relpath.replace("/", "-"))


@functools.cache
def many_kernels_report() -> Path:
    """benchmarks/data/many_kernels.ncu-rep.xz (1,000 launches of 5 kernels), decompressed once
    per test run."""
    return _unxz(ROOT / "benchmarks" / "data" / "many_kernels.ncu-rep.xz", "many_kernels.ncu-rep", "many_kernels")


def _unxz(src: Path, name: str, key: str) -> Path:
    import atexit
    import lzma
    import shutil
    import tempfile

    with _shared_slot("xz-" + key) as slot:
        if slot is not None:  # one copy for every worker (shared analyses name the same path)
            slot.mkdir(exist_ok=True)
            out = slot / name
            if not out.exists():
                with lzma.open(src) as fin, open(slot / "part", "wb") as dst:
                    shutil.copyfileobj(fin, dst, 1 << 20)
                (slot / "part").replace(out)
            return out
    folder = Path(tempfile.mkdtemp(prefix="drgpu-xz-"))
    atexit.register(shutil.rmtree, folder, True)
    out = folder / name
    with lzma.open(src) as fin, open(out, "wb") as dst:
        shutil.copyfileobj(fin, dst, 1 << 20)
    return out


def library_report(stem: str = "library") -> Path:
    """A report of sample_reports/library: library (16 real library kernels), step (one
    inference step of a small PyTorch model), full_set (three library kernels under ncu
    --set full)."""
    return xz_report(f"library/{stem}")


@functools.cache
def library_analysis(stem: str = "library"):
    path = library_report(stem)
    return shared(f"library-analysis-{stem}", lambda: _analyze_path(path))


@functools.cache
def api_analysis(path: Path):
    """``drgpu_py.analyze(path)`` (the Python API: launches of one kernel grouped), made once
    per test run."""
    import drgpu_py

    return shared(f"api-analysis-{path.name}", lambda: drgpu_py.analyze(path))


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
    """(start, end) of each block of an intact .ncu-rep (see sass.container.rep_framing_problem)."""
    import struct

    from drgpu_py.sass.container import payload_size

    (hlen,) = struct.unpack("<I", buf[4:8])
    pos, out = 8 + hlen, []
    while pos < len(buf):
        (n,) = struct.unpack("<I", buf[pos : pos + 4])
        end = pos + 4 + n + payload_size(buf[pos + 4 : pos + 4 + n])
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


# ---- metric names in source code (tests/unit/test_detector_metrics.py, test_metric_set_parity.py) ----
METRIC = re.compile(r"[a-z0-9]+__[\w.]*[a-z0-9]")


def metric_literals(module) -> set[str]:
    """Metric-shaped string constants in a module's source (f-string parts excluded)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(module))
    inside_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in inside_fstrings
        and METRIC.fullmatch(n.value)
    }


# ---- SARIF: the OASIS SARIF 2.1.0 schema (tests/data/README.md), URIs checked too -----------
# jsonschema checks the formats "uri" and "uri-reference" only with an optional package
# (rfc3987): here a URI is RFC 3986's characters (percent-encoded where not), "uri" with a scheme.
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")


@functools.cache
def sarif_validator():
    """A jsonschema validator of SARIF 2.1.0 documents (the OASIS schema, draft-04)."""
    import json

    import jsonschema

    checker = jsonschema.FormatChecker(formats=())

    @checker.checks("uri-reference")
    def _uri_reference(value) -> bool:
        return not isinstance(value, str) or bool(_URI_CHARS.fullmatch(value))

    @checker.checks("uri")
    def _uri(value) -> bool:
        return not isinstance(value, str) or bool(
            _URI_CHARS.fullmatch(value) and re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value)
        )

    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=checker)
