"""drgpu's curated metric sets for ncu, and ncu's metric catalogues (data in the shipped
``metric_sets/`` folder, read-only at run time).

Contract:
- ``load_metric_set(name_or_path)`` returns a :class:`MetricSet` (``base.yaml`` plus one
  overlay per chip: ``inherits: base`` and list edits of its groups, which a mapping merge
  cannot express; files checked by :mod:`drgpu_py.specs.loader`); ``MetricSet.selection()``
  gives the ncu ``--section``/``--metrics`` arguments for the chosen groups;
  ``MetricSet.split(selection)`` divides one into the first, cheap run of a two-pass profile
  (the groups marked ``first_pass``) and the rest (``drgpu profile --passes 2``).
- ``load_catalogue(chip)`` reads ncu's ``--query-metrics`` listing for a chip;
  ``metric_problem`` and ``check_metric_set`` name metrics that chip's ncu cannot collect.

Nothing here runs ncu or reads a report (:mod:`drgpu_py.ncu` does). Format: docs/profile.md.
"""

from __future__ import annotations

import lzma
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..errors import DataFileError, UsageError
from . import loader as data

SCHEMA = "drgpu.metric_set/1"


# ---------------------------------------------------------------------------------------
# Metric sets
# ---------------------------------------------------------------------------------------
@dataclass
class Group:
    name: str
    why: str
    optional: bool = False
    absent_note: str = ""  # said in the analysis notes when a report lacks the group's metrics
    first_pass: bool = False  # collected for every launch in a two-pass profile's first run
    sections: list[str] = field(default_factory=list)
    metrics: dict[str, str] = field(default_factory=dict)  # explicit --metrics -> what for
    provides: dict[str, str] = field(default_factory=dict)  # delivered by the sections -> what for


@dataclass
class Selection:
    """What one ncu run collects."""

    sections: list[str]
    metrics: list[str]
    groups: list[str]
    expected: list[str]  # names drgpu looks for in the report afterwards
    notes: list[str] = field(default_factory=list)  # what leaving optional groups out means

    def ncu_args(self) -> list[str]:
        args: list[str] = []
        for s in self.sections:
            args += ["--section", s]
        if self.metrics:
            args += ["--metrics", ",".join(self.metrics)]
        return args


@dataclass
class MetricSet:
    name: str
    description: str
    groups: dict[str, Group]
    chip: str | None = None
    family: str = ""
    compute_capability: list[str] = field(default_factory=list)
    origin: str = ""
    shipped: bool = True  # one of drgpu's own files (not a user's YAML)

    def group_names(self, optional: bool | None = None) -> list[str]:
        return [g for g, spec in self.groups.items() if optional is None or spec.optional == optional]

    def selection(
        self, with_groups: Iterable[str] = (), add_sections: Iterable[str] = (), add_metrics: Iterable[str] = ()
    ) -> Selection:
        with_groups = list(with_groups)
        self._refuse_unknown(with_groups)
        chosen = [g for g, spec in self.groups.items() if not spec.optional or g in with_groups]
        sections, metrics, expected = self._collected(chosen)
        _extend_new(sections, add_sections)
        extra = [m for m in add_metrics if m not in metrics]
        metrics += extra
        _extend_new(expected, extra)
        notes = [spec.absent_note for g, spec in self.groups.items() if g not in chosen and _loses_note(spec, metrics)]
        return Selection(sections=sections, metrics=metrics, groups=chosen, expected=expected, notes=notes)

    def split(self, sel: Selection) -> tuple[Selection, Selection]:
        """``sel`` as two runs: the chosen groups marked ``first_pass``, then everything else
        ``sel`` collects (the other groups, added sections and metrics). A name both would
        collect stays in the first. The second is empty when every chosen group is a first one."""
        first_groups = [g for g in sel.groups if self.groups[g].first_pass]
        sections, metrics, expected = self._collected(first_groups)
        first = Selection(sections=sections, metrics=metrics, groups=first_groups, expected=expected, notes=sel.notes)
        second = Selection(
            sections=_without(sel.sections, sections),
            metrics=_without(sel.metrics, metrics),
            groups=_without(sel.groups, first_groups),
            expected=_without(sel.expected, expected),
        )
        return first, second

    def _collected(self, groups: list[str]) -> tuple[list[str], list[str], list[str]]:
        """The sections, metrics and expected metrics (its metrics and what it provides) of
        ``groups``, each once, in the groups' order."""
        sections: list[str] = []
        metrics: list[str] = []
        expected: list[str] = []
        for g in groups:
            spec = self.groups[g]
            _extend_new(sections, spec.sections)
            _extend_new(metrics, spec.metrics)
            _extend_new(expected, list(spec.metrics) + list(spec.provides))
        return sections, metrics, expected

    def _refuse_unknown(self, with_groups: list[str]) -> None:
        unknown = [g for g in with_groups if g not in self.groups]
        if unknown:
            raise UsageError(
                f"unknown metric group(s) {', '.join(unknown)} in set {self.name}",
                hint="optional groups: " + (", ".join(self.group_names(optional=True)) or "none"),
            )


def _extend_new(target: list[str], items: Iterable[str]) -> None:
    """Append the items ``target`` lacks, in order (ncu arguments are kept free of repeats)."""
    target += [x for x in items if x not in target]


def _without(items: Iterable[str], taken: list[str]) -> list[str]:
    """The items ``taken`` does not hold, in order."""
    return [x for x in items if x not in taken]


def _loses_note(spec: Group, metrics: list[str]) -> bool:
    """Whether leaving the group ``spec`` out deserves its absent note: it is optional, has a
    note, and the metrics collected anyway do not cover all of its own."""
    return spec.optional and bool(spec.absent_note) and not all(m in metrics for m in spec.metrics)


def metric_sets_dir() -> Path:
    return data.share_dir("metric_sets")


def available_sets() -> list[str]:
    """Names of the shipped sets: 'base' and one per chip."""
    return sorted(p.stem for p in metric_sets_dir().glob("*.yaml"))


def _parse_group(name: str, spec: dict) -> Group:
    """A group of a document that passed the metric_set schema (a 'why'; sections and/or
    metrics; 'provides' only with sections)."""
    return Group(
        name=name,
        why=" ".join(spec["why"].split()),
        optional=bool(spec.get("optional", False)),
        absent_note=" ".join(str(spec.get("absent_note", "")).split()),
        first_pass=bool(spec.get("first_pass", False)),
        sections=list(spec.get("sections", [])),
        metrics=dict(spec.get("metrics") or {}),
        provides=dict(spec.get("provides") or {}),
    )


def _copy_group(g: Group) -> Group:
    """An overlay edits its groups in place: it gets copies, the base set stays as read."""
    return Group(
        name=g.name,
        why=g.why,
        optional=g.optional,
        absent_note=g.absent_note,
        first_pass=g.first_pass,
        sections=list(g.sections),
        metrics=dict(g.metrics),
        provides=dict(g.provides),
    )


def _starting_point(doc: dict, origin: str, base: MetricSet | None) -> tuple[dict[str, Group], str]:
    """The groups and description a document starts from: copies of the base set's when it
    ``inherits``, nothing otherwise."""
    if not doc.get("inherits"):
        return {}, doc.get("description", "")
    if base is None:
        raise DataFileError(f"{origin}: inherits {doc['inherits']!r}, which is not loaded")
    groups = {g: _copy_group(s) for g, s in base.groups.items()}
    return groups, doc.get("description") or base.description


def _add_metrics(doc: dict, origin: str, groups: dict[str, Group]) -> None:
    for g, metrics in (doc.get("add") or {}).items():
        if g not in groups:
            raise DataFileError(f"{origin}: 'add' names unknown group {g}")
        groups[g].metrics.update(metrics or {})


def _drop_metrics(doc: dict, origin: str, groups: dict[str, Group]) -> None:
    for m in doc.get("drop") or []:
        if not any(m in grp.metrics for grp in groups.values()):
            raise DataFileError(f"{origin}: 'drop' names {m}, which no group collects")
        for grp in groups.values():
            grp.metrics.pop(m, None)


def _rename_metrics(doc: dict, origin: str, groups: dict[str, Group]) -> None:
    for old, new in (doc.get("rename") or {}).items():
        hits = [grp for grp in groups.values() if old in grp.metrics]
        if not hits:
            raise DataFileError(f"{origin}: 'rename' names {old}, which no group collects")
        for grp in hits:
            grp.metrics = {(new if k == old else k): v for k, v in grp.metrics.items()}


def _capabilities(cc: object) -> list[str]:
    """``compute_capability`` may be one value or a list of them."""
    return [str(c) for c in (cc if isinstance(cc, list) else [cc])]


def _from_doc(doc: dict, origin: str, base: MetricSet | None) -> MetricSet:
    groups, description = _starting_point(doc, origin, base)
    for g, spec in (doc.get("groups") or {}).items():
        groups[g] = _parse_group(g, spec)
    # The list edits an overlay makes to the groups, in this order.
    _add_metrics(doc, origin, groups)
    _drop_metrics(doc, origin, groups)
    _rename_metrics(doc, origin, groups)
    if not groups:
        raise DataFileError(f"{origin}: the set has no groups")
    return MetricSet(
        name=doc.get("name") or Path(origin).stem,
        description=" ".join(str(description).split()),
        groups=groups,
        chip=doc.get("chip"),
        family=doc.get("family", ""),
        compute_capability=_capabilities(doc.get("compute_capability") or []),
        origin=origin,
    )


def _names_a_file(key: str) -> bool:
    """Only a value with a folder separator or a .yaml/.yml suffix is a path."""
    return Path(key).suffix in (".yaml", ".yml") or os.sep in key or "/" in key


def _user_file(key: str) -> Path:
    from ..io import require_input_file

    # Missing, a folder, a FIFO or device, a link loop: exit 3, as every input file.
    return require_input_file(Path(key), "a metric set file")


def _shipped_file(key: str, folder: Path) -> Path:
    """A shipped set by name or compute capability."""
    chip = data.chip_for(key) or key.lower()
    path = folder / f"{chip}.yaml"
    if not path.is_file():
        raise UsageError(
            f"unknown metric set {key!r}", hint="one of: " + ", ".join(available_sets()) + ", or a YAML file"
        )
    return path


def _base_set(doc: dict, path: Path, folder: Path) -> MetricSet | None:
    """The set a document inherits from (only the shipped base), or None."""
    if not doc.get("inherits"):
        return None
    if doc["inherits"] != "base":
        raise DataFileError(f"{path.name}: only 'inherits: base' is supported")
    return _from_doc(data.read_yaml_file(folder / "base.yaml", SCHEMA, "metric set"), "base.yaml", None)


def load_metric_set(name_or_path: str | Path | None = None) -> MetricSet:
    """A shipped set by name ('base', 'gh100', ...), by compute capability ('9.0'), or a YAML
    file (which may ``inherits: base``). ``None`` gives the base set. A bare name is always
    a shipped set, never a file of that name in the working directory: only a value with a
    folder separator or a .yaml/.yml suffix is a path."""
    key = str(name_or_path) if name_or_path else "base"
    folder = metric_sets_dir()
    path = _user_file(key) if _names_a_file(key) else _shipped_file(key, folder)
    shipped = path.resolve().parent == folder.resolve()
    # A user's file is checked against the metric_set JSON Schema here; the shipped sets by
    # the test suite (every start would otherwise pay for importing jsonschema).
    doc = data.read_yaml_file(path, SCHEMA, "metric set", validate_as=None if shipped else "metric_set")
    base = _base_set(doc, path, folder)
    ms = _from_doc(doc, path.name if path.parent == folder else str(path), base)
    ms.shipped = shipped
    return ms


# ---------------------------------------------------------------------------------------
# Catalogues and metric-name checks
# ---------------------------------------------------------------------------------------
_ROLLUPS = ("sum", "avg", "min", "max")
_PCT = (
    "pct_of_peak_sustained_active",
    "pct_of_peak_sustained_elapsed",
    "pct_of_peak_sustained_region",
    "pct_of_peak_sustained_frame",
)
_COUNTER_SUB = (
    "",
    "peak_sustained",
    "peak_sustained_active",
    "peak_sustained_active.per_second",
    "peak_sustained_elapsed",
    "peak_sustained_elapsed.per_second",
    "peak_sustained_region",
    "peak_sustained_region.per_second",
    "peak_sustained_frame",
    "peak_sustained_frame.per_second",
    "per_cycle_active",
    "per_cycle_elapsed",
    "per_cycle_in_region",
    "per_cycle_in_frame",
    "per_second",
) + _PCT
#: Valid suffixes per metric type (ncu Profiling Guide, "Metrics Structure"): counters take a
#: rollup and an optional sub-metric, ratios .pct/.ratio/.max_rate, throughputs a rollup and a
#: percentage of peak.
SUFFIXES = {
    "Counter": {f"{r}.{s}" if s else r for r in _ROLLUPS for s in _COUNTER_SUB},
    "Ratio": {"pct", "ratio", "max_rate"},
    "Throughput": {f"{r}.{s}" for r in _ROLLUPS for s in _PCT},
}


def _catalogue_text(path: Path, chip: str) -> str:
    try:
        with lzma.open(path, "rt", encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError as e:
        raise DataFileError(f"no metric catalogue for chip {chip} ({path.name})") from e
    except (OSError, lzma.LZMAError) as e:
        raise DataFileError(f"cannot read {path.name}: {e}") from e


def _not_an_entry(line: str) -> bool:
    """The continuation of a wrapped description, a rule or a header."""
    return not line or line[0] in " -" or line.startswith(("Chip ", "Metric Name"))


def load_catalogue(chip: str, folder: Path | None = None) -> dict[str, str]:
    """ncu's ``--query-metrics --chips CHIP`` listing as {base name: type}."""
    path = (folder or metric_sets_dir() / "catalogues") / f"metrics_{chip}.txt.xz"
    out: dict[str, str] = {}
    for line in _catalogue_text(path, chip).splitlines():
        if _not_an_entry(line):
            continue
        parts = line.split()
        if len(parts) >= 2 and parts[1] in SUFFIXES:
            out[parts[0]] = parts[1]
    if not out:
        raise DataFileError(f"{path.name} lists no metrics")
    return out


def metric_problem(name: str, catalogue: dict[str, str]) -> str | None:
    """Why ``name`` cannot be collected on the catalogue's chip, or None when it can."""
    base, _, suffix = name.partition(".")
    kind = catalogue.get(base)
    if kind is None:
        return "no such metric on this chip"
    if not suffix:
        return f"a {kind.lower()} needs a suffix (e.g. {sorted(SUFFIXES[kind])[0]})"
    if suffix not in SUFFIXES[kind]:
        return f"suffix .{suffix} is not valid for a {kind.lower()}"
    return None


def check_metric_set(
    ms: MetricSet, catalogue: dict[str, str], include_optional: bool = True
) -> list[tuple[str, str, str]]:
    """(group, metric, problem) for each explicit metric the chip's ncu cannot collect."""
    out = []
    for g, spec in ms.groups.items():
        if spec.optional and not include_optional:
            continue
        for m in spec.metrics:
            p = metric_problem(m, catalogue)
            if p:
                out.append((g, m, p))
    return out
