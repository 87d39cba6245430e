"""No private name crosses a module boundary inside drgpu_py.

A name with a leading underscore (``_helper``; dunders such as ``__version__`` are not
private) is its module's own: another module of drgpu_py may neither import it
(``from .x import _helper``) nor reach it through the module (``x._helper``, ``import
drgpu_py.x as x``, ``from . import x``). A name another module needs is public API: no
underscore, and listed in the module's ``__all__`` where it has one.

Every module is parsed with ``ast``, nothing is imported. Attributes of objects
(``self._cache``, ``ka.context``) are not modules and are not checked here.

``EXEMPT`` lists modules not checked yet, each with its reason; none today (the detectors,
drgpu_py/analysis/detectors/, take no private name from another module either).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "drgpu_py"

#: Importing modules not checked (prefixes), with why.
EXEMPT: dict[str, str] = {}


def modules_of(package_dir: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(node: ast.ImportFrom, module: str, path: Path) -> str:
    source = node.module or ""
    if node.level:
        base = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        source = base + (f".{source}" if source else "")
    return source


def _crossings_of(module: str, path: Path, mods: dict[str, Path], root: str, where: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    module_names: set[str] = set()  # names bound to modules of the package
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            module_names.update(
                a.asname or a.name.split(".")[0] for a in node.names if a.name == root or a.name.startswith(root + ".")
            )
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, path)
            if source != root and not source.startswith(root + "."):
                continue
            for a in node.names:
                if f"{source}.{a.name}" in mods:
                    module_names.add(a.asname or a.name)
                elif private(a.name) and source != module:
                    out.append(f"{where}:{node.lineno}: from {source} import {a.name}")
    out += [
        f"{where}:{node.lineno}: {node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and private(node.attr)
        and isinstance(node.value, ast.Name)
        and node.value.id in module_names
    ]
    return out


def crossings(package_dir: Path, exempt=()) -> list[str]:
    """``path:line: what`` for each private name one module of the package takes from another."""
    mods = modules_of(package_dir)
    out = []
    for module, path in mods.items():
        if not any(module == p or module.startswith(p + ".") for p in exempt):
            where = str(path.relative_to(package_dir.parent))
            out += _crossings_of(module, path, mods, package_dir.name, where)
    return sorted(out)


def test_no_private_name_crosses_a_module_boundary():
    found = crossings(PACKAGE_DIR, EXEMPT)
    assert not found, f"{len(found)} private name(s) taken from another module (make them public API):\n" + "\n".join(
        found
    )


def test_the_check_finds_each_kind_of_crossing(tmp_path):
    files = {
        "drgpu_py/__init__.py": "__version__ = '1'\n",
        "drgpu_py/a/__init__.py": "from .m import _hidden, shown\nfrom .. import __version__\n",
        "drgpu_py/a/m.py": "_hidden = 1\nshown = 2\ndef f():\n    return _hidden\n",
        "drgpu_py/b.py": (
            "import drgpu_py.a.m as m\nfrom .a import m as mm\nfrom drgpu_py.a import m as mmm\n"
            "x = m._hidden + mm._hidden + mmm.shown\nclass C:\n    def g(self):\n        return self._own\n"
        ),
        "drgpu_py/skip/__init__.py": "from ..a.m import _hidden\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert crossings(tmp_path / "drgpu_py", exempt=("drgpu_py.skip",)) == [
        "drgpu_py/a/__init__.py:1: from drgpu_py.a.m import _hidden",
        "drgpu_py/b.py:4: m._hidden",
        "drgpu_py/b.py:4: mm._hidden",
    ]
