"""The profile model every reader returns and every analysis pass consumes.

A :class:`Profile` is a list of :class:`KernelProfile`, one per kernel launch: its identity,
launch configuration, a metric table under canonical names (``specs/metrics.yaml``; a metric
the report lacks is absent, never zero) and a per-instruction table indexed by absolute PC
(``offset``: PC relative to the function entry). Readers join per-instruction data by PC,
never by row position. PC samples at PCs without a row stay at kernel level
(:meth:`KernelProfile.sample_accounting`). Kernel names: ``base_name`` to match kernels
across reports and CSV pages, ``signature`` in messages, ``short_names`` on screen (shortened,
different names kept different; docs/api.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, overload

if TYPE_CHECKING:  # pandas loads where a table is made (readers, analysis), not with the model
    import pandas as pd

#: Samples a reader moved from a PC without SASS inside the function's listing to the
#: nearest preceding instruction (a count, summed when reports are merged).
SAMPLES_MOVED = "drgpu__pcsamp_samples_moved_to_preceding"
#: How a reader's kernel note starts when PC samples were collected but the export it read
#: has no per-instruction rows (a raw CSV without its source page).
SOURCE_EXPORT_MISSING = "PC sampling was collected"
#: The note (and verdict) of a launch the report measured nothing of (KernelProfile.measured).
NOT_MEASURED_VERDICT = "nothing measured: the report holds no metric value of this launch"
NOT_PROFILED = (
    f"{NOT_MEASURED_VERDICT} (its profiling failed, ncu skipped it, or every metric is n/a on this chip); "
    "its grid, block and time are unknown, so nothing is analyzed. Profile it again (drgpu profile, "
    "or ncu --set full with a --kernel-name filter that matches it)"
)

#: Columns of :attr:`KernelProfile.instructions` besides the ``stall_<reason>`` columns.
INSTRUCTION_COLUMNS = [
    "offset",
    "sass",
    "file",
    "line",
    "inst_executed",
    "thread_inst_executed",
    "thread_inst_executed_pred_on",  # lanes whose guard predicate was true (0: not collected)
    "samples",
    "samples_not_issued",
    "l2_sectors_global",
    "l2_sectors_global_ideal",
    "l2_sectors_global_excessive",
    "l1_tag_requests_global",
    "shared_nway",
    "divergent_branches",
]


#: One instruction's decoded SASS control code (``sass.control.decode_control``): stall
#: count, yield flag, the scoreboard barriers it sets (None: none), the mask of barriers it
#: waits on, the operand reuse flags. Functional form: ``yield`` is a keyword.
ControlCode = TypedDict(
    "ControlCode",
    {
        "stall": int,
        "yield": bool,
        "write_barrier": int | None,
        "read_barrier": int | None,
        "wait_mask": int,
        "reuse": int,
    },
)


# ---- kernel names: one set of rules for every output and for matching --------------------
def base_name(name: str) -> str:
    """The function's qualified name without return type, template arguments or parameters:
    'void ns::relax<(bool)0>(const float *, float *)' -> 'ns::relax'."""
    s = (name or "").replace("(anonymous namespace)", "{anon}")
    out, depth_a, depth_p = [], 0, 0
    for ch in s:
        if ch == "<":
            depth_a += 1
        elif ch == ">" and depth_a:
            depth_a -= 1
        elif ch == "(":
            depth_p += 1
        elif ch == ")" and depth_p:
            depth_p -= 1
        elif depth_a == 0 and depth_p == 0:
            out.append(ch)
    top = "".join(out).strip().split()
    return top[-1] if top else (name or "")


def signature(name: str) -> str:
    """A kernel's name without its parameter list (template arguments kept), for messages:
    'void f<(bool)0>(float *)' -> 'void f<(bool)0>'."""
    depth = 0
    for i, ch in enumerate(name or ""):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            return name[:i]
    return name or ""


def short_name(name: str, width: int = 40) -> str:
    """A kernel's name on screen, alone: :func:`short_names` of one name."""
    return short_names([name], width)[name]


#: The mark where a shortened name lost characters.
CUT = "…"
#: Template arguments at most this long stay in a name's first short form ('f<(int)64>'); longer
#: ones become '<…>' unless they tell the name apart from another's.
SHORT_TEMPLATE_ARGS = 12
#: Characters of a name that are taken apart (its two ends beyond that).
LONGEST_PARSED = 4096
_OPEN, _CLOSE = "<([{", ">)]}"


def short_names(names, width: int = 40) -> dict[str, str]:
    """Each distinct kernel name of ``names`` on screen: at most ``width`` characters, and
    different for different names, so rows stay apart where the name is all a reader sees
    (the text summary, ``drgpu list``, the HTML summary; the full name goes beside it).

    The first form drops the return type, parameters, anonymous namespaces and template
    arguments longer than SHORT_TEMPLATE_ARGS: 'void at::native::<unnamed>::cunn_SoftMaxForwardReg<
    float, float, float, ...>(...)' -> 'at::native::cunn_SoftMaxForwardReg<…>'. Names whose
    forms coincide get, in turn: the template arguments that tell them apart, simplified
    ('vectorized_elementwise_kernel<…, CUDAFunctor_add<BFloat16>, …>': casts, namespaces and
    lambda bodies dropped, a lambda shown as its enclosing function and parameter types), every
    argument with the namespaces, the whole signature, and last ' #1', ' #2', ... A form longer
    than ``width`` loses leading namespaces first, then the middle of the function's name,
    keeping its template arguments, then the middles of the longest arguments; only when those
    alone are too long is the middle of the whole cut. Equal names share a form (launches of
    one kernel: the id tells them apart)."""
    width = max(8, int(width))
    distinct = list(dict.fromkeys(names))
    # A name longer than LONGEST_PARSED is read from its two ends (a hostile export's cell can
    # hold megabytes); the numbering below still tells such names apart.
    half = LONGEST_PARSED // 2
    parsed = {n: _parse_name(n if len(n) <= LONGEST_PARSED else n[:half] + CUT + n[-half:]) for n in distinct}
    families: dict[str, list[str]] = {}
    for n in distinct:
        families.setdefault(parsed[n].function, []).append(n)
    chosen = {fn: _telling_positions([parsed[n].args for n in members]) for fn, members in families.items()}
    level = dict.fromkeys(distinct, 0)
    while True:
        shown = {n: _fit(_form(parsed[n], level[n], chosen[parsed[n].function]), width) for n in distinct}
        clashing = _clashes(shown)
        raised = [n for n in clashing if level[n] < _LAST_LEVEL]
        if not raised:
            break
        for n in raised:
            level[n] += 1
    # The same form for different names even with the whole signature (or cut to the same
    # text): their telling arguments, numbered in order.
    for _ in range(len(distinct)):
        clashing = _clashes(shown)
        if not clashing:
            break
        seen: dict[str, int] = {}
        for n in clashing:
            form = _form(parsed[n], min(level[n], 1), chosen[parsed[n].function])
            base = _fit(form, width - 4)
            seen[base] = seen.get(base, 0) + 1
            suffix = f" #{seen[base]}"
            shown[n] = _fit(form, width - len(suffix)) + suffix
    return shown


@dataclass
class _Name:
    """A demangled name taken apart: namespaces (and enclosing classes), the function, its
    top-level template arguments (None: not a template) and its parameter list."""

    scopes: list[str]
    function: str
    args: list[str] | None
    params: str


_LAST_LEVEL = 3


def _clashes(shown: dict[str, str]) -> list[str]:
    count: dict[str, int] = {}
    for form in shown.values():
        count[form] = count.get(form, 0) + 1
    return [n for n, form in shown.items() if count[form] > 1]


def _split_top(s: str, sep: str) -> list[str]:
    """``s`` split at each ``sep`` outside brackets (<>, (), [], {})."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE and depth:
            depth -= 1
        elif depth == 0 and s.startswith(sep, i):
            out.append(s[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    out.append(s[start:])
    return out


def _top_index(s: str, ch: str) -> int:
    """Where ``ch`` first occurs outside <> brackets in ``s`` (-1: nowhere)."""
    depth = 0
    for i, c in enumerate(s):
        if c == ch and depth == 0:
            return i
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
    return -1


def _parse_name(name: str) -> _Name:
    s = " ".join((name or "").split()).replace("(anonymous namespace)", "<unnamed>")
    cut = _top_index(s, "(")
    head, params = (s[:cut], s[cut:]) if cut >= 0 else (s, "")
    words = [w for w in _split_top(head.strip(), " ") if w]
    qualified = words[-1] if words else head.strip()  # the last word: the return type goes
    parts = [p for p in _split_top(qualified, "::") if p and p != "<unnamed>"] or [qualified or "?"]
    last = parts[-1]
    lt = _top_index(last, "<")
    if lt > 0 and last.endswith(">"):
        return _Name(parts[:-1], last[:lt], [a.strip() for a in _split_top(last[lt + 1 : -1], ",")], params)
    return _Name(parts[:-1], last, None, params)


def _abbreviated(text: str) -> str:
    """``text`` with each template argument list longer than SHORT_TEMPLATE_ARGS as '<…>'."""
    out, i = [], 0
    while i < len(text):
        if text[i] != "<":
            out.append(text[i])
            i += 1
            continue
        depth, j = 1, i + 1
        while j < len(text) and depth:
            depth += {"<": 1, ">": -1}.get(text[j], 0)
            j += 1
        inner = text[i + 1 : j - 1]
        out.append("<" + inner + ">" if len(inner) <= SHORT_TEMPLATE_ARGS else "<" + CUT + ">")
        i = j
    return "".join(out)


_CAST = re.compile(r"\((?:unsigned |signed )?(?:long long|long|int|short|char|bool|__int128)\)(-?\d)")
_SCOPE = re.compile(r"(?<![\w>])(?:[A-Za-z_]\w*::)+")
_LAMBDA = re.compile(r"\[lambda\(([^()]*)\) \(instance \d+\)\]")


def _simple_arg(arg: str) -> str:
    """A template argument as a reader tells it apart: casts, namespaces and lambda bodies
    dropped; a lambda as 'enclosing_function::lambda(parameter types)'."""
    a = arg.replace("<unnamed>::", "")
    if "[lambda" in a:
        inner = _LAMBDA.findall(a)
        cut = _top_index(a, "(")
        owner = (a[:cut] if cut >= 0 else a).strip()
        owner = _SCOPE.sub("", _CAST.sub(r"\1", owner.split()[-1] if owner.split() else owner))
        return f"{owner}::lambda({_SCOPE.sub('', inner[-1]) if inner else ''})"
    return _SCOPE.sub("", _CAST.sub(r"\1", a)).strip()


#: Template-argument positions weighed to tell names apart (names differing only further on
#: are numbered).
TELLING_POSITIONS = 32


def _telling_positions(arg_lists: list[list[str] | None]) -> list[int]:
    """The fewest template-argument positions (chosen greedily) whose simplified values tell
    apart the names of one function: most distinct values first, shorter text on a tie."""
    lists = [_simplified(args) for args in arg_lists]
    if len(set(lists)) < 2:
        return []
    width = max(len(t) for t in lists)
    values = [[t[i] if i < len(t) else "" for t in lists] for i in range(width)]
    chosen: list[int] = []
    keys: list[tuple] = [()] * len(lists)  # each name's values at the chosen positions
    classes = 1
    while True:
        best = _most_telling(values, chosen, keys, classes)
        if best is None:
            return sorted(chosen)
        (classes, _), i = best
        chosen.append(i)
        keys = [(*k, v) for k, v in zip(keys, values[i])]


def _simplified(args: list[str] | None) -> tuple[str, ...]:
    """A name's first TELLING_POSITIONS template arguments, simplified (``_simple_arg``)."""
    return tuple(_simple_arg(a) for a in args[:TELLING_POSITIONS]) if args else ()


def _most_telling(
    values: list[list[str]], chosen: list[int], keys: list[tuple], classes: int
) -> tuple[tuple[int, int], int] | None:
    """((names told apart, -text length), position) of the position not yet chosen that
    tells most names apart with the chosen ones (shorter text on a tie); None when no
    position tells apart more than ``classes``."""
    best = None
    for i in range(len(values)):
        if i in chosen:
            continue
        n = len(set(zip(keys, values[i])))
        score = (n, -sum(map(len, values[i])))
        if n > classes and (best is None or score > best[0]):
            best = (score, i)
    return best


def _form(n: _Name, level: int, positions: list[int]) -> tuple[str, str, list[str], str]:
    """(scopes as a prefix, function, template arguments shown, what follows them) of ``n`` at
    a level: 0 short, 1 the telling arguments, 2 every argument with its namespaces, 3 the
    signature."""
    scopes = "".join(p + "::" for p in n.scopes)
    if n.args is None:
        return (_abbreviated(scopes) if level < 3 else scopes, n.function, [], n.params if level >= 3 else "")
    if level == 0 or (level == 1 and not positions):
        short = _abbreviated("<" + ", ".join(n.args) + ">")
        return _abbreviated(scopes), n.function, [short[1:-1]], ""
    if level == 1:
        shown = [_simple_arg(a) if i in positions else CUT for i, a in enumerate(n.args)]
        merged = [a for i, a in enumerate(shown) if not (a == CUT and i and shown[i - 1] == CUT)]
        return _abbreviated(scopes), n.function, merged, ""
    if level == 2:
        return scopes, n.function, [a.replace("<unnamed>::", "") for a in n.args], ""
    return scopes, n.function, list(n.args), n.params


def _middle_cut(s: str, width: int) -> str:
    if len(s) <= width:
        return s
    keep = max(0, width - len(CUT))
    return s[: keep - keep // 2] + CUT + (s[-(keep // 2) :] if keep // 2 else "")


def _joined(args: list[str], tail: str) -> str:
    return ("<" + ", ".join(args) + ">" if args else "") + tail


#: Characters a function name keeps at least when its template arguments need the room.
_MIN_FUNCTION = 12
#: Characters a template argument keeps at least when it is cut.
_MIN_ARG = 8


def _fit(form: tuple[str, str, list[str], str], width: int) -> str:
    """A form in ``width`` characters: leading scopes dropped first, then the middle of the
    function's name cut (its template arguments kept whole), then the middles of the longest
    template arguments; else the middle of the whole."""
    scopes, function, args, tail = form
    rest = _joined(args, tail)
    whole = scopes + function + rest
    if len(whole) <= width:
        return whole
    kept = _innermost_scopes(scopes, width - len(function) - len(rest))
    if kept or len(function) + len(rest) <= width:
        return kept + function + rest
    if len(rest) <= width - min(len(function), _MIN_FUNCTION):
        return _middle_cut(function, width - len(rest)) + rest
    return _cut_arguments(function, args, tail, width)


def _innermost_scopes(scopes: str, room: int) -> str:
    """The innermost scopes that fit ``room``: counted from the function outwards."""
    kept = []
    for part in reversed([p for p in _split_top(scopes, "::") if p]):
        room -= len(part) + 2
        if room < 0:
            break
        kept.append(part + "::")
    return "".join(reversed(kept))


def _cut_arguments(function: str, args: list[str], tail: str, width: int) -> str:
    """The function's name cut to _MIN_FUNCTION and the middles of the longest template
    arguments cut (to _MIN_ARG at least) until the form fits; else the middle of the whole."""
    rest = _joined(args, tail)
    head = _middle_cut(function, _MIN_FUNCTION)
    least = [a if len(a) <= _MIN_ARG else a[:_MIN_ARG] for a in args]
    if len(head) + len(_joined(least, tail)) > width:  # even with every argument cut
        return _middle_cut(function + rest, width)
    args = list(args)
    while len(head) + len(_joined(args, tail)) > width:
        longest = max(range(len(args)), key=lambda i: len(args[i]), default=None)
        if longest is None or len(args[longest]) <= _MIN_ARG:
            return _middle_cut(function + rest, width)
        over = len(head) + len(_joined(args, tail)) - width
        args[longest] = _middle_cut(args[longest], max(_MIN_ARG, len(args[longest]) - over))
    return head + _joined(args, tail)


def measured(x: float | None) -> float | None:
    """A computed value as the analysis keeps it: None when it is not measured (None, NaN or
    infinite: what a computation over absent metrics gives), else the number."""
    return None if x is None or not math.isfinite(x) else float(x)


def rounded(x, ndigits: int) -> float | None:
    """A number as the JSON gives it: rounded to ``ndigits``; None when it is missing (None or
    NaN, which readers and metrics use for "not measured")."""
    if x is None or math.isnan(x):
        return None
    return round(float(x), ndigits)


def _empty_frame() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame()


@dataclass
class KernelProfile:
    """One kernel launch."""

    id: int
    name: str
    mangled: str = ""
    device: str = ""
    compute_capability: str = ""
    chip: str | None = None
    sm_count: int | None = None
    grid: tuple[int, int, int] = (0, 0, 0)
    block: tuple[int, int, int] = (0, 0, 0)
    metrics: dict[str, float] = field(default_factory=dict)
    #: Canonical metric -> the name the report holds it under, where that is another name
    #: (an alias of another ncu version or chip, specs/metrics.yaml) or 'A x B' (derived).
    metric_names: dict[str, str] = field(default_factory=dict)
    strings: dict[str, str] = field(default_factory=dict)
    instructions: pd.DataFrame = field(default_factory=_empty_frame)
    function_base: int | None = None
    source_text: dict[str, list[str]] = field(default_factory=dict)
    process: str = ""
    notes: list[str] = field(default_factory=list)
    #: PC -> decoded SASS control code (stall count, barriers) from the kernel's cubin
    #: (--cubin/--binary: sass.binary.with_control); None when no cubin gave them.
    control: dict[int, ControlCode] | None = None

    def __repr__(self) -> str:
        # The dataclass repr would print every metric and the per-instruction table.
        return (
            f"KernelProfile(id={self.id}, name={short_name(self.name or '')!r}, grid={self.grid}, block={self.block}, "
            f"duration_ns={self.duration_ns}, {len(self.metrics)} metrics, {len(self.instructions)} instructions)"
        )

    @overload
    def m(self, name: str) -> float | None: ...
    @overload
    def m(self, name: str, default: float) -> float: ...
    def m(self, name: str, default: float | None = None) -> float | None:
        """Metric value by canonical name; ``default`` when the report has none (None: not measured).
        The one accessor of metric values: a NaN a reader stored reads as absent."""
        v = self.metrics.get(name)
        return default if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def has(self, name: str) -> bool:
        return self.m(name) is not None

    def collected(self, name: str) -> bool:
        """Does the report hold the metric (under one of its names), not merely a value drgpu
        derived from others? What tells which ncu sections the report has."""
        return self.has(name) and " x " not in self.metric_names.get(name, "")

    @property
    def function_key(self) -> str:
        """The name that tells the kernel's function apart across reports and runs: the mangled
        name (template instances and overloads stay apart), the demangled one where the report
        has none."""
        return self.mangled or self.name

    @property
    def duration_ns(self) -> float | None:
        return self.m("gpu__time_duration.sum")

    @property
    def measured(self) -> bool:
        """Whether the report measured anything of this launch: a metric or an instruction.
        A launch whose profiling failed (or that ncu skipped) is listed with its name alone,
        its grid and block read as (0, 0, 0): shown as nothing measured, never as measured values."""
        return any(self.has(name) for name in self.metrics) or not self.instructions.empty

    @property
    def shape_measured(self) -> bool:
        """Whether the launch's grid and block are known (every dimension above 0)."""
        return all(d > 0 for d in (*self.grid, *self.block))

    @property
    def threads_per_block(self) -> int | None:
        """Threads in one block (the product of the block's dimensions); None when the block
        is not measured: a dimension is 0 (a report without launch statistics, an unreadable
        cell) or below (a damaged report). The one place the product is written."""
        x, y, z = self.block
        if x <= 0 or y <= 0 or z <= 0:
            return None
        return x * y * z

    @property
    def warps_per_block(self) -> int | None:
        """Warps one block occupies (the last one partly filled when the block size is not a
        multiple of 32); None when the block is not measured (``threads_per_block``)."""
        threads = self.threads_per_block
        return None if threads is None else math.ceil(threads / 32)

    @property
    def active_share(self) -> float | None:
        """Share of the elapsed SM cycles in which the SMs had work (sm__cycles_active over
        sm__cycles_elapsed); None when either is not measured or they make no share."""
        act, ela = self.m("sm__cycles_active.avg"), self.m("sm__cycles_elapsed.avg")
        return act / ela if act is not None and ela is not None and 0 < act <= ela else None

    @property
    def launch_count(self) -> int:
        """Launches this profile stands for: a kernel group's count (groups.py), else 1."""
        count = self.m("drgpu__group_launches")
        return 1 if count is None else int(count)

    @property
    def has_sampling(self) -> bool:
        df = self.instructions
        if df.empty or "samples" not in df:
            return False
        return float(df["samples"].sum()) > 0 or self.sample_accounting()["unattributed"] > 0

    def sample_accounting(self) -> dict:
        """PC samples of the per-instruction table against the kernel's totals:
        ``reported`` (smsp__pcsamp_sample_count, None when absent), ``at_instructions`` (the
        table's sum), ``moved_to_preceding`` (part of it, see SAMPLES_MOVED), ``unattributed``
        (reported but at no row) and ``by_reason`` (stall reason -> unattributed samples).
        Without a table there is nothing to reconcile: everything is 0 but ``reported``."""
        df = self.instructions
        reported = self.m("smsp__pcsamp_sample_count")
        at = float(df["samples"].sum()) if not df.empty and "samples" in df else 0.0
        by_reason = self._unplaced_by_reason() if not df.empty else {}
        unattributed = sum(by_reason.values())
        if not by_reason and not df.empty and reported is not None and reported - at > max(0.5, 1e-6 * reported):
            unattributed = reported - at  # no per-reason totals: the count alone
        return {
            "reported": reported,
            "at_instructions": at,
            "moved_to_preceding": self.m(SAMPLES_MOVED, 0.0),
            "unattributed": unattributed,
            "by_reason": by_reason,
        }

    def _unplaced_by_reason(self) -> dict[str, float]:
        """Stall reason -> the samples its kernel-wide total has beyond the table's column.
        Rounding of averaged launches (groups) must not read as missing samples."""
        from .specs import loader as data

        df = self.instructions
        by_reason: dict[str, float] = {}
        for rid, spec in data.stall_reasons().items():
            total = next((self.m(n) for n in spec["sampling"] if self.has(n)), None)
            col = f"stall_{rid}"
            if total is None or col not in df:
                continue
            missing = total - float(df[col].sum())
            if missing > max(0.5, 1e-6 * total):
                by_reason[rid] = missing
        return by_reason

    def source_line(self, file: str, line: int) -> str | None:
        lines = self.source_text.get(file)
        if lines and 1 <= line <= len(lines):
            return lines[line - 1].rstrip("\n")
        return None


@dataclass
class Profile:
    """A whole report: where it came from and its kernel launches."""

    path: str
    format: str
    kernels: list[KernelProfile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        path = self.path if len(self.path) <= 80 else "…" + self.path[-79:]
        count = f"{len(self.kernels)} kernel{'' if len(self.kernels) == 1 else 's'}"
        return f"Profile({path!r}, format={self.format!r}, {count})"
