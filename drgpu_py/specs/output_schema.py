"""JSON Schemas (draft 2020-12) of drgpu's JSON outputs, shipped in drgpu_py/specs/schema/:
``analysis`` (``analyze -f json``, ``merge``), ``list`` (``list -f json``) and ``diff``
(``diff -f json``). docs/json-schema.md is the prose; a test keeps the two in step, and the
test suite validates every JSON document it makes against these files.

Contract: ``load(name) -> dict`` (cached); ``validate(doc, name)`` raises
``jsonschema.ValidationError`` on the first disagreement (the jsonschema package is imported
only then, for the message); ``is_valid(doc, name)`` answers without it. Every document
carries ``schema_version``, ``SCHEMA_VERSION`` (MAJOR.MINOR, shared by the three; its history
in docs/json-schema.md, "Schema versions"); ``reads(version)`` says whether this drgpu reads a
document of that version.

Speed: jsonschema walks a document at about 20 us a value (30 ms for one kernel of an
analysis, ten minutes for 20,000). ``is_valid`` runs the same schema compiled once by
fastjsonschema (generated Python, about 20 times faster). jsonschema runs only when that check
fails, on the document with its ``kernels`` cut to the first failing one, to name where it
breaks. tests/unit/test_output_schema_fast.py checks that both agree on every shipped sample
and on thousands of damaged copies.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Callable

NAMES = ("analysis", "list", "diff")

#: The version of the JSON contract the three documents follow, MAJOR.MINOR: the minor grows
#: when keys are added, the major when a key is removed, renamed or changes its meaning.
SCHEMA_VERSION = "1.3"


def _major_minor(version: object) -> tuple[int, int] | None:
    parts = version.split(".") if isinstance(version, str) else []
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def reads(version: object) -> bool:
    """Whether this drgpu reads a document of ``schema_version`` ``version``: one of its own
    major version up to its own minor, or one without (None: written before the contract was
    versioned, read as before)."""
    if version is None:
        return True
    theirs, ours = _major_minor(version), _major_minor(SCHEMA_VERSION)
    return theirs is not None and ours is not None and theirs[0] == ours[0] and theirs[1] <= ours[1]


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


def _as_draft7(schema: Any) -> Any:
    """A copy of ``schema`` in the draft fastjsonschema knows (draft 7): the one 2019+ keyword
    these schemas use, ``dependentRequired``, is draft 7's ``dependencies`` with lists of
    names. (fastjsonschema would skip a keyword it does not know; it also rewrites the
    references of the schema it is given, so it gets this copy.)"""
    if isinstance(schema, dict):
        return {("dependencies" if k == "dependentRequired" else k): _as_draft7(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_as_draft7(v) for v in schema]
    return schema


def _fast(schema: dict[str, Any]) -> Check:
    """``schema`` compiled by fastjsonschema (generated Python, about 20 times faster than
    jsonschema), as a yes/no check."""
    import fastjsonschema

    draft7 = {**_as_draft7(schema), "$schema": "http://json-schema.org/draft-07/schema#"}
    validate = fastjsonschema.compile(draft7, use_formats=False)

    def check(doc: Any) -> bool:
        try:
            validate(doc)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return check


@functools.cache
def _compiled(name: str) -> Check:
    return _fast(load(name))


@functools.cache
def _compiled_kernel(name: str) -> Check | None:
    """The check of one item of the schema's top-level ``kernels`` list (None: it has none).
    The item's references point into the whole schema: it is compiled with the schema's
    ``$defs`` beside it."""
    schema = load(name)
    items = schema.get("properties", {}).get("kernels", {}).get("items")
    if items is None:
        return None
    return _fast({**{k: v for k, v in schema.items() if k in ("$schema", "$defs")}, **items})


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
