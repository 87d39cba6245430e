"""What ``drgpu profile`` asks ncu for: the application, the output names and the launch
filters (:class:`ProfileRequest`), and ncu's argument list for them.

Contract: ``ProfileRequest.validate`` raises a usage error (exit 2); ``build_ncu_argv(ncu,
request, selection)`` is pure: an argument list, never a shell line, the application's
arguments appended unchanged. ``resolve_app`` makes the program absolute (InputError when it
is missing); ``pick_rank_var`` chooses the MPI rank variable. Nothing here runs ncu
(:mod:`drgpu_py.ncu.session` does).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..errors import InputError, UsageError
from ..specs import metric_sets as msets

RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK")
REPLAY_MODES = ("kernel", "application", "range", "app-range")
CLOCK_CONTROLS = ("base", "none")
TARGET_PROCESSES = ("all", "application-only")
KERNEL_NAME_BASES = ("function", "demangled", "mangled")


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
