"""Useful work and the time ledger of a kernel: where every nanosecond of its elapsed time goes.

Contract: ``useful_work(ctx, sol) -> UsefulWork`` and ``time_ledger(ctx, useful, findings) ->
Ledger`` are pure. Useful work is the work the kernel must do, timed at each unit's peak:
its FLOPs per precision (at that precision's peak), its DRAM bytes at ideal width (at most the
sectors its global accesses need at ideal width, as Nsight Compute's source view counts ideal
against actual sectors) and its essential instructions (math and memory, at full warps; loop control,
index math, conversions and replays are overhead) at one instruction per scheduler and cycle.
**Efficiency** is the longest of those times over the elapsed time, graded with the speed of
light's thresholds: it measures useful work, not how busy a unit is (a unit kept busy by
excess sectors or conflicts is busy with waste).

The ledger splits the elapsed time into the useful time, the time each finding claims (what
its fix removes: elapsed x (1 - 1/estimate)), the rest by mechanism and what nothing explains.
One nanosecond has one owner: findings claim in order of the time they remove, each at most
what the useful time and the claims before it leave. What is left is split by the blamed stall
samples' (reason, instruction class) cells (attribution.py: GPA's optimizers as matchers over
that matrix), each mechanism with the findings that act on it; samples no cell matches are
"unexplained", shown with their top stall reasons and lines. Method and limits:
docs/json-schema.md, "Time ledger".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .attribution import Attributed, attribute
from .bounds import relieved_units
from .context import KernelContext
from .figures import share_pct
from .perfmodel import USEFUL_CLASSES
from .sol import SpeedOfLight, finite_positive, grade_of

#: The kernel metrics the useful work reads itself (beyond the speed of light's): the global
#: sectors at ideal width when the report has no per-instruction sector counts, and the SMs.
LEDGER_METRICS: tuple[str, ...] = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "derived__memory_l2_theoretical_sectors_global_excessive",
    "launch__sm_count",
)


class Claim(Protocol):
    """A finding as the ledger reads it (findings.Finding; a protocol, so that this module
    does not import findings, which lists these metrics with its own: analysis/coverage.py)."""

    @property
    def id(self) -> str: ...

    @property
    def estimated_speedup(self) -> float: ...

    @property
    def relieves(self) -> tuple[str, ...]: ...


def part_label(part: str | None) -> str:
    """A useful-work part as users read it: 'FP32 math', 'DRAM at ideal width', ..."""
    if part is None:
        return "n/a"
    if part.startswith("math_"):
        precision = part.removeprefix("math_")
        if precision.startswith("tensor_"):
            return f"tensor {precision.removeprefix('tensor_').upper()} math"
        return f"{precision.upper()} math"
    return {"dram": "DRAM at ideal width", "issue": "essential instructions"}.get(part, part)


@dataclass(frozen=True)
class UsefulWork:
    """The time each part of the kernel's essential work takes at its unit's peak (ns)."""

    elapsed_ns: float | None
    times_ns: dict[str, float]  # "math_<precision>", "dram", "issue" -> ns at peak
    sources: dict[str, str]  # how each time was measured
    limiter: str | None  # the longest of ``times_ns``
    efficiency_pct: float | None  # the limiter's time / elapsed, in %
    grade: str | None  # of the efficiency (speed of light's grade thresholds)
    dram_bytes_essential: float | None = None  # the DRAM bytes counted as useful (at ideal width)

    @property
    def useful_ns(self) -> float:
        return self.times_ns.get(self.limiter, 0.0) if self.limiter else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "efficiency_pct": _rounded(self.efficiency_pct, 2),
            "grade": self.grade,
            "limiter": self.limiter,
            "times_ns": {k: round(v, 1) for k, v in sorted(self.times_ns.items(), key=lambda kv: -kv[1])},
            "sources": dict(sorted(self.sources.items())),
            "dram_bytes_essential": _rounded(self.dram_bytes_essential, 0),
        }


@dataclass(frozen=True)
class LedgerEntry:
    owner: str  # a finding's id
    ns: float  # the elapsed time it claims
    claimed_share: float  # of the elapsed time
    wanted_share: float  # what its bounded estimate asked for, of the elapsed time
    alone_share: float  # what it removes made alone: at most the elapsed time less floor_share
    floor_share: float  # the useful work its change leaves, of the elapsed time


@dataclass(frozen=True)
class Ledger:
    elapsed_ns: float
    useful_ns: float
    losses: list[LedgerEntry]
    unexplained_ns: float
    unexplained_top: list[dict[str, Any]] = field(default_factory=list)
    useful_counted_ns: float | None = None  # the useful time before claims that remove useful work
    # The time neither useful work nor a claim counts, by mechanism (attribution.py).
    attributed: list[Attributed] = field(default_factory=list)
    # False when the report measures no part of the useful work (no FLOPs, DRAM bytes or
    # instruction counts): the useful time is then unknown, not 0 (said "not measured").
    useful_measured: bool = True

    def to_dict(self) -> dict[str, Any]:
        e = self.elapsed_ns
        counted = self.useful_counted_ns if self.useful_counted_ns is not None else self.useful_ns
        known = self.useful_measured
        return {
            "elapsed_ns": round(e, 1),
            "useful_ns": round(self.useful_ns, 1) if known else None,
            "useful_share": round(self.useful_ns / e, 4) if known else None,
            "useful_counted_share": round(counted / e, 4) if known else None,
            "losses": [
                {
                    "finding": x.owner,
                    "ns": round(x.ns, 1),
                    "share": round(x.claimed_share, 4),
                    "wanted_share": round(x.wanted_share, 4),
                    "alone_share": round(x.alone_share, 4),
                }
                for x in self.losses
            ],
            "attributed": [a.to_dict(e) for a in self.attributed],
            "unexplained_ns": round(self.unexplained_ns, 1),
            "unexplained_share": round(self.unexplained_ns / e, 4),
            "unexplained_top": self.unexplained_top,
        }

    def text(self) -> str:
        """One line: useful / what each finding's fix saves / the other time by mechanism /
        unexplained, as shares of the elapsed time."""
        e = self.elapsed_ns
        parts = [self._useful_text()]
        parts += [f"{x.owner} {share_pct(x.claimed_share)}%" for x in self.losses if x.ns > 0]
        other = self._other_time_text()
        if other:
            parts.append(other)
        unexplained = f"unexplained {share_pct(self.unexplained_ns / e)}%"
        if self.unexplained_top and self.unexplained_ns / e >= 0.005:
            unexplained += f" ({_top_stall_text(self.unexplained_top[0])})"
        parts.append(unexplained)
        return " · ".join(parts)

    def _useful_text(self) -> str:
        """One useful figure, the verdict's: the useful work at peak over the elapsed time
        (UsefulWork.efficiency_pct, at most 100%); the part of it a fix removes is said, and
        the claim of that fix counts it too."""
        e = self.elapsed_ns
        if not self.useful_measured:
            return "useful not measured"
        counted = self.useful_counted_ns if self.useful_counted_ns is not None else self.useful_ns
        useful = f"useful {share_pct(counted / e)}%"
        if counted > self.useful_ns * (1 + 1e-6) + 1e-9 * e:
            useful += f" ({share_pct((counted - self.useful_ns) / e)}% of it is work a fix removes)"
        return useful

    def _other_time_text(self) -> str:
        """The other time (no finding's fix removes it) by mechanism: the three largest that
        round to 1% or more, the rest summed (JSON and HTML list each with the findings that
        act on it); '' when none does."""
        e = self.elapsed_ns
        shown = [a for a in self.attributed if a.ns / e >= 0.005]
        if not shown:
            return ""
        named = [f"{a.short_label} {share_pct(a.ns / e)}%" for a in shown[:3]]
        rest = sum(a.ns for a in shown[3:])
        if rest / e >= 0.005:
            named.append(f"{len(shown) - 3} more {share_pct(rest / e)}%")
        return "other time: " + ", ".join(named)


def _top_stall_text(top: dict[str, Any]) -> str:
    """The unexplained time's top stall and where it is. The label without its parenthetical
    gloss keeps the line short; JSON has the whole one."""
    where = top.get("top_line") or {}
    if where.get("file"):
        at = f" at {str(where['file']).rsplit('/', 1)[-1]}:{where.get('line')}"
    elif where.get("pc_offset") is not None:
        at = f" at SASS +0x{where['pc_offset']:x}"
    else:
        at = ""
    return f"top stall: {str(top['label']).split(' (')[0]}{at}"


def _rounded(x: float | None, ndigits: int) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, ndigits)


def _ideal_global_bytes(ctx: KernelContext) -> tuple[float, str]:
    """The bytes the kernel's global accesses need at ideal width (32-byte sectors a request
    needs, summed over every executed access: a value read twice counts twice), and where the
    figure came from; NaN without sector counters."""
    if not ctx.df.empty and "l2_sectors_global" in ctx.df and ctx.total_of("l2_sectors_global") > 0:
        excess = ctx.total_of("l2_sectors_global_excessive") if "l2_sectors_global_excessive" in ctx.df else 0.0
        return 32.0 * max(0.0, ctx.total_of("l2_sectors_global") - excess), "source counters' ideal sectors"
    k = ctx.kernel
    sectors = k.m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0.0) + k.m(
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0.0
    )
    excessive = k.m("derived__memory_l2_theoretical_sectors_global_excessive")
    if sectors > 0 and excessive is not None:
        return 32.0 * max(0.0, sectors - excessive), "kernel counters' sectors less the excessive ones"
    return math.nan, "no sector counters"


def _essential_dram_bytes(ctx: KernelContext, dram_bytes: float) -> tuple[float, str]:
    """DRAM bytes at ideal width: the DRAM traffic, but no more than the accesses need at ideal
    width. Excess sectors of scattered accesses travel from DRAM (aos_gather: 78 % of its
    bytes); excess sectors of data read again hit in L1 or L2 and cost DRAM nothing, which a
    cap (rather than a scale by the excess share) leaves counted as essential."""
    ideal, how = _ideal_global_bytes(ctx)
    if math.isnan(ideal):
        return dram_bytes, "every DRAM byte counted as essential (no sector counters)"
    if ideal >= dram_bytes:
        return dram_bytes, f"DRAM bytes (within the {how})"
    return ideal, f"the {how} (below the DRAM bytes)"


def _essential_instructions(ctx: KernelContext) -> float:
    """Warp instructions of the essential classes at full warps (thread instructions / 32)."""
    df = ctx.df
    if df.empty:
        return math.nan
    threads = df["thread_inst_executed"].tolist() if "thread_inst_executed" in df else None
    executed = df["inst_executed"].tolist()
    total = 0.0
    for j, cls in enumerate(ctx.classes):
        if cls not in USEFUL_CLASSES:  # int, conversion, control, uniform: overhead
            continue
        n = threads[j] / 32.0 if threads is not None and threads[j] == threads[j] else executed[j]
        if n == n:
            total += float(n)
    return total


def useful_work(ctx: KernelContext, sol: SpeedOfLight | None) -> UsefulWork:
    elapsed = finite_positive(sol.duration_s) * 1e9 if sol is not None else 0.0
    times: dict[str, float] = {}
    sources: dict[str, str] = {}
    dram_essential = None
    if sol is not None:
        _math_times(sol, times, sources)
        dram_bytes, peak_bytes_per_s = finite_positive(sol.dram_bytes), finite_positive(sol.peak_bytes_per_s)
        if dram_bytes and peak_bytes_per_s:
            dram_essential, how = _essential_dram_bytes(ctx, dram_bytes)
            times["dram"] = dram_essential / peak_bytes_per_s * 1e9
            sources["dram"] = f"{how} / peak bandwidth"
        _issue_time(ctx, sol, times, sources)
    limiter = max(times, key=times.__getitem__) if times else None
    eff = 100.0 * times[limiter] / elapsed if limiter is not None and elapsed > 0 else None
    return UsefulWork(
        elapsed_ns=elapsed if elapsed > 0 else None,
        times_ns=times,
        sources=sources,
        limiter=limiter,
        efficiency_pct=eff,
        grade=grade_of(min(eff, 100.0), ctx.th) if eff is not None else None,
        dram_bytes_essential=dram_essential,
    )


def _math_times(sol: SpeedOfLight, times: dict[str, float], sources: dict[str, str]) -> None:
    """Each precision's FLOPs at its peak FLOP/s (those with both finite and positive)."""
    for precision, flops in sol.flops.items():
        peak = sol.peak_flops_per_s.get(precision, math.nan)
        if 0 < flops < math.inf and 0 < peak < math.inf:
            times[f"math_{precision}"] = flops / peak * 1e9
            sources[f"math_{precision}"] = f"{precision} FLOPs ({sol.flops_source}) / peak FLOP/s"


def _issue_time(ctx: KernelContext, sol: SpeedOfLight, times: dict[str, float], sources: dict[str, str]) -> None:
    """The essential warp instructions at every SM's issue slots, per cycle at the SM clock."""
    essential = _essential_instructions(ctx)
    sms = finite_positive(ctx.kernel.sm_count or ctx.kernel.m("launch__sm_count"))
    slots = float(ctx.arch.get("issue_slots_per_sm", 4))
    clock = finite_positive(sol.sm_clock_hz)
    if finite_positive(essential) and sms and clock:
        times["issue"] = essential / (slots * sms * clock) * 1e9
        sources["issue"] = "essential warp instructions (math, memory; at full warps) / issue slots"


def part_unit(part: str) -> str:
    """The speed-of-light unit that does a useful-work part (bounds.RELIEF's names)."""
    if part in ("dram", "issue"):
        return part
    precision = part.removeprefix("math_")
    if precision.startswith("tensor"):
        return "tensor"
    return "fp64" if precision == "fp64" else "fma"


def useful_left_by(useful: UsefulWork, relieves: Iterable[str]) -> float:
    """The useful time a change that unloads ``relieves`` leaves: the longest part whose unit it
    does not unload (slow-math's fix removes FP64 math that counted as useful; a coalescing fix
    leaves the FLOPs and the essential DRAM bytes)."""
    relieved = relieved_units(relieves)
    return max((t for part, t in useful.times_ns.items() if part_unit(part) not in relieved), default=0.0)


def _ledger_measured(useful: UsefulWork, findings: Sequence[Claim]) -> bool:
    """Whether a ledger has something to split: an elapsed time, and the useful work or a
    finding measured (else a line "useful 0% · unexplained 100%" would rest on nothing)."""
    elapsed = useful.elapsed_ns
    timed = elapsed is not None and 0 < elapsed < math.inf
    return timed and (useful.limiter is not None or bool(findings))


def time_ledger(ctx: KernelContext, useful: UsefulWork, findings: Sequence[Claim]) -> Ledger | None:
    """The kernel's elapsed time split into useful time, findings' claims and the rest.

    Each finding asks for the time its bounded estimate removes; alone, it can have at most
    the elapsed time less the useful work its change leaves (``useful_left_by``). Findings
    claim largest first, each at most what the claims before it and that useful work leave; a
    claim that reaches into the time counted useful (its change removes work that counted as
    useful) takes it from the useful time, so the parts always add up to the elapsed time.
    """
    elapsed = useful.elapsed_ns
    if elapsed is None or not _ledger_measured(useful, findings):
        return None
    counted = min(useful.useful_ns, elapsed)
    useful_ns, claimed = counted, 0.0
    wanted = [(f, elapsed * (1.0 - 1.0 / f.estimated_speedup) if f.estimated_speedup > 1.0 else 0.0) for f in findings]
    losses = []
    # Larger claims first; a tie keeps the findings' rank.
    for f, want in sorted(wanted, key=lambda fw: -fw[1]):
        floor = min(useful_left_by(useful, f.relieves), counted)
        alone = max(0.0, min(want, elapsed - floor))
        got = max(0.0, min(alone, elapsed - claimed - min(floor, useful_ns)))
        if got > elapsed - claimed - useful_ns:
            useful_ns = elapsed - claimed - got
        claimed += got
        losses.append(LedgerEntry(f.id, got, got / elapsed, want / elapsed, alone / elapsed, floor / elapsed))
    split = attribute(
        ctx,
        remainder_ns=max(0.0, elapsed - useful_ns - claimed),
        useful_ns=useful_ns,
        elapsed_ns=elapsed,
        claims={x.owner: x.ns for x in losses if x.ns > 0},
        raised=[f.id for f in findings],
    )
    return Ledger(
        elapsed_ns=elapsed,
        useful_ns=useful_ns,
        losses=losses,
        unexplained_ns=split.unexplained_ns,
        unexplained_top=split.unexplained_top,
        useful_counted_ns=counted,
        attributed=split.parts,
        useful_measured=useful.limiter is not None,
    )
