"""Build DrGPU's top-down tree for one kernel from its :class:`KernelContext`.

Root: stall-cycle % = (ideal IPC - achieved IPC) / ideal IPC with the achieved IPC, the
busiest unit and the bound. Level 1: cause groups (specs/tree.yaml) with each warp stall
reason's share of stall cycles and the source lines that carry it. Below the groups, unit
sub-trees (memory latency L1 -> L2 -> DRAM, memory efficiency, synchronization, instruction
mix, pipes, shared memory) and, under the root, occupancy and launch. A metric the report
lacks becomes a ``missing`` node naming the ncu section to add. Findings hang as
``suggestion`` leaves under their group, and the path to the top finding is highlighted.
"""

from __future__ import annotations

import math
from typing import Any, cast

from ..specs import loader as data
from ..profile import rounded
from .context import UNITS, KernelContext
from .detectors.launch.occupancy_limited import occupancy_limiter
from .figures import pct
from .findings import Finding
from .ledger import Ledger, UsefulWork, part_label
from .passes import Passes
from .perfmodel import KernelModel, hot_loop_lines
from .sol import SpeedOfLight
from .tree import (
    KEY_MEMORY_DRAM,
    KEY_MEMORY_L1,
    KEY_MEMORY_L2,
    KEY_MEMORY_SPLIT,
    KEY_OCCUPANCY_ACHIEVED,
    KEY_OCCUPANCY_LIMITER,
    KEY_OCCUPANCY_THEORETICAL,
    Node,
    Location,
    location_text,
)


COMPUTE_UNITS = ("sm", "issue", "tensor", "fma", "alu", "fp64", "xu")


def _attrs(loc: Location) -> dict[str, Any]:
    """A location as a line node's attributes (the same object: the node shows the location)."""
    return cast(dict[str, Any], loc)


def _grades(sol: SpeedOfLight | None, useful: UsefulWork | None, ledger: Ledger | None) -> dict[str, Any]:
    """The root's speed-of-light and useful-work grades and the time ledger in one line."""
    out: dict[str, Any] = {}
    if sol is not None:
        out.update(
            sol_limiter=sol.limiter,
            sol_limiter_label=sol.labels.get(sol.limiter) if sol.limiter else None,
            sol_pct=rounded(sol.limiter_pct, 1),
            sol_grade=sol.grade,
        )
    if useful is not None and useful.efficiency_pct is not None:
        out.update(
            useful_grade=useful.grade,
            useful_pct=rounded(useful.efficiency_pct, 1),
            useful_label=part_label(useful.limiter),
        )
    if ledger is not None:
        out["ledger"] = ledger.text()
    return out


def classify_bound(ctx: KernelContext, sol: SpeedOfLight | None) -> str | None:
    """launch (short or a small grid), else memory or compute when the busiest unit (the
    speed-of-light units, or ncu's SM/L1/L2/DRAM throughputs) reaches ``bound_pct``, else
    latency; None (not measured) when the report has no unit throughput to tell latency from
    the others and the launch rule does not apply: "latency" is a finding about the units,
    not what is left when none was measured."""
    kernel, th = ctx.kernel, ctx.th
    dur = kernel.duration_ns
    blocks = kernel.m("launch__grid_size", float(kernel.grid[0] * kernel.grid[1] * kernel.grid[2]))
    sms = kernel.sm_count or kernel.m("launch__sm_count")
    if (dur is not None and dur < th["launch_bound_us"] * 1000.0) or (sms and blocks and blocks / sms < 0.5):
        return "launch"
    units = {u: v for u, v in ctx.units.items() if v is not None}
    if sol is not None:
        units.update(sol.units)
    if not units:
        return None
    compute = max((v for u, v in units.items() if u in COMPUTE_UNITS), default=None)
    mem = max((v for u, v in units.items() if u not in COMPUTE_UNITS), default=None)
    if mem is not None and mem >= th["bound_pct"] and (compute is None or mem >= compute):
        return "memory"
    if compute is not None and compute >= th["bound_pct"]:
        return "compute"
    return "latency"


def _metric(
    parent: Node,
    ctx: KernelContext,
    label: str,
    metric: str,
    unit: str = "",
    scale: float = 1.0,
    key: str | None = None,
) -> Node:
    value = ctx.kernel.m(metric)
    if value is None:
        attrs: dict[str, Any] = {"metric": metric, "section": data.metric_section(metric) or "?"}
        if data.metric_unavailable(metric, ctx.kernel.chip):
            attrs["unavailable_on"] = ctx.kernel.chip
        elif (advice := data.reprofile_advice(ctx.kernel.collected, metric)) and advice.startswith("re-profile"):
            attrs["ncu_since"] = data.metric_since(metric)  # its section is there: the report's ncu predates it
        return parent.add(Node(label, None, unit, "missing", attrs=attrs, key=key))
    return parent.add(Node(label, round(value * scale, 4), unit, "metric", attrs={"metric": metric}, key=key))


def _value(parent: Node, label: str, value: float | None, unit: str = "", **attrs: Any) -> Node:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return parent.add(Node(label, None, unit, "missing", attrs=attrs))
    return parent.add(
        Node(label, round(float(value), 4) if isinstance(value, (int, float)) else value, unit, "metric", attrs=attrs)
    )


def build_tree(  # noqa: C901, PLR0912 - one branch per tree level, read top to bottom
    ctx: KernelContext,
    passes: Passes,
    findings: list[Finding],
    useful: UsefulWork | None = None,
    ledger: Ledger | None = None,
) -> Node:
    stall = passes.stall
    pct, ipc, ideal, how = stall.pct, stall.achieved_ipc, stall.ideal_ipc, stall.how
    top, top_val = ctx.top_unit()
    bound = classify_bound(ctx, passes.sol)
    root = Node(
        "Stall cycles",
        rounded(pct, 2),
        "%",
        "root",
        attrs={
            "achieved_ipc": rounded(ipc, 3),
            "ideal_ipc": ideal,
            "ipc_source": how,
            # ids as in the kernel's JSON (top_unit, speed_of_light.limiter); labels beside
            "top_unit": top,
            "top_unit_label": UNITS[top][1] if top else None,
            "top_unit_pct": rounded(top_val, 1),
            "bound": bound,
            "stall_source": ctx.reason_source,
        },
    )
    shape = data.tree_shape()
    labels = {reason: spec["label"] for reason, spec in data.stall_reasons().items()}
    group_nodes: dict[str, Node] = {}
    if ctx.reason_source == "none":
        root.add(
            Node(
                "Warp stall reasons",
                None,
                "%",
                "missing",
                attrs={"section": "WarpStateStats", "metric": "smsp__average_warps_issue_stalled_*"},
            )
        )
    for group in shape["groups"]:
        share = ctx.share(*group["reasons"]) * 100.0
        gnode = Node(group["label"], round(share, 2), "%", "group", attrs={"group": group["id"]})
        group_nodes[group["id"]] = gnode
        for reason in group["reasons"]:
            reason_pct = ctx.share(reason) * 100.0
            if reason_pct <= 0:
                continue
            rnode = gnode.add(Node(labels[reason], round(reason_pct, 2), "%", "reason", attrs={"reason": reason}))
            # Line shares are of the reason's samples: those at no listed instruction too.
            outside = ctx.unattributed(reason)
            listed = max(0.0, ctx.reasons.get(reason, 0.0) - outside)
            scale = listed / (listed + outside) if outside > 0 else 1.0
            for loc in ctx.line_samples(reason, 3):
                rnode.add(
                    Node(location_text(loc), round(loc["share"] * scale * 100.0, 2), "%", "line", attrs=_attrs(loc))
                )
            if outside > 0:
                rnode.add(
                    Node(
                        "at no instruction of the SASS listing (kernel level)",
                        round(100.0 * (1.0 - scale), 2),
                        "%",
                        "metric",
                        attrs={"samples": round(outside, 1)},
                    )
                )
        for st in group.get("subtrees", []):
            builder = SUBTREES.get(st)
            if builder:
                builder(gnode, ctx)
        if ctx.reason_source != "none" or gnode.children:
            root.add(gnode)
    root.children.sort(key=lambda n: -(n.value or 0.0))
    if passes.sol is not None:
        root.children.insert(0, _speed_of_light(passes.sol))
    root.attrs.update(_grades(passes.sol, useful, ledger))
    if passes.perf is not None and passes.perf.available:
        root.add(_model_node(ctx, passes.perf))
    for st in shape.get("root_subtrees", []):
        node = Node(st.capitalize(), None, "", "group", attrs={"group": st})
        SUBTREES[st](node, ctx)
        group_nodes[st] = node
        root.add(node)
    for rank, finding in enumerate(findings):
        parent = group_nodes.get(finding.group) or root
        sug = parent.add(
            Node(
                finding.title,
                round(finding.estimated_speedup, 3),
                "x",
                "suggestion",
                attrs={
                    "id": finding.id,
                    "severity": finding.severity,
                    "advice": finding.advice,
                    "estimate_capped": finding.estimate_capped,
                },
            )
        )
        for loc in finding.locations[:3]:
            sug.add(Node(location_text(loc), round(loc["share"] * 100.0, 2), "%", "line", attrs=_attrs(loc)))
        if rank == 0 and finding.severity != "low":
            root.attrs["highlight"] = True
            parent.attrs["highlight"] = True
            sug.attrs["highlight"] = True
    return root


# ---- sub-trees --------------------------------------------------------------------------
def _model_node(ctx: KernelContext, model: KernelModel) -> Node:
    """The static performance model (analysis/perfmodel.py): predicted against measured cycles,
    each term of the prediction, and the hot loops' critical paths with their lines."""
    err = model.gap()
    node = Node(
        "Performance model (static SASS)",
        None,
        "",
        "group",
        attrs={
            "group": "model",
            "bottleneck": model.bottleneck,
            "counters_verdict": model.verdict,
            "predicted_cycles": round(model.predicted_cycles, 1),
            "measured_cycles": rounded(model.measured_cycles, 1),
            "error_pct": rounded(100.0 * err, 1),
        },
    )
    for term, cycles in sorted(model.terms.items(), key=lambda kv: -kv[1]):
        node.add(Node(f"{term} bound", round(cycles, 1), "cycles", "metric", attrs={"term": term}))
    for lm in model.loops[:3]:
        ln = node.add(
            Node(
                f"Loop at +0x{_off(ctx, lm.header_pc):x}: critical path per iteration",
                round(lm.critical_path_cycles, 2),
                "cycles",
                "metric",
                attrs={
                    "single_warp_cycles": round(lm.single_warp_cycles, 2),
                    "instructions_per_iteration": round(lm.issue_per_iteration, 2),
                    "useful_share": lm.useful_share,
                },
            )
        )
        for loc in hot_loop_lines(ctx, lm, 3):
            ln.add(Node(location_text(loc), None, "", "line", attrs=loc))
    for change in model.what_if:
        node.add(Node(f"What if: {change['description']}", change["speedup"], "x", "metric", attrs=change))
    return node


def _off(ctx: KernelContext, pc: int) -> int:
    row = ctx.row_map().get(pc)
    return int(row[2]) if row is not None and row[2] == row[2] else 0


def _speed_of_light(sol: SpeedOfLight) -> Node:
    """The speed-of-light layer: each unit's % of peak (busiest first, the limiter marked)
    and the roofline position. A group node without a value: it is not a stall share."""
    name = "Speed of light"
    if sol.limiter is not None:
        name += f": {sol.labels.get(sol.limiter, sol.limiter)} at {pct(sol.limiter_pct)}% of peak ({sol.grade})"
    node = Node(name, None, "", "group", attrs={"group": "speed_of_light", "limiter": sol.limiter, "grade": sol.grade})
    if not sol.units:
        node.add(
            Node(
                "Unit throughputs",
                None,
                "%",
                "missing",
                attrs={"section": "SpeedOfLight", "metric": "*.pct_of_peak_sustained_*"},
            )
        )
    for unit, unit_pct in sorted(sol.units.items(), key=lambda kv: -kv[1]):
        if unit_pct < 1.0 and unit != sol.limiter:
            continue  # idle units: in the JSON's speed_of_light.units, not in the tree
        node.add(
            Node(
                sol.labels.get(unit, unit),
                round(unit_pct, 2),
                "%",
                "metric",
                attrs={"unit": unit, "source": sol.unit_sources.get(unit), "limiter": unit == sol.limiter},
            )
        )
    roofline = sol.roofline()
    if roofline["flop_per_s"] is not None:
        rn = node.add(
            Node(
                f"Roofline ({roofline['precision']})",
                round(roofline["flop_per_s"] / 1e12, 3),
                "TFLOP/s",
                "metric",
                attrs={k: v for k, v in roofline.items() if v is not None},
            )
        )
        if roofline["arithmetic_intensity"] is not None:
            _value(rn, "Arithmetic intensity", roofline["arithmetic_intensity"], "FLOP/byte")
        if roofline["peak_flop_per_s"] is not None:
            _value(rn, "Peak at the measured clock", roofline["peak_flop_per_s"] / 1e12, "TFLOP/s")
        if roofline["pct_of_attainable"] is not None:
            _value(rn, f"Of the attainable ({roofline['side']} side of the ridge)", roofline["pct_of_attainable"], "%")
    if roofline["dram_bytes_per_s"] is not None:
        _value(node, "DRAM bandwidth achieved", roofline["dram_bytes_per_s"] / 1e12, "TB/s")
    return node


def _memory_latency(parent: Node, ctx: KernelContext) -> None:
    kernel = ctx.kernel
    h1 = kernel.m("l1tex__t_sector_hit_rate.pct")
    h2 = kernel.m("lts__t_sector_hit_rate.pct")
    node = parent.add(Node("Memory latency split", None, "", "metric", key=KEY_MEMORY_SPLIT))
    if h1 is None or h2 is None:
        node.kind = "missing"
        node.attrs = {
            "section": "MemoryWorkloadAnalysis",
            "metric": "l1tex__t_sector_hit_rate.pct, lts__t_sector_hit_rate.pct",
        }
        return
    lat = ctx.arch["latency"]
    f1, f2 = h1 / 100.0, (1 - h1 / 100.0) * h2 / 100.0
    f3 = (1 - h1 / 100.0) * (1 - h2 / 100.0)
    c1, c2, c3 = f1 * lat["l1"], f2 * lat["l2"], f3 * lat["dram"]
    tot = c1 + c2 + c3 or 1.0
    mem_share = ctx.share("long_scoreboard", "lg_throttle", "tex_throttle") * 100.0
    # Each level is the child of the one before it: a miss goes on to the next level.
    levels: tuple[tuple[str, float, dict[str, Any], str, str], ...] = (
        ("L1 hits", c1, {"hit_rate_pct": round(h1, 1)}, "l1", KEY_MEMORY_L1),
        ("L2 hits", c2, {"hit_rate_pct": round(h2, 1)}, "l2", KEY_MEMORY_L2),
        ("DRAM", c3, {}, "dram", KEY_MEMORY_DRAM),
    )
    at = node
    for label, cost, attrs, level, key in levels:
        attrs = {**attrs, "latency_cycles": lat[level]}
        at = at.add(Node(label, round(mem_share * cost / tot, 2), "%", "metric", attrs=attrs, key=key))
    node.value = round(mem_share, 2)
    node.unit = "%"


def _memory_efficiency(parent: Node, ctx: KernelContext) -> None:
    kernel = ctx.kernel
    node = parent.add(Node("Access efficiency", None, "", "metric"))
    req = kernel.m("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    sec = kernel.m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    _value(
        node,
        "Global load sectors per request",
        sec / req if sec is not None and req and req > 0 else None,
        "",
        section="MemoryWorkloadAnalysis_Tables",
        ideal=4,
    )
    df = ctx.df
    if not df.empty and ctx.total_of("l2_sectors_global") > 0:
        _value(
            node,
            "Excessive global sectors",
            100.0 * ctx.total_of("l2_sectors_global_excessive") / ctx.total_of("l2_sectors_global"),
            "%",
        )
    _metric(node, ctx, "Local load sectors", "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum")
    _metric(node, ctx, "DRAM throughput", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%")


def _synchronization(parent: Node, ctx: KernelContext) -> None:
    kernel = ctx.kernel
    node = parent.add(Node("Block and barriers", None, "", "metric"))
    _value(node, "Block size", kernel.threads_per_block or math.nan, "threads")
    _value(node, "Warps per block", kernel.warps_per_block or math.nan, "warps")
    _metric(node, ctx, "Barriers per block", "launch__barrier_count")


def _instruction_mix(parent: Node, ctx: KernelContext) -> None:
    df = ctx.df
    node = parent.add(Node("Instruction mix", None, "", "metric"))
    if df.empty or ctx.total_of("inst_executed") <= 0:
        node.kind = "missing"
        node.attrs = {"section": "SourceCounters", "metric": "inst_executed (per instruction)"}
        return
    mix: dict[str, float] = {}
    executed = ctx.executed()
    for ins, cls in zip(ctx.insts, ctx.classes):
        mix[cls] = mix.get(cls, 0.0) + (float(executed[ins.pc]) if ins.pc in executed else 0.0)
    tot = sum(mix.values()) or 1.0
    for cls, executed_count in sorted(mix.items(), key=lambda kv: kv[1], reverse=True):  # largest first, ties in order
        if executed_count > 0:
            node.add(Node(cls, round(100.0 * executed_count / tot, 2), "%", "metric"))


def _pipes(parent: Node, ctx: KernelContext) -> None:
    node = parent.add(Node("Pipe utilisation", None, "", "metric"))
    for pipe, label in (
        ("fma", "FMA"),
        ("alu", "ALU"),
        ("fp64", "FP64"),
        ("xu", "XU (special functions, conversions)"),
        ("lsu", "LSU"),
        ("cbu", "Branch"),
        ("uniform", "Uniform"),
    ):
        _metric(node, ctx, label, f"sm__inst_executed_pipe_{pipe}.avg.pct_of_peak_sustained_active", "%")


def _shared_memory(parent: Node, ctx: KernelContext) -> None:
    kernel = ctx.kernel
    node = parent.add(Node("Shared memory", None, "", "metric"))
    for op in ("ld", "st"):
        ins = kernel.m(f"smsp__sass_inst_executed_op_shared_{op}.sum")
        wav = kernel.m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        # None: not measured; 0 where the kernel executed no such instruction.
        per_instruction = None if ins is None else (0.0 if ins <= 0 else None if wav is None else wav / ins)
        _value(
            node,
            f"Wavefronts per shared {'load' if op == 'ld' else 'store'}",
            per_instruction,
            "",
            section="MemoryWorkloadAnalysis_Tables",
            ideal=1,
        )
        _metric(
            node,
            ctx,
            f"Bank conflicts ({'load' if op == 'ld' else 'store'})",
            f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum",
        )


def _occupancy(parent: Node, ctx: KernelContext) -> None:
    _metric(
        parent,
        ctx,
        "Theoretical occupancy",
        "sm__maximum_warps_per_active_cycle_pct",
        "%",
        key=KEY_OCCUPANCY_THEORETICAL,
    )
    _metric(
        parent,
        ctx,
        "Achieved occupancy",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "%",
        key=KEY_OCCUPANCY_ACHIEVED,
    )
    limiter, lim = occupancy_limiter(ctx)
    if limiter:
        ln = parent.add(
            Node(
                "Limiter: " + limiter,
                lim[limiter],
                "blocks/SM",
                "metric",
                attrs={"limits": lim},
                key=KEY_OCCUPANCY_LIMITER,
            )
        )
        for limit, blocks in sorted(lim.items(), key=lambda kv: kv[1]):
            ln.add(Node(limit, blocks, "blocks/SM", "metric"))
    else:
        parent.add(
            Node(
                "Limiter",
                None,
                "",
                "missing",
                attrs={"section": "Occupancy", "metric": "launch__occupancy_limit_*"},
                key=KEY_OCCUPANCY_LIMITER,
            )
        )
    _metric(parent, ctx, "Registers per thread", "launch__registers_per_thread")
    _metric(parent, ctx, "Waves per SM", "launch__waves_per_multiprocessor")


def _launch(parent: Node, ctx: KernelContext) -> None:
    kernel = ctx.kernel
    blocks = kernel.grid[0] * kernel.grid[1] * kernel.grid[2]
    _value(parent, "Grid", blocks or math.nan, "blocks", dims=list(kernel.grid))
    _value(
        parent,
        "Block",
        kernel.threads_per_block or math.nan,
        "threads",
        dims=list(kernel.block),
    )
    if kernel.sm_count:
        _value(parent, "SMs", kernel.sm_count, "")
    else:  # missing: the node names the section that collects the count
        _metric(parent, ctx, "SMs", "device__attribute_multiprocessor_count")
    if blocks and kernel.sm_count:
        _value(parent, "Blocks per SM", blocks / kernel.sm_count, "")
    _metric(parent, ctx, "Duration", "gpu__time_duration.sum", "ns")


SUBTREES = {
    "memory_latency": _memory_latency,
    "memory_efficiency": _memory_efficiency,
    "synchronization": _synchronization,
    "instruction_mix": _instruction_mix,
    "pipes": _pipes,
    "shared_memory": _shared_memory,
    "occupancy": _occupancy,
    "launch": _launch,
}
