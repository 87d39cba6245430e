"""JSON renderer: the machine contract (docs/json-schema.md). NaN is written as null."""
from __future__ import annotations

import json
import math
from json.encoder import encode_basestring as _encode_str

from . import register


def _clean(o):
    if isinstance(o, float):
        return None if math.isnan(o) or math.isinf(o) else o
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if hasattr(o, "item"):  # numpy scalars
        return _clean(o.item())
    return o


def dumps_indented(o) -> str:
    """``json.dumps(o, indent=2, ensure_ascii=False)``, byte for byte, several times faster:
    with an indent the json module encodes in pure Python, which dominated writing the JSON
    of a thousand kernels. Strings go through json's own (C) string encoder."""
    out: list[str] = []
    _encode(o, out, "\n")
    return "".join(out)


def _encode(o, out: list[str], nl: str) -> None:
    # The same type tests, in the same order, as json.encoder._make_iterencode.
    if isinstance(o, str):
        out.append(_encode_str(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(json.dumps(o) if o != o or o in (math.inf, -math.inf) else float.__repr__(o))
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "[" + inner
        for v in o:
            out.append(sep)
            sep = "," + inner
            _encode(v, out, inner)
        out.append(nl + "]")
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + "  "
        sep = "{" + inner
        for k, v in o.items():
            if not isinstance(k, str):  # json's key coercions (bool, None, numbers) and errors
                k = json.loads(json.dumps({k: 0}))
                k = next(iter(k))
            out.append(sep)
            sep = "," + inner
            out.append(_encode_str(k))
            out.append(": ")
            _encode(v, out, inner)
        out.append(nl + "}")
    else:
        out.append(json.dumps(o, indent=2, ensure_ascii=False))  # raises TypeError as json does


def dumps_clean(o) -> str:
    """``dumps_indented(_clean(o))`` in one pass over ``o``."""
    out: list[str] = []
    _encode_clean(o, out, "\n")
    return "".join(out)


_SCALARS = {str: _encode_str, int: int.__repr__, bool: lambda b: "true" if b else "false",
            type(None): lambda _: "null"}


class _Each:
    """A list written item by item: each item is made by ``make`` when it is written, encoded
    to one string, and dropped, so a document of many kernels never exists whole as objects."""

    def __init__(self, items, make) -> None:
        self.items, self.make = items, make


def _encode_clean(o, out: list[str], nl: str) -> None:
    # Exact str/int/bool/None first (most of the values; the hasattr test below is slow on
    # them), written as _encode writes them; then _clean's tests in _clean's order, then
    # what json does with what _clean returns.
    scalar = _SCALARS.get(type(o))
    if scalar is not None:
        out.append(scalar(o))
    elif isinstance(o, float):
        out.append("null" if math.isnan(o) or math.isinf(o) else float.__repr__(o))
    elif isinstance(o, _Each):
        if not o.items:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "[" + inner
        for item in o.items:
            out.append(sep)
            sep = "," + inner
            part: list[str] = []
            _encode_clean(o.make(item), part, inner)
            out.append("".join(part))
        out.append(nl + "]")
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + "  "
        sep = "{" + inner
        for k, v in o.items():
            out.append(sep)
            sep = "," + inner
            out.append(_encode_str(str(k)))
            out.append(": ")
            _encode_clean(v, out, inner)
        out.append(nl + "}")
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "[" + inner
        for v in o:
            out.append(sep)
            sep = "," + inner
            _encode_clean(v, out, inner)
        out.append(nl + "]")
    elif hasattr(o, "item"):  # numpy scalars
        _encode_clean(o.item(), out, nl)
    else:
        _encode(o, out, nl)


@register("json", (".json",))
def render_json(analysis, options) -> str:
    doc = analysis.to_dict(kernels=False)
    doc["kernels"] = _Each(analysis.kernels, lambda ka: ka.to_dict())
    return dumps_clean(doc) + "\n"
