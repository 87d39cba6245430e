"""Finding ``constant-cache-divergence``: lanes of a warp that read different ``__constant__``
addresses, each served in turn, and the bound on what moving a lookup table costs.

Contract: ``constant_divergence(ctx, passes) -> Detection | None``, pure, registered by
``@detector`` (detectors/base.py).

Mechanism: the constant cache serves one address per request; a register-indexed constant
load (``LDC ... c[bank][Rx]``) whose index differs across the lanes of a warp is replayed
once per distinct address. Only an index the thread index can change counts
(``thread_varying`` on the index registers); without a CFG the load counts as divergent.

Evidence: the stall samples at those loads and the short-scoreboard, long-scoreboard and
wait samples the blamer charges to them (``cost_share``), the MIO-throttle samples elsewhere
charged to them in proportion to their own (``queue_charge``), and half of the
constant-cache-miss (``imc_miss``) samples; the finding needs ``constant_share`` of all
samples.

Estimate: stall elimination of that share (``eliminate``), within the moved lookups' own time
(``within_limit``): the advised fix (the table in shared memory) still serves every warp
lookup through L1's data stage, one wavefront a cycle per SM, with the wavefronts one lookup
takes there (``_table_lookup_wavefronts``: the expected fullest bank for data-selected
entries, ``expected_max_load``). The limit is the elapsed cycles over the lookups' wavefronts
per SM; without the executed lookups, the SM count or the elapsed cycles it is not measured
and the detector returns ``not_measured()``.

Metrics (declared): ``device__attribute_multiprocessor_count`` and ``sm__cycles_elapsed.avg``
(the limit); the stall samples and executed counts are per instruction.

Helpers (this rule's own): ``_divergent_constant_load``, ``expected_max_load``,
``_table_lookup_wavefronts``, ``_constant_lookup_bound``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import Any

from ....sass.cfg import CFG
from ....sass.isa import Instruction
from ....sass.dataflow import (
    lane_values,
    registers_in,
    thread_varying,
)
from ...context import KernelContext
from ...passes import Passes
from ...perfmodel import access_bytes
from ..base import (
    Detection,
    cost_share,
    detector,
    eliminate,
    not_measured,
    queue_charge,
    within_limit,
)


def _divergent_constant_load(cfg: CFG | None, ins: Instruction) -> bool:
    index = ins.const_index()
    idx = cfg.index_of_pc.get(ins.pc) if cfg is not None else None
    if index is None or cfg is None or idx is None:  # (no CFG: no index either)
        return True
    return any(thread_varying(cfg, idx, r) for r in registers_in(index))


@functools.lru_cache(maxsize=64)
def expected_max_load(balls: int, bins: int) -> float:
    """Expected count in the fullest of ``bins`` when ``balls`` fall into them independently
    and uniformly: sum over fill of P(max > fill), with P(max <= fill) = balls! / bins^balls times the
    coefficient of x^balls in (sum_{j<=fill} x^j / j!)^bins."""
    if balls <= 0 or bins <= 0:
        return 0.0
    total = 0.0
    for fill in range(balls):
        term = [1.0 / math.factorial(j) if j <= fill else 0.0 for j in range(balls + 1)]
        poly = [1.0] + [0.0] * balls
        for _ in range(bins):
            poly = [sum(poly[i] * term[n - i] for i in range(n + 1)) for n in range(balls + 1)]
        total += 1.0 - poly[balls] * math.factorial(balls) / bins**balls
    return total


def _table_lookup_wavefronts(access_bytes: int, banks: int, values: int = 32) -> float:
    """Shared-memory wavefronts one warp's lookup needs once a divergent constant table lives
    in shared memory (the fix the finding advises): a wavefront serves one word per bank, so
    32 lanes reading data-selected entries take as many as their fullest bank holds. Wider
    accesses go in phases of banks*4/bytes lanes, each spread over that many bank groups.
    An index that takes fewer ``values`` than there are bank groups (a masked index into a
    small contiguous table; lane_values counts up to 32) puts each entry in its own bank:
    one wavefront a phase."""
    phases = max(1, access_bytes // 4)
    lanes = max(1, 32 // phases)
    bins = min(lanes, max(1, banks // phases))
    if values < bins:
        return float(phases)
    return phases * expected_max_load(lanes, bins)


def _constant_lookup_bound(ctx: KernelContext, pcs: Iterable[int]) -> tuple[float, float]:
    """The fix moves the lookups, it does not remove them: the replacement still serves every
    warp lookup through L1's data stage (one wavefront per cycle per SM). With the lookups
    spread over the SMs, the kernel cannot get shorter than that work: elapsed cycles over the
    lookups' wavefronts per SM. Returns (bound, wavefronts per lookup); (inf, 0) if unknown."""
    executed = ctx.executed()
    sms = ctx.kernel.sm_count or ctx.kernel.m("device__attribute_multiprocessor_count")
    elapsed = ctx.kernel.m("sm__cycles_elapsed.avg")
    banks = int(ctx.arch.get("shared_banks", 32))
    lookups = wavefronts = 0.0
    cfg = ctx.cfg
    for pc in pcs:
        warp_insts = float(executed.get(pc) or 0.0)
        ins = ctx.by_pc[pc]
        index = ins.const_index()
        idx = cfg.index_of_pc.get(pc) if cfg is not None else None
        values = (
            math.prod(lane_values(cfg, idx, r) for r in registers_in(index))
            if index is not None and cfg is not None and idx is not None
            else 32
        )
        lookups += warp_insts
        wavefronts += warp_insts * _table_lookup_wavefronts(access_bytes(ins), banks, values)
    if lookups <= 0 or not sms or elapsed is None or elapsed <= 0:
        return math.inf, 0.0
    return max(1.0, elapsed / (wavefronts / sms)), wavefronts / lookups


@detector(
    metrics=(
        "device__attribute_multiprocessor_count",
        "sm__cycles_elapsed.avg",
    )
)
def constant_divergence(ctx: KernelContext, passes: Passes) -> Detection | None:
    # Register-indexed constant loads serialize only when the index differs across lanes.
    pcs = ctx.pcs_where(lambda i: i.is_const_indexed() and _divergent_constant_load(ctx.cfg, i))
    if not pcs:
        return None
    removed_share, weights = cost_share(ctx, pcs, None, ("short_scoreboard", "long_scoreboard", "wait"))
    removed_share += queue_charge(ctx, pcs, "mio_throttle") + ctx.frac("imc_miss") * 0.5
    if removed_share < ctx.th["constant_share"]:
        return None
    # The rest of the kernel and the moved lookups overlap: the estimate is the smaller of
    # removing the lookups' stalls and the time the lookups' shared-memory wavefronts take.
    bound, per_lookup = _constant_lookup_bound(ctx, pcs)
    if per_lookup <= 0:
        # The lookups' time in their new home (the executed lookups, the SMs and the elapsed
        # cycles) is the limit of this estimate: not measured, no estimate.
        return not_measured()
    evidence: dict[str, Any] = {
        "indexed_constant_loads": len(pcs),
        "sample_share": round(removed_share, 3),
        "replacement_wavefronts_per_lookup": round(per_lookup, 2),
        "lookup_bound": round(bound, 2),
    }
    speed = within_limit(
        eliminate(removed_share),
        bound,
        "elapsed cycles / the lookups' shared-memory wavefronts per SM: the moved lookups' own time",
        evidence,
    )
    return Detection(
        stall_share=ctx.as_stall_share(removed_share),
        speedup=speed,
        evidence=evidence,
        locations=ctx.locations(weights),
        fmt={"share_pct": 100 * removed_share},
    )
