"""Many-kernel analysis against the read floor, and its scaling with ``-j`` workers.

For one report (default: composed by benchmarks/compose_report.py), as child processes:

* ``benchmarks/floor.py rep REPORT``: the read floor (same metrics and per-PC samples through
  ncu_report, nothing else);
* ``drgpu analyze REPORT -f json -q -j J`` for each J of ``--jobs`` (and, with
  ``--per-launch``, the same with every launch analyzed on its own).

Each row: best wall time of ``--repeat`` runs, launches per second, the ratio to the floor,
the speed-up over ``-j 1``, the peak RSS of the child (``os.wait4``: the largest process of
the run; workers are separate processes, each below it) and whether the JSON is
byte-identical to ``-j 1``'s. Output: ``jobs.json`` and ``jobs.md`` in ``--out``.

Usage: python benchmarks/bench_jobs.py [--report R] [--jobs 1,2,4,8,16] [--repeat 1]
       [--per-launch] [--budget SECONDS] --out DIR
``--budget``: skip the remaining runs (noted in the table) once this many seconds passed.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_analyze import count_launches, drgpu_argv, machine, run_child  # noqa: E402
from compose_report import compose  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", type=Path)
    ap.add_argument("--jobs", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=6, help="rounds of the composed report (compose_report.py --repeat)")
    ap.add_argument("--per-launch", action="store_true")
    ap.add_argument("--budget", type=float, default=float("inf"))
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    t_start = time.perf_counter()
    a.out.mkdir(parents=True, exist_ok=True)
    report = a.report or compose(a.out / "composed.ncu-rep", a.rounds)
    launches = count_launches(report)
    size_mb = report.stat().st_size / 1e6
    scratch = Path(tempfile.mkdtemp(prefix="drgpu-jobs-"))

    def best(argv_, stdout):
        runs = [run_child(argv_, stdout) for _ in range(a.repeat)]
        return min(r.seconds for r in runs), max(r.peak_kib for r in runs) / 1024, max(r.rc for r in runs)

    floor_s, floor_mib, _ = best([sys.executable, str(HERE / "floor.py"), "rep", str(report)], scratch / "floor.out")
    write = _writer(a, report, launches, size_mb, floor_s, floor_mib)
    rows = []
    for mode in ["grouped", "per-launch"] if a.per_launch else ["grouped"]:
        ref = None
        one = None
        for j in [int(x) for x in a.jobs.split(",")]:
            if time.perf_counter() - t_start > a.budget:
                rows.append({"mode": mode, "jobs": j, "skipped": "budget"})
                continue
            out = a.out / f"{mode}_j{j}.json"
            argv_ = [
                *drgpu_argv(),
                "analyze",
                str(report),
                "-f",
                "json",
                "-q",
                "-j",
                str(j),
                *(["--per-launch"] if mode == "per-launch" else []),
            ]
            s, mib, rc = best(argv_, out)
            ref = ref or out
            one = one or s
            rows.append(
                {
                    "mode": mode,
                    "jobs": j,
                    "seconds": round(s, 2),
                    "launches_per_s": round(launches / s, 1),
                    "ratio_to_floor": round(s / floor_s, 2),
                    "speedup_vs_j1": round(one / s, 2),
                    "peak_mib": round(mib),
                    "rc": rc,
                    "json_identical_to_j1": filecmp.cmp(ref, out, shallow=False),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
            write(rows, done=False)
    write(rows, done=True)
    return 0


def _writer(a, report, launches, size_mb, floor_s, floor_mib):
    """write(rows, done): jobs.json and jobs.md, after every row (a run cut short keeps them)."""

    def write(rows, done):
        doc = {
            "machine": machine(),
            "report": str(report),
            "launches": launches,
            "report_mb": round(size_mb, 1),
            "floor_s": round(floor_s, 2),
            "floor_peak_mib": round(floor_mib),
            "repeat": a.repeat,
            "complete": done,
            "rows": rows,
        }
        (a.out / "jobs.json").write_text(json.dumps(doc, indent=1))
        lines = [
            f"Machine: {doc['machine']}.",
            f"Report: {report.name} ({launches} launches, {doc['report_mb']} MB); read floor {doc['floor_s']} s "
            f"(peak {doc['floor_peak_mib']} MiB); best of {a.repeat} run(s) per cell.",
            "",
            "| mode | -j | drgpu s | launches/s | drgpu / floor | speed-up vs -j 1 | peak MiB | JSON = -j 1 |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in rows:
            if "skipped" in r:
                lines.append(f"| {r['mode']} | {r['jobs']} | skipped ({r['skipped']}) | | | | | |")
            else:
                lines.append(
                    f"| {r['mode']} | {r['jobs']} | {r['seconds']} | {r['launches_per_s']} | {r['ratio_to_floor']} | "
                    f"{r['speedup_vs_j1']} | {r['peak_mib']} | {'yes' if r['json_identical_to_j1'] else 'NO'} |"
                )
        if not done:
            lines.append("\n(incomplete: the run was still going)")
        (a.out / "jobs.md").write_text("\n".join(lines) + "\n")

    return write


if __name__ == "__main__":
    sys.exit(main())
