"""The import graph of drgpu_py: no import circles, and no import from a lower layer to a
higher one.

Every module under drgpu_py/ is parsed with ``ast`` (nothing is imported, nothing outside
the repository is read) and every import statement in it counts: top-level ones, those
inside functions and classes, under ``if TYPE_CHECKING:`` and in ``try`` blocks. Relative
imports are resolved to absolute module names. ``import a.b`` and ``from a.b import name``
import module ``a.b`` (a package: its ``__init__``); ``from a import b`` where ``a.b`` is a
module (``from . import outcome``) imports that submodule. Imports of modules outside
drgpu_py, a module's imports of itself and imports by name at run time
(``importlib.import_module``, ``__import__``) are no edges.

LAYERS lists module-name prefixes, lowest layer first: a module may import modules of its
own layer and of lower ones. ``drgpu_py`` itself (the package ``__init__``: the public API)
may import anything and may be imported only by the command line (the last layer).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Iterator, NamedTuple

ROOT = "drgpu_py"
PACKAGE_DIR = Path(__file__).resolve().parents[2] / ROOT

LAYERS = [
    # base: errors, files, data specs, the profile model, the version
    ["drgpu_py.errors", "drgpu_py.io", "drgpu_py.specs", "drgpu_py.profile", "drgpu_py.version"],
    # SASS and the .ncu-rep container: cubins, nvdisasm, instruction text, control flow
    ["drgpu_py.sass"],
    # reading inputs (readers build on sass, never the reverse)
    ["drgpu_py.readers"],
    # analysis passes
    ["drgpu_py.analysis"],
    # renderers
    ["drgpu_py.render"],
    # read -> analyze -> render orchestration
    ["drgpu_py.pipeline"],
    # running ncu
    ["drgpu_py.ncu"],
    # command line
    ["drgpu_py.cli", "drgpu_py.__main__"],
]


class Edge(NamedTuple):
    src: str
    dst: str
    line: int

    def __str__(self) -> str:
        return f"{self.src} -> {self.dst} (line {self.line})"


def modules_of(package_dir: Path) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(body: list) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of a block and of the blocks in it (functions, classes, if,
    try, with, loops, match): imports are statements, so expressions are not walked (a
    tenth of the time of ``ast.walk``)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.stmt):
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                yield from _imports(getattr(node, name, ()))
        else:  # an except handler or a match case
            yield from _imports(node.body)


def edges_of(package_dir: Path) -> tuple[Edge, ...]:
    """Every import of a module of the package by a module of it: one edge per imported
    module and statement, sorted."""
    mods = modules_of(package_dir)
    root = package_dir.name

    def known(name: str) -> str | None:
        # The module an import of `name` runs: itself, else the longest enclosing module
        # (`from pkg.mod import name`); None: outside the package.
        if name != root and not name.startswith(root + "."):
            return None
        while name not in mods and "." in name:
            name = name.rpartition(".")[0]
        return name if name in mods else None

    def targets(node: ast.Import | ast.ImportFrom, module: str, path: Path) -> list[str | None]:
        if isinstance(node, ast.Import):
            return [known(alias.name) for alias in node.names]
        source = node.module or ""
        if node.level:
            base = module if path.name == "__init__.py" else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            assert base, f"{path}:{node.lineno}: relative import beyond the top-level package"
            source = base + (f".{source}" if source else "")
        # `from a import b`: the submodule a.b where there is one, else module a
        return [f"{source}.{a.name}" if f"{source}.{a.name}" in mods else known(source) for a in node.names]

    out = set()
    for module, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree.body):
            out.update(Edge(module, t, node.lineno) for t in targets(node, module, path) if t and t != module)
    return tuple(sorted(out))


@cache
def edges() -> tuple[Edge, ...]:
    return edges_of(PACKAGE_DIR)


def circles(edge_list) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm),
    each sorted, in order."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edge_list:
        graph[e.src].add(e.dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def describe_circles(edge_list) -> str:
    lines = []
    for i, members in enumerate(circles(edge_list), 1):
        inside = set(members)
        lines.append(f"circle {i}: " + ", ".join(members))
        lines += [f"    {e}" for e in edge_list if e.src in inside and e.dst in inside]
    return "\n".join(lines)


def layer(module: str) -> int | None:
    """The index in LAYERS of the longest prefix that is ``module`` or a package above it."""
    best: tuple[int, int] | None = None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return best[0] if best else None


def upward(edge_list) -> list[Edge]:
    """The imports of a higher layer's module by a lower layer's, and of ``drgpu_py`` itself
    by anything but the command line."""
    top = len(LAYERS) - 1
    out = []
    for e in edge_list:
        if e.src == ROOT:
            continue
        src, dst = layer(e.src), top if e.dst == ROOT else layer(e.dst)
        if src is not None and dst is not None and dst > src:
            out.append(e)
    return out


def test_every_module_has_a_layer():
    missing = [m for m in modules_of(PACKAGE_DIR) if m != ROOT and layer(m) is None]
    assert not missing, "modules in no layer (give each a prefix in LAYERS): " + ", ".join(missing)


def test_no_import_circles():
    found = circles(edges())
    assert not found, f"{len(found)} import circle(s):\n" + describe_circles(edges())


def test_no_upward_imports():
    found = upward(edges())
    layers = "\n".join(f"  {i}: {', '.join(p)}" for i, p in enumerate(LAYERS))
    assert not found, (
        f"{len(found)} import(s) from a lower layer to a higher one (layers, lowest first:\n{layers}\n"
        f"  {ROOT} itself: imported by layer {len(LAYERS) - 1} only):\n" + "\n".join(f"  {e}" for e in found)
    )


# ---------------------------------------------------------------------------------------
# The graph itself, on a package written here
# ---------------------------------------------------------------------------------------
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "drgpu_py"


def test_every_kind_of_import_is_an_edge(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "drgpu_py/__init__.py": "__version__ = '1'\ndef f():\n    from .a import run\n",
            "drgpu_py/a/__init__.py": "from .m import run\nfrom . import n, helper\n",
            "drgpu_py/a/m.py": (
                "from typing import TYPE_CHECKING\nimport os\nif TYPE_CHECKING:\n    from ..b import T\n"
                "def run():\n    import drgpu_py.b.deep\n    from .. import __version__\n"
            ),
            "drgpu_py/a/n.py": "try:\n    from drgpu_py.a.m import run\nexcept ImportError:\n    pass\n",
            "drgpu_py/b/__init__.py": "class C:\n    from ..a import n\n",
            "drgpu_py/b/deep.py": "from .. import a\nfrom ..a.m import *\nfrom drgpu_py.b import nothing_here\n",
        },
    )
    assert [str(e) for e in edges_of(pkg)] == [
        "drgpu_py -> drgpu_py.a (line 3)",  # in a function
        "drgpu_py.a -> drgpu_py.a.m (line 1)",
        "drgpu_py.a -> drgpu_py.a.n (line 2)",  # `from . import n`: the submodule; `helper`: itself, no edge
        "drgpu_py.a.m -> drgpu_py (line 7)",  # a package imported: its __init__
        "drgpu_py.a.m -> drgpu_py.b (line 4)",  # under TYPE_CHECKING
        "drgpu_py.a.m -> drgpu_py.b.deep (line 6)",  # `import a.b.c`: a.b.c only
        "drgpu_py.a.n -> drgpu_py.a.m (line 2)",  # absolute, in try
        "drgpu_py.b -> drgpu_py.a.n (line 2)",  # in a class
        "drgpu_py.b.deep -> drgpu_py.a (line 1)",
        "drgpu_py.b.deep -> drgpu_py.a.m (line 2)",
        "drgpu_py.b.deep -> drgpu_py.b (line 3)",
    ]


def test_circles_and_upward_imports_are_found(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "drgpu_py/__init__.py": "",
            "drgpu_py/errors.py": "from .readers import x\n",
            "drgpu_py/readers/__init__.py": "from .one import x\n",
            "drgpu_py/readers/one.py": "from .two import y\nx = 1\n",
            "drgpu_py/readers/two.py": "def f():\n    from .one import x\ny = 2\n",
            "drgpu_py/render/__init__.py": "from .. import __version__\n",
            "drgpu_py/cli/__init__.py": "from .. import __version__\nfrom ..errors import E\n",
        },
    )
    found = edges_of(pkg)
    assert describe_circles(found).splitlines() == [
        "circle 1: drgpu_py.readers.one, drgpu_py.readers.two",
        "    drgpu_py.readers.one -> drgpu_py.readers.two (line 1)",
        "    drgpu_py.readers.two -> drgpu_py.readers.one (line 2)",
    ]
    assert [str(e) for e in upward(found)] == [
        "drgpu_py.errors -> drgpu_py.readers (line 1)",
        "drgpu_py.render -> drgpu_py (line 1)",
    ]


#: The longest a module of drgpu_py may be: past it, a module holds more than one concern.
MAX_MODULE_LINES = 800


def test_no_module_is_over_the_line_limit():
    long = {
        str(p.relative_to(PACKAGE_DIR.parent)): n
        for p in PACKAGE_DIR.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
