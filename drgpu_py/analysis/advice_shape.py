"""Advice variants from the code's shape: which of a finding's advice texts fits the code it
points at (issue 46 item 3).

Contract: ``shape_of(ctx, passes, locations, library)`` gathers the facts the analysis already
has about a finding's code (``Shape``); ``advice_key(spec, variant, shape)`` names the
catalogue text (drgpu_py/specs/findings.yaml) a finding is given: ``caller_advice`` for a
library kernel (one without source lines, or a library helper kernel with or without them:
findings.is_library_kernel; findings.evaluate leaves out a library kernel's findings that have
none), else the ``advice_when`` variant its detector picked
from its evidence (e.g. atomics, not stores, draining at exit), else the first ``advice_when``
key named by a fact (``FACTS``) that holds, else ``advice``. Both are pure.

Facts, each one small named predicate over ``Shape``:

* ``library`` (is_library_kernel): a library kernel's source is not the user's; only the
  call can change (``caller_advice``).
* ``header``: the finding's top line is in a header (.h, .cuh, .hpp... or under an include/
  folder): code inlined into the kernel, a library's (CUDA's, CUB's, CUTLASS's) unless the
  header is the user's own. The advice changes the call or the library's parameters.
* ``in_loop`` / ``loop_free``: of the finding's lines, the heaviest instruction of at least
  one (in_loop) or of none (loop_free) is in a loop of the CFG (unknown without SASS or
  without locations: neither holds).
* ``grid_stride`` / ``fixed_work``: the launch shape's work split (launch_shape.py): a
  grid-stride loop, so the grid's size is free (a block-stride loop is not: its blocks are the
  problem's pieces); or each thread's work is fixed (a bounds guard and no stride loop: more
  blocks add no work).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .context import KernelContext
from .passes import Passes
from .tree import Location

#: File name endings of headers: a top location in one is code inlined into the kernel.
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".hxx", ".inl", ".inc")


@dataclass(frozen=True)
class Shape:
    """The facts about a finding's code its advice may depend on."""

    library: bool = False  # a library kernel (findings.is_library_kernel)
    header: bool = False  # the top location is in a header
    in_loop: bool | None = None  # a location's heaviest instruction in a loop; None: unknown
    work_split: str = "unknown"  # LaunchShape.work_split


def is_header(file: str | None) -> bool:
    """A source file that is a header (or under an include/ folder)."""
    if not file:
        return False
    return file.lower().endswith(HEADER_SUFFIXES) or "/include/" in file.replace("\\", "/")


def library(shape: Shape) -> bool:
    return shape.library


def header(shape: Shape) -> bool:
    return shape.header


def in_loop(shape: Shape) -> bool:
    return shape.in_loop is True


def loop_free(shape: Shape) -> bool:
    return shape.in_loop is False


def grid_stride(shape: Shape) -> bool:
    return shape.work_split == "grid-stride"


def fixed_work(shape: Shape) -> bool:
    return shape.work_split == "per-thread"


#: advice_when key -> the fact that selects it (tried in the catalogue's order of the keys).
FACTS: dict[str, Callable[[Shape], bool]] = {
    "header": header,
    "in_loop": in_loop,
    "loop_free": loop_free,
    "grid_stride": grid_stride,
    "fixed_work": fixed_work,
}


def _in_loop(ctx: KernelContext, locations: list[Location]) -> bool | None:
    """Whether the heaviest instruction of one of the locations is in a loop (None: no CFG or
    no location to tell)."""
    cfg = ctx.cfg
    offsets = {int(loc["pc_offset"]) for loc in locations if loc.get("pc_offset") is not None}
    if cfg is None or not offsets:
        return None
    pcs = [pc for pc, row in ctx.row_map().items() if int(row[2]) in offsets]
    indices = [idx for pc in pcs if (idx := cfg.index_of_pc.get(pc)) is not None]
    if not indices:
        return None
    return any(cfg.innermost_loop(idx) is not None for idx in indices)


def shape_of(ctx: KernelContext, passes: Passes, locations: list[Location], library: bool) -> Shape:
    """The facts of a finding's code: its locations, the launch's work split, the kernel."""
    return Shape(
        library=library,
        header=bool(locations) and is_header(locations[0].get("file")),
        in_loop=_in_loop(ctx, locations),
        work_split=passes.launch.work_split if passes.launch is not None else "unknown",
    )


def advice_key(spec: dict[str, Any], variant: str | None, shape: Shape) -> str:
    """The catalogue key of the advice a finding gets: ``caller_advice``, an ``advice_when``
    key (``advice_when.KEY``) or ``advice``."""
    if library(shape) and "caller_advice" in spec:
        return "caller_advice"
    when = spec.get("advice_when") or {}
    if variant in when:
        return f"advice_when.{variant}"
    key = next((k for k in when if k in FACTS and FACTS[k](shape)), None)
    return f"advice_when.{key}" if key else "advice"


def advice_text(spec: dict[str, Any], key: str) -> str:
    """The catalogue text of ``advice_key``'s answer."""
    if key.startswith("advice_when."):
        return str(spec["advice_when"][key.removeprefix("advice_when.")])
    return str(spec[key])
