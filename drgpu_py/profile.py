"""Drive Nsight Compute (ncu) with drgpu's curated metric sets
(:mod:`drgpu_py.specs.metric_sets`): build the command, run it, follow its progress, classify
its failures, and find the reports it wrote.

Contract:
- ``build_ncu_argv(ncu, request, selection)`` is pure: an argument list, never a shell line;
  the application's arguments are appended unchanged.
- ``run_ncu(argv, log_path, on_event)`` runs ncu, tees its whole console output to
  ``log_path``, parses ``==PROF==`` progress into :class:`Event` callbacks and returns a
  :class:`RunResult`. ncu runs in a process group of its own (with the application it
  starts): Ctrl-C, SIGTERM or SIGHUP reaching drgpu stop that whole group, Ctrl-C gently (ncu
  writes what it profiled), and the result says ``interrupted`` (``signum``: which); nothing
  written is deleted. ``timeout_s`` stops a run that has not ended by then the same way and
  sets ``timed_out``.
- ``classify(result, request)`` maps a finished run to a typed error (or None): ncu missing
  is found earlier by ``find_ncu``; counter permission (11), the application failing (12), no
  kernel profiled (13). A failing application with reports is still analyzed by the caller.
- ``unavailable_metrics(report, expected)`` names the requested metrics a report lacks or
  holds as n/a: ncu accepts unknown metric names silently (exit 0), so this is the only check.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from .errors import (ApplicationFailedError, CounterPermissionError, InputError, MetricUnavailableError,
                     NoKernelProfiledError, ProfilerError, ToolNotFoundError, UsageError)
from .specs import loader as data

if TYPE_CHECKING:
    from .specs.metric_sets import Selection

#: Environment variables MPI launchers set to a process's rank (Open MPI, MPICH/PMI, PMIx,
#: Slurm, MVAPICH). ``--rank-var auto`` picks the first one set in drgpu's own environment.
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


def detect_gpu(env: dict | None = None, run=subprocess.run) -> GpuInfo | None:
    """The GPU ncu will profile (the first visible one), from nvidia-smi; None if unknown."""
    env = dict(os.environ if env is None else env)
    exe = shutil.which("nvidia-smi", path=env.get("PATH"))
    if not exe:
        return None
    try:
        p = run([exe, "--query-gpu=index,name,compute_cap", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode != 0:
        return None
    rows = [[c.strip() for c in ln.split(",")] for ln in p.stdout.splitlines() if ln.count(",") >= 2]
    if not rows:
        return None
    want = (env.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0].strip()
    row = next((r for r in rows if want.isdigit() and r[0] == want), rows[0])
    cc = row[-1]
    return GpuInfo(name=", ".join(row[1:-1]), compute_capability=cc, chip=data.chip_for(cc))


def find_ncu(explicit: str | None = None, env: dict | None = None) -> str:
    """Path of ncu: ``--ncu``, else $NCU, else ncu on PATH, else the CUDA toolkit's."""
    env = dict(os.environ if env is None else env)
    cand = explicit or env.get("NCU")
    if cand:
        found = shutil.which(cand, path=env.get("PATH")) if os.sep not in cand else (cand if os.access(cand, os.X_OK) and os.path.isfile(cand) else None)
        if not found:
            raise ToolNotFoundError(f"ncu not found at {cand!r}",
                                    hint=f"give the path of Nsight Compute's ncu with --ncu or NCU=; it ships with the CUDA toolkit and at {NCU_HELP_URL}")
        return found
    found = shutil.which("ncu", path=env.get("PATH"))
    if found:
        return found
    for root in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "ncu"), os.X_OK):
            return os.path.join(root, "bin", "ncu")
    raise ToolNotFoundError("Nsight Compute (ncu) is not installed or not on PATH",
                            hint=f"install the CUDA toolkit or Nsight Compute ({NCU_HELP_URL}), then put ncu on PATH or give --ncu PATH")


def resolve_app(app: list[str], env: dict | None = None) -> list[str]:
    """The application's argv with its program made absolute (ncu runs it from its own
    working directory rules); arguments are untouched."""
    if not app:
        raise UsageError("no application given", hint="drgpu profile [OPTIONS] -- APP [ARGS...]")
    env = dict(os.environ if env is None else env)
    prog = app[0]
    if os.sep in prog:
        path = os.path.abspath(prog)
        if not os.path.isfile(path):
            raise InputError(f"application {prog} does not exist")
        if not os.access(path, os.X_OK):
            raise InputError(f"application {prog} is not executable", hint=f"chmod +x {prog}, or run it through its interpreter")
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
    nvtx_include: list[str] = field(default_factory=list)   # ncu --nvtx-include, one per filter
    nvtx_exclude: list[str] = field(default_factory=list)
    profile_from_start: bool = True                          # False: ncu --profile-from-start off
    extra_ncu_args: list[str] = field(default_factory=list)
    force: bool = False

    def validate(self) -> None:
        for val, allowed, opt in ((self.replay_mode, REPLAY_MODES, "--replay-mode"),
                                  (self.clock_control, CLOCK_CONTROLS, "--clock-control"),
                                  (self.target_processes, TARGET_PROCESSES, "--target-processes"),
                                  (self.kernel_name_base, KERNEL_NAME_BASES, "--kernel-name-base")):
            if val is not None and val not in allowed:
                raise UsageError(f"{opt} {val!r} is not one of {', '.join(allowed)}")
        for val, opt in ((self.launch_skip, "--launch-skip"), (self.launch_count, "--launch-count")):
            if val is not None and val < (0 if opt == "--launch-skip" else 1):
                raise UsageError(f"{opt} must be {'>= 0' if opt == '--launch-skip' else '>= 1'}")
        if self.kernel is not None:
            try:
                re.compile(self.kernel)
            except re.error as e:
                raise UsageError(f"--kernel {self.kernel!r} is not a valid regular expression: {e}") from e
        if self.rank_var is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.rank_var):
            raise UsageError(f"--rank-var {self.rank_var!r} is not an environment variable name")
        if "%" in str(self.output_dir):
            # ncu expands %p, %q{VAR}, %h, %i in its -o value: a folder named with them
            # would scatter the report away from the log and analysis drgpu writes there.
            raise UsageError(f"--output-dir {str(self.output_dir)!r} holds '%', which ncu expands in report names "
                             "(%p, %q{VAR}, %h, %i): the report would land elsewhere",
                             hint="choose a folder name without '%'")
        if not re.fullmatch(r"[A-Za-z0-9._-]+", self.stem):
            raise UsageError(f"--name {self.stem!r}: use letters, digits, '.', '_' and '-' only")

    @property
    def output_base(self) -> Path:
        """ncu's -o value (without .ncu-rep), ncu placeholders included."""
        name = self.stem + (f".rank%q{{{self.rank_var}}}" if self.rank_var else "")
        return self.output_dir / name

    def report_glob(self, env: dict | None = None) -> str:
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


def pick_rank_var(option: str | None, env: dict | None = None) -> str | None:
    """``--rank-var``: 'auto' picks the MPI rank variable set in drgpu's own environment
    (each rank runs its own drgpu under mpirun/srun), 'none' disables, else the name given."""
    env = os.environ if env is None else env
    if option is None or option == "auto":
        return next((v for v in RANK_VARS if env.get(v, "").strip()), None)
    if option == "none":
        return None
    return option


def build_ncu_argv(ncu: str, req: ProfileRequest, sel: Selection) -> list[str]:
    req.validate()
    argv = [ncu]
    argv += sel.ncu_args()
    if req.import_source:
        argv += ["--import-source", "yes"]
    if req.kernel is not None:
        if req.kernel_name_base:
            argv += ["--kernel-name-base", req.kernel_name_base]
        argv += ["-k", f"regex:{req.kernel}"]
    if req.launch_skip is not None:
        argv += ["-s", str(req.launch_skip)]
    if req.launch_count is not None:
        argv += ["-c", str(req.launch_count)]
    if req.replay_mode:
        argv += ["--replay-mode", req.replay_mode]
    if req.clock_control:
        argv += ["--clock-control", req.clock_control]
    if req.target_processes:
        argv += ["--target-processes", req.target_processes]
    if req.nvtx_include or req.nvtx_exclude:
        argv.append("--nvtx")
        for f in req.nvtx_include:
            argv += ["--nvtx-include", f]
        for f in req.nvtx_exclude:
            argv += ["--nvtx-exclude", f]
    if not req.profile_from_start:
        argv += ["--profile-from-start", "off"]
    argv += list(req.extra_ncu_args)
    argv += ["-o", str(req.output_base)]
    if req.force:
        argv.append("-f")
    return argv + list(req.app)


def existing_reports(req: ProfileRequest) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(req.report_glob()))


# ---------------------------------------------------------------------------------------
# Console output parsing
# ---------------------------------------------------------------------------------------
# With a kernel filter (-k) ncu leaves the launch id out: 'Profiling "damp": 0%...'.
_PROFILING = re.compile(r'^==PROF== Profiling "(?P<name>.+?)"(?: - (?P<launch>\d+)(?: \((?P<i>\d+)/(?P<n>\d+)\))?)?:\s?(?P<rest>.*)$')
_PASSES = re.compile(r"- (\d+) pass(?:es)?\s*$")
_CONNECTED = re.compile(r"^==PROF== Connected to process (\d+) \((.*)\)")
_DISCONNECTED = re.compile(r"^==PROF== Disconnected from process (\d+)")
_REPORT = re.compile(r"^==PROF== Report: (.+?)\s*$")
_APP_CODE = re.compile(r"The application returned an error code \((-?\d+)\)")
_UNAVAILABLE = re.compile(r"Unable to access the following \d+ metrics?: (.*?)\.?\s*$")
# An ncu (or application) that floods its console: the log keeps every line; the run's
# record and memory keep the first errors and warnings (and every one drgpu acts on).
KEPT_MESSAGES = 100
#: What ncu prints when it got SIGINT/SIGTERM: it kills the application, then writes the report
#: of the launches it finished (seen with ncu 2025.3.1, mid progress line).
_SHUTDOWN = "==PROF== Trying to shutdown target application"


@dataclass
class Event:
    """One thing ncu said. kind: connected, kernel (a launch started), progress (pct),
    kernel_done (passes; None when cut short), disconnected, report, error, warning,
    shutdown (ncu was told to stop), output (anything else)."""
    kind: str
    text: str
    kernel: str | None = None
    launch: int | None = None
    index: tuple[int, int] | None = None
    pct: int | None = None
    passes: int | None = None
    pid: int | None = None


def _pct(rest: str) -> int:
    marks = list(re.finditer(r"(\d+)%", rest))
    if not marks:
        return 0
    last = marks[-1]
    return min(100, int(last.group(1)) + 10 * rest[last.end():].count("."))


class OutputParser:
    """Turns ncu's console stream (chunks, possibly mid-line) into :class:`Event`s. A
    Profiling line grows while replay passes run ("0%....50%...."), so the unfinished tail
    is inspected too.

    Linear in the stream's length: only the first ``MAX_LINE`` characters of a line are kept
    and parsed (ncu's own lines are short; the log keeps everything), so an application
    printing megabytes without a newline costs no more than its length (it was quadratic)."""

    MAX_LINE = 1 << 16

    def __init__(self) -> None:
        self._tail = ""                                   # the unfinished line, at most MAX_LINE
        self._open: tuple[str, int, int] | None = None   # kernel, launch, last pct of the tail
        self._seq = 0    # launches profiled without an id so far (ncu omits it under -k)

    def _key(self, m) -> tuple[str, int]:
        return (m["name"], int(m["launch"]) if m["launch"] is not None else self._seq)

    def _keep(self, piece: str) -> None:
        if len(self._tail) < self.MAX_LINE:
            self._tail += piece[:self.MAX_LINE - len(self._tail)]

    def _take(self) -> str:
        tail, self._tail = self._tail, ""
        return tail

    def feed(self, chunk: str) -> list[Event]:
        events: list[Event] = []
        if "\n" in chunk:
            pieces = chunk.split("\n")
            self._keep(pieces[0])
            events += self._line(self._take().rstrip("\r"))
            for line in pieces[1:-1]:
                events += self._line(line[:self.MAX_LINE].rstrip("\r"))
            self._keep(pieces[-1])
        else:
            self._keep(chunk)
        if self._tail.startswith("==PROF== Profiling") and len(self._tail) < self.MAX_LINE:
            m = _PROFILING.match(buf := self._tail)
            if m:
                key = self._key(m)
                pct = _pct(m["rest"])
                if self._open is None or self._open[:2] != key:
                    events.append(self._start(m))
                    self._open = (*key, -1)
                if pct != self._open[2]:
                    events.append(Event("progress", buf, kernel=key[0], launch=key[1], pct=pct))
                    self._open = (*key, pct)
        return events

    def close(self) -> list[Event]:
        tail = self._take()
        return self._line(tail.rstrip("\r\n")) if tail.strip() else []

    def _start(self, m) -> Event:
        idx = (int(m["i"]), int(m["n"])) if m["i"] else None
        return Event("kernel", m.group(0), kernel=m["name"], launch=self._key(m)[1], index=idx)

    def _line(self, line: str) -> list[Event]:
        if _SHUTDOWN in line:
            head = line[:line.index(_SHUTDOWN)]
            return (self._line(head) if head.strip() else []) + [Event("shutdown", _SHUTDOWN)]
        out: list[Event] = []
        m = _PROFILING.match(line)
        if m:
            key = self._key(m)
            if self._open is None or self._open[:2] != key:
                out.append(self._start(m))
            self._open = None
            if m["launch"] is None:
                self._seq += 1
            pm = _PASSES.search(m["rest"])
            out.append(Event("kernel_done", line, kernel=key[0], launch=key[1], pct=_pct(m["rest"]),
                             passes=int(pm.group(1)) if pm else None))
            return out
        if (c := _CONNECTED.match(line)):
            return [Event("connected", line, pid=int(c.group(1)))]
        if (d := _DISCONNECTED.match(line)):
            return [Event("disconnected", line, pid=int(d.group(1)))]
        if (r := _REPORT.match(line)):
            return [Event("report", r.group(1))]
        if line.startswith("==ERROR=="):
            return [Event("error", line[len("==ERROR=="):].strip())]
        if line.startswith("==WARNING=="):
            return [Event("warning", line[len("==WARNING=="):].strip())]
        return [Event("output", line)]


# ---------------------------------------------------------------------------------------
# Running ncu
# ---------------------------------------------------------------------------------------
@dataclass
class KernelRun:
    name: str
    launch: int
    passes: int | None


@dataclass
class RunResult:
    argv: list[str]
    returncode: int | None
    log_path: Path
    wall_s: float
    kernels: list[KernelRun] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)      # as ncu announced them
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    app_exit_code: int | None = None
    interrupted: bool = False
    processes: int = 0
    signum: int | None = None      # the signal that interrupted drgpu (SIGINT, SIGTERM, SIGHUP)
    timed_out: bool = False
    dropped_messages: int = 0      # ncu errors/warnings beyond KEPT_MESSAGES (the log has them all)

    @property
    def permission_denied(self) -> bool:
        return any("ERR_NVGPUCTRPERM" in e for e in self.errors)

    @property
    def ncu_unavailable_metrics(self) -> list[str]:
        out: list[str] = []
        for w in self.warnings:
            m = _UNAVAILABLE.search(w)
            if m:
                out += [x.strip() for x in m.group(1).split(",") if x.strip()]
        return out


def _stop(proc: subprocess.Popen, steps) -> None:
    """Stop ncu and the application it runs (their own process group): each (signal, wait)
    in turn until ncu has exited. SIGINT first makes ncu write what it profiled."""
    for sig, wait in steps:
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        except OSError:
            proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    try:  # what ncu left of the group (an application that ignored ncu's signals)
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _stop_steps(signum: int, grace_s: float) -> tuple:
    """Ctrl-C (or a timeout): ask ncu to save what it profiled, then insist. SIGTERM/SIGHUP:
    whoever sent it wants drgpu gone soon (a scheduler kills after a grace period), so
    terminate at once and kill after a short wait."""
    if signum == signal.SIGINT:
        return ((signal.SIGINT, grace_s), (signal.SIGINT, 30.0), (signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0))
    return ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0))


def run_ncu(argv: list[str], log_path: Path, on_event: Callable[[Event], None] | None = None,  # noqa: C901 - one event loop over the child's output, signals and timeout
            env: dict | None = None, cwd: str | Path | None = None, sigint_grace_s: float = 5.0,
            timeout_s: float | None = None) -> RunResult:
    """Run ncu (argument list, no shell), tee its console to ``log_path``, report events."""
    parser = OutputParser()
    result = RunResult(argv=list(argv), returncode=None, log_path=Path(log_path), wall_s=0.0)
    t0 = time.monotonic()

    def handle(events: list[Event]) -> None:
        for ev in events:
            if ev.kind == "kernel_done":
                result.kernels.append(KernelRun(ev.kernel or "?", ev.launch or 0, ev.passes))
            elif ev.kind == "report":
                result.reports.append(Path(ev.text))
            elif ev.kind == "error":
                m = _APP_CODE.search(ev.text)
                if m:
                    result.app_exit_code = int(m.group(1))
                if len(result.errors) < KEPT_MESSAGES or m or "ERR_NVGPUCTRPERM" in ev.text:
                    result.errors.append(ev.text)
                else:
                    result.dropped_messages += 1
            elif ev.kind == "warning":
                if len(result.warnings) < KEPT_MESSAGES or _UNAVAILABLE.search(ev.text):
                    result.warnings.append(ev.text)
                else:
                    result.dropped_messages += 1
            elif ev.kind == "connected":
                result.processes += 1
            elif ev.kind == "shutdown":
                result.interrupted = True   # a signal reached ncu (Ctrl-C, kill): same as ours
            if on_event:
                on_event(ev)

    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        log.write("# " + " ".join(_quote(a) for a in argv) + "\n")
        log.flush()
        try:
            # A process group of its own: a signal to drgpu can then stop ncu and the
            # application together, without drgpu signalling itself.
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env, cwd=cwd, bufsize=0, process_group=0)
        except FileNotFoundError as e:
            raise ToolNotFoundError(f"cannot run {argv[0]}: not found", hint=f"install Nsight Compute ({NCU_HELP_URL}) or give --ncu PATH") from e
        except PermissionError as e:
            raise ToolNotFoundError(f"cannot run {argv[0]}: permission denied", hint="give the path of an executable ncu with --ncu") from e
        assert proc.stdout is not None
        watchdog = None
        if timeout_s is not None:
            def expire() -> None:
                result.timed_out = True
                _stop(proc, ((signal.SIGINT, sigint_grace_s), (signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)))
            watchdog = threading.Timer(timeout_s, expire)
            watchdog.daemon = True
            watchdog.start()
        try:
            while True:
                chunk = proc.stdout.read1(65536) if hasattr(proc.stdout, "read1") else proc.stdout.read(4096)
                if not chunk:
                    break
                text = chunk.decode("utf-8", errors="replace")
                log.write(text)
                log.flush()
                handle(parser.feed(text))
            handle(parser.close())
            result.returncode = proc.wait()
        except KeyboardInterrupt as e:
            result.interrupted = True
            result.signum = getattr(e, "signum", signal.SIGINT)
            if watchdog is not None:
                watchdog.cancel()
            _stop(proc, _stop_steps(result.signum, sigint_grace_s))
            try:
                rest = proc.stdout.read() or b""
            except (OSError, ValueError):
                rest = b""
            text = rest.decode("utf-8", errors="replace")
            log.write(text)
            handle(parser.feed(text) + parser.close())
            result.returncode = proc.poll()
            log.write("\n# drgpu: interrupted by the user\n" if result.signum == signal.SIGINT
                      else f"\n# drgpu: stopped by {signal.Signals(result.signum).name}\n")
        finally:
            if watchdog is not None:
                watchdog.cancel()
        if result.timed_out:
            log.write(f"\n# drgpu: ncu did not finish within {timeout_s:g} s and was stopped\n")
    result.wall_s = time.monotonic() - t0
    return result


def _quote(a: str) -> str:
    # Display only (the log's first line); the command itself never goes through a shell.
    return a if re.fullmatch(r"[A-Za-z0-9_./:=,%{}+-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def found_reports(result: RunResult, req: ProfileRequest, started: float) -> list[Path]:
    """Reports of this run: those announced on the console that match drgpu's own ``-o``
    pattern (the application shares that stream and may print a 'Report:' line of its own:
    a path anywhere else is ignored, never read or written beside), else files matching the
    pattern written since ``started`` (placeholders can expand to several)."""
    import fnmatch
    pattern = req.report_glob()
    announced = [p if p.is_absolute() else Path.cwd() / p for p in result.reports]
    out = [p for p in announced if fnmatch.fnmatchcase(str(p), pattern) and p.is_file()]
    for p in existing_reports(req):
        try:
            fresh = p.stat().st_mtime >= started - 1
        except OSError:
            continue
        if fresh and p.resolve() not in {q.resolve() for q in out}:
            out.append(p)
    return sorted(out)


def classify(result: RunResult, req: ProfileRequest, reports: list[Path]) -> Exception | None:
    """The error a finished run stands for (None: success). The caller analyzes ``reports``
    first whenever there are any, then raises this."""
    log = result.log_path
    if result.permission_denied:
        return CounterPermissionError(
            "no permission to read the GPU performance counters (ncu: ERR_NVGPUCTRPERM)",
            hint=("run as an administrator (sudo), or let all users profile: set the NVIDIA driver option "
                  f"NVreg_RestrictProfilingToAdminUsers=0 and reload the driver; see {PERM_URL}. ncu's output: {log}"))
    missing_app = next((e for e in result.errors if "does not exist or is not an executable" in e), None)
    if missing_app:
        return InputError(f"ncu could not start the application: {missing_app}")
    env_macro = next((e for e in result.errors if "for macro '%q'" in e), None)
    if env_macro:
        return UsageError(f"ncu could not name the report: {env_macro}",
                          hint="ncu expands %q{VAR} from its own environment, so --rank-var needs one drgpu per rank: "
                               "mpirun -np N drgpu profile -- APP (drgpu picks the rank variable up by itself)")
    other = [e for e in result.errors if not _APP_CODE.search(e)]
    if result.interrupted:
        return None  # the caller reports the interruption with what was kept
    if not reports:
        if result.kernels and not result.app_exit_code and not other:
            # ncu said it profiled launches, then no report appeared (a full disk, an -o it could not write)
            n = len(result.kernels)
            return ProfilerError(f"ncu profiled {n} kernel launch{'es' if n != 1 else ''} but wrote no report",
                                 hint=f"check the output folder's free space and permissions; ncu's output: {log}")
        if req.kernel is not None or req.launch_skip:
            what = f"--kernel {req.kernel!r}" if req.kernel is not None else f"--launch-skip {req.launch_skip}"
            app = f" (the application exited with code {result.app_exit_code})" if result.app_exit_code else ""
            return NoKernelProfiledError(
                f"no kernel was profiled: {what} matched no launch{app}; ncu wrote no report",
                hint=f"rerun with --list-kernels to see the kernels the application launches; ncu's output: {log}")
        if result.app_exit_code:
            return ApplicationFailedError(
                f"the application exited with code {result.app_exit_code} before any kernel was profiled",
                hint=f"its output is in {log}")
        if other:
            return ProfilerError("ncu failed: " + "; ".join(other[:3]), hint=f"ncu's output: {log}")
        if result.returncode not in (0, None):
            return ProfilerError(f"ncu exited with code {result.returncode} and wrote no report", hint=f"ncu's output: {log}")
        return NoKernelProfiledError("the application ran but launched no CUDA kernel that ncu could profile; no report was written",
                                     hint=f"check that it uses the GPU; ncu's output: {log}")
    if result.app_exit_code:
        n = len(result.kernels)
        return ApplicationFailedError(
            f"the application exited with code {result.app_exit_code}; "
            + (f"the {n} kernel launches profiled before that were analyzed" if n != 1 else "the kernel launch profiled before that was analyzed"),
            hint=f"its output is in {log}")
    if other:
        return ProfilerError("ncu reported errors: " + "; ".join(other[:3]) + " (what it profiled was analyzed)", hint=f"ncu's output: {log}")
    return None


# ---------------------------------------------------------------------------------------
# Checking the produced report
# ---------------------------------------------------------------------------------------
def unavailable_metrics(report: Path, expected: Iterable[str]) -> dict[str, list[str]]:
    """Per kernel launch ('name (id N)'), the expected metrics the report lacks or holds as
    n/a. A name ending in ``*`` needs at least one match. Empty when all are there."""
    from .readers.common import native_stderr_captured
    from .readers.isolate import in_child
    with native_stderr_captured():  # ncu_report's native log on a damaged report
        # In a child process: ncu_report can crash natively on a damaged report.
        return in_child(_unavailable_metrics, Path(report), list(expected), what=str(report))


def _unavailable_metrics(report: Path, expected: list[str]) -> dict[str, list[str]]:
    try:
        import ncu_report  # type: ignore
    except ImportError as e:
        raise ToolNotFoundError("the ncu_report module is not installed", hint="pip install ncu-report") from e
    try:
        ctx = ncu_report.load_report(str(report))
    except Exception as e:  # the module raises plain exceptions for truncated files
        raise ProfilerError(f"{report}: ncu_report could not load it ({e})") from e
    expected = list(expected)
    out: dict[str, list[str]] = {}
    kid = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for i in range(rng.num_actions()):
            a = rng.action_by_idx(i)
            names = set(a.metric_names())
            missing = []
            for m in expected:
                if "*" in m:
                    rx = re.compile("^" + ".*".join(re.escape(p) for p in m.split("*")) + "$")
                    if not any(rx.match(n) for n in names):
                        missing.append(m)
                elif m not in names or _is_na(a.metric_by_name(m)):
                    missing.append(m)
            if missing:
                out[f"{a.name()} (id {kid})"] = missing
            kid += 1
    return out


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
    return f"{len(names)} requested metric{'s' if len(names) != 1 else ''} missing or n/a in the report: " + ", ".join(names)


def metric_unavailable_error(missing: dict[str, list[str]], report: Path) -> MetricUnavailableError:
    return MetricUnavailableError(describe_missing(missing) + f" ({report})",
                                  hint="the metric does not exist on this GPU or ncu version; check `ncu --query-metrics` and drgpu metrics")
