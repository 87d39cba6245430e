"""`drgpu profile` end to end against `ncu --set full --import-source yes`, side by side, on a GPU.

For each sample program (built into BUILD, run as `CASE bad 2`: three launches) and each
repeat: ncu's full set once, then `drgpu profile` from each source tree given with `--tree
LABEL=PATH` (PATH first on PYTHONPATH, so two checkouts compare on one machine in one run).
Each row: wall seconds of the whole command, CPU seconds (user+sys of the command and all
it started, from os.wait4), drgpu's ncu part (``ncu_wall_s`` of its run record) and what
drgpu adds to it, and the end-to-end ratio to the full set. Best wall of the repeats.

Usage: python benchmarks/bench_profile.py --build DIR --cases precise_math,aos_gather,fma_chain
       --tree before=/path/a --tree after=/path/b [--repeat 2] --out DIR
Writes OUT/profile_e2e.json and OUT/profile_e2e.md. ncu: $NCU, else ncu on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def timed(argv: list[str], log: Path, env: dict | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s of the process tree, exit code)."""
    with open(log, "w") as fh:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, required=True)
    ap.add_argument("--cases", default="precise_math,aos_gather,fma_chain")
    ap.add_argument("--tree", action="append", required=True, help="LABEL=PATH of a drgpu source tree")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    ncu = os.environ.get("NCU") or shutil.which("ncu") or "ncu"
    trees = [t.split("=", 1) for t in a.tree]
    rows: dict[tuple[str, str], list[dict]] = {}
    for rep in range(a.repeat):
        for case in a.cases.split(","):
            app = [str((a.build / case).resolve()), "bad", "2"]
            base = a.out / f"{case}_full"
            wall, cpu, rc = timed(
                [ncu, "--set", "full", "--import-source", "yes", "-f", "-o", str(base), *app],
                a.out / f"{case}_full.log",
            )
            rows.setdefault((case, "ncu --set full"), []).append({"wall": wall, "cpu": cpu, "rc": rc})
            for label, path in trees:
                env = dict(
                    os.environ,
                    PYTHONPATH=os.pathsep.join([str(Path(path).resolve()), os.environ.get("PYTHONPATH", "")]),
                )
                folder = a.out / f"{case}_{label}"
                argv_ = [sys.executable, "-m", "drgpu_py", "profile", "-q", "--force", "-d", str(folder), "--", *app]
                wall, cpu, rc = timed(argv_, a.out / f"{case}_{label}.log", env)
                rec = (
                    json.loads((folder / f"{case}.profile.json").read_text())
                    if (folder / f"{case}.profile.json").exists()
                    else {}
                )
                rows.setdefault((case, label), []).append(
                    {"wall": wall, "cpu": cpu, "rc": rc, "ncu_wall": rec.get("ncu_wall_s")}
                )
            print(f"repeat {rep + 1} {case} done", flush=True)
    table = []
    for (case, label), runs in rows.items():
        best = min(runs, key=lambda r: r["wall"])
        full = min(r["wall"] for r in rows[(case, "ncu --set full")])
        table.append(
            {
                "case": case,
                "run": label,
                "wall_s": round(best["wall"], 2),
                "cpu_s": round(best["cpu"], 2),
                "ncu_part_s": round(best["ncu_wall"], 2) if best.get("ncu_wall") else None,
                "drgpu_own_s": round(best["wall"] - best["ncu_wall"], 2) if best.get("ncu_wall") else None,
                "ratio_to_full": round(best["wall"] / full, 2),
                "rc": max(r["rc"] for r in runs),
                "walls": [round(r["wall"], 2) for r in runs],
            }
        )
    (a.out / "profile_e2e.json").write_text(json.dumps(table, indent=1) + "\n")
    lines = [
        "| case | run | wall s (best) | CPU s | ncu part s | drgpu's own s | / full set | walls | rc |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in table:
        lines.append(
            f"| {r['case']} | {r['run']} | {r['wall_s']} | {r['cpu_s']} | {r['ncu_part_s'] or ''} | "
            f"{r['drgpu_own_s'] if r['drgpu_own_s'] is not None else ''} | {r['ratio_to_full']} | "
            f"{', '.join(map(str, r['walls']))} | {r['rc']} |"
        )
    (a.out / "profile_e2e.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
