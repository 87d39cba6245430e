"""Readers: one per input format, all returning a :class:`~drgpu_py.model.Profile`.

``open_report(path)`` tells formats apart by content, not by name: an ``.ncu-rep`` starts
with ncu's ``NVR`` magic; a CSV is recognised by its header (raw page, source page, or the
details page, which is refused with a hint). For a raw-page CSV ``X.raw.csv`` the per-
instruction export ``X.source.csv`` beside it is picked up automatically.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError, NoKernelsError, ReportFormatError, UsageError
from ..model import Profile
from .common import sniff

__all__ = ["open_report", "select_kernels", "sniff"]


def open_report(path: str | Path, *, source_csv: str | Path | None = None,
                line_report: str | Path | None = None, progress=None) -> Profile:
    """Read a report. ``source_csv``: the per-instruction CSV for a raw CSV (else looked
    for beside it). ``line_report``: an ``.ncu-rep`` whose line table annotates a CSV."""
    p = Path(path)
    kind = sniff(p)
    if kind == "ncu-rep":
        if source_csv is not None:
            raise UsageError("--source-csv applies to CSV input, not to an .ncu-rep")
        from .ncu_rep import read_ncu_rep
        return read_ncu_rep(p, progress=progress)
    if kind == "csv-raw":
        from .ncu_csv import read_ncu_csv
        return read_ncu_csv(p, source_csv=source_csv, line_report=line_report)
    if kind == "csv-source":
        raise ReportFormatError(
            f"{p} is a source-page CSV export (per-instruction data only)",
            hint="pass the raw-page export (ncu -i R --csv --page raw --print-units base) and give this file with --source-csv")
    if kind == "csv-details":
        raise ReportFormatError(
            f"{p} is a details-page CSV export, which lacks the raw metrics drgpu needs",
            hint="export with: ncu -i REPORT --csv --page raw --print-units base")
    raise ReportFormatError(f"{p} is neither an Nsight Compute report (.ncu-rep) nor an ncu CSV export")


def select_kernels(profile: Profile, selector: str | None) -> Profile:
    """Keep the launches matching ``selector``: an integer (launch id), ``a:b`` (id range),
    or a regular expression searched in the demangled and mangled names."""
    if not selector:
        if not profile.kernels:
            raise NoKernelsError(f"{profile.path} holds no kernel launch")
        return profile
    ks = profile.kernels
    if re.fullmatch(r"\d+", selector):
        picked = [k for k in ks if k.id == int(selector)]
    elif re.fullmatch(r"\d*:\d*", selector):
        lo, hi = selector.split(":")
        picked = [k for k in ks if (not lo or k.id >= int(lo)) and (not hi or k.id < int(hi))]
    else:
        try:
            rx = re.compile(selector)
        except re.error as e:
            raise UsageError(f"--kernel {selector!r} is not a valid regular expression: {e}") from e
        picked = [k for k in ks if rx.search(k.name) or (k.mangled and rx.search(k.mangled))]
    if not picked:
        names = ", ".join(sorted({k.name.split("(")[0] for k in ks})[:10]) or "none"
        raise NoKernelsError(f"--kernel {selector!r} matched no kernel", hint=f"kernels in the report: {names}")
    return Profile(path=profile.path, format=profile.format, kernels=picked, notes=profile.notes)


def _check_readable(p: Path) -> None:
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p} is a directory, not a report")
