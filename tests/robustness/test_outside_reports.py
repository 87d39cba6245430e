"""Reports made by others (issue 48 item 6): public ``.ncu-rep`` files and ncu CSV exports from
other GPUs (Volta to consumer Blackwell), other ncu versions (2020.2 to 2026.2) and other sets,
listed in sample_reports/outside/manifest.yaml and fetched by scripts/fetch_outside.py into
sample_reports/outside/reports/ (not committed: each report stays in its own repository). A
report that is not there is skipped.

Checks on every report:
* it is analyzed without an internal error (exit 70); an ``.ncu-rep`` exits 0;
* no finding rests on an absent metric: of the metrics its catalogue entry names as evidence
  (specs/findings.yaml ``evidence``, often alternatives or context: one pipe among several,
  the SM count that a device attribute also gives) the first, the one the detector reads, is
  measured in the kernel's launches, and none that the finding's evidence shows is None;
* every estimate is within each limit the JSON states for it (``bounds[].limit``,
  ``evidence.mechanism_limit.value``);
* in a report of several kernels with durations, the kernel holding the most GPU time is
  named first: as the analysis' ``dominant`` ("Look first at"), or, holding at least
  ``dominant_share`` of the time, at the head of the priorities (when those are empty, no
  other kernel has a finding either);
* the largest reports (by size, the five first) take at most 3x their read floor plus 10 s
  (benchmarks/floor.py rep --sass), in CPU time: the wall time of a shared machine moves with
  the other jobs on it.

What fails today and is another item's work is a strict xfail with the reason (KNOWN): it
turns into a failure once fixed, so that the entry is removed with the fix.
"""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from drgpu_py.specs import loader as data
from tests.conftest import ROOT, run_cli

OUTSIDE = ROOT / "sample_reports" / "outside"
REPORTS = OUTSIDE / "reports"
MANIFEST = yaml.safe_load((OUTSIDE / "manifest.yaml").read_text(encoding="utf-8"))["reports"]

#: Relative slack on a limit: estimates and limits are both rounded in the JSON.
_TOLERANCE = 1e-3

#: (check, report id) -> why it fails today (the item whose work fixes it).
KNOWN: dict[tuple[str, str], str] = {}


def _path(entry: dict) -> Path:
    return REPORTS / f"{entry['id']}.{'ncu-rep' if entry['format'] == 'ncu-rep' else 'csv'}"


def _params(check: str) -> list:
    out = []
    for e in MANIFEST:
        why = KNOWN.get((check, e["id"]))
        # Slow: each report is read and analyzed (about 2 s each, 44 reports).
        marks = [pytest.mark.slow, *([pytest.mark.xfail(strict=True, reason=why)] if why else [])]
        out.append(pytest.param(e, id=e["id"], marks=marks))
    return out


def _present(entry: dict) -> Path:
    p = _path(entry)
    if not p.exists():
        pytest.skip(f"{p.name} not fetched (python scripts/fetch_outside.py)")
    return p


@functools.cache
def _run(path: Path) -> tuple[int, str, str]:
    r = run_cli("analyze", path, "-f", "json", "-q", timeout=600)
    return r.returncode, r.stdout, r.stderr


def _doc(entry: dict) -> dict:
    rc, out, err = _run(_present(entry))
    if rc != 0:
        pytest.skip(f"not analyzed (exit {rc}): {err.strip()[:200]}")
    return json.loads(out)


@functools.cache
def _launches(path: Path) -> dict[int, Any]:
    from drgpu_py.readers import open_report

    return {k.id: k for k in open_report(path).kernels}


@functools.cache
def _declared_evidence() -> dict[str, list[str]]:
    from drgpu_py.specs import loader as data

    return {f["id"]: list(f.get("evidence") or []) for f in data.findings_catalogue()["findings"]}


def _shown(evidence: dict, name: str) -> bool:
    """The finding's evidence holds a value for metric ``name`` (the reader may know it under
    another name, or from a device attribute)."""
    return evidence.get(name) is not None


def _nones(value: Any, where: str = "") -> list[str]:
    """Paths of the None values in an evidence dict (nested dicts and lists included)."""
    if value is None:
        return [where or "."]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _nones(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _nones(v, f"{where}[{i}]")]
    return []


class _Launch:
    """A launch that measured only ``metrics`` (for the checks' own test)."""

    def __init__(self, **metrics: float) -> None:
        self.metrics = metrics

    def m(self, name: str) -> float | None:
        return self.metrics.get(name)


@pytest.mark.parametrize(
    ("launch", "evidence", "fails"),
    [
        (_Launch(**{"smsp__issue_active.avg.pct_of_peak_sustained_active": 9.0}), {}, True),
        (_Launch(**{"smsp__warps_eligible.avg.per_cycle_active": 0.1}), {}, False),
        (_Launch(), {"smsp__warps_eligible.avg.per_cycle_active": 0.1}, False),
        (
            _Launch(**{"smsp__warps_eligible.avg.per_cycle_active": 0.1}),
            {"smsp__issue_active.avg.pct_of_peak_sustained_active": None},
            True,
        ),
    ],
    ids=["primary-absent", "primary-measured", "primary-shown", "shown-as-none"],
)
def test_absent_metric_check_itself(launch, evidence, fails):
    """The check below on a low-ilp finding (issue 48: '0.00 warps ready' with
    smsp__warps_eligible not collected)."""
    doc = {"kernels": [{"id": 0, "launch_ids": [0], "findings": [{"id": "low-ilp", "evidence": evidence}]}]}
    assert bool(_absent_metric_findings(doc, {0: launch})) == fails


def _absent_metric_findings(doc: dict, launches: dict[int, Any]) -> list[str]:
    declared = _declared_evidence()
    wrong = []
    for k in doc["kernels"]:
        mine = [launches[i] for i in k["launch_ids"] if i in launches]
        for f in k["findings"]:
            names = declared.get(f["id"], [])
            evidence = f.get("evidence") or {}
            if names and all(x.m(names[0]) is None for x in mine) and not _shown(evidence, names[0]):
                wrong.append(f"{k['id']}:{f['id']}: {names[0]} not measured")
            shown_none = [m for m in names if m in evidence and _nones(evidence[m])]
            if shown_none:
                wrong.append(f"{k['id']}:{f['id']}: evidence {shown_none} not measured")
    return wrong


@pytest.mark.parametrize("entry", _params("exit"))
def test_no_internal_error(entry):
    rc, _, err = _run(_present(entry))
    assert rc != 70, err[-2000:]
    if entry["format"] == "ncu-rep":
        assert rc == 0, err[-2000:]


@pytest.mark.parametrize("entry", _params("absent"))
def test_no_finding_on_an_absent_metric(entry):
    doc = _doc(entry)
    wrong = _absent_metric_findings(doc, _launches(_path(entry)))
    assert not wrong, "\n".join(wrong)


def _limits(f: dict) -> list[tuple[str, float]]:
    out = [(b.get("kind", "bound"), b["limit"]) for b in f.get("bounds") or [] if b.get("limit") is not None]
    mech = (f.get("evidence") or {}).get("mechanism_limit")
    if isinstance(mech, dict) and mech.get("value") is not None:
        out.append(("mechanism_limit", mech["value"]))
    return out


@pytest.mark.parametrize("entry", _params("limits"))
def test_estimates_within_their_limits(entry):
    doc = _doc(entry)
    wrong = []
    for k in doc["kernels"]:
        for f in k["findings"]:
            est = f.get("estimated_speedup")
            if est is None or not math.isfinite(est):
                continue
            for kind, limit in _limits(f):
                if est > limit * (1 + _TOLERANCE):
                    wrong.append(f"{k['id']}:{f['id']} x{est} over its {kind} x{limit}")
    assert not wrong, "\n".join(wrong)


def _dominant(rows: list[dict]) -> dict | None:
    """The summary row holding the most GPU time, when durations are measured and there are
    several kernels."""
    timed = [r for r in rows if r.get("total_ns")]
    if len(rows) < 2 or len(timed) < 2:
        return None
    return max(timed, key=lambda r: r["total_ns"])


@pytest.mark.parametrize("entry", _params("dominant"))
def test_dominant_kernel_named_first(entry):
    doc = _doc(entry)
    top = _dominant(doc["summary"])
    if top is None:
        pytest.skip("one kernel, or no durations")
    named = doc.get("dominant")
    if named is not None:
        # Named first ("Look first at"), with why and what to collect.
        assert named["kernel_id"] == top["kernel_id"], (named["name"], top["name"])
        return
    if top["time_share"] < data.thresholds()["dominant_share"]:
        return  # not most of the time: the priorities follow the time each finding saves
    first = doc["priorities"][0] if doc["priorities"] else None
    if first is None:
        others = [r["name"] for r in doc["summary"] if r["findings"]]
        assert not others, f"no priorities, but findings on {others}"
        return
    assert first["kernel_id"] == top["kernel_id"], (
        f"{top['name']} holds {100 * top['time_share']:.1f}% of the time; "
        f"first priority: {first['name']} ({first['id']}, {first['severity']})"
    )


def _largest(n: int) -> list:
    reps = sorted((e for e in MANIFEST if e["format"] == "ncu-rep"), key=lambda e: -e["size"])[:n]
    return [pytest.param(e, id=e["id"], marks=[pytest.mark.slow]) for e in reps]


def _cpu_seconds(*cmd: str) -> float:
    """User + system time of a child process and what it waited for (``os.wait4``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, cmd
    return usage.ru_utime + usage.ru_stime


@pytest.mark.parametrize("entry", _largest(5))
def test_within_three_read_floors_plus_ten_seconds(entry):
    path = str(_present(entry))
    floor = _cpu_seconds(sys.executable, str(ROOT / "benchmarks" / "floor.py"), "rep", path, "--sass")
    took = _cpu_seconds(sys.executable, "-m", "drgpu_py", "analyze", path, "-f", "json", "-q")
    assert took <= 3 * floor + 10, f"analysis {took:.1f} s of CPU, read floor {floor:.1f} s"
