#!/usr/bin/env python3
"""Check drgpu's metric sets (metric_sets/*.yaml) against ncu's metric catalogues.

For every chip with a catalogue (metric_sets/catalogues/metrics_CHIP.txt.xz, the output of
ncu 2025.3.1 `--query-metrics --chips CHIP`), the chip's effective set (base + overlay) is
checked metric by metric: the base name must exist on the chip and the suffix must suit its
type (counter: rollup [+ sub-metric]; ratio: .pct/.ratio/.max_rate; throughput: rollup +
.pct_of_peak_sustained_*). The base set must pass on every chip (it is what drgpu uses on an
unknown GPU). Sections must be ncu sections (scripts/device/facts/list_sets.txt, the
sections of `--set full`). Metrics a set says its sections provide (launch attributes,
per-instruction source counters, PC sampling) are not hardware catalogue entries; they are
looked up in a real `--set full` report when ncu_report is installed.

Usage: scripts/check_metric_sets.py [--output FILE]   (exit 1 when anything fails)
The committed result is metric_sets/check_output.txt.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drgpu_py.specs import metric_sets as msets  # noqa: E402

SAMPLE_REPORT = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"  # gh100, --set full


def ncu_sections() -> set[str]:
    text = (ROOT / "scripts" / "device" / "facts" / "list_sets.txt").read_text()
    rows = text.splitlines()
    start = next(i for i, ln in enumerate(rows) if ln.startswith("full "))
    chunk = [rows[start][11:86]]
    for ln in rows[start + 1 :]:
        if ln[:11].strip():
            break
        chunk.append(ln[11:86])
    return {s.strip() for s in "".join(c.rstrip() if not c.endswith(" ") else c for c in chunk).split(",") if s.strip()}


def report_names() -> set[str] | None:
    try:
        import ncu_report  # type: ignore
    except ImportError:
        return None
    ctx = ncu_report.load_report(str(SAMPLE_REPORT))
    return set(ctx.range_by_idx(0).action_by_idx(0).metric_names())


def provided(name: str, names: set[str]) -> bool:
    if "*" in name:
        rx = re.compile("^" + ".*".join(re.escape(p) for p in name.split("*")) + "$")
        return any(rx.match(n) for n in names)
    return name in names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", type=Path, help="also write the report to this file")
    args = ap.parse_args()
    out: list[str] = []
    failures = 0
    chips = sorted(
        p.name[len("metrics_") : -len(".txt.xz")]
        for p in (msets.metric_sets_dir() / "catalogues").glob("metrics_*.txt.xz")
    )
    out.append("drgpu metric sets checked against ncu 2025.3.1 metric catalogues")
    out.append(f"sets: {', '.join(msets.available_sets())}; catalogues: {', '.join(chips)}")
    sections = ncu_sections()
    base = msets.load_metric_set("base")
    used: list[str] = []
    for name in msets.available_sets():
        ms = msets.load_metric_set(name)
        for g, spec in ms.groups.items():
            for s in spec.sections:
                used += [] if s in used else [s]
                if s not in sections:
                    failures += 1
                    out.append(f"FAIL {name}: group {g}: {s} is not an ncu section")
    out.append(
        f"sections used: {', '.join(used)} (all among the {len(sections)} sections of ncu's set full)"
        if all(s in sections for s in used)
        else ""
    )
    out.append("")
    for chip in chips:
        cat = msets.load_catalogue(chip)
        for ms in ([msets.load_metric_set(chip)] if chip in msets.available_sets() else []) + [base]:
            total = sum(len(g.metrics) for g in ms.groups.values())
            default = sum(len(g.metrics) for g in ms.groups.values() if not g.optional)
            probs = msets.check_metric_set(ms, cat)
            kinds: dict[str, int] = {}
            for g in ms.groups.values():
                for m in g.metrics:
                    k = cat.get(m.split(".")[0], "missing")
                    kinds[k] = kinds.get(k, 0) + 1
            status = "ok" if not probs else "FAIL"
            label = "effective set" if ms.name == chip else "portable base"
            out.append(
                f"{status:4} {chip:6} {label:13} ({ms.name}): {total} explicit metrics "
                f"({default} by default, {total - default} optional; "
                + ", ".join(f"{v} {k.lower()}" for k, v in sorted(kinds.items()))
                + ")"
            )
            for g, m, p in probs:
                failures += 1
                out.append(f"     {g}: {m}: {p}")
    names = report_names()
    out.append("")
    if names is None:
        out.append("skip provided-by-section names: ncu_report is not installed")
    else:
        for name in ["base"]:
            ms = msets.load_metric_set(name)
            for spec in ms.groups.values():
                for m in spec.provides:
                    ok = provided(m, names)
                    failures += 0 if ok else 1
                    out.append(
                        f"{'ok' if ok else 'FAIL':4} provided by {'+'.join(spec.sections)}: {m}"
                        + ("" if ok else " (absent from a --set full gh100 report)")
                    )
    out.append("")
    out.append("result: " + ("all metric sets valid" if not failures else f"{failures} problem(s)"))
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.output:
        args.output.write_text(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
