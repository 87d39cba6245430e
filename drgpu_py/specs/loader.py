"""Load and validate drgpu's data files (metric aliases, tree shape, thresholds, findings,
per-architecture constants).

Contract: every data file has a JSON Schema (``drgpu_py/specs/schema/data/NAME.schema.json``,
draft 2020-12: keys, types, the ``schema`` tag); ``validate(doc, origin, name)`` checks one and
raises :class:`DataFileError` (exit 8) naming the file and the place in it. Files given by the
user (metric sets by path) are validated when read; the packaged files are validated by the test
suite instead of at every start (they are read-only at run time, and importing jsonschema costs
a fifth of a second), so their loaders check only the ``schema`` tag and what a schema cannot
express (names that refer to another file: thresholds, stall reasons, speedup models, chips).
Loaders return plain dicts/lists. Architecture files are overlays: ``load_arch("gh100")`` is ``base.yaml`` deep-merged with
``gh100.yaml``. Results are cached per process, since the files are read-only at run time.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from importlib import resources
from pathlib import Path
from typing import Any, Callable, cast

import yaml

from ..errors import DataFileError
from .records import ArchConstants, Thresholds

_DATA = "drgpu_py.specs"


def _read(name: str) -> dict:
    try:
        text = resources.files(_DATA).joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise DataFileError(f"data file {name} is missing from the installation") from e
    return _parse(text, name, bounded=False)


#: Nodes a YAML document may stand for once its aliases are expanded. Aliases share what
#: they point to, so a 400-byte file of nested aliases ("a billion laughs") stands for 387
#: million strings: anything that walks it (schema validation, str(), a copy) then runs for
#: minutes in gigabytes. drgpu's largest data file has under 2,000 nodes.
MAX_YAML_NODES = 1_000_000


class _AliasBomb(yaml.YAMLError):
    pass


def _expanded_size(root) -> int:
    """The number of nodes ``root`` stands for with every alias expanded, counted without
    expanding them (each shared node once, memoized); over MAX_YAML_NODES, or an alias to a
    node that holds it (a list holding itself), raises _AliasBomb."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            parts = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
            n = 1 + sum(size[id(c)] for c in parts)
            if n > MAX_YAML_NODES:
                raise _AliasBomb(f"its aliases expand to over {MAX_YAML_NODES:,} values")
            size[key] = n
            continue
        if key in size:
            continue
        if key in on_path:
            raise _AliasBomb("an alias refers to a value that holds it (a recursive structure)")
        if not isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            size[key] = 1
            continue
        on_path.add(key)
        stack.append((node, True))
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        stack.extend((c, False) for c in children if id(c) not in size)
    return size[id(root)]


def _load_yaml(text: str, bounded: bool = True):
    """``yaml.safe_load`` (libyaml's parser when present: same safe constructors, ten times
    faster to start up); ``bounded``: the composed document's alias expansion is checked
    before any value is built from it (the packaged files, read-only, are not)."""
    if not bounded:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _parse(text: str, origin: str, bounded: bool = True) -> dict:
    """The mapping of a YAML document; ``bounded`` (every file a user gives): aliases that
    expand past MAX_YAML_NODES are refused (DataFileError)."""
    try:
        doc = _load_yaml(text, bounded)
    except _AliasBomb as e:
        raise DataFileError(
            f"{origin}: refused: {e}", hint="write the values out, or use fewer nested aliases (&anchor / *alias)"
        ) from None
    except (yaml.YAMLError, RecursionError) as e:  # RecursionError: nesting thousands deep
        raise DataFileError(f"{origin}: not valid YAML: {str(e)[:300]}") from e
    except ValueError as e:  # a value the constructors refuse: an integer of over 4,300 digits
        raise DataFileError(f"{origin}: a value cannot be read: {str(e)[:120]}") from None
    if not isinstance(doc, dict):
        raise DataFileError(f"{origin}: expected a mapping at the top level")
    return doc


#: The data-file schemas under specs/schema/data/ (each file kind's JSON Schema).
SCHEMAS = ("metrics", "tree", "thresholds", "findings", "arch", "metric_set", "attribution")


@functools.cache
def _validator(name: str):
    import jsonschema  # here, not at the top: only user-given files pay for the import

    text = resources.files(_DATA).joinpath("schema", "data", f"{name}.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def validate(doc: dict, origin: str, name: str) -> dict:
    """``doc`` if it matches schema ``name``; else DataFileError naming ``origin``, the path in
    the document and what is wrong (jsonschema's most relevant error). A schema node may carry
    ``x-message`` (text, or a mapping from the failing keyword to text), the wording users see
    (fields: path, parent, key, found), in place of jsonschema's own."""
    import jsonschema

    err = jsonschema.exceptions.best_match(_validator(name).iter_errors(doc))
    if err is None:
        return doc
    at = [str(p) for p in err.absolute_path]
    template = err.schema.get("x-message") if isinstance(err.schema, dict) else None
    if isinstance(template, dict):  # per failing keyword ("type", "required", ...)
        template = template.get(err.validator)
    if template:
        found = (
            "empty text"
            if err.instance == ""
            else {
                dict: "a mapping",
                list: "a list",
                str: "text",
                bool: "a boolean",
                int: "a number",
                float: "a number",
                type(None): "nothing",
            }.get(type(err.instance), type(err.instance).__name__)
        )
        msg = template.format(path=".".join(at), parent=".".join(at[:-1]), key=at[-1] if at else "", found=found)
        raise DataFileError(f"{origin}: {msg}")
    raise DataFileError(f"{origin}: {'/'.join(at) or 'top level'}: {err.message[:300]}")


def _check_schema(doc: dict, origin: str, schema: str) -> None:
    if doc.get("schema") != schema:
        raise DataFileError(f"{origin}: schema should be '{schema}', found {doc.get('schema')!r}")


def _load(name: str, schema: str) -> dict:
    """A packaged data file's mapping, its ``schema:`` checked: every loader's first step."""
    doc = _read(name)
    _check_schema(doc, name, schema)
    return doc


def read_yaml_file(path: Path, schema: str, what: str, validate_as: str | None = None) -> dict:
    """A data file outside the package's specs (a metric set), parsed and its ``schema:``
    checked, then validated against JSON Schema ``validate_as`` when given (a file from the
    user); ``what`` names it in the message when it cannot be read."""
    if validate_as:
        # The user's file is an input: one that cannot be read (permission denied, a FIFO) is
        # exit 3 as every input is (docs/errors.md); only its content is a data error (8).
        from ..io import read_input_bytes

        raw = read_input_bytes(path, f"a {what} file")
    else:
        try:
            raw = Path(path).read_bytes()
        except OSError as e:
            raise DataFileError(f"cannot read {what} {path}: {e.strerror}") from e
    doc = _parse(decode_text(raw, Path(path).name), Path(path).name)
    _check_schema(doc, Path(path).name, schema)
    return validate(doc, Path(path).name, validate_as) if validate_as else doc


@functools.cache
def metrics_table() -> dict:
    doc = _load("metrics.yaml", "drgpu.metrics/1")
    chips = set(known_chips())
    for name, spec in doc["metrics"].items():
        _check_chips(spec, f"metrics.yaml: metric {name}", chips)
        for alias in spec.get("aliases", []):
            if isinstance(alias, dict):
                _check_chips(
                    {"unavailable_on": alias.get("chips", [])}, f"metrics.yaml: metric {name} alias chips", chips
                )
        derived = spec.get("derived")
        if derived and not all(m in doc["metrics"] and m != name for m in derived["product"]):
            raise DataFileError(
                f"metrics.yaml: metric {name}: derived.product must name other metrics of the table, got {derived['product']!r}"
            )
    for rid, spec in doc["stall_reasons"].items():
        _check_chips(spec, f"metrics.yaml stall_reasons.{rid}", chips)
    return doc


def _check_chips(spec: dict, where: str, chips: set[str]) -> None:
    got = spec.get("unavailable_on", [])
    if not set(got) <= chips:
        raise DataFileError(
            f"{where}: unavailable_on must list chips of specs/arch ({', '.join(sorted(chips))}), got {got!r}"
        )


def metric_unavailable(name: str, chip: str | None) -> bool:
    """Does ``chip``'s ncu have none of the names of this canonical metric (or of the stall
    reason whose kernel-wide counter it is)? False for an unknown chip."""
    if not chip:
        return False
    table = metrics_table()
    spec = table["metrics"].get(name)
    if spec is None:
        spec = next((s for s in table["stall_reasons"].values() if name in s["counter"]), {})
    return chip in spec.get("unavailable_on", [])


def metric_aliases(name: str) -> list[str]:
    """Names to try for a canonical metric: the name itself, then its aliases (of every ncu
    version and chip: a report holds the names of the one that made it)."""
    return [name] + [a["name"] for a in metric_alias_table(name) if a["name"] != name]


def metric_alias_table(name: str) -> list[dict]:
    """The aliases of a canonical metric as {name, ncu, chips, source} (``ncu``: the versions
    in which the name holds, 'FROM..TO' with either end open; '' and [] when not known)."""
    spec = metrics_table()["metrics"].get(name, {})
    return [
        {"name": a, "ncu": "", "chips": [], "source": ""} if isinstance(a, str) else {"ncu": "", "chips": [], **a}
        for a in spec.get("aliases", [])
    ]


def metric_since(name: str) -> str | None:
    """The first ncu version that has the canonical metric under any of its names; None when
    every version drgpu reads has it (or it is not known)."""
    since = metrics_table()["metrics"].get(name, {}).get("since")
    return since["ncu"] if since else None


def metric_derivation(name: str) -> tuple[str, str, float] | None:
    """(A, B, scale): the metric is A x B x scale when the report has none of its names."""
    derived = metrics_table()["metrics"].get(name, {}).get("derived")
    if not derived:
        return None
    a, b = derived["product"]
    return a, b, float(derived.get("scale", 1.0))


def derive_metrics(metrics: dict[str, float], names_used: dict[str, str] | None = None) -> None:
    """Add to ``metrics`` (canonical name -> value) the metrics it lacks that ``derived``
    gives from two it has (finite values); ``names_used`` records how."""
    for canon, spec in metrics_table()["metrics"].items():
        if "derived" not in spec or _finite(metrics.get(canon)):
            continue
        a, b, scale = cast(tuple, metric_derivation(canon))
        va, vb = metrics.get(a), metrics.get(b)
        if va is not None and vb is not None and _finite(va) and _finite(vb):
            metrics[canon] = float(va) * float(vb) * scale
            if names_used is not None:
                names_used[canon] = f"{a} x {b}"


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def section_metrics(section: str, optional: bool = True) -> tuple[str, ...]:
    """The canonical metrics of the table that ``section`` collects (without the ``optional``
    ones when ``optional`` is False)."""
    return tuple(
        n
        for n, spec in metrics_table()["metrics"].items()
        if spec["section"] == section and (optional or not spec.get("optional"))
    )


def reprofile_advice(collected: Callable[[str], bool], name: str) -> str | None:
    """How to collect a canonical metric a report lacks, given what the report holds
    (``collected``: canonical name -> in the report, KernelProfile.collected): 'ncu --section
    S' when the report lacks its section (most of the section's metrics of this table are
    absent, this one included: the rule of the readers' "lacks most metrics" note); when the
    section is there, 're-profile with ncu >= V' for a metric newer than the ncu that made the
    report (``since``), else None (adding the section would not bring it)."""
    section = metric_section(name)
    if section is None:
        return None
    metrics = section_metrics(section, optional=False) or (name,)
    if sum(not collected(m) for m in metrics) * 2 > len(metrics):
        return f"ncu --section {section}"
    since = metric_since(name)
    return f"re-profile with ncu >= {since}" if since else None


def metric_section(name: str) -> str | None:
    spec = metrics_table()["metrics"].get(name)
    if spec:
        return spec["section"]
    if name.startswith("smsp__average_warps_issue_stalled"):
        return "WarpStateStats"
    if name.startswith("smsp__pcsamp"):
        return "SourceCounters"
    return None


def stall_reasons() -> dict[str, dict]:
    return metrics_table()["stall_reasons"]


@functools.cache
def tree_shape() -> dict:
    doc = _load("tree.yaml", "drgpu.tree/1")
    known = set(stall_reasons())
    seen: set[str] = set()
    for g in doc["groups"]:
        for r in g["reasons"]:
            if r not in known:
                raise DataFileError(f"tree.yaml: group {g['id']} names unknown stall reason {r}")
            if r in seen:
                raise DataFileError(f"tree.yaml: stall reason {r} is in two groups")
            seen.add(r)
    missing = known - seen - set(doc.get("not_stalls", []))
    if missing:
        raise DataFileError(f"tree.yaml: stall reasons in no group: {sorted(missing)}")
    return doc


@functools.cache
def _threshold_doc() -> dict:
    return _load("thresholds.yaml", "drgpu.thresholds/1")


def threshold_docs() -> dict[str, dict]:
    return _threshold_doc()["thresholds"]


def thresholds(overrides: dict[str, float] | None = None, file: str | Path | None = None) -> Thresholds:
    """Default thresholds, then those of ``file`` (YAML mapping), then ``overrides``."""
    values = {k: float(v["default"]) for k, v in threshold_docs().items()}
    extra: dict[str, Any] = {}
    if file is not None:
        try:
            from ..io import read_input_bytes, require_input_file

            raw = read_input_bytes(require_input_file(file, "a thresholds file"), "a thresholds file")
        except OSError as e:
            raise DataFileError(f"cannot read thresholds file {file}: {e.strerror}") from e
        doc = _parse(decode_text(raw, str(file)), str(file))
        table = doc.get("thresholds", doc)
        if not isinstance(table, dict):
            raise DataFileError(
                f"{file}: 'thresholds' should map threshold names to numbers, found {type(table).__name__}",
                hint="e.g. thresholds: {sol_pct: 80}",
            )
        extra.update({str(k): (k, v) for k, v in table.items()})
    extra.update({k: (k, v) for k, v in (overrides or {}).items()})
    for k, (_, v) in extra.items():
        if k not in values:
            # A mistyped key is the user's usage, not a broken data file (exit 2, docs/errors.md).
            from ..errors import UsageError

            raise UsageError(f"unknown threshold '{k[:80]}'", hint="drgpu thresholds lists them")
        try:
            if isinstance(v, bool):
                raise TypeError("a boolean")
            values[k] = float(v)
        except (TypeError, ValueError, OverflowError) as e:
            raise DataFileError(f"threshold '{k}' must be a number, got {str(v)[:80]!r}") from e
        if not math.isfinite(values[k]) or values[k] < 0:
            raise DataFileError(f"threshold '{k}' must be a finite number >= 0, got {str(v)[:80]!r}")
    # Every key of the YAML is in ``values`` (tests/unit/test_records.py: the record names them all).
    return cast(Thresholds, values)


def decode_text(raw: bytes, origin: str) -> str:
    """The text of a user-given YAML file: UTF-8, or UTF-16/32 when a byte-order mark says
    so; anything else (binary data, UTF-16 without a mark) is a DataFileError (exit 8)."""
    import codecs

    boms = (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    )
    enc = next((e for bom, e in boms if raw.startswith(bom)), "utf-8")
    try:
        text = raw.decode(enc)
    except UnicodeDecodeError as e:
        raise DataFileError(
            f"{origin}: not a text file ({enc} cannot decode byte {e.start}: {e.reason})", hint="save it as UTF-8 YAML"
        ) from None
    if "\x00" in text:
        raise DataFileError(f"{origin}: not a text file (holds NUL bytes)", hint="save it as UTF-8 YAML")
    return text


@functools.cache
def findings_catalogue() -> dict:
    doc = _load("findings.yaml", "drgpu.findings/1")
    models = doc["speedup_models"]
    known_th = set(threshold_docs())
    ids: set[str] = set()
    for f in doc["findings"]:
        origin = f"findings.yaml finding {f['id']}"
        if f["id"] in ids:
            raise DataFileError(f"{origin}: duplicate id")
        ids.add(f["id"])
        if f["speedup_model"] not in models:
            raise DataFileError(f"{origin}: unknown speedup model {f['speedup_model']}")
        for t in f["thresholds"]:
            if t not in known_th:
                raise DataFileError(f"{origin}: unknown threshold {t}")
    return doc


#: The instruction classes attribution.yaml's cells name (analysis/attribution.py assigns them).
ATTRIBUTION_CLASSES = frozenset(
    ("global_load", "global_store", "local", "shared", "atomic", "constant", "fp32", "fp64", "fp16", "conversion")
    + ("sfu", "tensor", "int", "control", "barrier", "fence", "uniform", "other", "none")
)


@functools.cache
def attribution_cells() -> tuple[dict, ...]:
    """attribution.yaml's cells, in order, each checked against the stall reasons, the
    instruction classes and the findings' ids (what its JSON Schema cannot know)."""
    doc = _load("attribution.yaml", "drgpu.attribution/1")
    reasons = set(stall_reasons())
    ids = {f["id"] for f in findings_catalogue()["findings"]}
    seen: set[str] = set()
    for cell in doc["cells"]:
        origin = f"attribution.yaml cell {cell['mechanism']}"
        if cell["mechanism"] in seen:
            raise DataFileError(f"{origin}: duplicate mechanism")
        seen.add(cell["mechanism"])
        for what, got, known in (
            ("stall reason", cell["reasons"], reasons),
            ("instruction class", [c for c in cell["classes"] if c != "*"], ATTRIBUTION_CLASSES),
            ("finding", cell["owners"], ids),
        ):
            unknown = sorted(set(got) - known)
            if unknown:
                raise DataFileError(f"{origin}: unknown {what} {', '.join(unknown)}")
        if not cell["owners"] and not cell.get("work"):
            raise DataFileError(f"{origin}: a cell names the findings that own it, or is work")
    return tuple(doc["cells"])


@functools.cache
def library_kernel_patterns() -> tuple:
    """Compiled name patterns of library kernels (findings.yaml ``library_kernels``)."""
    return tuple(re.compile(p) for p in findings_catalogue().get("library_kernels", []))


@functools.cache
def library_helpers() -> tuple[tuple[str, re.Pattern[str], str], ...]:
    """(library, compiled name pattern, advice about the call) of each library whose helper
    kernels are library kernels whether or not the report has their source lines
    (findings.yaml ``library_helpers``)."""
    return tuple(
        (h["library"], re.compile(h["pattern"]), " ".join(h["use"].split()))
        for h in findings_catalogue().get("library_helpers", [])
    )


def _deep_merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


#: compute capability -> chip family file
CC_TO_CHIP = {
    "7.5": "tu102",
    "8.0": "ga100",
    "8.6": "ga102",
    "8.7": "ga102",
    "8.9": "ad102",
    "9.0": "gh100",
    "10.0": "gb100",
    "10.3": "gb100",
    "12.0": "gb202",
}


def known_chips() -> list[str]:
    return sorted(
        p.name[:-5]
        for p in resources.files(_DATA).joinpath("arch").iterdir()
        if p.name.endswith(".yaml") and p.name != "base.yaml"
    )


@functools.cache
def load_arch(chip: str | None) -> ArchConstants:
    """Constants for ``chip`` (e.g. 'gh100'); the base alone for unknown or missing chips."""
    base = _load("arch/base.yaml", "drgpu.arch/1")
    for key in ("issue_slots_per_sm", "max_warps_per_sm", "latency"):
        if key not in base:  # required of the base only: the schema is the overlays' too
            raise DataFileError(f"arch/base.yaml: top level: '{key}' is a required property")
    if not chip or chip not in known_chips():
        out = copy.deepcopy(base)
        out["name"] = chip or "unknown"
        out["known"] = False
        return cast(ArchConstants, out)
    over = _load(f"arch/{chip}.yaml", "drgpu.arch/1")
    unknown = set(over) - set(base) - {"inherits", "compute_capability"}
    if unknown:
        raise DataFileError(f"arch/{chip}.yaml: keys not in base.yaml: {sorted(unknown)}")
    merged = _deep_merge(base, over)
    merged["known"] = True
    return cast(ArchConstants, merged)


def chip_for(compute_capability: str | None) -> str | None:
    return CC_TO_CHIP.get((compute_capability or "").strip())


def share_dir(name: str) -> Path:
    """Folder of shipped non-Python data (``templates``, ``metric_sets``): inside the installed
    package (wheel) or at the source tree's top level (editable install, checkout)."""
    pkg = Path(__file__).resolve().parent.parent  # drgpu_py/ (this module is in drgpu_py/specs/)
    for cand in (pkg / "_share" / name, pkg.parent / name):
        if cand.is_dir():
            return cand
    raise DataFileError(f"the '{name}' folder is missing from the installation")
