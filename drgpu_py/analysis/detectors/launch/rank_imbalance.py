"""Finding ``rank-imbalance``: the same kernel takes different times on different ranks of a
merged profile.

Contract: ``rank_imbalance(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: if the ranks wait for each other after the kernel, the slowest sets the pace.

Evidence: only merged profiles (drgpu_py.readers.merge) carry the duration spread across
ranks (``drgpu__rank_*``), at least ``rank_imbalance``.

Estimate: balanced, every rank would take the mean time: speedup max / mean.

Metrics (declared): the ``drgpu__rank_*`` values the merge writes.

Helpers: none.
"""

from __future__ import annotations

from ...context import KernelContext
from ...passes import Passes
from ..base import (
    Detection,
    detector,
)


@detector(
    metrics=(
        "drgpu__rank_count",
        "drgpu__rank_duration_max",
        "drgpu__rank_duration_mean",
        "drgpu__rank_duration_min",
        "drgpu__rank_duration_spread",
        "drgpu__rank_durations",
        "drgpu__rank_fastest",
        "drgpu__rank_slowest",
    )
)
def rank_imbalance(ctx: KernelContext, passes: Passes) -> Detection | None:
    """Only merged profiles (drgpu_py.readers.merge) carry the duration spread across ranks. If the
    ranks wait for each other after the kernel, the slowest sets the pace; balanced, every
    rank would take the mean time: speedup max/mean."""
    kernel = ctx.kernel
    spread = kernel.m("drgpu__rank_duration_spread")
    if spread is None or spread < ctx.th["rank_imbalance"]:
        return None
    hi, mean = kernel.m("drgpu__rank_duration_max"), kernel.m("drgpu__rank_duration_mean")
    if hi is None or mean is None or mean <= 0 or hi <= 0:
        return None
    slow, fast = kernel.strings.get("drgpu__rank_slowest", "?"), kernel.strings.get("drgpu__rank_fastest", "?")
    return Detection(
        stall_share=1.0 - mean / hi,
        speedup=hi / mean,
        evidence={
            "duration_spread": round(spread, 3),
            "slowest_rank": slow,
            "fastest_rank": fast,
            "durations": kernel.strings.get("drgpu__rank_durations", ""),
        },
        fmt={
            "spread_pct": 100 * spread,
            "ranks": int(kernel.m("drgpu__rank_count", 0)),
            "slowest": slow,
            "fastest": fast,
            "max_us": hi / 1000,
            "min_us": kernel.m("drgpu__rank_duration_min", 0) / 1000,
        },
    )
