"""A saved analysis: the JSON document ``drgpu analyze -f json`` (or ``merge``) writes, read
back into typed objects, so that ``list`` and ``diff`` read fields, trees and findings rather
than walking dicts.

Contract: ``SavedAnalysis.load(path)`` reads a file checked against the shipped analysis
JSON Schema (``load_analysis_json``: a broken or hostile file is a ReportFormatError);
``SavedAnalysis.from_dict(doc)`` takes the dict (``Analysis.to_dict()``); ``to_dict()`` gives
back what was read, key for key and in drgpu's order, so analyze -> JSON -> load -> JSON is
the same text (tests/samples/test_compare.py). A kernel's tree is a :class:`Node` and its findings
are :class:`Finding` objects; the sections nothing here reads (speed of light, slicing,
samples, the static model) stay dicts, passed through as written. Keys this version does
not know are kept and written after the known ones.

A saved analysis has the frames of a live one whose data the JSON holds (analysis/frames.py)
and the same short repr and notebook table (analysis/display.py).

JSON written before tree nodes had stable keys gets them here, once, from the labels that
version gave those nodes (``LEGACY_KEYS``); everything after loading finds nodes by key.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import ReportFormatError
from ..profile import rounded
from ..readers.gc_pause import gc_paused
from . import display, groups
from . import tree as t
from .findings import Finding
from .frame_methods import FrameMethods
from .tree import Node, location_text

if TYPE_CHECKING:
    from .frames import FrameInput

#: Labels of the keyed nodes in JSON from before nodes had keys: (label, key, parent's key).
LEGACY_KEYS = (
    ("Memory latency split", t.KEY_MEMORY_SPLIT, None),
    ("L1 hits", t.KEY_MEMORY_L1, t.KEY_MEMORY_SPLIT),
    ("L2 hits", t.KEY_MEMORY_L2, t.KEY_MEMORY_SPLIT),
    ("DRAM", t.KEY_MEMORY_DRAM, t.KEY_MEMORY_SPLIT),
    ("Theoretical occupancy", t.KEY_OCCUPANCY_THEORETICAL, None),
    ("Achieved occupancy", t.KEY_OCCUPANCY_ACHIEVED, None),
)


def node_from_dict(doc: dict[str, Any]) -> Node:
    """The :class:`Node` whose ``to_dict()`` is ``d``."""
    return Node(
        name=doc.get("name", ""),
        value=doc.get("value"),
        unit=doc.get("unit", ""),
        kind=doc.get("kind", "metric"),
        children=[node_from_dict(c) for c in doc.get("children") or []],
        attrs=doc.get("attrs") or {},
        key=doc.get("key"),
    )


def _add_legacy_keys(root: Node) -> None:
    """Give a keyless tree (older JSON) the keys its labelled nodes stand for."""
    if any(n.key is not None for n in root.walk()):
        return
    for label, key, parent in LEGACY_KEYS:
        scope = root if parent is None else root.by_key(parent)
        hit = next((n for n in scope.walk() if n.name == label), None) if scope is not None else None
        if hit is not None:
            hit.key = key


def finding_from_dict(doc: dict[str, Any]) -> Finding:
    """The :class:`Finding` whose ``to_dict()`` is ``d``."""
    return Finding(
        id=doc.get("id", ""),
        title=doc.get("title", ""),
        severity=doc.get("severity", ""),
        stall_share=doc.get("stall_share", math.nan),
        estimated_speedup=doc.get("estimated_speedup", math.nan),
        advice=doc.get("advice", ""),
        evidence=doc.get("evidence") or {},
        locations=doc.get("locations") or [],
        group=doc.get("group", ""),
        speedup_model=doc.get("speedup_model", ""),
        notes=doc.get("notes") or [],
        model_speedup=doc.get("model_speedup", math.nan),
        bounds=doc.get("bounds") or [],
        bounded_by=doc.get("bounded_by"),
        audience=doc.get("audience", "code"),
        estimate_capped=bool(doc.get("estimate_capped", False)),
        time_share=doc.get("time_share"),
        estimated_speedup_alone=doc.get("estimated_speedup_alone"),
    )


def _json_fields(cls: type[SavedKernel]) -> list[str]:
    return [f.name for f in fields(cls) if f.name not in ("extra", "written")]


@dataclass
class SavedKernel:
    """One kernel (group) of a saved analysis; fields in the JSON's order."""

    id: int | None = None
    name: str = ""
    mangled: str | None = None
    device: str | None = None
    compute_capability: str | None = None
    chip: str | None = None
    sm_count: int | None = None
    duration_ns: float | None = None
    grid: list[int] | None = None
    block: list[int] | None = None
    elapsed_cycles: float | None = None
    sm_active_cycles: float | None = None
    verdict: str | None = None  # the line said first (analysis/verdict.py; absent before schema 1.2)
    bound: str | None = None
    stall_cycle_pct: float | None = None
    achieved_ipc: float | None = None
    #: The busiest throughput unit's id (drgpu_py.analysis.context.UNITS), as in the tree's
    #: root attrs and speed_of_light.unit; its % of peak is ``top_unit_pct``.
    top_unit: str | None = None
    top_unit_pct: float | None = None
    launches: int | None = None
    launch_ids: list[int] | None = None
    total_duration_ns: float | None = None
    speed_of_light: dict[str, Any] | None = None
    tree: Node | None = None
    findings: list[Finding] = field(default_factory=list)
    slicing: dict[str, Any] | None = None
    samples: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    model: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know
    #: The known keys the JSON held, in its order (None: all, in field order).
    written: list[str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> "SavedKernel":
        known = _json_fields(cls)
        kernel = cls(
            **{name: v for name, v in doc.items() if name in known and name not in ("tree", "findings")},
            extra={name: v for name, v in doc.items() if name not in known},
            written=[name for name in doc if name in known],
        )
        if doc.get("tree"):
            kernel.tree = node_from_dict(doc["tree"])
            _add_legacy_keys(kernel.tree)
        kernel.findings = [finding_from_dict(f) for f in doc.get("findings") or []]
        return kernel

    def to_dict(self) -> dict[str, Any]:
        names = self.written if self.written is not None else _json_fields(type(self))
        out: dict[str, Any] = {}
        for name in names:
            value = getattr(self, name)
            if name == "tree":
                value = value.to_dict() if value is not None else {}
            elif name == "findings":
                value = [f.to_dict() for f in value]
            out[name] = value
        out.update(self.extra)
        return out

    def node(self, key: str) -> Node | None:
        """The tree node with stable key ``key`` (analysis.tree.KEY_*), or None."""
        return self.tree.by_key(key) if self.tree is not None else None

    def _facts(self) -> tuple[int | None, str, int | None, float | None, str | None, str | None]:
        grade = (self.speed_of_light or {}).get("grade")
        return self.id, self.name, self.launches, self._total_ns(), self.bound, grade

    def _total_ns(self) -> float | None:
        return self.total_duration_ns if self.total_duration_ns is not None else self.duration_ns

    def _finding_lines(self) -> list[display.FindingLine]:
        total = self._total_ns()
        return [
            display.FindingLine(
                f.id,
                f.severity,
                f.estimated_speedup,
                rounded(groups.time_saved(total, f.estimated_speedup), 1)
                if total is not None and f.estimated_speedup is not None
                else None,
                location_text(f.locations[0]) if f.locations else None,
                f.title,
            )
            for f in self.findings
        ]

    def __repr__(self) -> str:
        # The dataclass repr would print the whole tree and every finding's evidence.
        return display.kernel_repr("SavedKernel", *self._facts(), self._finding_lines())

    def _repr_pretty_(self, printer: display.Printer, cycle: bool) -> None:
        display.pretty(repr(self), printer)

    def _repr_html_(self) -> str:
        return display.kernel_html(*self._facts(), self._finding_lines())


@dataclass
class SavedAnalysis(FrameMethods):
    """A whole saved analysis: the report it came from, the summary tables and the kernels."""

    report: str | None = None
    format: str | None = None
    notes: list[str] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    priorities: list[dict[str, Any]] = field(default_factory=list)
    kernels: list[SavedKernel] = field(default_factory=list)
    tool: str = "drgpu"
    version: str | None = None
    schema_version: str | None = None  # None: written before the JSON contract was versioned
    extra: dict[str, Any] = field(default_factory=dict)
    written: list[str] | None = field(default=None, repr=False, compare=False)

    _ORDER = ("tool", "version", "schema_version", "report", "format", "notes", "summary", "priorities", "kernels")

    @classmethod
    def load(cls, path: str | Path) -> "SavedAnalysis":
        """A drgpu analysis JSON file, validated (see the module docstring)."""
        from ..io import require_input_file

        return cls.from_dict(load_analysis_json(require_input_file(path)))

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> "SavedAnalysis":
        with gc_paused():
            return cls._from_dict(doc)

    @classmethod
    def _from_dict(cls, doc: dict[str, Any]) -> "SavedAnalysis":
        analysis = cls(
            **{name: doc[name] for name in cls._ORDER if name in doc and name != "kernels"},
            kernels=[SavedKernel.from_dict(k) for k in doc.get("kernels") or []],
            extra={name: v for name, v in doc.items() if name not in cls._ORDER},
            written=[name for name in doc if name in cls._ORDER],
        )
        return analysis

    def __repr__(self) -> str:
        # The dataclass repr would print every kernel's tree and findings.
        return display.analysis_repr("SavedAnalysis", self.report, self.summary)

    def _repr_pretty_(self, printer: display.Printer, cycle: bool) -> None:
        display.pretty(repr(self), printer)

    def _repr_html_(self) -> str:
        return display.analysis_html(self.report, self.summary)

    # The frames of a live analysis (analysis/frames.py) whose data the JSON holds, equal to
    # the live ones; source_frame and metrics_frame need the report (a UsageError here).
    def frame_input(self) -> FrameInput:
        from .frames import FrameInput, FrameKernel

        kernels = [
            FrameKernel(k.id, k.name, k.launches, k.stall_cycle_pct, k.findings, k.tree, None) for k in self.kernels
        ]
        return FrameInput(self.report, self.summary, kernels, saved=True)

    def to_dict(self, kernels: bool = True) -> dict[str, Any]:
        """The JSON document (``kernels=False``: its kernel list empty, as Analysis.to_dict)."""
        out: dict[str, Any] = {}
        # Made here rather than read: every field, but no schema_version it was not given.
        made = [n for n in self._ORDER if n != "schema_version" or self.schema_version is not None]
        for name in self.written if self.written is not None else made:
            if name == "kernels":
                out[name] = [k.to_dict() for k in self.kernels] if kernels else []
            else:
                out[name] = getattr(self, name)
        out.update(self.extra)
        return out


#: Digits of the longest integer a drgpu JSON holds (a 64-bit count has 20): a 400-digit
#: number is not a measurement, and Python's int of one costs more than it is worth.
_MAX_INT_DIGITS = 24


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits")
    return int(text)


def _finite_float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None  # 1e400: out of range, read as missing


def _no_number(text: str) -> None:
    return None  # NaN, Infinity (older drgpu and Python's json write them): missing


#: Kernels from which loading a saved analysis reports its progress (about 2 s of checking).
PROGRESS_FROM = 2000


def load_analysis_json(path: Path, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """A saved ``drgpu analyze -f json`` (or ``merge``) output, checked against the shipped
    analysis JSON Schema before anything reads it: a hand-edited, truncated or hostile file
    (wrong types, missing keys, 100,000-deep nesting, 400-digit integers) is a
    ReportFormatError (exit 4) naming where it breaks, never an internal error. Numbers
    that are not finite (NaN, Infinity, 1e400) read as missing (null), as drgpu writes them.
    ``progress(done, total)`` is called as the kernels of a file of ``PROGRESS_FROM`` or more
    are checked."""
    not_json = "give an .ncu-rep, a raw CSV export, or the output of drgpu analyze -f json"
    from ..io import read_input_bytes

    try:
        text = read_input_bytes(path, "an analysis JSON").decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReportFormatError(f"{path}: not a readable JSON file (not UTF-8 at byte {e.start})") from None
    try:
        with gc_paused():
            doc = json.loads(text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_number)
    except RecursionError:
        raise ReportFormatError(f"{path}: not a readable JSON file (nested too deeply)", hint=not_json) from None
    except ValueError as e:  # JSONDecodeError is one
        raise ReportFormatError(f"{path}: not a readable JSON file ({str(e)[:200]})", hint=not_json) from None
    if not isinstance(doc, dict) or doc.get("tool") != "drgpu" or not isinstance(doc.get("kernels"), list):
        raise ReportFormatError(f"{path} is JSON but not a drgpu analysis", hint=not_json)
    if doc.get("kind") == "diff":
        raise ReportFormatError(f"{path} is a drgpu diff, not an analysis")
    from ..specs import output_schema

    if not output_schema.reads(doc.get("schema_version")):
        raise ReportFormatError(
            f"{path} is a drgpu analysis of JSON schema {str(doc.get('schema_version'))[:20]!r}, which this drgpu "
            f"(schema {output_schema.SCHEMA_VERSION}) does not read",
            hint="analyze the report again with this drgpu, or read the file with the drgpu that wrote it",
        )

    try:
        many = len(doc["kernels"]) >= PROGRESS_FROM
        output_schema.validate(doc, "analysis", progress=progress if many else None)
    except RecursionError:
        raise ReportFormatError(f"{path}: not a drgpu analysis (nested too deeply)", hint=not_json) from None
    except Exception as e:  # jsonschema.ValidationError: imported only on use
        from jsonschema import ValidationError  # already imported by the validation that raised it

        if not isinstance(e, ValidationError):
            raise
        where = "/".join(str(x) for x in e.absolute_path) or "(top level)"
        raise ReportFormatError(
            f"{path}: not a valid drgpu analysis at {where[:120]}: {e.message[:200]}",
            hint="give the unedited output of drgpu analyze -f json (or of drgpu merge) of this drgpu version",
        ) from None
    return doc
