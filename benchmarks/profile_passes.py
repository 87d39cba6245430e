"""Measure what `drgpu profile` costs against `ncu --set full --import-source yes`, on a GPU.

Modes (each writes JSON into OUT):
  matrix OUT APP [ARGS...]   replay passes and wall time of each metric group of the default
                             set alone, of the whole set, and of reference ncu sections/sets,
                             on the APP's first kernel launch (-c 1)
  candidates OUT APP [ARGS...]
                             the richest subset of the optional unit_throughput group that
                             keeps the default set within 12 passes (-> chosen_metrics.txt)
  bench OUT SAMPLES CASE...  per sample program SAMPLES/CASE (run as `CASE bad 2`: three
                             launches): ncu --set full vs drgpu profile, passes, wall times,
                             and whether drgpu's analysis of both reports agrees (top finding,
                             top-3 findings, tree shape); DRGPU_BENCH_ADD_METRICS, if set,
                             is passed to drgpu profile --add-metrics
  table OUT                  print the Markdown table of OUT/bench.json and OUT/matrix.json

It drives the real ncu ($NCU or ncu on PATH) and drgpu from this checkout (PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

DRGPU = [sys.executable, "-c", "import sys; from drgpu_py.cli import main; sys.argv[0] = 'drgpu'; main()"]


def ncu() -> str:
    from drgpu_py.ncu.run import find_ncu

    return find_ncu(None)


def passes_of(log: str) -> list[int]:
    from drgpu_py.ncu.console import OutputParser

    p = OutputParser()
    evs = p.feed(log) + p.close()
    return [e.passes for e in evs if e.kind == "kernel_done" and e.passes is not None]


def timed(argv: list[str], log: Path, timeout: int = 300) -> tuple[float, int]:
    t0 = time.monotonic()
    with open(log, "w") as fh:
        try:
            rc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return time.monotonic() - t0, rc


def matrix(out: Path, app: list[str]) -> None:
    from drgpu_py.specs.metric_sets import load_metric_set

    ms = load_metric_set("gh100")
    configs: dict[str, list[str]] = {}
    for g, spec in ms.groups.items():
        configs[f"group {g} alone"] = [
            *(a for s in spec.sections for a in ("--section", s)),
            *(["--metrics", ",".join(spec.metrics)] if spec.metrics else []),
        ]
    configs["drgpu default"] = ms.selection().ncu_args()
    configs["drgpu + stall_counters"] = ms.selection(["stall_counters"]).ncu_args()
    configs["drgpu + context"] = ms.selection(["context"]).ncu_args()
    configs["SourceCounters + WarpStateStats"] = ["--section", "SourceCounters", "--section", "WarpStateStats"]
    configs["SpeedOfLight"] = ["--section", "SpeedOfLight"]
    configs["set full"] = ["--set", "full"]
    rows = []
    for i, (name, args) in enumerate(configs.items()):
        log = out / f"matrix_{i:02d}.log"
        wall, rc = timed([ncu(), *args, "-c", "1", "-f", "-o", str(out / "matrix_tmp"), *app], log, timeout=120)
        text = log.read_text(errors="replace")
        rows.append(
            {
                "config": name,
                "passes": (passes_of(text) or [None])[0],
                "wall_s": round(wall, 2),
                "rc": rc,
                "errors": [ln for ln in text.splitlines() if ln.startswith(("==ERROR==", "==WARNING=="))][:5],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    (out / "matrix.json").write_text(json.dumps(rows, indent=1))
    for p in out.glob("matrix_tmp*"):
        p.unlink()


def candidates(out: Path, app: list[str], limit: int = 12) -> None:
    """Which of the costly unit throughputs fit in the pass budget on top of the default set:
    try every subset (richest first), keep the richest within ``limit`` passes."""
    from itertools import combinations
    from drgpu_py.specs.metric_sets import load_metric_set

    ms = load_metric_set("gh100")
    extra = list(ms.groups["unit_throughput"].metrics)
    base = ms.selection()
    rows = []
    for n in range(len(extra), -1, -1):
        for combo in combinations(extra, n):
            sel = ms.selection(add_metrics=combo)
            log = out / f"cand_{len(rows):02d}.log"
            wall, rc = timed(
                [ncu(), *sel.ncu_args(), "-c", "1", "-f", "-o", str(out / "cand_tmp"), *app], log, timeout=120
            )
            p = (passes_of(log.read_text(errors="replace")) or [None])[0]
            rows.append({"add_metrics": list(combo), "passes": p, "wall_s": round(wall, 2), "rc": rc})
            print(json.dumps(rows[-1]), flush=True)
    ok = [r for r in rows if r["passes"] is not None and r["passes"] <= limit]
    # richest first; among equals, prefer the SM (compute bound), then L1, then L2
    ok.sort(key=lambda r: (-len(r["add_metrics"]), [extra.index(m) for m in r["add_metrics"]]))
    chosen = ok[0] if ok else {"add_metrics": [], "passes": None}
    (out / "candidates.json").write_text(
        json.dumps({"base_metrics": len(base.metrics), "rows": rows, "chosen": chosen}, indent=1)
    )
    (out / "chosen_metrics.txt").write_text(",".join(chosen["add_metrics"]))
    for p in out.glob("cand_tmp*"):
        p.unlink()


def shape(tree: dict, depth: int = 0) -> list[tuple]:
    """The tree's structure: names and kinds of groups, reasons and sub-trees (values and
    source lines differ between runs and are left out)."""
    out = []
    if tree.get("kind") not in ("line", "suggestion"):
        out.append((depth, tree.get("name"), tree.get("kind")))
    for c in tree.get("children", []):
        out += shape(c, depth + 1)
    return out


def analysis_json(path: Path) -> dict:
    return json.loads(path.read_text())


def bench(out: Path, samples: Path, cases: list[str]) -> None:
    rows = []
    for case in cases:
        app = [str(samples / case), "bad", "2"]
        full_base = out / f"{case}_full"
        wall_full, rc_full = timed(
            [ncu(), "--set", "full", "--import-source", "yes", "-f", "-o", str(full_base), *app],
            out / f"{case}_full.ncu.log",
        )
        full_passes = passes_of((out / f"{case}_full.ncu.log").read_text(errors="replace"))
        dg = out / f"{case}_drgpu"
        add = os.environ.get("DRGPU_BENCH_ADD_METRICS", "")
        wall_dg, rc_dg = timed(
            [*DRGPU, "profile", "-d", str(dg), "--force", "-q", *(["--add-metrics", add] if add else []), "--", *app],
            out / f"{case}_drgpu.console.log",
        )
        rec = json.loads((dg / f"{case}.profile.json").read_text()) if (dg / f"{case}.profile.json").exists() else {}
        dg_passes = [k["passes"] for k in rec.get("kernels", [])]
        full_json = out / f"{case}_full.json"
        subprocess.run(
            [*DRGPU, "analyze", str(full_base) + ".ncu-rep", "-o", str(full_json), "--force"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        row = {
            "case": case,
            "passes_full": full_passes,
            "passes_drgpu": dg_passes,
            "wall_full_s": round(wall_full, 2),
            "wall_drgpu_total_s": round(wall_dg, 2),
            "wall_drgpu_ncu_s": rec.get("ncu_wall_s"),
            "rc_full": rc_full,
            "rc_drgpu": rc_dg,
            "missing_metrics": rec.get("missing_metrics"),
            "report_bytes_full": (full_base.with_suffix(".ncu-rep")).stat().st_size
            if full_base.with_suffix(".ncu-rep").exists()
            else None,
            "report_bytes_drgpu": (dg / f"{case}.ncu-rep").stat().st_size
            if (dg / f"{case}.ncu-rep").exists()
            else None,
        }
        try:
            a, b = analysis_json(full_json), analysis_json(dg / f"{case}.json")
            ka, kb = a["kernels"], b["kernels"]
            row["kernels"] = len(ka), len(kb)
            per = []
            for x, y in zip(ka, kb):
                fx, fy = [f["id"] for f in x["findings"]], [f["id"] for f in y["findings"]]
                sx, sy = shape(x["tree"]), shape(y["tree"])
                per.append(
                    {
                        "kernel": x["name"].split("(")[0],
                        "top_full": fx[:1],
                        "top_drgpu": fy[:1],
                        "top_equal": fx[:1] == fy[:1],
                        "top3_equal": fx[:3] == fy[:3],
                        "bound_full": x["bound"],
                        "bound_drgpu": y["bound"],
                        "tree_equal": sx == sy,
                        "missing_nodes_full": sum(1 for n in sx if n[2] == "missing"),
                        "missing_nodes_drgpu": sum(1 for n in sy if n[2] == "missing"),
                        "tree_diff": sorted(set(sx) ^ set(sy))[:8],
                    }
                )
            row["per_kernel"] = per
        except (OSError, KeyError, ValueError) as e:
            row["compare_error"] = str(e)
        rows.append(row)
        print(json.dumps(row), flush=True)
        (out / "bench.json").write_text(json.dumps(rows, indent=1))
        for p in (full_base.with_suffix(".ncu-rep"),):
            p.unlink(missing_ok=True)  # big; the drgpu report stays in its folder


def table(out: Path) -> None:
    rows = json.loads((out / "bench.json").read_text())
    print(
        "| case | launches | passes/launch full | passes/launch drgpu | wall full (s) | wall drgpu ncu (s) | ratio | wall drgpu total (s) | top finding full | top finding drgpu | top equal | top-3 equal | tree equal | missing nodes full/drgpu |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        pk = r.get("per_kernel", [])
        tops_f = ", ".join(sorted({(k["top_full"] or ["-"])[0] for k in pk}))
        tops_d = ", ".join(sorted({(k["top_drgpu"] or ["-"])[0] for k in pk}))
        ratio = (
            r["wall_drgpu_ncu_s"] / r["wall_full_s"] if r.get("wall_drgpu_ncu_s") and r["wall_full_s"] else float("nan")
        )
        pf = "/".join(str(p) for p in sorted(set(r["passes_full"]))) or "?"
        pd_ = "/".join(str(p) for p in sorted(set(r["passes_drgpu"]))) or "?"
        mn = f"{max((k['missing_nodes_full'] for k in pk), default=0)}/{max((k['missing_nodes_drgpu'] for k in pk), default=0)}"
        print(
            f"| {r['case']} | {len(r['passes_full'])} | {pf} | {pd_} | {r['wall_full_s']:.1f} | {r['wall_drgpu_ncu_s'] or float('nan'):.1f} | "
            f"{ratio:.2f} | {r['wall_drgpu_total_s']:.1f} | {tops_f} | {tops_d} | {all(k['top_equal'] for k in pk) and bool(pk)} | "
            f"{all(k['top3_equal'] for k in pk) and bool(pk)} | {all(k['tree_equal'] for k in pk) and bool(pk)} | {mn} |"
        )
    mp = out / "matrix.json"
    if mp.exists():
        print("\n| metrics collected (first launch of the app, -c 1) | passes | wall (s) |")
        print("|---|---|---|")
        for r in json.loads(mp.read_text()):
            print(f"| {r['config']} | {r['passes']} | {r['wall_s']:.1f} |")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    mode, out = argv[0], Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    if mode == "matrix":
        matrix(out, argv[2:])
    elif mode == "candidates":
        candidates(out, argv[2:])
    elif mode == "bench":
        bench(out, Path(argv[2]), argv[3:])
    elif mode == "table":
        table(out)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
