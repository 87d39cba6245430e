"""``output_schema.is_valid`` (the schemas compiled by fastjsonschema) agrees with jsonschema:
on a real analysis, on thousands of damaged copies of it (every kind of value put at random
places, keys removed and added), and on the draft's corner cases (1.0 is an integer, True
is no number and equals no number). ``validate`` names the first failing kernel at its place
in the whole document."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import orjson
import pytest

from conftest import run_cli, slow
from drgpu_py.specs import output_schema as o

ROOT = Path(__file__).resolve().parents[2]
R = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"


@pytest.fixture(scope="module")
def analysis(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("a") / "a.json"
    r = run_cli("analyze", str(R), "-f", "json", "-o", str(out), "-q", timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def _paths(x, at=()):
    yield at
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, (*at, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, (*at, i))


_VALUES = [None, True, False, 0, 1, -1, 1.0, 1.5, -0.5, "", "x", "high", "memory", [], [1], {}, {"zz": 1}, 2**40]


def _copy(doc):
    """A deep copy of a JSON document (a JSON round trip: equal values, new containers; several
    times faster than copy.deepcopy on an analysis)."""
    return orjson.loads(orjson.dumps(doc))


def _mutate(doc: dict, rnd: random.Random, paths: list | None = None) -> dict:
    """A damaged copy of DOC; PATHS: those of DOC (``_paths``), when the caller made them once."""
    d = _copy(doc)
    paths = [p for p in _paths(d) if p] if paths is None else paths
    for _ in range(rnd.choice([1, 1, 2])):
        path = rnd.choice(paths)
        parent = d
        try:
            for k in path[:-1]:
                parent = parent[k]
            last = path[-1]
            how = rnd.random()
            if how < 0.15 and isinstance(parent, dict):
                del parent[last]
            elif how < 0.25 and isinstance(parent, dict):
                parent[f"zz{rnd.randint(0, 9)}"] = rnd.choice(_VALUES)
            elif how < 0.35 and isinstance(parent, list):
                parent.append(copy.deepcopy(rnd.choice([parent[0], *_VALUES])))
            else:
                parent[last] = copy.deepcopy(rnd.choice(_VALUES))
        except (KeyError, IndexError, TypeError):
            pass
    return d


@slow  # 600 damaged copies
def test_agrees_with_jsonschema_on_a_real_analysis_and_damaged_copies(analysis):
    reference = o._validator("analysis")
    assert o.is_valid(analysis, "analysis") and reference.is_valid(analysis)
    rnd = random.Random(35)
    seen = {True: 0, False: 0}
    paths = [p for p in _paths(analysis) if p]  # every copy has the same ones
    for _ in range(600):
        d = _mutate(analysis, rnd, paths)
        want = reference.is_valid(d)
        assert o.is_valid(d, "analysis") == want, json.dumps(d)[:2000]
        seen[want] += 1
    assert seen[True] > 50 and seen[False] > 200, seen  # both sides exercised


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 1.0),
        ({"type": "integer"}, 1.5),
        ({"type": "integer"}, True),
        ({"type": "number"}, False),
        ({"enum": [1, "a"]}, True),
        ({"enum": [1, "a"]}, 1.0),
        ({"const": 0}, False),
        ({"const": [1, {"a": True}]}, [1, {"a": 1}]),
        ({"minimum": 0}, "x"),
        ({"minimum": 0}, -1),
        ({"exclusiveMinimum": 0}, 0),
        ({"maxItems": 1}, [1, 2]),
        ({"propertyNames": {"enum": ["a"]}}, {"b": 1}),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}),
        ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, 1),
        ({"if": {"type": "string"}, "then": {"enum": ["a"]}, "else": {"type": "null"}}, "b"),
        ({"not": {"type": "null"}}, None),
    ],
)
def test_the_drafts_corner_cases(schema, value):
    import jsonschema

    want = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert o._fast(schema)(value) == want


def test_validate_names_the_failing_kernel_at_its_place(analysis):
    import jsonschema

    doc = {**analysis, "kernels": [copy.deepcopy(analysis["kernels"][0]) for _ in range(40)]}
    doc["kernels"][33]["bound"] = 7
    with pytest.raises(jsonschema.ValidationError) as e:
        o.validate(doc, "analysis")
    assert list(e.value.absolute_path)[:3] == ["kernels", 33, "bound"]


def test_progress_is_reported_as_kernels_are_checked(analysis, tmp_path, monkeypatch):
    """A long load says how far it is (docs/compare.md): kernels are checked one at a time,
    with the same answer as the whole document's check."""
    from drgpu_py.analysis import saved

    assert o._kernels_apart("analysis")
    doc = _copy({**analysis, "kernels": [analysis["kernels"][0]] * 1200})  # 1,200 separate copies
    calls: list[tuple[int, int]] = []
    assert o.is_valid(doc, "analysis", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(500, 1200), (1000, 1200), (1200, 1200)]
    doc["kernels"][700]["bound"] = 7
    assert not o.is_valid(doc, "analysis", progress=lambda d, t: None) and not o.is_valid(doc, "analysis")
    small = {**analysis, "kernels": [copy.deepcopy(analysis["kernels"][0]) for _ in range(12)]}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(small))
    monkeypatch.setattr(saved, "PROGRESS_FROM", 10)
    seen: list[tuple[int, int]] = []
    saved.load_analysis_json(p, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(12, 12)]
