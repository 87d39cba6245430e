#!/usr/bin/env python3
"""Replay passes of drgpu's default metric set (gh100) with and without each part of its
roofline group and the optional tensor_ops group, measured with the real ncu on one kernel (the passes ncu prints per kernel).

Usage: roofline_passes.py OUTDIR APP [ARGS...]   (drgpu importable; ncu on PATH)
Writes OUTDIR/roofline_passes.json: {variant: passes}.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

from drgpu_py.specs import metric_sets as msets

out, app = Path(sys.argv[1]), sys.argv[2:]
out.mkdir(parents=True, exist_ok=True)
ms = msets.load_metric_set("gh100")
default, sections = [], []
for g in ms.groups.values():
    if not g.optional:
        default += list(g.metrics)
        sections += [s for s in g.sections if s not in sections]
roof = list(ms.groups["roofline"].metrics)
tensor_ops = list(ms.groups["tensor_ops"].metrics)
base_metrics = [m for m in default if m not in roof]
parts = {
    "tensor_pipe": [m for m in roof if m.startswith("sm__pipe_tensor")],
    "l1_wavefronts": [m for m in roof if m.startswith("l1tex__data_pipe")],
    "sass_flops": [m for m in roof if m.startswith("smsp__sass_thread_inst")],
    "peaks_clocks": [m for m in roof if "peak_sustained" in m or "per_second" in m],
    "dram_bytes": ["dram__bytes.sum"],
    "tensor_ops (optional group)": tensor_ops,
}
variants = {"default_without_roofline": [], "default": roof, "default_with_tensor_ops": roof + tensor_ops}
variants.update({f"only_{k}": v for k, v in parts.items()})
result = {}
for name, extra in variants.items():
    argv = (
        ["ncu"]
        + [a for s in sections for a in ("--section", s)]
        + ["--metrics", ",".join(base_metrics + extra), "-c", "1", "-f", "-o", str(out / name)]
        + app
    )
    p = subprocess.run(argv, capture_output=True, text=True)
    m = re.findall(r"(\d+) pass", p.stdout + p.stderr)
    result[name] = int(m[-1]) if m else None
    print(name, result[name], flush=True)
(out / "roofline_passes.json").write_text(json.dumps({"variants": result, "parts": parts}, indent=1))
