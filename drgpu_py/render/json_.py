"""JSON renderer: the machine contract (docs/json-schema.md). NaN is written as null."""
from __future__ import annotations

import json
import math

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


@register("json", (".json",))
def render_json(analysis, options) -> str:
    return json.dumps(_clean(analysis.to_dict()), indent=2, ensure_ascii=False) + "\n"
