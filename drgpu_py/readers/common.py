"""Helpers shared by the readers: format sniffing, number parsing, SASS text cleanup, and
assembling the per-instruction table (indexed by PC) from per-column PC->value maps."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from .. import data
from ..errors import InputError

NCU_MAGIC = b"NVR\x00"
_LABEL = re.compile(r"`\(\.L_x_\d+\)\s*")


def sniff(p: Path) -> str:
    """Return 'ncu-rep', 'csv-raw', 'csv-source', 'csv-details' or 'unknown'."""
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p} is a directory, not a report")
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except PermissionError as e:
        raise InputError(f"{p}: permission denied") from e
    except OSError as e:
        raise InputError(f"{p}: cannot read ({e.strerror})") from e
    if head.startswith(NCU_MAGIC):
        return "ncu-rep"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    first = text.split("\n", 1)[0]
    if first.startswith('"Kernel Name",') or first.startswith("Kernel Name,"):
        return "csv-source"
    if '"Section Name"' in first and '"Metric Name"' in first:
        return "csv-details"
    if first.startswith('"ID"') or first.startswith("ID,"):
        return "csv-raw"
    return "unknown"


def to_number(v) -> float:
    """ncu CSV numbers carry thousands separators; 'n/a' and '' are missing (NaN)."""
    if v is None:
        return math.nan
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip().replace(",", "")
    if not s or s.lower() in ("n/a", "nan", "-", "none"):
        return math.nan
    try:
        return float(s)
    except ValueError:
        return math.nan


def clean_sass(text: str) -> str:
    """Normalise a SASS line: drop label annotations (`(.L_x_3)) and collapse spaces."""
    return re.sub(r"\s+", " ", _LABEL.sub("", text or "")).strip()


def parse_dim(s: str) -> tuple[int, int, int]:
    nums = [int(float(x)) for x in re.findall(r"[\d.]+", s or "")]
    nums = (nums + [1, 1, 1])[:3] if nums else [0, 0, 0]
    return tuple(nums)  # type: ignore[return-value]


def instruction_frame(pcs: list[int], columns: dict[str, dict[int, float]], sass: dict[int, str],
                      lines: dict[int, tuple[str | None, int | None]], base: int | None) -> pd.DataFrame:
    """Build the per-instruction table. Every column is a PC->value map, so rows are joined
    by PC; PCs with no value get 0 for counters (not executed / not sampled)."""
    pcs = sorted(set(pcs))
    df = pd.DataFrame(index=pd.Index(pcs, name="pc", dtype="int64"))
    base = pcs[0] if base is None and pcs else base
    df["offset"] = [pc - base for pc in pcs] if pcs else []
    df["sass"] = [sass.get(pc, "") for pc in pcs]
    df["file"] = [lines.get(pc, (None, None))[0] for pc in pcs]
    df["line"] = pd.array([lines.get(pc, (None, None))[1] for pc in pcs], dtype="Int64")
    for name, values in columns.items():
        df[name] = [float(values.get(pc, 0.0)) for pc in pcs]
    for r in data.stall_reasons():
        if f"stall_{r}" not in df:
            df[f"stall_{r}"] = 0.0
    for col in ("inst_executed", "thread_inst_executed", "samples", "samples_not_issued"):
        if col not in df:
            df[col] = 0.0
    return df
