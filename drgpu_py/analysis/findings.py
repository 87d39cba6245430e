"""Evaluate the findings catalogue on a kernel: run each detector, estimate and cap the
speedup, assign severity, and rank (best first).

Contract: ``evaluate(ctx) -> list[Finding]``, pure. A kernel whose busiest unit is at its
speed of light (``sol_pct``) gets no ``high`` finding unless the fix relieves that unit;
such findings are capped to ``low`` and say why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import data
from .context import KernelContext
from .detectors import REGISTRY

UNIT_ALIASES = {"shared": "l1tex", "fp64": "sm"}


@dataclass
class Finding:
    id: str
    title: str
    severity: str
    stall_share: float
    estimated_speedup: float
    advice: str
    evidence: dict = field(default_factory=dict)
    locations: list[dict] = field(default_factory=list)
    group: str = ""
    speedup_model: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "severity": self.severity,
                "stall_share": round(self.stall_share, 4), "estimated_speedup": round(self.estimated_speedup, 3),
                "advice": self.advice, "evidence": self.evidence, "locations": self.locations,
                "group": self.group, "speedup_model": self.speedup_model, "notes": self.notes}


class _Fmt(dict):
    def __missing__(self, key):
        return "?"


def _render(text: str, values: dict) -> str:
    try:
        return text.format_map(_Fmt(values))
    except (ValueError, KeyError, IndexError):
        return text


def evaluate(ctx: KernelContext) -> list[Finding]:
    th = ctx.th
    top, top_val = ctx.top_unit()
    at_sol = top is not None and not math.isnan(top_val) and top_val >= th["sol_pct"]
    out: list[Finding] = []
    for spec in data.findings_catalogue()["findings"]:
        det = REGISTRY.get(spec["detector"])
        if det is None:
            continue
        d = det(ctx)
        if d is None:
            continue
        relieves = {UNIT_ALIASES.get(u, u) for u in (d.relieves_override or spec["relieves"])}
        # No change beats the busiest unit it leaves alone: bound by its headroom.
        others = [v for u, v in ctx.units.items() if u not in relieves and not math.isnan(v) and v > 0]
        speed = max(1.0, float(d.speedup))
        if others:
            speed = max(1.0, min(speed, 100.0 / max(others)))
        if speed < th["min_speedup"]:
            continue
        notes = []
        capped = at_sol and top not in relieves
        sev = "high" if speed >= th["high_speedup"] else "medium" if speed >= th["medium_speedup"] else "low"
        if capped and sev != "low":
            sev = "low"
            notes.append(f"kernel is at {top_val:.0f}% of the {top} peak and this change does not reduce that unit's load")
        evidence = {m: _num(ctx.kernel.m(m)) for m in spec["evidence"] if ctx.kernel.has(m)}
        evidence.update(d.evidence)
        out.append(Finding(id=spec["id"], title=_render(spec["title"], d.fmt), severity=sev,
                           stall_share=max(0.0, min(1.0, d.stall_share)), estimated_speedup=speed,
                           advice=" ".join(_render(spec["advice"], d.fmt).split()), evidence=evidence,
                           locations=d.locations, group=spec["group"], speedup_model=spec["speedup_model"],
                           notes=notes))
    rank = {"high": 0, "medium": 1, "low": 2}
    out.sort(key=lambda f: (rank[f.severity], -f.estimated_speedup))
    return out


def _num(v: float):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(float(v), 4)
