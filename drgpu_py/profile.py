"""The profile model every reader returns and every analysis pass consumes.

A :class:`Profile` is a list of :class:`KernelProfile`, one per kernel launch: its identity,
launch configuration, a metric table under canonical names (``specs/metrics.yaml``; a metric
the report lacks is absent, never zero) and a per-instruction table indexed by absolute PC
(``offset``: PC relative to the function entry). Readers join per-instruction data by PC,
never by row position. PC samples at PCs without a row stay at kernel level
(:meth:`KernelProfile.sample_accounting`). Kernel names: ``base_name`` to match kernels
across reports and CSV pages, ``signature`` in messages, ``short_name`` on screen
(docs/api.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypedDict

import pandas as pd

#: Samples a reader moved from a PC without SASS inside the function's listing to the
#: nearest preceding instruction (a count, summed when reports are merged).
SAMPLES_MOVED = "drgpu__pcsamp_samples_moved_to_preceding"
#: How a reader's kernel note starts when PC samples were collected but the export it read
#: has no per-instruction rows (a raw CSV without its source page).
SOURCE_EXPORT_MISSING = "PC sampling was collected"

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
    """A kernel's function name without return type, parameters, anonymous namespaces or
    long template arguments: 'void at::native::<unnamed>::cunn_SoftMaxForward<4, float>(...)'
    -> 'at::native::cunn_SoftMaxForward<…>'."""
    s = name[5:] if name.startswith("void ") else name
    out, i = [], 0
    while i < len(s):
        ch = s[i]
        if ch == "(":
            break
        if ch == "<":
            depth, j = 1, i + 1
            while j < len(s) and depth:
                depth += {"<": 1, ">": -1}.get(s[j], 0)
                j += 1
            inner = s[i + 1 : j - 1]
            if inner == "unnamed":
                i = j + 2 if s.startswith("::", j) else j
                continue
            out.append("<" + inner + ">" if len(inner) <= 12 else "<…>")
            i = j
            continue
        out.append(ch)
        i += 1
    s = "".join(out).strip()
    return s if len(s) <= width else s[: width // 2 - 1] + "…" + s[-(width // 2) :]


def rounded(x, ndigits: int) -> float | None:
    """A number as the JSON gives it: rounded to ``ndigits``; None when it is missing (None or
    NaN, which readers and metrics use for "not measured")."""
    if x is None or math.isnan(x):
        return None
    return round(float(x), ndigits)


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
    strings: dict[str, str] = field(default_factory=dict)
    instructions: pd.DataFrame = field(default_factory=pd.DataFrame)
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

    def m(self, name: str, default: float = math.nan) -> float:
        """Metric value by canonical name, ``default`` (NaN) when not collected."""
        v = self.metrics.get(name)
        return default if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def has(self, name: str) -> bool:
        return not math.isnan(self.m(name))

    @property
    def duration_ns(self) -> float:
        return self.m("gpu__time_duration.sum")

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
        from .specs import loader as data

        df = self.instructions
        reported = self.m("smsp__pcsamp_sample_count")
        at = float(df["samples"].sum()) if not df.empty and "samples" in df else 0.0
        by_reason: dict[str, float] = {}
        if not df.empty:
            for rid, spec in data.stall_reasons().items():
                total = next((self.m(n) for n in spec["sampling"] if self.has(n)), math.nan)
                col = f"stall_{rid}"
                if math.isnan(total) or col not in df:
                    continue
                # Rounding of averaged launches (groups) must not read as missing samples.
                missing = total - float(df[col].sum())
                if missing > max(0.5, 1e-6 * total):
                    by_reason[rid] = missing
        unattributed = sum(by_reason.values())
        if not by_reason and not df.empty and not math.isnan(reported) and reported - at > max(0.5, 1e-6 * reported):
            unattributed = reported - at  # no per-reason totals: the count alone
        return {
            "reported": None if math.isnan(reported) else reported,
            "at_instructions": at,
            "moved_to_preceding": self.m(SAMPLES_MOVED, 0.0),
            "unattributed": unattributed,
            "by_reason": by_reason,
        }

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
