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
        _array(o, out, nl, _encode)
    elif isinstance(o, dict):
        _object(o, out, nl, _json_key, _encode)
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

    def write(self, item, out: list[str], nl: str) -> None:
        part: list[str] = []
        _encode_clean(self.make(item), part, nl)
        out.append("".join(part))


def _json_key(k) -> str:
    if not isinstance(k, str):  # json's key coercions (bool, None, numbers) and errors
        k = next(iter(json.loads(json.dumps({k: 0}))))
    return _encode_str(k)


def _str_key(k) -> str:
    return _encode_str(str(k))  # _clean's key rule


def _object(o: dict, out: list[str], nl: str, key, write) -> None:
    """A JSON object as json.dumps(indent=2) lays it out: keys by ``key``, values by ``write``."""
    if not o:
        out.append("{}")
        return
    inner = nl + "  "
    sep = "{" + inner
    for k, v in o.items():
        out.append(sep)
        sep = "," + inner
        out.append(key(k))
        out.append(": ")
        write(v, out, inner)
    out.append(nl + "}")


def _array(items, out: list[str], nl: str, write) -> None:
    """A JSON array as json.dumps(indent=2) lays it out, each item written by ``write``."""
    if not items:
        out.append("[]")
        return
    inner = nl + "  "
    sep = "[" + inner
    for v in items:
        out.append(sep)
        sep = "," + inner
        write(v, out, inner)
    out.append(nl + "]")


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
        _array(o.items, out, nl, o.write)
    elif isinstance(o, dict):
        _object(o, out, nl, _str_key, _encode_clean)
    elif isinstance(o, (list, tuple)):
        _array(o, out, nl, _encode_clean)
    elif hasattr(o, "item"):  # numpy scalars
        _encode_clean(o.item(), out, nl)
    else:
        _encode(o, out, nl)


@register("json", (".json",))
def render_json(analysis, options) -> str:
    doc = analysis.to_dict(kernels=False)
    doc["kernels"] = _Each(analysis.kernels, lambda ka: ka.to_dict())
    return dumps_clean(doc) + "\n"
