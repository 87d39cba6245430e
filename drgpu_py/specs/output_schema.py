"""JSON Schemas (draft 2020-12) of drgpu's JSON outputs, shipped in drgpu_py/specs/schema/:
``analysis`` (``analyze -f json``, ``merge``), ``list`` (``list -f json``) and ``diff``
(``diff -f json``). docs/json-schema.md is the prose; a test keeps the two in step, and the
test suite validates every JSON document it makes against these files.

Contract: ``load(name) -> dict`` (cached); ``validate(doc, name)`` raises
``jsonschema.ValidationError`` on the first disagreement (the jsonschema package is imported
only here, on use)."""

from __future__ import annotations

import functools
import json
from importlib import resources

NAMES = ("analysis", "list", "diff")


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


def validate(doc, name: str) -> None:
    """Raise jsonschema.ValidationError (the most relevant error) if ``doc`` breaks schema ``name``."""
    import jsonschema

    err = jsonschema.exceptions.best_match(_validator(name).iter_errors(doc))
    if err is not None:
        raise err
