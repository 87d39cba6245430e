"""Typed errors raised below the CLI, each with a documented process exit code.

The CLI maps any :class:`DrgpuError` to a one-line message on stderr and ``exit_code``;
nothing below the CLI calls ``sys.exit``. docs/errors.md lists the same codes with example
messages; ``tests/robustness/test_bad_inputs.py`` keeps the two in step.
"""

from __future__ import annotations


class DrgpuError(Exception):
    """Base class: a failure the user can act on. ``hint`` says what to do."""

    exit_code = 1
    kind = "error"

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f" ({self.hint})" if self.hint else "")

    def __reduce__(self):
        # Errors cross a process boundary (readers.isolate, analyze -j): keep the hint with the message.
        return type(self), (self.message, self.hint)


class UsageError(DrgpuError):
    """Bad combination of options or arguments."""

    exit_code = 2
    kind = "usage"


class InputError(DrgpuError):
    """The input path is missing, a directory, or unreadable."""

    exit_code = 3
    kind = "input"


class ReportFormatError(DrgpuError):
    """The input exists but is not a report drgpu can read (corrupt, truncated, wrong page)."""

    exit_code = 4
    kind = "format"


class NoKernelsError(DrgpuError):
    """The report holds no kernel launch, or the --kernel filter matched none."""

    exit_code = 5
    kind = "no-kernels"


class OutputError(DrgpuError):
    """The output cannot be written (exists without --force, not writable)."""

    exit_code = 6
    kind = "output"


class ToolNotFoundError(DrgpuError):
    """An external tool (ncu, dot, nvdisasm, cuobjdump) is not installed."""

    exit_code = 7
    kind = "tool-missing"


class DataFileError(DrgpuError):
    """A packaged or user-supplied data file (YAML) fails its schema."""

    exit_code = 8
    kind = "data"


class CheckFailedError(DrgpuError):
    """A CI check failed: ``analyze --fail-on`` found a finding at that severity, or
    ``diff --fail-on-regression`` found a regression. The output was written in full."""

    exit_code = 9
    kind = "check-failed"


class NothingComparedError(CheckFailedError):
    """``diff --fail-on-regression`` compared nothing: no kernel of the baseline matched one
    of the new report (a kernel renamed, a wrong baseline), so no regression could be looked
    for, and passing would let the change through unchecked. The output was written in full."""

    exit_code = 15
    kind = "nothing-compared"


class ProfilerError(DrgpuError):
    """ncu failed for a reason not covered by a more specific class."""

    exit_code = 10
    kind = "profiler"


class CounterPermissionError(ProfilerError):
    """ncu reported ERR_NVGPUCTRPERM: the user may not read GPU performance counters."""

    exit_code = 11
    kind = "counter-permission"


class ApplicationFailedError(ProfilerError):
    """The profiled application exited non-zero (what was profiled is kept)."""

    exit_code = 12
    kind = "app-failed"


class NoKernelProfiledError(ProfilerError):
    """ncu ran the application but profiled no kernel (filter matched nothing)."""

    exit_code = 13
    kind = "no-kernel-profiled"


class MetricUnavailableError(ProfilerError):
    """A requested metric does not exist on the target chip (ncu answers n/a)."""

    exit_code = 14
    kind = "metric-unavailable"


class InterruptedError_(DrgpuError):
    """The user interrupted the run (Ctrl-C), or SIGTERM/SIGHUP stopped it; partial outputs
    are kept. ``signum`` gives the exit code, 128 + the signal (130, 143, 129)."""

    exit_code = 130
    kind = "interrupted"

    def __init__(self, message: str, hint: str | None = None, signum: int = 2):
        super().__init__(message, hint)
        self.signum = signum
        self.exit_code = 128 + signum

    def __reduce__(self):
        return (type(self), (self.message, self.hint, self.signum))


class SelectionHint(UserWarning):
    """Not an error: what a ``--kernel`` name pattern left out that its user may have meant to
    pick (none of the report's library kernels, whose names their library chooses: cuBLAS's
    GEMMs are ``nvjet_*``). Raised as a Python warning where the selection is made; the CLI
    prints it as one ``drgpu: hint:`` line on stderr and goes on."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread by the CLI's handler: a subclass of
    KeyboardInterrupt, so every path that cleans up after Ctrl-C (atomic writes, the ncu
    child, a reading child process) cleans up after these too. Not a DrgpuError: the CLI
    exits 128 + ``signum``."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum


ALL_ERRORS = [
    UsageError,
    InputError,
    ReportFormatError,
    NoKernelsError,
    OutputError,
    ToolNotFoundError,
    DataFileError,
    CheckFailedError,
    ProfilerError,
    CounterPermissionError,
    ApplicationFailedError,
    NoKernelProfiledError,
    MetricUnavailableError,
    NothingComparedError,
    InterruptedError_,
]
