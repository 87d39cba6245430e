#!/usr/bin/env python3
"""Record what drgpu says of a public-corpus round (sample_reports/public/roundN/).

Contract: reads every report of the round (one per program: the hottest kernel's first launch,
drgpu profile's default set), analyzes it as `drgpu analyze` does with the code checked out,
and writes the frozen results into sample_reports/public/roundN.yaml under each program's
`at_freeze` (the freeze commit, the first three findings with their estimates, the top
finding's advice and lines). Entries already in the file (the measured fixes) are kept;
`at_freeze` is written only where it is absent, unless --refresh (a later commit's results go
to `now`, never over the frozen ones).

Usage: python scripts/public_round.py N [--refresh]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drgpu_py.analysis import analyze  # noqa: E402
from drgpu_py.analysis.groups import group_profile  # noqa: E402
from drgpu_py.readers import open_report  # noqa: E402


def _finding(f) -> dict:
    return {
        "id": f.id,
        "severity": f.severity,
        "estimated": None if f.estimated_speedup is None else round(float(f.estimated_speedup), 2),
        "alone": None if f.estimated_speedup_alone is None else round(float(f.estimated_speedup_alone), 2),
    }


def summarize(report: Path) -> dict:
    prof = group_profile(open_report(report))
    ka = analyze(prof).kernels[0]
    findings = list(ka.findings)  # in the order drgpu ranks them
    top = findings[0] if findings else None
    out: dict = {
        "kernel": ka.kernel.name,
        "duration_us": None if ka.kernel.duration_ns is None else round(ka.kernel.duration_ns / 1000, 2),
        "findings": [_finding(f) for f in findings[:3]],
    }
    if top is not None:
        out["advice"] = top.advice
        out["lines"] = [f"{loc.get('file')}:{loc.get('line')}" for loc in top.locations[:3] if loc.get("line")]
    return out


def main(round_no: int, refresh: bool) -> None:
    folder = ROOT / f"sample_reports/public/round{round_no}"
    record = ROOT / f"sample_reports/public/round{round_no}.yaml"
    data = yaml.safe_load(record.read_text()) if record.exists() else {}
    programs = data.setdefault("programs", {})
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    for report in sorted(folder.glob("*.ncu-rep.xz")):
        name = report.name.removesuffix(".ncu-rep.xz")
        entry = programs.setdefault(name, {})
        key = "now" if "at_freeze" in entry and not refresh else "at_freeze"
        entry[key] = {"commit": commit, **summarize(report)}
        print(name, entry[key]["findings"][:1])
    record.write_text(yaml.safe_dump(data, sort_keys=False, width=110, allow_unicode=True))


if __name__ == "__main__":
    main(int(sys.argv[1]), "--refresh" in sys.argv[2:])
