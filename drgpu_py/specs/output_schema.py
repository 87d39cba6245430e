"""JSON Schemas (draft 2020-12) of drgpu's JSON outputs, shipped in drgpu_py/specs/schema/:
``analysis`` (``analyze -f json``, ``merge``), ``list`` (``list -f json``) and ``diff``
(``diff -f json``). docs/json-schema.md is the prose; a test keeps the two in step, and the
test suite validates every JSON document it makes against these files.

Contract: ``load(name) -> dict`` (cached); ``validate(doc, name)`` raises
``jsonschema.ValidationError`` on the first disagreement (the jsonschema package is imported
only then, for the message); ``is_valid(doc, name)`` answers without it.

Speed: jsonschema walks a document at about 20 us a value (30 ms for one kernel of an
analysis, ten minutes for 20,000). ``is_valid`` runs the same schema compiled once into
closures (``_compile``: the keywords these schemas use, the draft's rules: an integer may be
written 1.0, booleans are no numbers and equal no number in ``enum``/``const``), about 20
times faster; a keyword it does not know is refused when the schema is compiled, never
skipped. jsonschema runs only when that check fails, on the document with its ``kernels``
cut to the first failing one, to name where it breaks. tests/unit/test_output_schema_fast.py
checks that both agree on every shipped sample and on thousands of damaged copies.
"""

from __future__ import annotations

import functools
import json
import operator
from functools import partial
from importlib import resources
from typing import Any, Callable

NAMES = ("analysis", "list", "diff")

Check = Callable[[Any], bool]


@functools.cache
def load(name: str) -> dict:
    if name not in NAMES:
        raise ValueError(f"unknown schema {name!r}; one of {', '.join(NAMES)}")
    text = resources.files("drgpu_py").joinpath("specs", "schema", f"{name}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def _validator(name: str):
    import jsonschema

    schema = load(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "number": _is_number,
    "integer": lambda x: isinstance(x, int) and not isinstance(x, bool) or isinstance(x, float) and x.is_integer(),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}
_NOTES = frozenset({"description", "title", "$schema", "$id", "$defs", "$comment", "examples", "default"})


def _equal(a: Any, b: Any) -> bool:
    """JSON equality as the draft defines it (jsonschema's ``equal``): True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    return a == b


def _any(checks: list[Check], x: Any) -> bool:
    return any(c(x) for c in checks)


def _all(checks: list[Check], x: Any) -> bool:
    return all(c(x) for c in checks)


def _one(checks: list[Check], x: Any) -> bool:
    return sum(1 for c in checks if c(x)) == 1


def _not(check: Check, x: Any) -> bool:
    return not check(x)


def _in_strings(strings: frozenset[str], x: Any) -> bool:
    return isinstance(x, str) and x in strings


def _in_values(values: list[Any], x: Any) -> bool:
    return any(_equal(x, v) for v in values)


def _bound(op: Callable[[Any, Any], bool], bound: Any, x: Any) -> bool:
    return not _is_number(x) or op(x, bound)


def _length(op: Callable[[int, int], bool], n: int, x: Any) -> bool:
    return not isinstance(x, list) or op(len(x), n)


class _Compiler:
    """Closures for a schema's subschemas, one per subschema, shared by every ``$ref``."""

    def __init__(self, root: dict) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, target: str) -> Check:
        if target not in self.refs:
            if not target.startswith("#/$defs/"):
                raise ValueError(f"unsupported $ref {target!r}")
            holder: list[Check] = []
            self.refs[target] = lambda x: holder[0](x)  # a recursive $ref (Node's children)
            holder.append(self.compile(self.root["$defs"][target[len("#/$defs/") :]]))
            self.refs[target] = holder[0]
        return self.refs[target]

    def compile(self, s: Any) -> Check:  # noqa: C901, PLR0912, PLR0915 - one branch per keyword of the draft
        if s is True:
            return lambda x: True
        if s is False:
            return lambda x: False
        checks: list[Check] = []
        unknown = set(s) - _NOTES - {
            "type", "properties", "required", "additionalProperties", "$ref", "enum", "const", "items",
            "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "oneOf",
            "anyOf", "allOf", "not", "if", "then", "else", "propertyNames", "dependentRequired",
        }  # fmt: skip
        if unknown:
            raise ValueError(f"keyword(s) {', '.join(sorted(unknown))} not supported by the compiled check")
        if "type" in s:
            types = [s["type"]] if isinstance(s["type"], str) else list(s["type"])
            fns = [_TYPES[t] for t in types]
            if len(fns) == 1:
                checks.append(fns[0])
            else:
                checks.append(partial(_any, fns))
        if "enum" in s:
            values = list(s["enum"])
            if all(isinstance(v, str) for v in values):  # the common case: a set lookup
                strings = frozenset(values)
                checks.append(partial(_in_strings, strings))
            else:
                checks.append(partial(_in_values, values))
        if "const" in s:
            checks.append(partial(_in_values, [s["const"]]))
        for key, op in (
            ("minimum", operator.ge),
            ("maximum", operator.le),
            ("exclusiveMinimum", operator.gt),
            ("exclusiveMaximum", operator.lt),
        ):
            if key in s:
                checks.append(partial(_bound, op, s[key]))
        if "minItems" in s:
            checks.append(partial(_length, operator.ge, s["minItems"]))
        if "maxItems" in s:
            checks.append(partial(_length, operator.le, s["maxItems"]))
        if "items" in s:
            item = self.compile(s["items"])

            def items(x: Any, item: Check = item) -> bool:
                if isinstance(x, list):
                    for v in x:
                        if not item(v):
                            return False
                return True

            checks.append(items)
        if {"properties", "required", "additionalProperties", "propertyNames", "dependentRequired"} & set(s):
            if s.get("type") == "object":  # one closure for both: most values are such objects
                checks[0] = self._object(s, strict=True)
            else:
                checks.append(self._object(s))
        if "$ref" in s:
            checks.append(self.ref(s["$ref"]))
        if "allOf" in s:
            subs = [self.compile(x) for x in s["allOf"]]
            checks.append(partial(_all, subs))
        if "anyOf" in s:
            subs = [self.compile(x) for x in s["anyOf"]]
            checks.append(partial(_any, subs))
        if "oneOf" in s:
            subs = [self.compile(x) for x in s["oneOf"]]
            checks.append(partial(_one, subs))
        if "not" in s:
            negated = self.compile(s["not"])
            checks.append(partial(_not, negated))
        if "if" in s:
            cond = self.compile(s["if"])
            then = self.compile(s.get("then", True))
            other = self.compile(s.get("else", True))
            checks.append(lambda x: then(x) if cond(x) else other(x))
        if not checks:
            return lambda x: True
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks
            return lambda x: first(x) and second(x)

        def every(x: Any) -> bool:
            for c in checks:  # noqa: SIM110 - a loop: all() over a generator costs a third more here
                if not c(x):
                    return False
            return True

        return every

    def _object(self, s: dict, strict: bool = False) -> Check:
        """The object keywords of ``s``; ``strict``: and its ``"type": "object"``."""
        props = {k: self.compile(v) for k, v in (s.get("properties") or {}).items()}
        required = tuple(s.get("required") or ())
        extra = s.get("additionalProperties", True)
        other: Check | None = None if extra is True else self.compile(extra)
        names = self.compile(s["propertyNames"]) if "propertyNames" in s else None
        depends = {k: tuple(v) for k, v in (s.get("dependentRequired") or {}).items()}

        def check(x: Any) -> bool:
            if not isinstance(x, dict):
                return not strict
            for r in required:
                if r not in x:
                    return False
            for k, v in x.items():
                c = props.get(k)
                if c is None:
                    c = other
                if c is not None and not c(v):
                    return False
                if names is not None and not names(k):
                    return False
                if k in depends and any(d not in x for d in depends[k]):
                    return False
            return True

        return check


@functools.cache
def _compiled(name: str) -> Check:
    return _Compiler(load(name)).compile(load(name))


@functools.cache
def _compiled_kernel(name: str) -> Check | None:
    """The check of one item of the schema's top-level ``kernels`` list (None: it has none)."""
    items = load(name).get("properties", {}).get("kernels", {}).get("items")
    return None if items is None else _Compiler(load(name)).compile(items)


@functools.cache
def _kernels_apart(name: str) -> bool:
    """Whether a document's kernels may be checked one at a time: its ``kernels`` property
    is a plain array of items and no top-level keyword looks into the whole document."""
    schema = load(name)
    kernels = schema.get("properties", {}).get("kernels", {})
    whole = {"allOf", "anyOf", "oneOf", "not", "if", "$ref", "dependentSchemas", "unevaluatedProperties"}
    return set(kernels) <= {"type", "items", "description"} and not whole & set(schema)


#: Kernels checked between two calls of a ``progress`` callback.
PROGRESS_EVERY = 500


def is_valid(doc: Any, name: str, progress: Callable[[int, int], None] | None = None) -> bool:
    """Whether ``doc`` follows schema ``name`` (the compiled check; no jsonschema).
    ``progress(done, total)`` is called as its kernels are checked, when there are some."""
    kernels = doc.get("kernels") if isinstance(doc, dict) else None
    if progress is None or not isinstance(kernels, list) or not _kernels_apart(name):
        return _compiled(name)(doc)
    check = _compiled_kernel(name)
    if check is None or not _compiled(name)({**doc, "kernels": []}):
        return _compiled(name)(doc)
    for i, k in enumerate(kernels):
        if not check(k):
            return False
        if i % PROGRESS_EVERY == PROGRESS_EVERY - 1:
            progress(i + 1, len(kernels))
    progress(len(kernels), len(kernels))
    return True


def validate(doc, name: str, progress: Callable[[int, int], None] | None = None) -> None:
    """Raise jsonschema.ValidationError (the most relevant error) if ``doc`` breaks schema
    ``name``; ``progress`` as for ``is_valid``."""
    if is_valid(doc, name, progress):
        return
    import jsonschema

    part, at = doc, None
    kernel = _compiled_kernel(name)
    if kernel is not None and isinstance(doc, dict) and isinstance(doc.get("kernels"), list):
        # jsonschema over 20,000 kernels takes minutes: give it the first failing one only.
        at = next((i for i, k in enumerate(doc["kernels"]) if not kernel(k)), None)
        part = {**doc, "kernels": [] if at is None else [doc["kernels"][at]]}
    err = jsonschema.exceptions.best_match(_validator(name).iter_errors(part))
    if err is None and part is not doc:
        part, at = doc, None
        err = jsonschema.exceptions.best_match(_validator(name).iter_errors(doc))
    if err is None:
        return  # the compiled check is stricter than the schema here: jsonschema is the reference
    if at is not None and len(err.path) > 1 and err.path[0] == "kernels" and err.path[1] == 0:
        err.path[1] = at  # the kernel's place in the whole document
    raise err
