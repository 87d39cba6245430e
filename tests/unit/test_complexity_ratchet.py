"""A ratchet on drgpu_py's complexity (radon): the share of functions with cyclomatic
complexity at or above the threshold, and the number of functions of 50 lines or more, may
not rise above the ceilings in tests/data/complexity_ceiling.json. A change that lowers them
lowers the ceilings too, so the figures can only go down."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

radon_complexity = pytest.importorskip("radon.complexity", reason="radon is in the lint extra")

ROOT = Path(__file__).resolve().parents[2]
CEILING = json.loads((ROOT / "tests/data/complexity_ceiling.json").read_text())


def _functions(blocks: Iterable) -> Iterator:
    """Every function and method radon sees, nested ones included."""
    for block in blocks:
        if hasattr(block, "methods"):  # a class
            yield from _functions(block.methods)
            continue
        yield block
        yield from _functions(block.closures)


@functools.cache
def _figures() -> tuple[float, int]:
    functions = [
        f
        for path in sorted((ROOT / "drgpu_py").rglob("*.py"))
        for f in _functions(radon_complexity.cc_visit(path.read_text()))
    ]
    high = sum(f.complexity >= CEILING["high_complexity_threshold"] for f in functions)
    long = sum(f.endline - f.lineno + 1 >= CEILING["long_function_lines"] for f in functions)
    return 100.0 * high / len(functions), long


def test_complexity_does_not_rise():
    share, long = _figures()
    assert share <= CEILING["high_complexity_share_pct"] + 0.05, (
        f"{share:.1f}% of functions at complexity >= {CEILING['high_complexity_threshold']} "
        f"(ceiling {CEILING['high_complexity_share_pct']}%): name the decisions (small predicates, "
        "early returns, tables) instead of nesting them"
    )
    assert long <= CEILING["long_functions"], f"{long} functions of {CEILING['long_function_lines']}+ lines"


def test_the_ceiling_is_tight():
    """The ceilings follow the code down: a figure well under its ceiling means the ceiling
    should be lowered (to keep the gain)."""
    share, long = _figures()
    assert share >= CEILING["high_complexity_share_pct"] - 1.0
    assert long >= CEILING["long_functions"] - 5
