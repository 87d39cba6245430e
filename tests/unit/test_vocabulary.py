"""One accessor for each of two quantities the analysis used to write out by hand:

- a share of all warp time as a share of the stall cycles: ``KernelContext.as_stall_share``
  (not ``min(1.0, x * ctx.total / max(ctx.stall_total, 1e-9))``);
- threads and warps per block: ``KernelProfile.threads_per_block`` and ``warps_per_block``
  (not ``kernel.block[0] * kernel.block[1] * kernel.block[2]``), None when the block is not
  measured.

The accessors are tested here, and every module under drgpu_py/ is parsed with ``ast``
(nothing imported) to keep the hand-written forms from coming back outside them."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from drgpu_py.analysis.context import KernelContext
from drgpu_py.profile import KernelProfile

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "drgpu_py"
#: Where each hand-written form may stay: (module path under drgpu_py/, function).
STALL_SHARE_HOME = ("analysis/context.py", "as_stall_share")
BLOCK_HOME = ("profile.py", "threads_per_block")


# ---- the accessors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "threads", "warps"),
    [
        ((256, 1, 1), 256, 8),
        ((16, 16, 1), 256, 8),
        ((8, 4, 2), 64, 2),
        ((33, 1, 1), 33, 2),
        ((16, 1, 1), 16, 1),
        ((1, 1, 1), 1, 1),
        ((0, 0, 0), None, None),  # not measured (a report without launch statistics)
        ((256, 0, 1), None, None),  # a dimension 0: no block
        ((-2, -2, 1), None, None),  # a damaged report's dimensions
    ],
)
def test_threads_and_warps_per_block(block, threads, warps):
    kernel = KernelProfile(id=0, name="k", block=block)
    assert kernel.threads_per_block == threads
    assert kernel.warps_per_block == warps


def _context(total: float, stall_total: float) -> KernelContext:
    return KernelContext(
        kernel=KernelProfile(id=0, name="k"),
        th={},
        arch={},
        reasons={},
        reason_source="none",
        total=total,
        stall_total=stall_total,
        units={},
    )


def test_as_stall_share():
    ctx = _context(total=10.0, stall_total=8.0)
    assert ctx.as_stall_share(0.4) == pytest.approx(0.5)  # 4 of 10 warp-cycles, 4 of 8 stalled ones
    assert ctx.as_stall_share(0.0) == 0.0
    assert ctx.as_stall_share(0.9) == 1.0  # at most all of the stalls
    no_stalls = _context(total=10.0, stall_total=0.0)
    assert no_stalls.as_stall_share(0.0) == 0.0
    assert no_stalls.as_stall_share(0.1) == 1.0
    assert math.isfinite(_context(total=0.0, stall_total=0.0).as_stall_share(0.5))


# ---- the hand-written forms ----------------------------------------------------------------------


def _attributes(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _is_block(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "block"


def _block_size_by_hand(node: ast.AST) -> bool:
    """An element of ``.block``, ``.block`` unpacked into names, or a ``prod`` of it."""
    if isinstance(node, ast.Subscript):
        return _is_block(node.value)
    if isinstance(node, ast.Assign):
        return _is_block(node.value) and isinstance(node.targets[0], ast.Tuple)
    if isinstance(node, ast.Call) and any(_is_block(a) for a in node.args):
        func = node.func
        return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "prod"
    return False


def _enclosing_functions(tree: ast.AST) -> dict[int, str]:
    """id(node) -> the name of the innermost function holding it."""
    out: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else name
            out[id(child)] = inner
            visit(child, inner)

    visit(tree, "")
    return out


def hand_written(source: str) -> list[tuple[int, str, str]]:
    """(line, function, what) of each hand-written stall-share conversion (a division by
    something of ``.stall_total`` of something of ``.total``) and each hand-made block
    size (an element of ``.block``, ``.block`` unpacked into names, a ``prod`` of it)."""
    tree = ast.parse(source)
    where = _enclosing_functions(tree)
    found = []
    for node in ast.walk(tree):
        what = None
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and "stall_total" in _attributes(node.right)
            and "total" in _attributes(node.left)
        ):
            what = "stall share"
        elif _block_size_by_hand(node):
            what = "block size"
        if what:
            found.append((node.lineno, where.get(id(node), ""), what))
    return found


@pytest.mark.parametrize(
    "source",
    [
        "s = min(1.0, x * ctx.total / max(ctx.stall_total, 1e-9))",
        "s = share * self.total / self.stall_total",
        "t = kernel.block[0] * kernel.block[1] * kernel.block[2]",
        "t = (k.block[0] or 1) * (k.block[1] or 1)",
        "x, y, z = kernel.block",
        "t = math.prod(kernel.block)",
        "t = np.prod(k.block)",
    ],
)
def test_the_check_finds_hand_written_forms(source):
    assert hand_written(source)


@pytest.mark.parametrize(
    "source",
    [
        "s = ctx.as_stall_share(x)",
        "s = sum(w) / max(ctx.stall_total, 1e-9)",  # stall weight over stall weight: already a stall share
        "f = share * ctx.stall_total / ctx.total",  # the other way
        "t = kernel.threads_per_block",
        "key = (kernel.name, tuple(kernel.block))",
        "b = cfg.block_of[j]",
    ],
)
def test_the_check_passes_the_accessors(source):
    assert not hand_written(source)


def test_no_hand_written_stall_share_or_block_size():
    homes = {STALL_SHARE_HOME, BLOCK_HOME}
    offenders = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(PACKAGE_DIR).as_posix()
        for line, func, what in hand_written(path.read_text(encoding="utf-8")):
            if (rel, func) not in homes:
                offenders.append(f"drgpu_py/{rel}:{line} ({func or 'module'}): {what}")
    assert not offenders, (
        "use KernelContext.as_stall_share(frac) for a share of the time as a share of the stalls, and "
        "KernelProfile.threads_per_block / warps_per_block for a block's size:\n" + "\n".join(offenders)
    )
