"""Kernel selection: the ``--kernel`` selector and the library-kernel hints around it.

Contract: a selector is parsed once where it enters drgpu (:meth:`KernelSelector.parse`:
a launch id, an id range ``a:b`` or a name pattern) and used by every reader and by
``readers.select_kernels``. A pattern that does not compile, or takes longer than
``REGEX_BUDGET_S`` of processor time over a report's names, is a
:class:`~drgpu_py.errors.UsageError` (exit 2), never a hang.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import regex

from ..errors import UsageError
from ..specs import loader as data

__all__ = [
    "LIBRARY_NAMES_SHOWN",
    "REGEX_BUDGET_S",
    "KernelSelector",
    "is_library_name",
    "kernel_regex",
    "library_names",
    "missed_library_kernels",
    "warn_missed_library_kernels",
]


#: The most processor time a ``--kernel`` pattern may take over all of a report's kernel names. A
#: pattern with nested quantifiers (``(x|xx)+y``) takes exponential time on long names; no
#: honest pattern needs a second.
REGEX_BUDGET_S = 2.0


@dataclass(frozen=True)
class KernelSelector:
    """A ``--kernel`` selector, parsed once where it enters drgpu (the CLI, or the API's
    ``kernel=`` text) and used by every reader and by kernel selection: a launch id (``7``),
    an id range (``a:b``, either end optional, ``b`` excluded) or a regular expression
    searched in the demangled and mangled names. The pattern is compiled on first use, so an
    invalid one is reported where the selection is made (a usage error, exit 2), as before."""

    text: str
    lo: int | None = None  # id or id range: the first id picked (None: from the start)
    hi: int | None = None  # the first id not picked (None: to the end)
    by_id: bool = False

    @classmethod
    def parse(cls, text: str | None) -> KernelSelector | None:
        """None for no selector (None or empty text)."""
        if not text:
            return None
        if re.fullmatch(r"[\d:]+", text) and max(map(len, text.split(":"))) > 18:
            # No report has 10^18 launches; int() refuses over 4,300 digits (a ValueError).
            raise UsageError(
                f"--kernel {text[:40]}{'...' if len(text) > 40 else ''}: a launch id of "
                f"{max(map(len, text.split(':'))):,} digits is beyond any report's launches",
                hint="give a launch id, an id range a:b, or a name pattern",
            )
        if re.fullmatch(r"\d+", text):
            return cls(text, int(text), int(text) + 1, True)
        if re.fullmatch(r"\d*:\d*", text):
            lo, hi = text.split(":")
            return cls(text, int(lo) if lo else None, int(hi) if hi else None, True)
        return cls(text)

    @classmethod
    def of(cls, selector: KernelSelector | str | None) -> KernelSelector | None:
        """``selector`` as a KernelSelector: text is parsed, a parsed one is kept."""
        return selector if selector is None or isinstance(selector, KernelSelector) else cls.parse(selector)

    def picks_id(self, kid: int) -> bool:
        """For an id or id-range selector: is launch ``kid`` picked?"""
        return (self.lo is None or kid >= self.lo) and (self.hi is None or kid < self.hi)

    def id_filter(self):
        """A predicate on launch ids for an id or id-range selector, else None (a name
        pattern: readers that skip launches by id read them all)."""
        return self.picks_id if self.by_id else None

    @functools.cached_property
    def regex(self) -> regex.Pattern:
        return kernel_regex(self.text)

    def name_matcher(self, seconds: float = REGEX_BUDGET_S) -> Callable[[str, str | None], bool]:
        """For a name pattern: a test ``(name, mangled) -> bool`` (does the pattern occur in
        either?) whose calls share one time budget of ``seconds``: past it a usage error
        (exit 2) instead of a hang. The budget is the ``regex`` module's own timeout, so it
        holds in any thread (no signal timer); like that timeout it counts processor time,
        so on a busy machine the wait is longer than ``seconds``."""
        rx = self.regex
        deadline = time.process_time() + seconds

        def matches(name: str, mangled: str | None) -> bool:
            for text in (name, mangled):
                if not text:
                    continue
                left = deadline - time.process_time()
                try:
                    if left <= 0:
                        raise TimeoutError
                    if rx.search(text, timeout=left) is not None:
                        return True
                except TimeoutError:
                    raise UsageError(
                        f"--kernel {self.text!r} took over {seconds:g} s of processor time to match the report's kernel names",
                        hint="simplify the pattern: nested quantifiers such as (a+)+ take exponential time on long names",
                    ) from None
            return False

        return matches

    def pick(self, kernels: list) -> list:
        """The kernels (each with ``id``, ``name``, ``mangled``) this selector picks, in order."""
        if self.by_id:
            return [k for k in kernels if self.picks_id(k.id)]
        matches = self.name_matcher()
        return [k for k in kernels if matches(k.name, k.mangled)]


#: Library kernel names a hint lists before "and N more".
LIBRARY_NAMES_SHOWN = 5


def is_library_name(name: str | None, mangled: str | None = None) -> bool:
    """Whether a kernel's demangled or mangled name is a library's (findings.yaml
    ``library_kernels``: cuBLAS, cuDNN, CUTLASS, NCCL, PyTorch...)."""
    return any(rx.search(n) for rx in data.library_kernel_patterns() for n in (name, mangled) if n)


def library_names(kernels: list) -> str:
    """The distinct names of ``kernels`` (each with ``name``) for a message: short forms
    (profile.short_names), the first LIBRARY_NAMES_SHOWN and how many more."""
    from ..profile import short_names

    names = list(dict.fromkeys(k.name or "" for k in kernels))
    short = short_names(names[:LIBRARY_NAMES_SHOWN], 60)
    more = len(names) - LIBRARY_NAMES_SHOWN
    return ", ".join(short[n] for n in names[:LIBRARY_NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")


def missed_library_kernels(selector: KernelSelector | None, kernels: list, picked: list) -> list:
    """The library kernels among ``kernels`` (each with ``name``, ``mangled``) when the name
    pattern ``selector`` picked none of them (``picked``: what it picked, maybe nothing), else
    []: a pattern such as ``gemm`` reads as "the GEMMs" but misses cuBLAS's ``nvjet_*``. An
    id or id range picks by number, not by name: never a miss."""
    if selector is None or selector.by_id:
        return []
    libraries = [k for k in kernels if is_library_name(k.name, k.mangled)]
    chosen = {id(k) for k in picked}
    return [] if any(id(k) in chosen for k in libraries) else libraries


def warn_missed_library_kernels(selector: KernelSelector | None, kernels: list, picked: list, report) -> None:
    """A :class:`~drgpu_py.errors.SelectionHint` warning when ``selector`` picked some of the
    kernels of ``report`` but none of its library kernels (``missed_library_kernels``)."""
    missed = missed_library_kernels(selector, kernels, picked) if picked else []
    if selector is None or not missed:
        return
    import warnings

    from ..errors import SelectionHint

    count = len({k.name for k in missed})
    warnings.warn(
        SelectionHint(
            f"--kernel {selector.text!r} matched none of the {count} library kernel(s) of {Path(str(report)).name}: "
            f"{library_names(missed)}; libraries name their kernels their own way (cuBLAS's GEMMs are nvjet_*): "
            "add their names to the pattern to analyze them too"
        ),
        stacklevel=3,
    )


def kernel_regex(selector: str) -> regex.Pattern:
    """Compile a ``--kernel`` name pattern (the ``regex`` module, whose searches take a
    timeout; its default mode reads patterns as Python's ``re`` does); any pattern it cannot
    compile (a syntax error, a repeat count over 2^32-1, nesting too deep) is a usage error."""
    try:
        return regex.compile(selector)
    except (regex.error, OverflowError, RecursionError, ValueError) as e:
        raise UsageError(f"--kernel {selector!r} is not a valid regular expression: {e}") from e
