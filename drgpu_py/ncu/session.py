"""One ``drgpu profile`` session: what to profile, ncu's argument list, the run, the analysis
of each report ncu wrote, and a record of the run.

Contract:
- ``ProfileRequest.validate`` raises a usage error (exit 2); ``build_ncu_argv(ncu, request,
  selection)`` is pure: an argument list, never a shell line, the application's arguments
  appended unchanged.
- ``Session(options)`` checks the options and finds ncu; then ``list_kernels``, ``choose()``,
  ``prepare_outputs()`` (never overwrites without ``force``), ``run_ncu(on_event)`` and
  ``finish(on_warning)`` -> :class:`SessionOutcome`, whose ``check()`` raises the run's error.
- Nothing is thrown away: report(s), ``STEM.ncu.log``, analyses and ``STEM.profile.json``
  stay whatever happens (docs/profile.md); an interruption raises
  :class:`~drgpu_py.errors.InterruptedError_` naming what was kept.
- Nothing here prints; progress and messages go to the caller's callbacks.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from ..errors import (
    DataFileError,
    DrgpuError,
    InputError,
    InterruptedError_,
    MetricUnavailableError,
    OutputError,
    ProfilerError,
    ToolNotFoundError,
    UsageError,
)
from ..io import atomic_write, check_writable
from ..specs import loader as data
from ..specs import metric_sets as msets
from ..specs.records import Thresholds
from . import outcome
from .console import Event
from .reports import analyze_one, record
from .run import RunResult, find_ncu, private_log, run_ncu, with_log_file

if TYPE_CHECKING:  # started by run_ncu, imported there
    from .warmup import Warmup

RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK")
NCU_HELP_URL = "https://developer.nvidia.com/nsight-compute"
PERM_URL = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
REPLAY_MODES = ("kernel", "application", "range", "app-range")
CLOCK_CONTROLS = ("base", "none")
TARGET_PROCESSES = ("all", "application-only")
KERNEL_NAME_BASES = ("function", "demangled", "mangled")


# ---------------------------------------------------------------------------------------
# Chip detection and ncu discovery
# ---------------------------------------------------------------------------------------
@dataclass
class GpuInfo:
    name: str
    compute_capability: str
    chip: str | None


def _smi_rows(exe: str, env: dict, run) -> list[list[str]]:
    """nvidia-smi's (index, name..., compute capability) rows; none when it fails."""
    try:
        p = run(
            [exe, "--query-gpu=index,name,compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if p.returncode != 0:
        return []
    return [[c.strip() for c in ln.split(",")] for ln in p.stdout.splitlines() if ln.count(",") >= 2]


def detect_gpu(env: dict | None = None, run=subprocess.run) -> GpuInfo | None:
    """The GPU ncu will profile (the first visible one), from nvidia-smi; None if unknown."""
    env = dict(os.environ if env is None else env)
    exe = shutil.which("nvidia-smi", path=env.get("PATH"))
    if not exe:
        return None
    rows = _smi_rows(exe, env, run)
    if not rows:
        return None
    want = (env.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0].strip()
    row = next((r for r in rows if want.isdigit() and r[0] == want), rows[0])
    cc = row[-1]
    return GpuInfo(name=", ".join(row[1:-1]), compute_capability=cc, chip=data.chip_for(cc))


def resolve_app(app: list[str], env: dict | None = None) -> list[str]:
    """The application's argv with its program made absolute (ncu runs it from its own
    working directory rules); arguments are untouched."""
    if not app:
        raise UsageError("no application given", hint="drgpu profile [OPTIONS] -- APP [ARGS...]")
    env = dict(os.environ if env is None else env)
    prog = app[0]
    path: str | None
    if os.sep in prog:
        path = os.path.abspath(prog)
        if not os.path.isfile(path):
            raise InputError(f"application {prog} does not exist")
        if not os.access(path, os.X_OK):
            raise InputError(
                f"application {prog} is not executable", hint=f"chmod +x {prog}, or run it through its interpreter"
            )
    else:
        path = shutil.which(prog, path=env.get("PATH"))
        if not path:
            raise InputError(f"application {prog!r} not found on PATH", hint="give its path, e.g. ./" + prog)
    return [path] + list(app[1:])


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------
@dataclass
class ProfileRequest:
    app: list[str]
    output_dir: Path
    stem: str
    kernel: str | None = None
    kernel_name_base: str | None = None
    launch_skip: int | None = None
    launch_count: int | None = None
    replay_mode: str | None = None
    clock_control: str | None = None
    target_processes: str | None = None
    rank_var: str | None = None
    import_source: bool = True
    nvtx_include: list[str] = field(default_factory=list)  # ncu --nvtx-include, one per filter
    nvtx_exclude: list[str] = field(default_factory=list)
    profile_from_start: bool = True  # False: ncu --profile-from-start off
    extra_ncu_args: list[str] = field(default_factory=list)
    force: bool = False

    def validate(self) -> None:
        """Refuse what ncu would reject late or drgpu would misplace, in this order."""
        self._check_choices()
        self._check_launch_counts()
        _check_kernel_pattern(self.kernel)
        _check_ncu_args(self.extra_ncu_args)
        if self.rank_var is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.rank_var):
            raise UsageError(f"--rank-var {self.rank_var!r} is not an environment variable name")
        _check_output_dir(self.output_dir)
        _check_stem(self.stem)

    def _check_choices(self) -> None:
        for val, allowed, opt in (
            (self.replay_mode, REPLAY_MODES, "--replay-mode"),
            (self.clock_control, CLOCK_CONTROLS, "--clock-control"),
            (self.target_processes, TARGET_PROCESSES, "--target-processes"),
            (self.kernel_name_base, KERNEL_NAME_BASES, "--kernel-name-base"),
        ):
            if val is not None and val not in allowed:
                raise UsageError(f"{opt} {val!r} is not one of {', '.join(allowed)}")

    def _check_launch_counts(self) -> None:
        for count, opt, least in ((self.launch_skip, "--launch-skip", 0), (self.launch_count, "--launch-count", 1)):
            if count is not None and count < least:
                raise UsageError(f"{opt} must be >= {least}")

    @property
    def output_base(self) -> Path:
        """ncu's -o value (without .ncu-rep), ncu placeholders included."""
        name = self.stem + (f".rank%q{{{self.rank_var}}}" if self.rank_var else "")
        return self.output_dir / name

    def report_glob(self, env: Mapping[str, str] | None = None) -> str:
        """A glob matching every report this request can produce. ncu inherits drgpu's
        environment, so %q{VAR} is expanded here as ncu will (several ranks sharing a
        folder must each find only their own report); other placeholders become '*'."""
        env = os.environ if env is None else env
        pattern = re.sub(r"%q\{([^}]*)\}", lambda m: env.get(m.group(1)) or "*", str(self.output_base))
        pattern = re.sub(r"%[phi]", "*", pattern).replace("%%", "%")
        return glob.escape(pattern).replace(glob.escape("*"), "*") + ".ncu-rep"


def default_stem(app: list[str]) -> str:
    name = os.path.basename(app[0]) if app else "app"
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "app"
    return name


def pick_rank_var(option: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """``--rank-var``: 'auto' picks the MPI rank variable set in drgpu's own environment
    (each rank runs its own drgpu under mpirun/srun), 'none' disables, else the name given."""
    env = os.environ if env is None else env
    if option is None or option == "auto":
        return next((v for v in RANK_VARS if env.get(v, "").strip()), None)
    if option == "none":
        return None
    return option


def build_ncu_argv(ncu: str, req: ProfileRequest, sel: msets.Selection) -> list[str]:
    req.validate()
    argv = [ncu]
    argv += sel.ncu_args()
    if req.import_source:
        argv += ["--import-source", "yes"]
    argv += _launch_filter_args(req)
    for opt, val in (
        ("--replay-mode", req.replay_mode),
        ("--clock-control", req.clock_control),
        ("--target-processes", req.target_processes),
    ):
        if val:
            argv += [opt, val]
    argv += _nvtx_args(req)
    if not req.profile_from_start:
        argv += ["--profile-from-start", "off"]
    argv += list(req.extra_ncu_args)
    argv += ["-o", str(req.output_base)]
    if req.force:
        argv.append("-f")
    return argv + list(req.app)


def _launch_filter_args(req: ProfileRequest) -> list[str]:
    """ncu's arguments picking the launches profiled: kernel name, launches skipped, count."""
    argv: list[str] = []
    if req.kernel is not None:
        if req.kernel_name_base:
            argv += ["--kernel-name-base", req.kernel_name_base]
        argv += ["-k", f"regex:{req.kernel}"]
    if req.launch_skip is not None:
        argv += ["-s", str(req.launch_skip)]
    if req.launch_count is not None:
        argv += ["-c", str(req.launch_count)]
    return argv


def _nvtx_args(req: ProfileRequest) -> list[str]:
    if not (req.nvtx_include or req.nvtx_exclude):
        return []
    argv = ["--nvtx"]
    for f in req.nvtx_include:
        argv += ["--nvtx-include", f]
    for f in req.nvtx_exclude:
        argv += ["--nvtx-exclude", f]
    return argv


# ---------------------------------------------------------------------------------------
# The session
# ---------------------------------------------------------------------------------------
@dataclass
class SessionOptions:
    """What ``drgpu profile`` was asked (its command-line options, parsed)."""

    app: list[str]
    output_dir: Path | None = None
    name: str | None = None
    force: bool = False
    kernel: str | None = None
    kernel_name_base: str | None = None
    launch_skip: int | None = None
    launch_count: int | None = None
    replay_mode: str | None = None
    clock_control: str | None = None
    target_processes: str | None = None
    rank_var: str | None = "auto"
    metric_set: str | None = None
    with_groups: list[str] = field(default_factory=list)
    add_sections: list[str] = field(default_factory=list)
    add_metrics: list[str] = field(default_factory=list)  # comma-separated lists, as given
    skip_metric_check: bool = False
    strict_metrics: bool = False
    import_source: bool = True
    nvtx_include: list[str] = field(default_factory=list)
    nvtx_exclude: list[str] = field(default_factory=list)
    profile_from_start: bool = True
    ncu: str | None = None
    ncu_args: list[str] = field(default_factory=list)
    thresholds: Thresholds | None = None  # the analysis' (loader.thresholds)
    timeout: float | None = None


@dataclass
class SessionOutcome:
    """A finished session: one summary row per kernel group analyzed, the files written,
    the reports that could not be analyzed, and the error the run stands for."""

    rows: list[dict]
    written: list[Path]
    failures: list[str]
    reports: list[Path]
    result: RunResult
    log_path: Path
    error: DrgpuError | None = None  # classify()'s, raised first
    strict_error: DrgpuError | None = None  # --strict-metrics: a requested metric is missing

    def check(self) -> None:
        """Raise what the run stands for: ncu's or the application's failure, then a report
        that could not be analyzed, then a missing metric under ``strict_metrics``."""
        if self.error is not None:
            raise self.error
        if self.failures:
            raise ProfilerError(
                "a report could not be analyzed: " + "; ".join(self.failures), hint=f"ncu's output: {self.log_path}"
            )
        if self.strict_error is not None:
            raise self.strict_error


def _check_kernel_pattern(kernel: str | None) -> None:
    if kernel is None:
        return
    try:
        re.compile(kernel)
    except (re.error, OverflowError, RecursionError, ValueError) as e:  # as analyze's readers.kernel_regex
        raise UsageError(f"--kernel {kernel!r} is not a valid regular expression: {e}") from e


def _check_ncu_args(extra_ncu_args: list[str]) -> None:
    if any(a == "--log-file" or a.startswith("--log-file=") for a in extra_ncu_args):
        # ncu's own messages must reach drgpu's private log file (ncu.run): only they,
        # never the console the application shares, decide the outcome.
        raise UsageError(
            "--ncu-arg --log-file is not supported: drgpu reads ncu's messages from a log file of its own",
            hint="ncu's messages and the application's output are kept in the output folder's STEM.ncu.log",
        )


def _check_output_dir(output_dir: Path) -> None:
    if "%" in str(output_dir):
        # ncu expands %p, %q{VAR}, %h, %i in its -o value: a folder named with them
        # would scatter the report away from the log and analysis drgpu writes there.
        raise UsageError(
            f"--output-dir {str(output_dir)!r} holds '%', which ncu expands in report names "
            "(%p, %q{VAR}, %h, %i): the report would land elsewhere",
            hint="choose a folder name without '%'",
        )


def _check_stem(stem: str) -> None:
    if stem in (".", "..") or any(sep and sep in stem for sep in (os.sep, os.altsep, "/", "\\")):
        # output_dir / "." is the folder itself: the report and analyses would be named
        # after it, one level up (-d out --name . wrote out.ncu-rep beside out/).
        raise UsageError(
            f"--name {stem!r} is not a file name: it names a folder or holds a path separator",
            hint="give a plain name such as 'run1'; the folder is --output-dir",
        )
    if not re.fullmatch(r"[A-Za-z0-9._-]+", stem):
        raise UsageError(f"--name {stem!r}: use letters, digits, '.', '_' and '-' only")


def _check_rank_var_set(rv: str | None) -> None:
    if rv and not os.environ.get(rv, "").strip():
        # ncu resolves %q{VAR} in its own environment and stops when VAR is unset.
        raise UsageError(
            f"--rank-var {rv}: {rv} is not set in drgpu's environment",
            hint="ncu names each rank's report from its own environment, so run one drgpu per rank "
            "under the MPI launcher: mpirun -np N drgpu profile [OPTIONS] -- APP",
        )


def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and not (timeout > 0 and timeout < float("inf")):
        raise UsageError(f"--timeout is a number of seconds above 0, got {timeout:g}")


def _ncu_for(ncu: str | None, dry_run: bool) -> str:
    """The ncu to run; under ``dry_run`` a missing one is named as given."""
    try:
        return find_ncu(ncu)
    except ToolNotFoundError:
        if not dry_run:
            raise
        return ncu or os.environ.get("NCU") or "ncu"


def _exit_error(done: SessionOutcome) -> DrgpuError | None:
    """The error the run exits with: ncu's, else a failed analysis, else --strict-metrics'."""
    failed = ProfilerError("") if done.failures else None
    return next((e for e in (done.error, failed, done.strict_error) if e is not None), None)


class Session:
    def __init__(self, opts: SessionOptions, *, dry_run: bool = False) -> None:
        """Check the options and find ncu (under ``dry_run`` a missing ncu is named as given)."""
        if not opts.app:
            raise UsageError("no application given", hint="drgpu profile [OPTIONS] -- APP [ARGS...]")
        self.opts = opts
        app_cmd = resolve_app(list(opts.app))
        self.stem = opts.name or default_stem(app_cmd)
        rv = pick_rank_var(opts.rank_var)
        _check_rank_var_set(rv)
        folder = Path(opts.output_dir) if opts.output_dir else Path.cwd() / f"drgpu-{self.stem}"
        self.req = ProfileRequest(
            app=app_cmd,
            output_dir=folder.resolve() if folder.exists() else folder.absolute(),
            stem=self.stem,
            kernel=opts.kernel,
            kernel_name_base=opts.kernel_name_base,
            launch_skip=opts.launch_skip,
            launch_count=opts.launch_count,
            replay_mode=opts.replay_mode,
            clock_control=opts.clock_control,
            target_processes=opts.target_processes,
            rank_var=rv,
            import_source=opts.import_source,
            nvtx_include=list(opts.nvtx_include),
            nvtx_exclude=list(opts.nvtx_exclude),
            profile_from_start=opts.profile_from_start,
            extra_ncu_args=list(opts.ncu_args),
            force=opts.force,
        )
        self.req.validate()
        _check_timeout(opts.timeout)
        self.ncu = _ncu_for(opts.ncu, dry_run)
        own_rank = os.environ.get(rv, "").strip() if rv else ""
        self.log_stem = self.stem + (f".rank{own_rank}" if own_rank else "")
        self.log_path = self.req.output_dir / f"{self.log_stem}.ncu.log"
        self.record_path = self.req.output_dir / f"{self.log_stem}.profile.json"
        self.ms: msets.MetricSet | None = None
        self.sel: msets.Selection | None = None
        self.notes: list[str] = []
        self.argv: list[str] = []
        self.ncu_log = private_log()  # ncu's --log-file, named now: the argument list is built once
        self.result: RunResult | None = None
        self._warm: Warmup | None = None
        self._started = 0.0

    def list_kernels(self, on_event: Callable[[Event], None] | None = None) -> tuple[dict[str, int], Path]:
        """A cheap run (one timing metric, one pass per launch, no filter): launches per
        kernel name, in order of first launch, and ncu's log."""
        req = self.req
        try:
            req.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot create {req.output_dir}: {e.strerror}") from e
        log = req.output_dir / f"{req.stem}.list-kernels.log"
        # The log follows the outputs' rules (io.atomic_write): an existing one is kept without
        # --force, a FIFO, device or dangling link is refused before the application runs.
        check_writable(log, req.force)
        with tempfile.TemporaryDirectory(prefix="drgpu-list-") as tmp:
            lreq = ProfileRequest(
                app=req.app,
                output_dir=Path(tmp),
                stem="list",
                launch_count=req.launch_count,
                target_processes=req.target_processes,
                replay_mode=None,
                import_source=False,
                extra_ncu_args=req.extra_ncu_args,
                force=True,
            )
            ncu_log = private_log()
            argv = with_log_file(
                build_ncu_argv(self.ncu, lreq, msets.Selection([], ["gpu__time_duration.sum"], [], [])), ncu_log
            )
            tmp_log = Path(tmp) / "list-kernels.log"
            try:
                res = run_ncu(argv, tmp_log, on_event=on_event, ncu_log=ncu_log)
            except DrgpuError:
                if tmp_log.exists():  # what ncu said before failing, kept if it can be
                    try:
                        with open(tmp_log, "rb") as fh:
                            atomic_write(log, fh, force=req.force)
                    except DrgpuError:
                        pass
                raise
            with open(tmp_log, "rb") as fh:
                atomic_write(log, fh, force=req.force)
        if res.permission_denied:
            raise outcome.permission_error(res)
        counts: dict[str, int] = {}
        for k in res.kernels:
            counts[k.name] = counts.get(k.name, 0) + 1
        return counts, log

    def choose(self) -> None:
        """The metric set (``ms``), what to collect (``sel``), the notes on what is left out,
        and ncu's argument list (``argv``), built once: what ``--dry-run`` prints, ``run_ncu``
        runs and the run record keeps, ``--log-file`` of ncu's own messages included."""
        opts = self.opts
        gpu = detect_gpu() if not opts.metric_set else None
        self.ms, notes = choose_set(opts.metric_set, gpu)
        user_metrics = [m.strip() for chunk in opts.add_metrics for m in chunk.split(",") if m.strip()]
        self.sel = self.ms.selection(opts.with_groups, opts.add_sections, user_metrics)
        preflight(self.ms, self.ms.chip or (gpu.chip if gpu else None), user_metrics, opts.skip_metric_check)
        self.notes = notes + self.sel.notes
        self.argv = with_log_file(build_ncu_argv(self.ncu, self.req, self.sel), self.ncu_log)

    def prepare_outputs(self) -> None:
        check_outputs_free(self.req, self.log_path)
        check_outputs_regular(self.req, [self.log_path, self.record_path])
        try:
            self.req.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot create {self.req.output_dir}: {e.strerror}") from e

    def run_ncu(self, on_event: Callable[[Event], None] | None = None) -> RunResult:
        self._started = time.time()
        # The analysis' imports and template compile while ncu profiles (drgpu_py.ncu.warmup).
        from .warmup import Warmup

        self._warm = Warmup(binary=self.req.app[0]).start()
        self.result = run_ncu(
            self.argv, self.log_path, on_event=on_event, timeout_s=self.opts.timeout, ncu_log=self.ncu_log
        )
        return self.result

    def finish(self, on_warning: Callable[[str], None] | None = None) -> SessionOutcome:
        """Analyze each report of the run (``on_warning``: a report's missing metrics) and
        record the run. Raises InterruptedError_ (stopped) or ProfilerError (timed out)."""
        result, req, log_path = self.result, self.req, self.log_path
        assert result is not None and self._warm is not None and self.sel is not None, "run_ncu first"
        if not result.interrupted:
            self._warm.join()  # before any report is read: reading forks, which wants one thread
        reports = outcome.found_reports(result, req, self._started)
        self._stop_if_stopped(result, reports)
        done = SessionOutcome(
            rows=[],
            written=[],
            failures=[],
            reports=reports,
            result=result,
            log_path=log_path,
            error=outcome.classify(result, req, reports),
        )
        th = self.opts.thresholds if self.opts.thresholds is not None else data.thresholds()
        missing_by_report: dict[str, dict] = {}
        for rep in reports:
            missing = self._analyze_report(rep, done, th, missing_by_report)
            if missing is None:
                continue
            missing_by_report[str(rep)] = missing
            if missing:
                self._report_missing(done, rep, missing, on_warning)
        final = _exit_error(done)
        self._record(reports, missing_by_report, final.exit_code if final is not None else 0)
        return done

    def _stop_if_stopped(self, result: RunResult, reports: list[Path]) -> None:
        """Raise when ncu was stopped (Ctrl-C, a signal) or timed out, the run recorded."""
        kept = ", ".join(str(p) for p in reports) or "no report (nothing was profiled yet)"
        if result.interrupted and not result.timed_out:
            # Ctrl-C (SIGTERM, SIGHUP) means "stop now": keep everything, analyze nothing, say how to go on.
            signum = result.signum or signal.SIGINT
            self._record(reports, {}, 128 + signum)
            by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
            raise InterruptedError_(
                f"ncu stopped{by}; kept {kept} and ncu's output {self.log_path}",
                hint="analyze a kept report with: drgpu analyze REPORT" if reports else None,
                signum=signum,
            )
        if result.timed_out:
            self._record(reports, {}, ProfilerError.exit_code)
            raise ProfilerError(
                f"ncu did not finish within --timeout {self.opts.timeout:g} s and was stopped; kept {kept}",
                hint=f"ncu's output: {self.log_path}; analyze a kept report with: drgpu analyze REPORT",
            )

    def _analyze_report(
        self, rep: Path, done: SessionOutcome, th: Thresholds, missing_by_report: dict[str, dict]
    ) -> dict | None:
        """Analyze one report into ``done``: its missing metrics, or None when it failed."""
        assert self.result is not None and self._warm is not None and self.sel is not None, "run_ncu first"
        try:
            rows_r, files, missing = analyze_one(rep, self.sel, self.result, self.notes, th, self._warm.sass)
        except DrgpuError as e:
            done.failures.append(f"{rep.name}: {e}")
            return None
        except KeyboardInterrupt as e:
            signum = getattr(e, "signum", signal.SIGINT)
            self._record(done.reports, missing_by_report, 128 + signum)
            raise InterruptedError_(
                f"stopped while analyzing; profiling had finished: kept {', '.join(map(str, done.reports))} "
                f"and ncu's output {self.log_path}",
                hint="analyze a kept report with: drgpu analyze REPORT",
                signum=signum,
            ) from None
        done.rows += rows_r
        done.written += files
        return missing

    def _report_missing(
        self, done: SessionOutcome, rep: Path, missing: dict, on_warning: Callable[[str], None] | None
    ) -> None:
        """Warn of a report's missing metrics; under --strict-metrics they are the run's error."""
        if on_warning:
            on_warning(f"{rep.name}: {outcome.describe_missing(missing)}")
        if self.opts.strict_metrics and done.strict_error is None:
            done.strict_error = outcome.metric_unavailable_error(missing, rep)

    def _record(self, reports, missing, exit_code: int) -> None:
        assert self.result is not None, "run_ncu first"
        record(self.record_path, self.argv, self.ms, self.sel, self.result, reports, missing, self.notes, exit_code)


def choose_set(metric_set: str | None, gpu: GpuInfo | None) -> tuple[msets.MetricSet, list[str]]:
    """The set asked for, else the detected GPU's, else the portable base set (with a note
    saying why)."""
    notes: list[str] = []
    if metric_set:
        return msets.load_metric_set(metric_set), notes
    if gpu is None:
        notes.append(
            "GPU not detected (nvidia-smi unavailable): using the portable base metric set; give --metric-set CHIP to choose"
        )
        return msets.load_metric_set("base"), notes
    if gpu.chip is None or gpu.chip not in msets.available_sets():
        notes.append(
            f"no metric set for {gpu.name} (compute capability {gpu.compute_capability}): using the portable base set"
        )
        return msets.load_metric_set("base"), notes
    return msets.load_metric_set(gpu.chip), notes


def _set_metrics(ms: msets.MetricSet) -> list[str]:
    """The explicit metrics of every group of a set."""
    return [m for g in ms.groups.values() for m in g.metrics]


def preflight(ms: msets.MetricSet, chip: str | None, user_metrics: list[str], skip: bool) -> None:
    """Catch misspelt user metrics before a long profiling run: ncu itself accepts any name."""
    names = list(user_metrics)
    if not ms.shipped:  # a user-written set file
        names += _set_metrics(ms)
    if skip or not names or not chip:
        return
    try:
        cat = msets.load_catalogue(chip)
    except DataFileError:
        return
    bad = [(m, p) for m in dict.fromkeys(names) if (p := msets.metric_problem(m, cat))]
    if bad:
        raise MetricUnavailableError(
            "not collectable on " + chip + ": " + "; ".join(f"{m} ({p})" for m, p in bad),
            hint="names follow ncu --query-metrics --chips "
            + chip
            + " (ncu 2025.3.1 catalogue); pass --skip-metric-check if your ncu knows them",
        )


def check_outputs_free(req: ProfileRequest, log_path: Path) -> None:
    """Before ncu runs: without --force, none of the files this run writes may exist yet
    (the report, its log, every analysis format and the run record, rank names included)."""
    if req.force:
        return
    from ..render.bundle import FORMATS

    base = req.report_glob()[: -len(".ncu-rep")]
    exts = [".ncu-rep", ".ncu.log", ".profile.json"] + [ext for _, ext in FORMATS]
    taken = sorted(
        {Path(p) for ext in exts for p in glob.glob(base + ext)} | ({log_path} if log_path.exists() else set())
    )
    if taken:
        raise OutputError(
            f"{taken[0]} exists" + (f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""),
            hint="use --force to overwrite, or another --output-dir/--name",
        )


def check_outputs_regular(req: ProfileRequest, paths: list[Path]) -> None:
    """Before ncu runs, with or without --force: no file this run writes (``paths``, and the
    report and analyses by name) may be a FIFO, device or socket, or a dangling link: a FIFO
    opened for writing blocks until someone reads it, and --force never replaces such a node."""
    from ..render.bundle import FORMATS

    base = req.report_glob()[: -len(".ncu-rep")]
    named = {Path(p) for ext in [".ncu-rep"] + [ext for _, ext in FORMATS] for p in glob.glob(base + ext)}
    for p in sorted(set(paths) | named):
        if os.path.lexists(p):
            check_writable(p, True)
