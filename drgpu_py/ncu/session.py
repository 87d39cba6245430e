"""One ``drgpu profile`` session: what to profile, ncu's argument list, the run, the analysis
of each report ncu wrote, and a record of the run.

Contract:
- The request and ncu's argument list are :mod:`drgpu_py.ncu.request`'s (its names are
  also read through this module).
- ``Session(options)`` checks the options and finds ncu; then ``list_kernels``, ``choose()``,
  ``prepare_outputs()`` (never overwrites without ``force``), ``run_ncu(on_event)`` and
  ``finish(on_warning)`` -> :class:`SessionOutcome`, whose ``check()`` raises the run's error.
- ``--passes 2`` (or ``auto``, :mod:`drgpu_py.ncu.passes`): ``run_ncu`` runs ncu twice, the
  first run over every launch with the set's ``first_pass`` groups (report ``STEM.pass1``), the
  second with the rest for the kernels holding ``focus_share`` of the first run's GPU time
  (``STEM.pass2``); ``finish`` analyzes the two joined (readers.passes) into ``STEM.*``. A first
  run that fails or is stopped ends the session as a one-run session would, with its report.
  ``dry_run_lines()`` is what ``--dry-run`` prints: each run's argument list, the second's
  filter as placeholders.
- Nothing is thrown away: report(s), ``STEM.ncu.log``, analyses and ``STEM.profile.json``
  stay whatever happens (docs/profile.md); an interruption raises
  :class:`~drgpu_py.errors.InterruptedError_` naming what was kept.
- Nothing here prints; progress and messages go to the caller's callbacks.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..errors import (
    DataFileError,
    DrgpuError,
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
from . import passes as two
from .request import (  # noqa: F401 - the request's names, also read through this module
    CLOCK_CONTROLS,
    KERNEL_NAME_BASES,
    RANK_VARS,
    REPLAY_MODES,
    TARGET_PROCESSES,
    ProfileRequest,
    build_ncu_argv,
    default_stem,
    pick_rank_var,
    resolve_app,
)
from .reports import analyze_one, analyze_passes, read_first_pass, record
from .run import RunResult, find_ncu, private_log, run_ncu, with_log_file

if TYPE_CHECKING:  # started by run_ncu, imported there
    from ..profile import Profile
    from .warmup import Warmup


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
    passes: str = two.DEFAULT_PASSES  # "1", "2" or "auto" (drgpu_py.ncu.passes)
    focus_share: float = two.DEFAULT_FOCUS_SHARE


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
        two.check_focus_share(opts.focus_share)
        if opts.passes not in two.PASS_MODES:
            raise UsageError(f"--passes {opts.passes!r} is not one of {', '.join(two.PASS_MODES)}")
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
        self.two: _TwoRuns | None = None  # choose(): the two runs' plan, when there are two
        self.passes_why = ""

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
        first, second = self.ms.split(self.sel)
        runs, self.passes_why = two.plan_passes(opts.passes, self.req, second)
        if runs == 1:
            self.argv = with_log_file(build_ncu_argv(self.ncu, self.req, self.sel), self.ncu_log)
            return
        self.two = _TwoRuns(self, first, second)
        self.argv = self.two.argv1
        self.log_path = self.two.log1

    def dry_run_lines(self) -> list[str]:
        """What ``--dry-run`` prints: ncu's argument list, or both runs' with a comment each."""
        if self.two is None:
            return [shlex.join(self.argv)]
        t = self.two
        return [
            f"# run 1 of 2: every launch; groups {', '.join(t.sel1.groups)}",
            shlex.join(t.argv1),
            f"# run 2 of 2, depends on the first pass: the rest of the set for the kernels holding "
            f"{self.opts.focus_share:g} of the first run's GPU time ({two.FOCUS_REGEX_PLACEHOLDER}: their mangled "
            f"names; {two.FOCUS_COUNT_PLACEHOLDER}: their launches in the first run)",
            shlex.join(two.with_count_placeholder(t.argv_for(None))),
        ]

    def prepare_outputs(self) -> None:
        check_outputs_free(self.req, self.log_path)
        check_outputs_regular(self.req, [self.log_path, self.record_path])
        if self.two is not None:
            for r, log in ((self.two.req1, self.two.log1), (self.two.req2, self.two.log2)):
                check_outputs_free(r, log)
                check_outputs_regular(r, [log])
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
        if self.two is not None:
            self.result = self.two.second_run(self.result, on_event) or self.result
        return self.result

    def finish(self, on_warning: Callable[[str], None] | None = None) -> SessionOutcome:
        """Analyze each report of the run (``on_warning``: a report's missing metrics) and
        record the run. Raises InterruptedError_ (stopped) or ProfilerError (timed out)."""
        result, req, log_path = self.result, self.req, self.log_path
        assert result is not None and self._warm is not None and self.sel is not None, "run_ncu first"
        if self.two is not None and self.two.result2 is not None:
            return self.two.finish(on_warning)
        if self.two is not None:  # the first of two runs failed or was stopped: it is the session's run
            req, self.sel = self.two.req1, self.two.sel1
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
        argv = self.two.argv2 if self.two is not None and self.two.argv2 else self.argv
        passes = self.two.record() if self.two is not None else {"runs": 1, "why": self.passes_why}
        record(self.record_path, argv, self.ms, self.sel, self.result, reports, missing, self.notes, exit_code, passes)


class _TwoRuns:
    """The two runs of a two-pass session (module docstring): their requests, argument lists,
    logs and results, the kernels the second run took, and the analysis of the two joined."""

    def __init__(self, s: Session, first: msets.Selection, second: msets.Selection) -> None:
        self.s = s
        self.sel1, self.sel2 = first, second
        self.req1 = replace(s.req, stem=f"{s.stem}.pass1")
        self.req2 = two.second_request(s.req, None, f"{s.stem}.pass2")
        self.log1 = s.req.output_dir / f"{s.log_stem}.pass1.ncu.log"
        self.log2 = s.req.output_dir / f"{s.log_stem}.pass2.ncu.log"
        self.ncu_log2 = private_log()
        self.argv1 = s.argv = with_log_file(build_ncu_argv(s.ncu, self.req1, first), s.ncu_log)
        self.argv2: list[str] = []
        self.times: list[two.KernelTime] = []
        self.chosen: list[two.KernelTime] = []
        self.result1: RunResult | None = None
        self.result2: RunResult | None = None
        self.rep1: Path | None = None
        self.profile1: Profile | None = None
        self._started2 = 0.0

    def argv_for(self, chosen: list[two.KernelTime] | None) -> list[str]:
        self.req2 = two.second_request(self.s.req, chosen, f"{self.s.stem}.pass2")
        return with_log_file(build_ncu_argv(self.s.ncu, self.req2, self.sel2), self.ncu_log2)

    def second_run(self, res1: RunResult, on_event: Callable[[Event], None] | None) -> RunResult | None:
        """After the first run: pick the kernels, run the second; None when the first run failed
        or was stopped (the session ends with it)."""
        s = self.s
        self.result1 = res1
        if res1.interrupted or res1.timed_out:
            return None
        reports = outcome.found_reports(res1, self.req1, s._started)
        if outcome.classify(res1, self.req1, reports) is not None or len(reports) != 1:
            return None
        assert s._warm is not None
        s._warm.join()  # before the report is read: reading forks, which wants one thread
        self.rep1 = reports[0]
        try:
            profile1 = read_first_pass(self.rep1, s._warm.sass)
        except DrgpuError as e:
            s.notes.append(f"the first run's report could not be read ({e}): no second run")
            return None
        self.profile1 = profile1
        self.times = two.kernel_times(profile1)
        self.chosen = two.focus(self.times, s.opts.focus_share)
        self.argv2 = self.argv_for(self.chosen)
        left = None if s.opts.timeout is None else max(s.opts.timeout - res1.wall_s, 1.0)
        self._started2 = time.time()
        s.log_path = self.log2
        self.result2 = run_ncu(self.argv2, self.log2, on_event=on_event, timeout_s=left, ncu_log=self.ncu_log2)
        return self.result2

    def finish(self, on_warning: Callable[[str], None] | None) -> SessionOutcome:
        """Analyze the two reports joined, record the session (Session.finish's second half)."""
        s, res2 = self.s, self.result2
        assert res2 is not None and self.rep1 is not None and self.result1 is not None
        s.sel = self.sel1  # the record's top level: what every launch got
        reports2 = outcome.found_reports(res2, self.req2, self._started2)
        s._stop_if_stopped(res2, [self.rep1, *reports2])
        done = SessionOutcome(
            rows=[],
            written=[],
            failures=[],
            reports=[self.rep1, *reports2],
            result=res2,
            log_path=self.log2,
            error=outcome.classify(res2, self.req2, reports2),
        )
        done.written.append(self.log1)  # the first run's log; the second's is done.log_path
        th = s.opts.thresholds if s.opts.thresholds is not None else data.thresholds()
        missing: dict = {}
        if len(reports2) == 1:
            missing = self._analyze(done, th, reports2[0])
            if missing:
                s._report_missing(done, reports2[0], missing, on_warning)
        else:
            done.failures.append(f"the second run wrote {len(reports2)} reports, not one: nothing joined")
        final = _exit_error(done)
        joined = {f"{self.rep1} + {done.reports[-1]}": missing} if missing else {}
        s._record(done.reports, joined, final.exit_code if final is not None else 0)
        return done

    def _analyze(self, done: SessionOutcome, th: Thresholds, rep2: Path) -> dict:
        s = self.s
        assert self.result1 is not None and self.result2 is not None and self.rep1 is not None
        from ..readers.passes import outside_note  # the readers load with the analysis, not with drgpu profile

        try:
            rows, files, missing = analyze_passes(
                (self.rep1, self.profile1, self.sel1, self.result1),
                (rep2, self.sel2, self.result2),
                th,
                outside_note=outside_note(self.s.opts.focus_share),
                out=(s.req.output_dir, s.stem),
                focus_keys={t.key for t in self.chosen},
            )
        except DrgpuError as e:
            done.failures.append(f"{self.rep1.name} + {rep2.name}: {e}")
            return {}
        done.rows += rows
        done.written += files
        return missing

    def record(self) -> dict:
        """The record's ``passes``: each run, and what each kernel of the first got."""
        focus = {t.key for t in self.chosen}
        total = sum(t.time_ns or 0.0 for t in self.times)
        return {
            "runs": 2,
            "why": self.s.passes_why,
            "focus_share": self.s.opts.focus_share,
            "first": _run_record(self.argv1, self.sel1, self.result1, self.rep1),
            "second": _run_record(self.argv2, self.sel2, self.result2, None)
            | {"kernel_filter": self.req2.kernel, "launch_count": self.req2.launch_count}
            if self.result2 is not None
            else None,
            "kernels": [
                {
                    "name": t.name,
                    "mangled": t.key,
                    "launches": t.launches,
                    "gpu_time_ns": t.time_ns,
                    "time_share": round(t.time_ns / total, 4) if t.time_ns is not None and total > 0 else None,
                    "collected": "both passes" if t.key in focus else "first pass only",
                }
                for t in self.times
            ],
        }


def _run_record(argv: list[str], sel: msets.Selection, res: RunResult | None, rep: Path | None) -> dict:
    """One run of a two-pass session in the record: what it asked, what ncu said per launch."""
    return {
        "ncu_argv": argv,
        "groups": sel.groups,
        "sections": sel.sections,
        "metrics": sel.metrics,
        "ncu_wall_s": round(res.wall_s, 3) if res is not None else None,
        "kernels": [{"name": k.name, "launch": k.launch, "passes": k.passes} for k in res.kernels] if res else [],
        "report": str(rep) if rep is not None else None,
    }


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
