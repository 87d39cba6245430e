"""A raw-page CSV's companions: the source-page export (``X.source.csv``) and the report
(``X.ncu-rep``) beside ``X.raw.csv``, which the CSV reader picks up when they are not given.

Contract: ``sibling`` names a companion's path (it does not look at the disk);
``companion_paths`` lists every file a CSV input may pick up, so that callers can treat
those as inputs too (an output is never written over one); ``find_companions`` finds them
for a CSV read from a decompressed copy elsewhere, plain or compressed.
"""

from __future__ import annotations

from pathlib import Path

from .sniffing import SOURCE_PAGE, sniff

__all__ = ["COMPANION_SUFFIXES", "companion_paths", "find_companions", "sibling"]

#: The suffixes of a raw CSV's companions: its source-page export and its report.
COMPANION_SUFFIXES = (".source.csv", ".ncu-rep")


def sibling(path: Path, suffix: str) -> Path | None:
    """``X.raw.csv`` (or ``X.csv``) -> ``X`` + ``suffix`` beside it; None for another name."""
    name = path.name
    for ext in (".raw.csv", ".csv"):
        if name.endswith(ext):
            return path.with_name(name[: -len(ext)] + suffix)
    return None


def companion_paths(path: Path) -> list[Path]:
    """The companions a CSV at ``path`` would pick up beside itself (present or not); [] for
    a name that is no CSV's."""
    return [p for sfx in COMPANION_SUFFIXES if (p := sibling(Path(path), sfx)) is not None]


def find_companions(origin: Path, source_csv, line_report, readable, moved: bool):
    """A raw CSV's ``--source-csv`` and ``--line-report``, each given (and decompressed when
    compressed) or, when not given, the one beside ``origin`` (where the CSV is, under its
    name without a compression suffix), plain or compressed. ``moved``: the CSV is read
    from a decompressed copy elsewhere, so the reader cannot find companions itself."""
    if source_csv is not None:
        source_csv = readable(Path(source_csv))
    else:
        found = _beside(origin, ".source.csv", readable, moved)
        if found is not None and sniff(found) == SOURCE_PAGE:  # as the reader picks one up itself
            source_csv = found
    if line_report is not None:
        line_report = readable(Path(line_report))
    else:
        line_report = _beside(origin, ".ncu-rep", readable, moved)
    return source_csv, line_report


def _beside(origin: Path, suffix: str, readable, moved: bool) -> Path | None:
    """The companion with ``suffix`` beside ``origin``: a compressed one (decompressed by
    ``readable``), else, when the CSV is read from a copy elsewhere, a plain one."""
    from .compressed import compressed_twin

    cand = sibling(origin, suffix)
    if cand is None:
        return None
    twin = compressed_twin(cand)
    if twin is not None:
        return readable(twin)
    return cand if moved and cand.exists() else None
