"""JSON renderer: the machine contract (docs/json-schema.md, drgpu_py/specs/schema/
analysis.schema.json). ``dumps`` writes any drgpu document: indented by two spaces, UTF-8
text as is, numpy scalars and arrays as numbers, NaN and infinities as null (JSON has
neither). orjson does the encoding; without it, the standard library with the same rules."""

from __future__ import annotations

import math

from ..io import document_text
from . import register


def _clean(o):
    """``o`` with what JSON cannot hold replaced: non-finite floats -> None, numpy -> Python,
    keys -> str (the standard-library path, and the reference the tests compare with)."""
    if isinstance(o, float):
        return None if math.isnan(o) or math.isinf(o) else o
    if isinstance(o, dict):
        return {_key(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if hasattr(o, "tolist"):  # numpy scalars and arrays
        return _clean(o.tolist())
    return o


def _key(k) -> str:
    # json's (and orjson's) key coercions: None -> "null", True -> "true", numbers as text.
    if isinstance(k, str):
        return k
    if k is None or isinstance(k, bool):
        return {None: "null", True: "true", False: "false"}[k]
    return str(k.item() if hasattr(k, "item") else k)


def dumps(o) -> str:
    """``o`` as indented JSON text (see the module docstring)."""
    return document_text(_dumps(o))


def _dumps(o) -> str:
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency; kept working without it
        import json

        from ..io import clean_text

        return clean_text(json.dumps(_clean(o), indent=2, ensure_ascii=False))
    opts = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(o, option=opts).decode("utf-8")
    except orjson.JSONEncodeError:
        # What orjson refuses (an int beyond 64 bits, a numpy array of objects, a lone
        # surrogate from a file name that is not UTF-8): the standard library, as valid UTF-8.
        import json

        from ..io import clean_text

        return clean_text(json.dumps(_clean(o), indent=2, ensure_ascii=False))


@register("json", (".json",))
def render_json(analysis, options) -> str:
    return dumps(analysis.to_dict()) + "\n"
