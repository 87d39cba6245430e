"""Reader for Nsight Compute reports (``.ncu-rep``) through NVIDIA's ``ncu_report`` module.

Contract: ``read_ncu_rep(path)`` returns a Profile with one KernelProfile per profiled
launch (all ranges, in report order, ids 0..n-1). Only the metrics drgpu uses are read.
Per-PC metrics are joined by PC; the instruction listing covers the whole function, so
instructions that never executed are present with zero counts. Values at a PC inside the
listing without SASS go to the preceding instruction (``model.SAMPLES_MOVED``); values past
the listing are accounted at kernel level (``KernelProfile.sample_accounting``).
``keep_id`` skips launches before they are parsed; ``cache=False`` reads every launch afresh
and gives the same profile as the function cache.

Function cache and selection: docs/performance.md.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import math
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, cast

from ..specs import loader as data
from ..errors import ReportFormatError, ToolNotFoundError
from ..profile import SAMPLES_MOVED, KernelProfile, Profile
from ..io import clean_text, open_input
from ..sass.container import NCU_MAGIC
from ..sass.isa import clean_sass
from .frame import FrameParts

_STRING_METRICS = ("device__attribute_display_name", "launch__func_cache_config")


def _text(s) -> str:
    """Text ncu_report gives (names, file names, source, SASS, string metrics) as UTF-8 can
    hold it. Its SWIG layer turns bytes that are not UTF-8 (a crafted or damaged report's
    kernel name) into lone surrogates, which no output can encode (the HTML page's packed
    bodies and Graphviz's input are UTF-8: an internal error); each becomes U+FFFD here, once
    for every output, as the CSV reader shows a CSV's undecodable bytes."""
    return clean_text(str(s)) if s else ""


def _names(nr, a) -> tuple[str, str]:
    """(demangled name, mangled name) of a launch, as text (``_text``)."""
    return _text(a.name(nr.IAction.NameBase_DEMANGLED) or a.name()), _text(a.name(nr.IAction.NameBase_MANGLED))


_MAX_FUNCTION_BYTES = 4 << 20


def _module():
    try:
        import ncu_report
    except ImportError as e:  # pragma: no cover - dependency is declared
        raise ToolNotFoundError("the ncu_report module is not installed", hint="pip install ncu-report") from e
    return ncu_report


def _wanted_scalar_metrics() -> list[str]:
    names = []
    for canon in data.metrics_table()["metrics"]:
        names.append(canon)
    for spec in data.stall_reasons().values():
        names.extend(spec["counter"])
        # Kernel totals of the per-PC samples: what the instruction table must add up to.
        names.extend(spec["sampling"])
    return names


@dataclass
class _Plan:
    """Which metric names to read, resolved once per report rather than per launch."""

    scalars: list[tuple[str, list[str]]]  # canonical name -> names to try, in order
    columns: list[tuple[str, list[str]]]  # instruction column -> per-PC metric names
    sampling: list[tuple[str, list[str]]]  # stall reason -> sampling metric names
    counters: list[list[str]]  # per stall reason: counter names (first is canonical)

    @classmethod
    def build(cls) -> "_Plan":
        seen: set[str] = set()
        scalars = []
        for canon in _wanted_scalar_metrics():
            if canon not in seen:  # a repeated name would be read again to the same value
                seen.add(canon)
                scalars.append((canon, data.metric_aliases(canon)))
        columns = [
            (canon, list(spec.get("rep", []))) for canon, spec in data.metrics_table()["instruction_columns"].items()
        ]
        reasons = data.stall_reasons()
        return cls(
            scalars=scalars,
            columns=columns,
            sampling=[(rid, list(spec["sampling"])) for rid, spec in reasons.items()],
            counters=[list(spec["counter"]) for spec in reasons.values()],
        )


@dataclass
class _Listing:
    """One function's SASS walk (entry onwards, 16-byte steps; None where a PC has no SASS),
    its line table, sources, and the slices already handed out per stopping point."""

    walk: list[tuple[int, str | None]]
    capped: bool
    lines: dict[int, tuple[str, int]]
    source_text: dict[str, list[str]]
    pcs: frozenset[int] = frozenset()
    slices: dict[int, dict[int, str]] = field(default_factory=dict)

    def take(self, end: int) -> dict[int, str] | None:
        """The SASS an uncached walk would give for a launch whose highest per-PC id is
        ``end`` (the walk stops at the first PC past ``end`` with no SASS), or None when
        this walk did not reach that far."""
        pos = next((i for i, (pc, text) in enumerate(self.walk) if text is None and pc > end), None)
        if pos is None:
            if not self.capped:
                return None
            pos = len(self.walk)
        got = self.slices.get(pos)
        if got is None:
            got = self.slices[pos] = {pc: t for pc, t in self.walk[:pos] if t is not None}
        return got


class FunctionCache:
    """SASS listings per function key, shared by the launches of one report."""

    def __init__(self) -> None:
        self.listings: dict[tuple, _Listing] = {}
        self.hits = 0
        self.misses = 0


@contextlib.contextmanager
def _loaded(path: Path):
    """ncu_report's context for the report at ``path``, for the ``with`` block. The file is
    opened here without blocking and checked on the opened descriptor (a regular file with the
    report magic); ncu_report then loads that very file through /proc/self/fd, held open while
    the block reads (ncu_report reads launches lazily), so a path swapped for a FIFO or another
    file after the checks can neither hang the read nor change what is read."""
    with open_input(path) as fh:
        if fh.read(4) != NCU_MAGIC:
            raise ReportFormatError(f"{path} is not an Nsight Compute report (bad magic)")
        fd_path = f"/proc/self/fd/{fh.fileno()}"
        nr = _module()
        try:
            ctx = nr.load_report(fd_path if os.path.exists(fd_path) else str(path))
        except Exception as e:  # the module raises plain exceptions for corrupt files
            raise ReportFormatError(
                f"{path}: ncu_report could not load it ({e})",
                hint="the report may be truncated or from an incompatible ncu",
            ) from e
        if ctx is None:
            raise ReportFormatError(f"{path}: ncu_report could not load it")
        yield ctx


def read_ncu_rep(
    path: Path,
    progress=None,
    *,
    keep_id: Callable[[int], bool] | None = None,
    cache: bool | FunctionCache = True,
    sass=None,
    part: tuple[int, int] | None = None,
    frames: bool = True,
) -> Profile:
    """Read every launch (or those whose id ``keep_id`` accepts; all of them when it accepts
    none, so that kernel selection can say what the report holds). ``progress(done, total)``
    is called after each launch read. ``cache``: True, False, or a FunctionCache to use.
    ``sass``: listings from the report's cubins (``sass.cubin.Listings``, or a
    ``SassSource`` still running); a launch whose function they hold takes its SASS from
    them instead of ncu_report's disassembler.
    ``part=(i, n)``: only the i-th of n consecutive blocks of the launches that would be read
    (readers split a large report between processes; the parts in order make the whole).
    ``frames=False``: each launch's ``instructions`` is left as its ``common.FrameParts``
    (``frame()`` makes the table), so that this process need not load pandas."""
    with _loaded(path) as ctx:
        nr = _module()
        where, ids = _launches(ctx, keep_id)
        if part is not None:
            i, n = part
            ids = ids[len(ids) * i // n : len(ids) * (i + 1) // n]
        plan = _Plan.build()
        functions = cache if isinstance(cache, FunctionCache) else FunctionCache() if cache else None
        # Every launch's metrics and samples first, then their SASS: a listing nvdisasm is
        # still writing (``sass``, a SassSource) is waited for once the rest is read, not at
        # the first launch. The same calls, so the same profile, in another order.
        heads = []
        for n, kid in enumerate(ids):
            rng, i = where[kid]
            heads.append(_read_head(nr, rng.action_by_idx(i), kid, plan, functions))
            if progress:
                progress(n + 1, len(ids))
        kernels = [_read_code(head, plan, functions, sass, frames) for head in heads]
        return Profile(path=str(path), format="ncu-rep", kernels=kernels)


def _launches(ctx, keep_id: Callable[[int], bool] | None) -> tuple[list, list[int]]:
    """(range, index) of every launch, by launch id (action objects are made one at a time,
    when read), and the ids ``keep_id`` accepts (all of them when it accepts none, so that
    kernel selection can say what the report holds)."""
    ranges = [ctx.range_by_idx(r) for r in range(ctx.num_ranges())]
    where = [(rng, i) for rng in ranges for i in range(rng.num_actions())]
    ids = list(range(len(where)))
    if keep_id is not None:
        ids = [kid for kid in ids if keep_id(kid)] or ids
    return where, ids


#: The metrics a launch listing reads (``read_ncu_rep_launches``): its duration and shape.
LAUNCH_METRICS = ("gpu__time_duration.sum", *(f"launch__{w}_dim_{d}" for w in ("grid", "block") for d in "xyz"))


@functools.cache
def _no_instructions():
    """The per-instruction table of every listed launch: none was read. One frame for all (a
    DataFrame each took longer than reading the launch's metrics); nothing writes to it."""
    import pandas as pd

    return pd.DataFrame()


def read_ncu_rep_launches(path: Path, *, keep_id: Callable[[int], bool] | None = None) -> Profile:
    """Every launch (or those whose id ``keep_id`` accepts; all when it accepts none) with its
    names, grid, block and duration only: no other metric, no SASS, no source (what ``drgpu
    list`` shows; a tenth of the time of ``read_ncu_rep`` or less)."""
    with _loaded(path) as ctx:
        nr = _module()
        where, ids = _launches(ctx, keep_id)
        aliases = [(canon, data.metric_aliases(canon)) for canon in LAUNCH_METRICS]
        kernels = []
        for kid in ids:
            rng, i = where[kid]
            a = rng.action_by_idx(i)
            metrics = {}
            for canon, names in aliases:
                m = next((m for m in map(a.metric_by_name, names) if m is not None), None)
                if m is not None:
                    metrics[canon] = _scalar(m)
            dims = [int(metrics.get(f"launch__{w}_dim_{d}", 0) or 0) for w in ("grid", "block") for d in "xyz"]
            name, mangled = _names(nr, a)
            kernels.append(
                KernelProfile(
                    id=kid,
                    name=name,
                    mangled=mangled,
                    grid=(dims[0], dims[1], dims[2]),
                    block=(dims[3], dims[4], dims[5]),
                    metrics=metrics,
                    instructions=_no_instructions(),
                )
            )
        return Profile(path=str(path), format="ncu-rep", kernels=kernels)


#: What ncu_report's SWIG layer raises for a value it cannot give: a wrong type or argument
#: (TypeError), a number out of range (OverflowError), bad text (ValueError, of which
#: UnicodeDecodeError), a C++ exception (RuntimeError) or a NULL result (SystemError). A bug of
#: ours (NameError, AttributeError, KeyError, ...) is none of these: it surfaces, not as NaN.
_NATIVE_ERRORS = (TypeError, OverflowError, ValueError, RuntimeError, SystemError)


def _scalar(m) -> float:
    try:
        v = m.as_double()
    except _NATIVE_ERRORS:
        return math.nan
    return float(v) if v is not None else math.nan


def _read_scalars(by_name, plan: _Plan) -> tuple[dict[str, float], dict[str, str]]:
    """The launch's scalar metrics by canonical name (the first of its names the launch has,
    then those derived from two others), and the name each was read under where that is not
    the canonical one (KernelProfile.metric_names)."""
    metrics: dict[str, float] = {}
    read_as: dict[str, str] = {}
    for canon, names in plan.scalars:
        for name in names:
            m = by_name(name)
            if m is not None:
                metrics[canon] = _scalar(m)
                if name != canon:
                    read_as[canon] = name
                break
    data.derive_metrics(metrics, read_as)
    return metrics, read_as


@dataclass
class _Head:
    """What a launch gives without its code: names, metrics, strings, per-PC values, the
    function cache's key and the entry PC (``_read_head``); ``_read_code`` adds the code."""

    a: Any  # ncu_report's action, read again for the line table and sources
    kid: int
    name: str
    mangled: str
    metrics: dict[str, float]
    read_as: dict[str, str]
    strings: dict[str, str]
    cc: str
    key: tuple | None
    cols: dict[str, dict[int, float]]
    base: int | None


def _read_head(nr, a, kid: int, plan: _Plan, functions: FunctionCache | None) -> _Head:
    by_name = a.metric_by_name
    metrics, read_as = _read_scalars(by_name, plan)
    _stalls_under_first_name(metrics, plan.counters)
    strings = _read_strings(by_name)
    name, mangled = _names(nr, a)
    cc = _compute_capability(metrics)
    key = None
    if functions is not None:
        key = (
            mangled,
            name,
            _uint(by_name("launch__context_id")),
            metrics.get("launch__registers_per_thread"),
            metrics.get("launch__shared_mem_per_block_static"),
        )
    cols = _per_pc_columns(a, plan)
    return _Head(a, kid, name, mangled, metrics, read_as, strings, cc, key, cols, _entry_pc(a, cols))


def _read_code(head: _Head, plan: _Plan, functions: FunctionCache | None, sass, frames: bool) -> KernelProfile:
    """The launch of ``head`` with its SASS, lines and sources (``sass``: as ``read_ncu_rep``'s)."""
    metrics = head.metrics
    listing = None
    if sass is not None:
        from ..sass.cubin import sm_of

        listing = sass.function(head.mangled, sm_of(head.cc))
    parts, source_text = _instructions(head.a, head.cols, head.base, functions, head.key, listing)
    if parts.moved:
        metrics[SAMPLES_MOVED] = parts.moved
    sm_count = metrics.get("device__attribute_multiprocessor_count", metrics.get("launch__sm_count"))
    return KernelProfile(
        id=head.kid,
        name=head.name,
        mangled=head.mangled,
        device=head.strings.get("device__attribute_display_name", ""),
        compute_capability=head.cc,
        chip=data.chip_for(head.cc),
        sm_count=int(sm_count) if sm_count and not math.isnan(sm_count) else None,
        grid=_dims(metrics, "grid"),
        block=_dims(metrics, "block"),
        metrics=metrics,
        metric_names=head.read_as,
        strings=head.strings,
        # Parts stand in for the table until the caller builds it (frames=False).
        instructions=parts.frame() if frames else cast(Any, parts),
        function_base=head.base,
        source_text=source_text,
    )


def _stalls_under_first_name(metrics: dict[str, float], counters) -> None:
    """Stall counters: store under the canonical (first) name of each reason."""
    for counter in counters:
        for name in counter:
            if name in metrics and counter[0] not in metrics:
                metrics[counter[0]] = metrics[name]


def _read_strings(by_name) -> dict[str, str]:
    """The text metrics the report has (one ncu_report cannot read is left out)."""
    strings = {}
    for name in _STRING_METRICS:
        m = by_name(name)
        if m is not None:
            with contextlib.suppress(*_NATIVE_ERRORS):
                strings[name] = _text(m.as_string())
    return strings


def _compute_capability(metrics: dict[str, float]) -> str:
    """'8.6' from the device attributes; '' without them."""
    if "device__attribute_compute_capability_major" not in metrics:
        return ""
    major = int(metrics["device__attribute_compute_capability_major"])
    return f"{major}.{int(metrics.get('device__attribute_compute_capability_minor', 0))}"


def _dims(metrics: dict[str, float], which: str) -> tuple[int, int, int]:
    """The launch's grid or block dimensions (0 where a dimension is missing)."""
    x, y, z = (int(metrics.get(f"launch__{which}_dim_{d}", 0) or 0) for d in "xyz")
    return x, y, z


def _uint(m) -> int | None:
    if m is None:
        return None
    try:
        return int(m.as_uint64(0) if m.num_instances() else m.as_uint64())
    except _NATIVE_ERRORS:
        return None


@functools.cache
def _instance_getters() -> tuple[Callable, Callable]:
    """(correlation id, value) getters for metric instances: the SWIG functions themselves
    where the module exposes them, one Python frame less per value read."""
    try:
        from ncu_report import _ncu_report as raw

        return raw.IMetric_as_uint64, raw.IMetric_as_double
    except (ImportError, AttributeError):  # pragma: no cover - other module layouts
        nr = _module()
        return nr.IMetric.as_uint64, nr.IMetric.as_double


def _per_pc(m) -> dict[int, float]:
    n = m.num_instances()
    if n == 0 or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    as_id, as_value = _instance_getters()
    # Values are read one SWIG call each (the module has no bulk read); map over partials
    # keeps the loop in C.
    try:
        return dict(zip(map(partial(as_id, ids), range(n)), map(partial(as_value, m), range(n))))
    except _NATIVE_ERRORS:  # one unreadable instance: keep the others, as the loop below does
        pass
    out = {}
    for i in range(n):
        try:
            out[int(as_id(ids, i))] = float(as_value(m, i))
        except _NATIVE_ERRORS:
            continue
    return out


def _source_text(a) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    try:
        files = a.source_files()
        for f in files:
            out[_text(f)] = _text(files[f]).splitlines()
    except _NATIVE_ERRORS:
        pass
    return out


def _line(a, pc: int) -> tuple[str, int] | None:
    try:
        si = a.source_info(pc)
    except _NATIVE_ERRORS:
        si = None
    if si is not None:
        f, ln = si.file_name(), si.line()
        if f:
            return (_text(f), int(ln))
    return None


def _per_pc_columns(a, plan: _Plan) -> dict[str, dict[int, float]]:
    cols: dict[str, dict[int, float]] = {}
    by_name = a.metric_by_name
    for canon, names in plan.columns:
        vals = _first_per_pc(by_name, names)
        if vals:
            cols[canon] = vals
    not_issued: dict[int, float] = {}
    for rid, names in plan.sampling:
        _read_stall_column(by_name, rid, names, cols, not_issued)
    if not_issued:
        cols["samples_not_issued"] = not_issued
    if "samples" not in cols and any(k.startswith("stall_") for k in cols):
        cols["samples"] = _stall_totals(cols)
    return cols


def _first_per_pc(by_name, names: list[str]) -> dict[int, float]:
    """The per-PC values of the first of ``names`` the report has per PC ({} if none)."""
    for name in names:
        m = by_name(name)
        if m is not None:
            vals = _per_pc(m)
            if vals:
                return vals
    return {}


def _read_stall_column(
    by_name, rid: str, names: list[str], cols: dict[str, dict[int, float]], not_issued: dict[int, float]
) -> None:
    """A stall reason's per-PC samples under the first of its names the report has (one
    with no instances reads as none), and its not-issued samples added to ``not_issued``."""
    for name in names:
        m = by_name(name)
        if m is None:
            continue
        vals = _per_pc(m)
        if vals or m.num_instances() == 0:
            cols[f"stall_{rid}"] = vals
            mn = by_name(name + "_not_issued")
            if mn is not None:
                for pc, v in _per_pc(mn).items():
                    not_issued[pc] = not_issued.get(pc, 0.0) + v
            return


def _stall_totals(cols: dict[str, dict[int, float]]) -> dict[int, float]:
    """The samples at each PC, as the stall reasons' sum (a report without the total)."""
    tot: dict[int, float] = {}
    for k, vals in cols.items():
        if k.startswith("stall_"):
            for pc, v in vals.items():
                tot[pc] = tot.get(pc, 0.0) + v
    return tot


def _walk(a, base: int, end: int) -> tuple[list[tuple[int, str | None]], bool]:
    """SASS from the function entry until the first PC past ``end`` without any."""
    walk: list[tuple[int, str | None]] = []
    pc = base
    while pc - base < _MAX_FUNCTION_BYTES:
        text = a.sass_by_pc(pc)
        if not text:
            walk.append((pc, None))
            if pc > end:
                return walk, False
        else:
            walk.append((pc, clean_sass(_text(text))))
        pc += 16
    return walk, True


def _listing(
    a, base: int, end: int, known: set[int], functions: FunctionCache | None, key, listing=None
) -> tuple[dict, dict, dict]:
    """(sass by PC, lines by PC, source text) for a launch, from the cache when it holds
    this function's listing and that listing answers for this launch; the SASS from
    ``listing`` (a cubin's, ``sass.cubin.FunctionSass``) when given, else ncu_report's."""
    cache_key = key + (base,) if functions is not None and key is not None else None
    hit = _cached_listing(functions, cache_key, end, known)
    if hit is not None:
        return hit
    walk, capped = listing.walk(base, end, _MAX_FUNCTION_BYTES) if listing is not None else _walk(a, base, end)
    sass = {pc: t for pc, t in walk if t is not None}
    lines = _lines_of(a, sass)
    source_text = _source_text(a)
    if functions is not None and cache_key is not None and sass:
        functions.misses += 1
        functions.listings[cache_key] = _Listing(
            walk=walk, capped=capped, lines=lines, source_text=source_text, pcs=frozenset(sass)
        )
        source_text = dict(source_text)
    return sass, lines, source_text


def _lines_of(a, sass: dict[int, str]) -> dict[int, tuple[str, int]]:
    """The source file and line of each listed PC the report knows them for."""
    lines: dict[int, tuple[str, int]] = {}
    for pc in sass:
        got = _line(a, pc)
        if got is not None:
            lines[pc] = got
    return lines


def _cached_listing(
    functions: FunctionCache | None, cache_key, end: int, known: set[int]
) -> tuple[dict, dict, dict] | None:
    """The cached listing of the function when it answers for this launch: it holds every
    PC the launch has values at, and reaches ``end``."""
    if functions is None or cache_key is None:
        return None
    cached = functions.listings.get(cache_key)
    if cached is None or not known <= cached.pcs:
        return None
    sass = cached.take(end)
    if sass is None:
        return None
    functions.hits += 1
    return sass, cached.lines, dict(cached.source_text)  # callers may add files


def _entry_pc(a, cols: dict[str, dict[int, float]]) -> int | None:
    """The function's entry PC (``_function_entry``), else the lowest PC with a value."""
    base = _function_entry(a)
    if base is None:
        base = min((pc for vals in cols.values() for pc in vals), default=None)
    return base


def _instructions(
    a,
    cols: dict[str, dict[int, float]],
    base: int | None,
    functions: FunctionCache | None = None,
    key=None,
    listing=None,
) -> tuple[FrameParts, dict[str, list[str]]]:
    """(the launch's per-instruction table as ``FrameParts``, its source files' text), from its
    per-PC values ``cols`` (``_per_pc_columns``) and entry PC ``base`` (``_entry_pc``)."""
    known: set[int] = set()
    for vals in cols.values():
        known.update(vals)
    sass: dict[int, str] = {}
    lines: dict[int, tuple[str | None, int | None]] = {}
    source_text: dict[str, list[str]] = {}
    if base is not None:
        sass, lines, source_text = _listing(a, base, max(known) if known else base, known, functions, key, listing)
    else:
        source_text = _source_text(a)
    moved = _fold_gaps(cols, sass) if sass else 0.0
    return FrameParts(list(sass) or sorted(known), cols, sass, lines, base, moved), source_text


def _function_entry(a) -> int | None:
    """The function's entry PC as the report gives it (None when it cannot be read)."""
    m = a.metric_by_name("launch__function_pcs")
    if m is None:
        return None
    try:
        return int(m.as_uint64(0))
    except _NATIVE_ERRORS:
        return None


def _fold_gaps(cols: dict[str, dict[int, float]], sass: dict[int, str]) -> float:
    """Move the values at PCs inside the listing (between its first and last instruction)
    that have no SASS to the nearest preceding instruction, in place; return the samples
    moved. PCs past the listing (code the driver placed outside the function, e.g. for a
    system-scope fence) are left out of the table: the kernel's totals still count them
    (KernelProfile.sample_accounting)."""
    listed = sorted(sass)
    lo, hi = listed[0], listed[-1]
    moved = 0.0
    for name, vals in cols.items():
        gaps = [pc for pc in vals if lo < pc < hi and pc not in sass]
        for pc in gaps:
            to = listed[bisect.bisect_right(listed, pc) - 1]
            v = vals.pop(pc)
            vals[to] = vals.get(to, 0.0) + v
            if name == "samples":
                moved += v
    return moved


def read_line_table(
    path: Path,
    cache: bool | FunctionCache = True,
    wanted: Callable[[list[str]], Iterable[int]] | None = None,
) -> list[tuple[str, dict[int, tuple[str, int, str]], dict[str, list[str]]]]:
    """Per kernel launch: (demangled name, {function offset: (file, line, sass)}, sources).
    Used to give CSV exports the line numbers a SASS-only source page lacks.

    ``wanted``: given every launch's name, the positions whose tables are needed; the others
    come back as (name, {}, {}) without their listing being read (most of the cost: a
    launch's name needs only ncu_report's parse of it). None: every table."""

    with _loaded(path) as ctx:
        nr = _module()
        plan = _Plan.build()
        functions = cache if isinstance(cache, FunctionCache) else FunctionCache() if cache else None
        actions = [(_names(nr, a)[0], a) for a in _actions(ctx)]
        keep = None if wanted is None else set(wanted([name for name, _ in actions]))
        out: list[tuple[str, dict[int, tuple[str, int, str]], dict[str, list[str]]]] = []
        for n, (name, a) in enumerate(actions):
            if keep is not None and n not in keep:
                out.append((name, {}, {}))
                continue
            key = _function_key(nr, a, name) if functions is not None else None
            cols = _per_pc_columns(a, plan)
            parts, src = _instructions(a, cols, _entry_pc(a, cols), functions, key)
            out.append((name, _offset_lines(parts.frame()), src))
        return out


def _actions(ctx) -> list:
    """Every launch of a loaded report, range by range."""
    actions = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        actions += [rng.action_by_idx(i) for i in range(rng.num_actions())]
    return actions


def _function_key(nr, a, name: str) -> tuple:
    """What identifies a launch's function for the listing cache: its names, context,
    registers and static shared memory."""
    by_name = a.metric_by_name
    return (
        _names(nr, a)[1],
        name,
        _uint(by_name("launch__context_id")),
        _scalar_or_none(by_name("launch__registers_per_thread")),
        _scalar_or_none(by_name("launch__shared_mem_per_block_static")),
    )


def _offset_lines(df) -> dict[int, tuple[str, int, str]]:
    """{function offset: (file, line, sass)} of the instructions with a line."""
    import pandas as pd

    return {
        int(o): (f, int(ln), s)
        for o, f, ln, s in zip(df["offset"], df["file"], df["line"], df["sass"])
        if f is not None and not pd.isna(ln)
    }


def _scalar_or_none(m) -> float | None:
    return None if m is None else _scalar(m)
