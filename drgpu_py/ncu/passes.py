"""Two-pass profiling (``drgpu profile --passes 2|auto``): which runs, and which kernels the
second run collects the rest of the metric set for.

Contract (everything here is pure; :mod:`drgpu_py.ncu.session` runs ncu):
- ``plan_passes(mode, req, second)`` -> (1 or 2, reason): ``--passes 1`` is one run of the whole
  set; ``2`` is two runs, refused (UsageError) where the second run's launches could not be
  joined to the first's (``CANNOT_JOIN``); ``auto`` is two runs unless a row of
  ``CANNOT_JOIN`` or ``NOT_WORTH`` holds, decided before anything runs (``--dry-run`` prints
  what will run).
- ``kernel_times(profile)``: per kernel (launch identity of :mod:`drgpu_py.readers.passes`), its
  launches and summed ``gpu__time_duration`` in the first run, in first-launch order; a kernel
  with no measured duration has ``time_ns`` None.
- ``focus(times, share)``: the kernels that hold the time, the longest first, until their summed
  time reaches ``share`` of all the measured time; every kernel when none has a duration.
- ``second_request(req, chosen)``: the second run's request: the first's filters with the kernel
  filter replaced by the focus kernels' mangled names (``--kernel-name-base mangled``, a regex
  of exact names) and the launch count by their launches in the first run. The first run's
  launches are a prefix of the application's matching launches (no ``--launch-skip``), so the
  focus kernels' launches in it are a prefix of theirs, and ``-c N`` takes exactly those.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from ..errors import UsageError
from ..specs import metric_sets as msets

from .request import ProfileRequest

if TYPE_CHECKING:
    from ..profile import Profile

PASS_MODES = ("1", "2", "auto")
#: ``--passes`` when not given: one run, as before two-pass profiling, until the two-pass way of
#: benchmarks/profile_wall.sh has been measured on a GPU (docs/profile.md).
DEFAULT_PASSES = "1"
#: ``--focus-share`` when not given: the kernels holding 80% of the first run's GPU time.
DEFAULT_FOCUS_SHARE = 0.8
#: What ``--dry-run`` prints for the second run's filter, known only after the first run.
FOCUS_REGEX_PLACEHOLDER = "<FOCUS_KERNELS>"
FOCUS_COUNT_PLACEHOLDER = "<FOCUS_LAUNCHES>"


@dataclass(frozen=True)
class Rule:
    """A condition under which a profile is taken in one run, and why."""

    holds: Callable[[ProfileRequest, msets.Selection], bool]
    why: str


#: Requests whose second run could not be joined to the first launch by launch.
CANNOT_JOIN = (
    Rule(
        lambda req, second: req.launch_skip is not None,
        "--launch-skip: the second run, filtered by kernel name, cannot tell which of its launches the first run skipped",
    ),
    Rule(
        lambda req, second: req.replay_mode in ("range", "app-range"),
        "range replay profiles ranges, not kernel launches",
    ),
    Rule(lambda req, second: bool(req.rank_var), "one report per MPI rank: each rank's runs would need joining"),
    Rule(lambda req, second: not (second.sections or second.metrics), "the first run collects the whole set"),
)
#: Requests ``auto`` takes in one run although two could be joined: nothing to save.
NOT_WORTH = (
    Rule(
        lambda req, second: req.launch_count == 1,
        "--launch-count 1: one launch, which the second run would profile again",
    ),
)


def _first_holding(rules: tuple[Rule, ...], req: ProfileRequest, second: msets.Selection) -> Rule | None:
    return next((r for r in rules if r.holds(req, second)), None)


def check_focus_share(share: float) -> None:
    if not 0 < share <= 1:
        raise UsageError(f"--focus-share is a share of the GPU time above 0 and at most 1, got {share:g}")


def plan_passes(mode: str, req: ProfileRequest, second: msets.Selection) -> tuple[int, str]:
    """How many runs take the profile (module docstring), and why, in words."""
    if mode not in PASS_MODES:
        raise UsageError(f"--passes {mode!r} is not one of {', '.join(PASS_MODES)}")
    if mode == "1":
        return 1, "--passes 1"
    blocked = _first_holding(CANNOT_JOIN, req, second)
    if mode == "2":
        if blocked is not None:
            raise UsageError(f"--passes 2 cannot be used here: {blocked.why}", hint="use --passes 1 or auto")
        return 2, "--passes 2"
    rule = blocked or _first_holding(NOT_WORTH, req, second)
    return (1, f"--passes auto: one run ({rule.why})") if rule else (2, "--passes auto: two runs")


@dataclass
class KernelTime:
    """One kernel of the first run: its identity, name, launches and summed GPU time."""

    key: str  # mangled name (readers.passes.launch_key)
    name: str
    launches: int
    time_ns: float | None


def kernel_times(profile: Profile) -> list[KernelTime]:
    """Per kernel, its launches and summed duration in the first run (first-launch order)."""
    out: dict[str, KernelTime] = {}
    for k in profile.kernels:
        key = k.function_key
        kt = out.setdefault(key, KernelTime(key=key, name=k.name, launches=0, time_ns=None))
        kt.launches += 1
        d = k.duration_ns
        if d is not None:
            kt.time_ns = (kt.time_ns or 0.0) + d
    return list(out.values())


def focus(times: list[KernelTime], share: float) -> list[KernelTime]:
    """The longest kernels until their time reaches ``share`` of the total (ties: first launched)."""
    check_focus_share(share)
    timed = [t for t in times if t.time_ns]
    if not timed:
        return list(times)  # nothing to rank by: the second run takes every kernel
    ranked = sorted(timed, key=lambda t: -(t.time_ns or 0.0))  # sorted() is stable: ties stay in launch order
    held = list(itertools.accumulate(t.time_ns or 0.0 for t in ranked))
    # Up to and including the kernel that brings the time held to the share.
    count = next((i + 1 for i, h in enumerate(held) if h >= share * held[-1]), len(ranked))
    return ranked[:count]


def focus_regex(chosen: list[KernelTime]) -> str:
    """The regex (ncu's ``-k regex:...``) matching exactly the chosen kernels' mangled names."""
    return "^(" + "|".join(re.escape(t.key) for t in chosen) + ")$"


def second_request(req: ProfileRequest, chosen: list[KernelTime] | None, stem: str) -> ProfileRequest:
    """The second run's request (module docstring); ``chosen`` None: the placeholders
    ``--dry-run`` prints before the first run has told which kernels."""
    regex = focus_regex(chosen) if chosen is not None else FOCUS_REGEX_PLACEHOLDER
    return replace(
        req,
        stem=stem,
        kernel=regex,
        kernel_name_base="mangled",
        launch_skip=None,
        launch_count=sum(t.launches for t in chosen) if chosen is not None else None,
        import_source=False,  # the per-instruction data and source come from the first run
    )


def with_count_placeholder(argv: list[str]) -> list[str]:
    """The second run's argument list as ``--dry-run`` prints it: ``-c <FOCUS_LAUNCHES>`` after
    the kernel filter (its value is known only after the first run)."""
    at = argv.index("-k") + 2
    return [*argv[:at], "-c", FOCUS_COUNT_PLACEHOLDER, *argv[at:]]
