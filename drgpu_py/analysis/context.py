"""Per-kernel analysis context: what every detector and tree builder needs, computed once.

Contract: ``KernelContext.build(kernel, thresholds, slicing=...)`` is pure (reads the kernel,
returns a context). It resolves the architecture constants, the stall mix (from PC samples
when the report has them, else from the kernel-wide WarpStateStats counters), unit
utilisations, the parsed SASS with its CFG and loops, and the GPA blame of stalls.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from .. import data
from ..model import KernelProfile
from ..sass import CFG, Blame, blame_stalls, build_cfg, parse_listing
from ..sass.isa import Instruction

UNITS = {
    "sm": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM (compute)"),
    "l1tex": ("l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "L1/TEX cache"),
    "lts": ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 cache"),
    "dram": ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM"),
}
MEMORY_UNITS = ("l1tex", "lts", "dram")


@dataclass
class KernelContext:
    kernel: KernelProfile
    th: dict[str, float]
    arch: dict
    reasons: dict[str, float]            # reason -> stall weight (samples or counter ratio)
    reason_source: str                   # "sampling" | "counters" | "none"
    total: float                         # all weights incl. 'selected'
    stall_total: float                   # excl. 'selected'
    units: dict[str, float]              # unit -> % of peak (NaN when not collected)
    insts: list[Instruction] = field(default_factory=list)
    cfg: CFG | None = None
    blame: Blame | None = None
    by_pc: dict[int, Instruction] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    # ---- construction -------------------------------------------------------------
    @classmethod
    def build(cls, k: KernelProfile, th: dict[str, float], control: dict[int, dict] | None = None,
              slicing_source: str = "report") -> "KernelContext":
        arch = data.load_arch(k.chip)
        reasons, source = _stall_weights(k)
        total = sum(reasons.values())
        stall_total = total - reasons.get("selected", 0.0)
        units = {u: k.m(name) for u, (name, _) in UNITS.items()}
        ctx = cls(kernel=k, th=th, arch=arch, reasons=reasons, reason_source=source, total=total,
                  stall_total=stall_total, units=units)
        if not arch.get("known"):
            ctx.notes.append(f"unknown chip for compute capability '{k.compute_capability}': base architecture constants used")
        df = k.instructions
        if not df.empty:
            ctx.insts = parse_listing(zip(df.index, df["sass"]))
            ctx.by_pc = {i.pc: i for i in ctx.insts}
            ctx.cfg = build_cfg(ctx.insts)
            if k.has_sampling:
                ctx.blame = blame_stalls(ctx.cfg, df, control=control, latency=arch.get("latency"))
                ctx.blame.source = slicing_source
        return ctx

    # ---- helpers used by detectors and the tree ----------------------------------------
    @property
    def df(self) -> pd.DataFrame:
        return self.kernel.instructions

    def share(self, *reasons: str) -> float:
        """Share of stall cycles (excluding issuing) in the given reasons."""
        if self.stall_total <= 0:
            return 0.0
        return sum(self.reasons.get(r, 0.0) for r in reasons) / self.stall_total

    def frac(self, *reasons: str) -> float:
        """Share of all warp time (issuing included) in the given reasons: GPA's M/T."""
        if self.total <= 0:
            return 0.0
        return sum(self.reasons.get(r, 0.0) for r in reasons) / self.total

    @property
    def samples_total(self) -> float:
        df = self.df
        if df.empty:
            return 0.0
        cols = [c for c in df.columns if c.startswith("stall_")]
        return float(df[cols].to_numpy().sum())

    def top_unit(self) -> tuple[str | None, float]:
        vals = {u: v for u, v in self.units.items() if not math.isnan(v)}
        if not vals:
            return None, math.nan
        u = max(vals, key=vals.get)
        return u, vals[u]

    def executed_total(self) -> float:
        df = self.df
        return float(df["inst_executed"].sum()) if not df.empty else 0.0

    def pcs_where(self, pred) -> list[int]:
        return [i.pc for i in self.insts if pred(i)]

    def blamed_to(self, pcs, reasons=None) -> float:
        """Stall samples the blamer charges to the given producer PCs."""
        if self.blame is None or not len(pcs):
            return 0.0
        e = self.blame.edges
        e = e[e["producer_pc"].isin(list(pcs))]
        if reasons is not None:
            e = e[e["reason"].isin(list(reasons))]
        return float(e["samples"].sum())

    def blamed_by_pc(self, pcs, reasons=None) -> dict[int, float]:
        if self.blame is None:
            return {}
        e = self.blame.edges
        e = e[e["producer_pc"].isin(list(pcs))]
        if reasons is not None:
            e = e[e["reason"].isin(list(reasons))]
        return e.groupby("producer_pc")["samples"].sum().to_dict()

    def consumers_of(self, pc: int) -> list[int]:
        if self.blame is None:
            return []
        e = self.blame.edges
        return [int(c) for c in e[(e["producer_pc"] == pc) & (e["consumer_pc"] != pc)]["consumer_pc"].unique()]

    def locations(self, weights: dict[int, float], limit: int = 5) -> list[dict]:
        """Source lines ranked by the summed weight of their instructions (a PC->weight map).
        Each location names the line, its share of the weight, the heaviest SASS instruction
        on it, and the consumer line(s) where the stall was observed, if different."""
        df = self.df
        if df.empty or not weights:
            return []
        total = sum(w for w in weights.values() if w > 0)
        if total <= 0:
            return []
        agg: dict[tuple, dict] = {}
        for pc, w in weights.items():
            if w <= 0 or pc not in df.index:
                continue
            f, ln = df.at[pc, "file"], df.at[pc, "line"]
            key = (f, None if pd.isna(ln) else int(ln)) if f is not None else (None, None)
            if key == (None, None):
                key = ("<sass>", int(df.at[pc, "offset"]))
            slot = agg.setdefault(key, {"w": 0.0, "best": (0.0, pc), "pcs": []})
            slot["w"] += w
            slot["pcs"].append(pc)
            if w > slot["best"][0]:
                slot["best"] = (w, pc)
        out = []
        for (f, ln), slot in sorted(agg.items(), key=lambda kv: -kv[1]["w"])[:limit]:
            pc = slot["best"][1]
            loc = {"file": f if f != "<sass>" else None, "line": ln if f != "<sass>" else None,
                   "share": round(slot["w"] / total, 4), "sass": df.at[pc, "sass"],
                   "pc_offset": int(df.at[pc, "offset"])}
            if f == "<sass>":
                loc["note"] = "no line information: SASS offset given"
            code = self.kernel.source_line(f, ln) if f not in (None, "<sass>") and ln is not None else None
            if code is not None:
                loc["code"] = code.strip()
            inlined = df.at[pc, "inlined_from"] if "inlined_from" in df.columns else None
            if isinstance(inlined, dict):  # from the cubin's inline info (--cubin/--binary)
                loc["inlined_from"] = inlined
            ctx_lines = set()
            for p in slot["pcs"]:
                for c in self.consumers_of(p):
                    cf, cl = df.at[c, "file"], df.at[c, "line"]
                    if cf is not None and not pd.isna(cl) and (cf, int(cl)) != (f, ln):
                        ctx_lines.add((cf, int(cl)))
            if ctx_lines:
                loc["stalled_at"] = [{"file": cf, "line": cl} for cf, cl in sorted(ctx_lines)[:3]]
            out.append(loc)
        return out

    def line_samples(self, reason: str, limit: int = 5) -> list[dict]:
        """Top source lines by the samples of one stall reason, where the stall is observed."""
        col = f"stall_{reason}"
        df = self.df
        if df.empty or col not in df:
            return []
        w = {int(pc): float(v) for pc, v in df[col].items() if v > 0}
        return self.locations(w, limit)


def _stall_weights(k: KernelProfile) -> tuple[dict[str, float], str]:
    df = k.instructions
    reasons = data.stall_reasons()
    if not df.empty and k.has_sampling:
        w = {r: float(df[f"stall_{r}"].sum()) for r in reasons if f"stall_{r}" in df}
        if sum(w.values()) > 0:
            return w, "sampling"
    w = {}
    for r, spec in reasons.items():
        v = k.m(spec["counter"][0])
        if not math.isnan(v):
            w[r] = v
    if w and sum(w.values()) > 0:
        return w, "counters"
    return {}, "none"
