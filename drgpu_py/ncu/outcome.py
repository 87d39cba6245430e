"""What a finished ncu run means.

Contract:
- ``found_reports(result, request, started)``: the reports this run wrote.
- ``classify(result, request, reports)`` maps a finished run to a typed error (or None): ncu
  missing is found earlier by ``run.find_ncu``; counter permission (11), ncu dying of a
  signal (10, ``ncu_signal``), the application failing (12), no kernel profiled (13). A
  failing application or a crashed ncu with reports is still analyzed by the caller.
- ``unavailable_metrics(report, expected)`` names the requested metrics a report lacks or
  holds as n/a: ncu accepts unknown metric names silently (exit 0), so this is the only check.
"""

from __future__ import annotations

import glob
import re
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Protocol

from ..errors import (
    ApplicationFailedError,
    CounterPermissionError,
    DrgpuError,
    InputError,
    MetricUnavailableError,
    NoKernelProfiledError,
    ProfilerError,
    ToolNotFoundError,
    UsageError,
)
from .console import APP_CODE

if TYPE_CHECKING:
    from .run import RunResult

PERM_URL = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"


class ReportRequest(Protocol):
    """What this module reads of a request (``session.ProfileRequest`` has it): typed here, so
    that outcome does not import session, which imports outcome."""

    @property
    def kernel(self) -> str | None: ...

    @property
    def launch_skip(self) -> int | None: ...

    def report_glob(self, env: Mapping[str, str] | None = None) -> str: ...


def existing_reports(req: ReportRequest) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(req.report_glob()))


def found_reports(result: RunResult, req: ReportRequest, started: float) -> list[Path]:
    """Reports of this run: those announced on the console that match drgpu's own ``-o``
    pattern (the application shares that stream and may print a 'Report:' line of its own:
    a path anywhere else is ignored, never read or written beside), else files matching the
    pattern written since ``started`` (placeholders can expand to several)."""
    import fnmatch

    pattern = req.report_glob()
    announced = [p if p.is_absolute() else Path.cwd() / p for p in result.reports]
    out = [p for p in announced if fnmatch.fnmatchcase(str(p), pattern) and p.is_file()]
    for p in existing_reports(req):
        if _written_since(p, started) and p.resolve() not in {q.resolve() for q in out}:
            out.append(p)
    return sorted(out)


def _written_since(p: Path, started: float) -> bool:
    """Whether ``p`` was written since ``started`` (with a second of slack)."""
    try:
        return p.stat().st_mtime >= started - 1
    except OSError:
        return False


def ncu_signal(result: RunResult) -> str | None:
    """'11 (SIGSEGV)' when ncu itself died of a signal (a negative exit status) that drgpu
    did not send it (an interruption or ``--timeout`` is reported as such), else None."""
    code = result.returncode
    if code is None or code >= 0 or result.interrupted or result.timed_out:
        return None
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = "an unknown signal"
    return f"{-code} ({name})"


def crash_error(result: RunResult, reports: list[Path]) -> ProfilerError | None:
    """The error of a run in which ncu died of a signal (``ncu_signal``), else None. A report
    it wrote first may lack what ncu had yet to write (a launch in flight, its last block):
    the caller analyzes what reads, but the run did not end as ncu ends."""
    died = ncu_signal(result)
    if died is None:
        return None
    log = result.log_path
    if not reports:
        return ProfilerError(
            f"ncu died of signal {died} and wrote no report", hint=f"ncu's output, up to the crash: {log}"
        )
    return ProfilerError(
        f"ncu died of signal {died} after writing "
        + ", ".join(p.name for p in reports)
        + "; what it wrote was analyzed, but may be incomplete",
        hint=f"ncu's output, up to the crash: {log}; rerun to get a report ncu finished",
    )


def permission_error(result: RunResult) -> CounterPermissionError:
    """The error of a run that ncu could not profile for want of permission (``permission_denied``)."""
    return CounterPermissionError(
        "no permission to read the GPU performance counters (ncu: ERR_NVGPUCTRPERM)",
        hint=(
            "run as an administrator (sudo), or let all users profile: set the NVIDIA driver option "
            f"NVreg_RestrictProfilingToAdminUsers=0 and reload the driver; see {PERM_URL}. ncu's output: {result.log_path}"
        ),
    )


def setup_error(result: RunResult) -> DrgpuError | None:
    """What stopped ncu from profiling at all: no permission to the counters, an application
    it could not start, a report name it could not expand; else None."""
    if result.permission_denied:
        return permission_error(result)
    missing_app = next((e for e in result.errors if "does not exist or is not an executable" in e), None)
    if missing_app:
        return InputError(f"ncu could not start the application: {missing_app}")
    env_macro = next((e for e in result.errors if "for macro '%q'" in e), None)
    if env_macro:
        return UsageError(
            f"ncu could not name the report: {env_macro}",
            hint="ncu expands %q{VAR} from its own environment, so --rank-var needs one drgpu per rank: "
            "mpirun -np N drgpu profile -- APP (drgpu picks the rank variable up by itself)",
        )
    return None


def classify(result: RunResult, req: ReportRequest, reports: list[Path]) -> DrgpuError | None:
    """The error a finished run stands for (None: success). The caller analyzes ``reports``
    first whenever there are any, then raises this."""
    setup = setup_error(result)
    if setup is not None:
        return setup
    other = [e for e in result.errors if not APP_CODE.search(e)]
    if result.interrupted:
        return None  # the caller reports the interruption with what was kept
    crashed = crash_error(result, reports)
    if crashed is not None:
        return crashed
    if not reports:
        return _no_report_error(result, req, other)
    return _partial_error(result, other)


def _no_report_error(result: RunResult, req: ReportRequest, other: list[str]) -> DrgpuError:
    """Why a run that ended by itself wrote no report."""
    log = result.log_path
    if result.kernels and not result.app_exit_code and not other:
        # ncu said it profiled launches, then no report appeared (a full disk, an -o it could not write)
        n = len(result.kernels)
        return ProfilerError(
            f"ncu profiled {n} kernel launch{'es' if n != 1 else ''} but wrote no report",
            hint=f"check the output folder's free space and permissions; ncu's output: {log}",
        )
    if req.kernel is not None or req.launch_skip:
        return _nothing_matched(result, req)
    if result.app_exit_code:
        return ApplicationFailedError(
            f"the application exited with code {result.app_exit_code} before any kernel was profiled",
            hint=f"its output is in {log}",
        )
    if other:
        return ProfilerError("ncu failed: " + "; ".join(other[:3]), hint=f"ncu's output: {log}")
    if result.returncode not in (0, None):
        return ProfilerError(
            f"ncu exited with code {result.returncode} and wrote no report", hint=f"ncu's output: {log}"
        )
    return NoKernelProfiledError(
        "the application ran but launched no CUDA kernel that ncu could profile; no report was written",
        hint=f"check that it uses the GPU; ncu's output: {log}",
    )


def _nothing_matched(result: RunResult, req: ReportRequest) -> DrgpuError:
    """--kernel or --launch-skip left no launch to profile."""
    what = f"--kernel {req.kernel!r}" if req.kernel is not None else f"--launch-skip {req.launch_skip}"
    app = f" (the application exited with code {result.app_exit_code})" if result.app_exit_code else ""
    return NoKernelProfiledError(
        f"no kernel was profiled: {what} matched no launch{app}; ncu wrote no report",
        hint=f"rerun with --list-kernels to see the kernels the application launches; ncu's output: {result.log_path}",
    )


def _partial_error(result: RunResult, other: list[str]) -> DrgpuError | None:
    """What went wrong in a run that wrote reports (they were analyzed): the application's
    failure, else ncu's errors; None when nothing did."""
    log = result.log_path
    if result.app_exit_code:
        n = len(result.kernels)
        return ApplicationFailedError(
            f"the application exited with code {result.app_exit_code}; "
            + (
                f"the {n} kernel launches profiled before that were analyzed"
                if n != 1
                else "the kernel launch profiled before that was analyzed"
            ),
            hint=f"its output is in {log}",
        )
    if other:
        return ProfilerError(
            "ncu reported errors: " + "; ".join(other[:3]) + " (what it profiled was analyzed)",
            hint=f"ncu's output: {log}",
        )
    return None


# ---------------------------------------------------------------------------------------
# Checking the produced report
# ---------------------------------------------------------------------------------------
def unavailable_metrics(report: Path, expected: Iterable[str]) -> dict[str, list[str]]:
    """Per kernel launch ('name (id N)'), the expected metrics the report lacks or holds as
    n/a. A name ending in ``*`` needs at least one match. Empty when all are there."""
    from ..readers.native import native_stderr_captured
    from ..readers.isolate import in_child

    with native_stderr_captured():  # ncu_report's native log on a damaged report
        # In a child process: ncu_report can crash natively on a damaged report.
        return in_child(_unavailable_metrics, Path(report), list(expected), what=str(report))


def _unavailable_metrics(report: Path, expected: list[str]) -> dict[str, list[str]]:
    ctx = _load_report(report)
    expected = list(expected)
    out: dict[str, list[str]] = {}
    kid = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for i in range(rng.num_actions()):
            a = rng.action_by_idx(i)
            missing = _missing_in(a, expected)
            if missing:
                from ..io import clean_text  # ncu_report's names may hold surrogate escapes

                out[f"{clean_text(str(a.name()))} (id {kid})"] = missing
            kid += 1
    return out


def _load_report(report: Path):
    try:
        import ncu_report
    except ImportError as e:
        raise ToolNotFoundError("the ncu_report module is not installed", hint="pip install ncu-report") from e
    try:
        return ncu_report.load_report(str(report))
    except Exception as e:  # the module raises plain exceptions for truncated files
        raise ProfilerError(f"{report}: ncu_report could not load it ({e})") from e


def _missing_in(a, expected: list[str]) -> list[str]:
    """The expected metrics a launch lacks or holds as n/a; a name with ``*`` needs one match."""
    names = set(a.metric_names())
    missing = []
    for m in expected:
        if "*" in m:
            if not _any_match(m, names):
                missing.append(m)
        elif m not in names or _is_na(a.metric_by_name(m)):
            missing.append(m)
    return missing


def _any_match(pattern: str, names: set[str]) -> bool:
    rx = re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("*")) + "$")
    return any(rx.match(n) for n in names)


def _is_na(metric) -> bool:
    if metric is None:
        return True
    try:
        if metric.num_instances() > 0 or metric.has_correlation_ids():
            return False
        if metric.metric_type() == metric.MetricType_STRING:
            return not metric.as_string()
        v = metric.as_double()
    except Exception:  # noqa: BLE001 - any failure to convert means a value that is there
        return False  # present with a value ncu_report cannot turn into a number: not n/a
    return v is None or v != v


def describe_missing(missing: dict[str, list[str]]) -> str:
    names = sorted({m for ms in missing.values() for m in ms})
    return f"{len(names)} requested metric{'s' if len(names) != 1 else ''} missing or n/a in the report: " + ", ".join(
        names
    )


def metric_unavailable_error(missing: dict[str, list[str]], report: Path) -> MetricUnavailableError:
    return MetricUnavailableError(
        describe_missing(missing) + f" ({report})",
        hint="the metric does not exist on this GPU or ncu version; check `ncu --query-metrics` and drgpu metrics",
    )
