"""Advice variants from the code's shape (drgpu_py/analysis/advice_shape.py) on constructed
facts: every advice template of the findings catalogue (``advice``, ``caller_advice`` and
each ``advice_when`` text) is chosen where its fact holds and not where it does not, and
renders with no unfilled placeholder. tests/samples/test_advice_shape.py checks the same
choices on real reports."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
import yaml

from drgpu_py.analysis.advice_shape import FACTS, Shape, advice_key, advice_text, is_header, library
from drgpu_py.analysis.detectors import REGISTRY
from drgpu_py.analysis.findings import _render

ROOT = Path(__file__).resolve().parents[2]

#: For each fact, a shape where it holds and no other fact does.
WITH = {
    "library": Shape(library=True),
    "header": Shape(header=True),
    "in_loop": Shape(in_loop=True),
    "loop_free": Shape(in_loop=False),
    "grid_stride": Shape(work_split="grid-stride"),
    "fixed_work": Shape(work_split="per-thread"),
}
#: A shape where no fact holds (nothing known about the code).
NONE = Shape()


def _without(fact: str) -> list[Shape]:
    """Shapes where ``fact`` does not hold: nothing known, and each other fact alone."""
    return [NONE] + [shape for name, shape in WITH.items() if name != fact]


def catalogue() -> list[dict]:
    return yaml.safe_load((ROOT / "drgpu_py" / "specs" / "findings.yaml").read_text(encoding="utf-8"))["findings"]


def templates() -> list:
    """(spec, key) of every advice template: advice, caller_advice, advice_when.KEY."""
    out = []
    for spec in catalogue():
        keys = ["advice"] + (["caller_advice"] if "caller_advice" in spec else [])
        keys += [f"advice_when.{k}" for k in spec.get("advice_when") or {}]
        out += [pytest.param(spec, key, id=f"{spec['id']}:{key}") for key in keys]
    return out


def _detector_variants(spec: dict) -> set[str]:
    """The advice_when keys of ``spec`` that are no fact: its detector's own variants."""
    return {k for k in spec.get("advice_when") or {} if k not in FACTS}


def test_every_fact_has_its_shape_here():
    assert set(WITH) == set(FACTS) | {"library"}
    for name, fact in FACTS.items():
        assert fact(WITH[name]) and not any(fact(s) for s in _without(name)), name


@pytest.mark.parametrize("spec,key", templates())
def test_each_template_is_chosen_with_its_fact_and_not_without(spec, key):
    when = spec.get("advice_when") or {}
    name = key.removeprefix("advice_when.")
    if key == "caller_advice":
        assert advice_key(spec, None, WITH["library"]) == key
        assert all(advice_key(spec, None, s) != key for s in _without("library"))
    elif key == "advice":
        # The base text: chosen where no fact of its variants holds and no detector variant.
        assert advice_key(spec, None, NONE) == key
        for fact in set(FACTS) - set(when):
            assert advice_key(spec, None, WITH[fact]) == key, fact
    elif name in FACTS:
        # Alone, a fact picks its text; the variants listed before it win where theirs hold too.
        assert advice_key(spec, None, WITH[name]) == key
        assert all(advice_key(spec, None, s) != key for s in _without(name))
    else:
        # A detector's variant, picked from its evidence, wins over the code's shape (not over
        # a library kernel's caller advice: the user cannot change the kernel).
        for shape in [NONE, *WITH.values()]:
            expected = "caller_advice" if library(shape) and "caller_advice" in spec else key
            assert advice_key(spec, name, shape) == expected
        assert advice_key(spec, None, NONE) != key


@pytest.mark.parametrize("spec,key", templates())
def test_each_template_renders_with_no_unfilled_placeholder(spec, key):
    text = advice_text(spec, key)
    values = {}
    for _, field, fmt_spec, _ in string.Formatter().parse(text):
        if field is not None:
            values[re.match(r"[^.\[]*", field).group(0)] = 1.5 if fmt_spec else "X"
    rendered = _render(text, values)
    assert "{" not in rendered and "}" not in rendered, rendered
    assert rendered.count("?") == text.count("?"), rendered  # a missing key renders as "?"
    assert not values or rendered != text  # a failed format leaves the text as it is


@pytest.mark.parametrize("spec", catalogue(), ids=lambda spec: spec["id"])
def test_variants_are_facts_or_named_by_their_detector(spec):
    """An advice_when key is a fact of the code's shape or a variant its detector returns (the
    name appears as a string in the rule module)."""
    import inspect

    source = inspect.getsource(inspect.getmodule(REGISTRY[spec["detector"]].run))
    for variant in _detector_variants(spec):
        assert f'"{variant}"' in source, (spec["id"], variant)


@pytest.mark.parametrize(
    "file,expected",
    [
        ("/usr/local/cuda/include/device_atomic_functions.hpp", True),
        ("/opt/cutlass/include/cutlass/gemm/kernel.h", True),
        ("kernels/common.cuh", True),
        ("/opt/samples/queue_fence.cu", False),
        (None, False),
        ("", False),
    ],
)
def test_header_files(file, expected):
    assert is_header(file) is expected


def test_header_wins_over_the_loop_where_both_hold():
    spec = next(s for s in catalogue() if s["id"] == "memory-latency")
    both = Shape(header=True, in_loop=False)
    assert advice_key(spec, None, both) == "advice_when.header"
    assert advice_key(spec, None, Shape(in_loop=False)) == "advice_when.loop_free"
    assert advice_key(spec, None, Shape(in_loop=True)) == "advice"


def test_unknown_shape_holds_no_fact():
    """No CFG, no location, no launch shape: nothing is known, and no fact holds (the base
    advice)."""
    from types import SimpleNamespace

    from drgpu_py.analysis.advice_shape import shape_of

    ctx = SimpleNamespace(cfg=None, row_map=dict)
    passes = SimpleNamespace(launch=None)
    shape = shape_of(ctx, passes, [], library=False)
    assert shape == NONE
    located = shape_of(ctx, passes, [{"file": "/usr/include/x.h", "line": 3, "pc_offset": 16}], library=False)
    assert located.header and located.in_loop is None
