#!/usr/bin/env python3
"""drgpu's findings on drgpu profile's default metric set against ncu's ``--set full`` (issue 33).

Every sample variant has two reports of the same program and launch, both profiled on one GPU
(an H100 80GB HBM3 for the samples and the first held-out round, an H200 for the third and
fourth) with ncu 2025.3.1: ``sample_reports/CASE/CASE_VARIANT.ncu-rep(.xz)`` (``--set full``,
sample_reports/build_and_profile.sh) and ``CASE_VARIANT_default.ncu-rep.xz`` (the metric set
``drgpu profile`` passes, sample_reports/default_set_device.sh). For each sample of
sample_reports/manifest.yaml (``cases``, bad and fixed; ``near_misses``, bad) and
sample_reports/heldout*.yaml (every round; bad and fixed) that has both reports, this analyzes both with
drgpu's library API and compares the top finding (the first, or none), the set of finding ids,
each common finding's ``estimated_speedup`` (default / full, within 10% counts as the same),
the speed-of-light grade and the useful-work grade.

Usage: python benchmarks/default_set_parity.py [--write]
  prints a Markdown table and a summary; --write also puts them into benchmarks/RESULTS.md under
  the heading below (replacing that section if present, keeping the rest of the file).

tests/samples/test_default_set_parity.py imports ``samples`` and ``compare`` from here.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import lzma
import math
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_reports"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
HEADING = "## Default metric set vs --set full (issue 33)"
WITHIN = 0.10  # estimates within 10% of each other count as the same

#: The checks (``top``: first finding, ``findings``: finding ids, ``estimates``: within WITHIN,
#: ``grades``: speed-of-light and useful-work) that differ on the committed reports, with the
#: cause found (tests/samples/test_default_set_parity.py expects exactly these to fail). None
#: is a metric the default set lacks: every one comes from run-to-run differences of two
#: profiles of the same launch at a threshold or in a model that amplifies them.
KNOWN: dict[tuple[str, str], str] = {
    ("tri_scan_fixed", "top"): (
        "memory-latency (1.41x) fires on the default-set report only: its gate is the long-scoreboard "
        "share of the PC samples, 40% (latency_load_share), and the runs sample 39.4% (full) and 40.4% "
        "(default); the metrics it reads agree (DRAM 41.1%, L2 45.8-45.9% of peak in both)"
    ),
    ("tri_scan_fixed", "findings"): "memory-latency on the default set only (see top: PC sampling at the 40% gate)",
    ("local_hist_bad", "estimates"): (
        "local-memory 4.25x (full) vs 4.71x (default): the traffic model 1 / (1 - 0.914 x L2 % / 90) with "
        "L2 throughput 75.3% vs 77.5% of peak; the default-set run was 2.9% faster (217.5 vs 223.9 us), "
        "which the model amplifies about 3.3x this close to saturation"
    ),
    ("fence_loop_fixed", "grades"): (
        "useful-work grade good (full) vs okay (default): DRAM at 61.3% vs 59.4% of peak, either side of "
        "the 60% grade_good threshold (kernel 23.9 vs 24.7 us)"
    ),
    ("global_atomics_fixed", "grades"): (
        "speed-of-light and useful-work grades okay (full) vs good (default): DRAM at 59.9% vs 60.7% of "
        "peak, either side of the 60% grade_good threshold (kernel 8.7 vs 8.5 us)"
    ),
    ("ho3_conv2d_direct_bad", "findings"): (
        "barrier-imbalance (medium, 1.08x) on the full-set report only: its gate is the share of stall "
        "samples at barriers after thread-dependent work, 10% (barrier_share), and the runs sample 10.2% "
        "(full) and just under it (default); the top finding, low-data-reuse, agrees (2.62x both)"
    ),
    ("ho3_csr_rowptr_gather_fixed", "findings"): (
        "store-drain (low, 1.05x) on the default-set report only: the stores' drain at exit samples 10.1% "
        "there, at the 10% gate (drain_share), and just under it in the full-set run"
    ),
    ("ho3_csr_rowptr_gather_fixed", "top"): (
        "both reports' first finding is a low one of 1.05x: lsu-throttle (1.053x full, 1.052x default) "
        "and, on the default set only, store-drain at the 10% gate (1.052x) ranked first by a difference "
        "in the fourth digit"
    ),
    ("ho3_elim4x4_fixed", "grades"): (
        "speed-of-light grade good (full) vs excellent (default): issue slots at 73.7% vs 75.3% of peak, "
        "either side of the 75% grade_excellent threshold (kernel 95.7 vs 96.3 us)"
    ),
    ("ho3_regcap_spill_fixed", "grades"): (
        "speed-of-light grade excellent (full) vs good (default): L2 at 77.9% vs 70.8% of peak, the "
        "default-set run 10% slower (1,882 vs 2,073 us) with the same traffic"
    ),
    ("ho3_scalar_update_fixed", "findings"): (
        "warp-divergence (low, 1.01x) on the full-set report only: 1.027x over the time warps run is "
        "1.011x of the 3.6 us kernel once its launch floor (2.2 us) is taken out, at the 1.01x "
        "reporting threshold (min_speedup), and the default-set run's figure falls just under it; "
        "grid-too-small is first on both (1.68x, 1.65x)"
    ),
    ("ho3_scalar_update_bad", "findings"): (
        "slow-math (low, 1.00x: no gain) on the full-set report only: the group of 64 one-block launches "
        "samples 16.0% on its precise-math line (18 instructions per MUFU) on the full set, above the 15% "
        "gate (slow_math_share), and less on the default set; serial-kernel is first on both (59.0x, 53.2x)"
    ),
}


@dataclass(frozen=True)
class Sample:
    case: str
    variant: str  # "bad" | "fixed"
    kernel: str  # the kernel's name as the manifest gives it
    group: str  # "pair" | "near miss" | "held-out N" (N: the round, heldoutN.yaml)

    @property
    def name(self) -> str:
        return f"{self.case}_{self.variant}"

    def full_path(self) -> Path:
        """The ``--set full`` report: the unpacked copy if present and current, else the .xz."""
        rep = SAMPLES / self.case / f"{self.name}.ncu-rep"
        xz = rep.with_name(rep.name + ".xz")
        if rep.exists() and (not xz.exists() or rep.stat().st_mtime >= xz.stat().st_mtime):
            return rep
        return xz

    def default_path(self) -> Path:
        return SAMPLES / self.case / f"{self.name}_default.ncu-rep.xz"


def samples() -> list[Sample]:
    """Every sample variant with both a full-set and a default-set report."""
    manifest = yaml.safe_load((SAMPLES / "manifest.yaml").read_text())
    tables = [(manifest["cases"], "pair")]
    for path in sorted(SAMPLES.glob("heldout*.yaml")):
        rounds = path.stem.removeprefix("heldout") or "1"
        tables.append((yaml.safe_load(path.read_text()).get("held_out") or {}, f"held-out {rounds}"))
    out = []
    for table, group in tables:
        for case in sorted(table):
            for variant in ("bad", "fixed"):
                out.append(Sample(case, variant, table[case]["kernels"][variant], group))
    for case, spec in sorted((manifest.get("near_misses") or {}).items()):
        out.append(Sample(case, "bad", spec["kernel"], "near miss"))
    return [s for s in out if s.default_path().exists() and s.full_path().exists()]


def readable(path: Path, tmp: Path) -> Path:
    """PATH itself, or for a .xz its decompressed copy in TMP."""
    if path.suffix != ".xz":
        return path
    out = tmp / path.stem
    with lzma.open(path) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return out


def kernel_analysis(analysis, kernel: str):
    """The analysis of the launch of KERNEL (the reports hold one launch each; by name anyway)."""
    for ka in analysis.kernels:
        k = ka.kernel
        if kernel in (k.name or "") or kernel in (k.mangled or ""):
            return ka
    return analysis.kernels[0]


def analyze_path(path: Path, kernel: str):
    from drgpu_py.analysis import analyze
    from drgpu_py.analysis.groups import group_profile
    from drgpu_py.readers import open_report

    with tempfile.TemporaryDirectory(prefix="drgpu-parity-") as tmp:
        # Launches of one kernel grouped, as drgpu analyze does (and the test suite).
        return kernel_analysis(analyze(group_profile(open_report(readable(path, Path(tmp))))), kernel)


@dataclass
class Comparison:
    top: tuple[str, str]  # (full, default): the first finding's id, or "-"
    only_full: list[str]
    only_default: list[str]
    estimates: dict[str, tuple[float, float]]  # common finding -> (full, default) estimated_speedup
    sol_grade: tuple[str | None, str | None]
    useful_grade: tuple[str | None, str | None]
    off: list[str] = field(default_factory=list)  # common findings whose estimates differ by more than WITHIN
    missing: list[str] = field(default_factory=list)  # metrics the analysis reads: in full, not in default
    extra: list[str] = field(default_factory=list)  # metrics the analysis reads: in default, not in full

    @property
    def same_top(self) -> bool:
        return self.top[0] == self.top[1]

    def failed(self) -> set[str]:
        """The checks of KNOWN's kinds that differ."""
        out = set()
        if not self.same_top:
            out.add("top")
        if self.only_full or self.only_default:
            out.add("findings")
        if self.off:
            out.add("estimates")
        if self.sol_grade[0] != self.sol_grade[1] or self.useful_grade[0] != self.useful_grade[1]:
            out.add("grades")
        return out

    def ratio(self, fid: str) -> float:
        full, default = self.estimates[fid]
        return default / full if full else math.nan


def _first_by_id(findings) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in findings:
        out.setdefault(f.id, f)
    return out


def compare(full, default) -> Comparison:
    """Compare two KernelAnalysis of the same launch (``--set full`` and the default set)."""
    a, b = _first_by_id(full.findings), _first_by_id(default.findings)
    estimates = {fid: (a[fid].estimated_speedup, b[fid].estimated_speedup) for fid in a if fid in b}
    c = Comparison(
        top=(full.findings[0].id if full.findings else "-", default.findings[0].id if default.findings else "-"),
        only_full=[fid for fid in a if fid not in b],
        only_default=[fid for fid in b if fid not in a],
        estimates=estimates,
        sol_grade=(full.sol.grade if full.sol else None, default.sol.grade if default.sol else None),
        useful_grade=(full.useful.grade if full.useful else None, default.useful.grade if default.useful else None),
    )
    c.off = [fid for fid in estimates if not abs(c.ratio(fid) - 1) <= WITHIN]
    c.missing = [m for m in _read_metrics() if _has(full.kernel, m) and not _has(default.kernel, m)]
    c.extra = [m for m in _read_metrics() if _has(default.kernel, m) and not _has(full.kernel, m)]
    return c


@functools.cache
def _read_metrics() -> list[str]:
    """Every metric drgpu's analysis reads (each detector's, the speed of light's, the ledger's)."""
    from drgpu_py.analysis import coverage

    return sorted({m for ms in coverage.metric_needs().values() for m in ms})


def _has(kernel, metric: str) -> bool:
    return kernel.has(metric)


def _pair(p: tuple[Any, Any]) -> str:
    return str(p[0] or "-") if p[0] == p[1] else f"**{p[0] or '-'} / {p[1] or '-'}**"


def _ids(ids: list[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids) or ""


def table(rows: list[tuple[Sample, Comparison]]) -> list[str]:
    out = [
        "| sample | group | top finding (full / default) | only in full | only in default | "
        "estimates full → default (ratio) | SoL grade | useful-work grade |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s, c in rows:
        est = "; ".join(
            f"`{fid}` {full:.2f} → {default:.2f} ({c.ratio(fid):.2f}{' ⚠' if fid in c.off else ''})"
            for fid, (full, default) in c.estimates.items()
        )
        top = f"`{c.top[0]}`" if c.same_top else f"**`{c.top[0]}` / `{c.top[1]}`**"
        out.append(
            f"| {s.name} | {s.group} | {top} | {_ids(c.only_full)} | {_ids(c.only_default)} | {est} | "
            f"{_pair(c.sol_grade)} | {_pair(c.useful_grade)} |"
        )
    return out


def summary(rows: list[tuple[Sample, Comparison]]) -> list[str]:
    n = len(rows)
    same_top = sum(c.same_top for _, c in rows)
    common = sum(len(c.estimates) for _, c in rows)
    off = sum(len(c.off) for _, c in rows)
    worst = max(
        ((abs(c.ratio(fid) - 1), s.name, fid, c.ratio(fid)) for s, c in rows for fid in c.estimates),
        default=None,
    )
    only_full: dict[str, list[str]] = {}
    only_default: dict[str, list[str]] = {}
    for s, c in rows:
        for fid in c.only_full:
            only_full.setdefault(fid, []).append(s.name)
        for fid in c.only_default:
            only_default.setdefault(fid, []).append(s.name)
    groups = sorted({s.group for s, _ in rows}, key=lambda g: ({"pair": 0, "near miss": 1}.get(g, 2), g))
    lines = [
        f"- same top finding on **{same_top} of {n}** samples"
        + (f" (differs on {', '.join(s.name for s, c in rows if not c.same_top)})" if same_top < n else "")
        + "; by group: "
        + ", ".join(
            f"{g} {sum(c.same_top for s, c in rows if s.group == g)}/{sum(s.group == g for s, _ in rows)}"
            for g in groups
        ),
        f"- estimates within {WITHIN:.0%} on **{common - off} of {common}** common findings"
        + (
            f" (outside: {', '.join(f'{s.name} `{fid}` {c.ratio(fid):.2f}' for s, c in rows for fid in c.off)})"
            if off
            else ""
        )
        + (f"; largest difference {worst[1]} `{worst[2]}` ratio {worst[3]:.3f}" if worst else ""),
        f"- same speed-of-light grade on {sum(c.sol_grade[0] == c.sol_grade[1] for _, c in rows)} of {n}; "
        f"same useful-work grade on {sum(c.useful_grade[0] == c.useful_grade[1] for _, c in rows)} of {n}",
    ]
    missing = sorted({m for _, c in rows for m in c.missing})
    lines.append(
        "- metrics the analysis reads that a default-set report lacks where its full-set report has them: "
        + (", ".join(f"`{m}`" for m in missing) if missing else "none")
    )
    extra = sorted({m for _, c in rows for m in c.extra})
    if extra:
        lines.append(
            "- metrics the analysis reads that only the default-set reports have: " + ", ".join(f"`{m}`" for m in extra)
        )
    for label, table_ in (("only with --set full", only_full), ("only with the default set", only_default)):
        if table_:
            lines.append(
                f"- findings {label}: "
                + "; ".join(f"`{fid}` on {', '.join(names)}" for fid, names in sorted(table_.items()))
            )
        else:
            lines.append(f"- findings {label}: none")
    return lines


def run(progress: bool = True) -> list[tuple[Sample, Comparison]]:
    rows = []
    todo = samples()
    for i, s in enumerate(todo, 1):
        c = compare(analyze_path(s.full_path(), s.kernel), analyze_path(s.default_path(), s.kernel))
        rows.append((s, c))
        if progress:
            print(f"[{i}/{len(todo)}] {s.name}", file=sys.stderr)
    return rows


def section(rows: list[tuple[Sample, Comparison]], seconds: float) -> str:
    lines = [
        HEADING,
        "",
        "`python benchmarks/default_set_parity.py --write` (regenerates this section). Each sample variant",
        "has two reports of the same program and launch, both profiled on one GPU (an H100 80GB HBM3 for",
        "the samples and the first held-out round, an H200 for the third and fourth; driver 580.159.04)",
        "with ncu 2025.3.1: `--set full` (sample_reports/build_and_profile.sh) and the metric",
        "set `drgpu profile` passes for gh100 (sample_reports/default_set_device.sh, 3-4 s of wall time per",
        "variant, status in sample_reports/default_set_status.txt). Both analyzed with drgpu's library",
        "API: the first finding, the finding ids, each common finding's `estimated_speedup` (ratio",
        "default / full; ⚠ beyond 10%), the speed-of-light and useful-work grades (bold where they",
        f"differ). {len(rows)} samples: bad and fixed of every manifest pair and held-out pair (the",
        "second round has no twins from the GPU its full-set reports came from), near",
        f"misses' bad; analyzed in {seconds:.0f} s on the shared 2-core machine. The committed",
        "default-set reports are checked in CI by tests/samples/test_default_set_parity.py.",
        "",
        "Summary:",
        "",
        *summary(rows),
        "",
        "Causes of the differences (found by reading the detectors and both reports' values;",
        "`KNOWN` in the script, the expected failures of the test):",
        "",
        *(f"- {name} ({check}): {why}" for (name, check), why in KNOWN.items()),
        *(
            f"- {s.name} ({check}): **not explained yet**"
            for s, c in rows
            for check in sorted(c.failed())
            if (s.name, check) not in KNOWN
        ),
        "",
        *table(rows),
        "",
    ]
    return "\n".join(lines)


def write_section(text: str, path: Path = RESULTS) -> None:
    """Put TEXT in place of the HEADING section of PATH (to the next ``## `` heading), or append it."""
    old = path.read_text().splitlines(keepends=True)
    start = next((i for i, line in enumerate(old) if line.rstrip() == HEADING), None)
    if start is None:
        body = "".join(old).rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
        body = "".join(old[:start]) + text + ("\n" + "".join(old[end:]) if end < len(old) else "")
    path.write_text(body.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write the result into {RESULTS.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    with contextlib.suppress(ImportError):  # read in this process: one ncu_report start-up, not one per read
        import ncu_report  # noqa: F401
    t0 = time.perf_counter()
    rows = run()
    text = section(rows, time.perf_counter() - t0)
    print(text)
    if args.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
