"""docs/architecture.md against the code, and the findings catalogue's texts against the
detectors that fill them.

(a) Every ``drgpu_py/...`` path the document names exists (a file, or a package folder), and
every dotted ``drgpu_py.x.y`` name is a module or package, or a name defined at the top of
one (a function, class, assignment or import), or a method of such a class. The layer list
it quotes is tests/unit/test_import_graph.py's ``LAYERS``.

(b) Every ``{placeholder}`` of a finding's ``title``, ``advice``, ``caller_advice`` and
``advice_when`` texts is a key its detector can put in ``Detection.fmt``, or one that
``evaluate`` (drgpu_py/analysis/findings.py) always adds with ``dict(d.fmt, key=...)``.
``_render`` formats the texts with a dict that answers a missing key with "?", and a missing
key with a format spec (``{x:.0f}``) leaves the whole text unformatted. The keys are read
statically with ``ast``: the ``fmt=`` dict literals of the ``Detection(...)`` calls in the
detector's function; a ``fmt=`` that is not a dict literal with string keys fails the test
(it cannot be checked). ``evaluate`` re-fills ``share_pct`` only where the detector put it
in ``fmt`` (``dict(d.fmt, share_pct=...) if "share_pct" in d.fmt else d.fmt``): such a
conditional addition adds no key.

(c) Every finding of the catalogue has the rule file the document's "Rule files" section
names, ``drgpu_py/analysis/detectors/<family>/<finding>.py``, and its detector lives there.
"""

from __future__ import annotations

import ast
import inspect
import re
import string
import textwrap
from functools import cache
from pathlib import Path

import pytest
import yaml

from drgpu_py.analysis import findings as findings_module
from drgpu_py.analysis.detectors import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "drgpu_py"
CATALOGUE = PACKAGE / "specs" / "findings.yaml"


# ---------------------------------------------------------------------------------------
# (a) names in docs/architecture.md
# ---------------------------------------------------------------------------------------
def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def doc_paths(text: str) -> list[str]:
    """``drgpu_py/...`` paths: letters, digits, ``_``, ``-``, ``.``, ``/``; a trailing dot
    (end of a sentence) or slash is not part of the name."""
    return sorted({m.rstrip("./") for m in re.findall(r"(?<![\w/.])drgpu_py/[\w./-]*", text)})


def doc_dotted(text: str) -> list[str]:
    """``drgpu_py.x.y`` names (at least one dot after ``drgpu_py``)."""
    return sorted({m.rstrip(".") for m in re.findall(r"(?<![\w/.])drgpu_py(?:\.\w+)+", text)})


def module_file(parts: list[str]) -> Path | None:
    """The file of module ``drgpu_py.<parts>``: a .py file or a package's __init__.py."""
    base = PACKAGE.joinpath(*parts)
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def top_level_names(tree: ast.Module) -> dict[str, ast.AST]:
    """Names bound at the top of a module: functions, classes, assignments, imports."""
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out[n.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports
            out.update(top_level_names(ast.Module(body=node.body, type_ignores=[])))
    return out


def resolve_dotted(name: str) -> str | None:
    """None when ``name`` exists, else what is missing."""
    parts = name.split(".")[1:]
    # The longest prefix that is a module; the rest must be defined in it.
    for cut in range(len(parts), -1, -1):
        path = module_file(parts[:cut]) if cut else PACKAGE / "__init__.py"
        if path is None:
            continue
        rest = parts[cut:]
        if not rest:
            return None
        names = top_level_names(ast.parse(path.read_text(encoding="utf-8")))
        node = names.get(rest[0])
        if node is None:
            return f"{rest[0]!r} is not defined in {path.relative_to(ROOT)}"
        if len(rest) == 1:
            return None
        if len(rest) == 2 and isinstance(node, ast.ClassDef):
            members = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            members |= {
                t.id for n in node.body if isinstance(n, ast.AnnAssign) for t in [n.target] if isinstance(t, ast.Name)
            }
            return None if rest[1] in members else f"class {rest[0]} has no member {rest[1]!r}"
        return f"cannot resolve {'.'.join(rest)} in {path.relative_to(ROOT)}"
    return "no such module"


def test_the_document_names_drgpu_paths_and_modules():
    text = doc_text()
    assert doc_paths(text) and doc_dotted(text), "the regular expressions find nothing: the test has rotted"


def test_every_drgpu_path_in_the_document_exists():
    missing = [p for p in doc_paths(doc_text()) if not (ROOT / p).exists()]
    assert not missing, "docs/architecture.md names paths that do not exist: " + ", ".join(missing)


def test_every_dotted_drgpu_name_in_the_document_exists():
    problems = [f"{n}: {why}" for n in doc_dotted(doc_text()) if (why := resolve_dotted(n))]
    assert not problems, "docs/architecture.md names modules that do not exist:\n" + "\n".join(problems)


def test_the_resolvers_reject_what_does_not_exist():
    assert doc_paths("see drgpu_py/analysis/ and drgpu_py/profile.py.") == ["drgpu_py/analysis", "drgpu_py/profile.py"]
    assert doc_dotted("`drgpu_py.analysis.analyze`.") == ["drgpu_py.analysis.analyze"]
    assert resolve_dotted("drgpu_py.analysis.sol") is None
    assert resolve_dotted("drgpu_py.analysis.analyze_kernel") is None
    assert resolve_dotted("drgpu_py.analysis.context.KernelContext.build") is None
    assert resolve_dotted("drgpu_py.analysis.model") is not None
    assert resolve_dotted("drgpu_py.pipeline.groups") is not None
    assert resolve_dotted("drgpu_py.analysis.context.KernelContext.sol") is not None


def _layers_of(source: str, origin: str) -> list:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LAYERS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"no LAYERS = [...] in {origin}")


def test_the_quoted_layer_list_is_the_import_graph_tests():
    blocks = re.findall(r"```python\n(LAYERS = \[.*?\n\])\n```", doc_text(), re.S)
    assert len(blocks) == 1, "docs/architecture.md quotes LAYERS once, in a python block"
    graph_test = ROOT / "tests" / "unit" / "test_import_graph.py"
    assert _layers_of(blocks[0], "docs/architecture.md") == _layers_of(graph_test.read_text(), str(graph_test))


# ---------------------------------------------------------------------------------------
# (b) placeholders of the findings catalogue
# ---------------------------------------------------------------------------------------
def placeholders(text: str) -> set[str]:
    """The keys a ``str.format_map`` of ``text`` looks up (``{a.b}``, ``{a[0]}``: ``a``)."""
    out = set()
    for _, field, _, _ in string.Formatter().parse(text):
        if field is not None:
            out.add(re.match(r"[^.\[]*", field).group(0))
    return out


def finding_texts(spec: dict) -> dict[str, str]:
    texts = {k: spec[k] for k in ("title", "advice", "caller_advice") if spec.get(k)}
    texts.update({f"advice_when.{v}": t for v, t in (spec.get("advice_when") or {}).items()})
    return texts


def _fmt_keys_of_calls(tree: ast.AST, where: str) -> tuple[set[str], int]:
    """Keys of the ``fmt=`` dict literals of the ``Detection(...)`` calls in ``tree``, and how
    many such calls there are."""
    keys: set[str] = set()
    calls = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name != "Detection":
            continue
        calls += 1
        for kw in node.keywords:
            if kw.arg is None:
                raise AssertionError(f"{where}: Detection(**...) cannot be read statically")
            if kw.arg != "fmt":
                continue
            if not isinstance(kw.value, ast.Dict):
                raise AssertionError(f"{where}: fmt= is not a dict literal (line {kw.value.lineno})")
            for k in kw.value.keys:
                if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                    raise AssertionError(f"{where}: a key of fmt= is not a string constant (line {kw.value.lineno})")
                keys.add(k.value)
    return keys, calls


@cache
def detector_fmt_keys(detector: str) -> frozenset[str]:
    """The keys ``detector`` can put in ``Detection.fmt``, from its function's source."""
    fn = REGISTRY[detector].run
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    keys, calls = _fmt_keys_of_calls(tree, f"detector {detector}")
    assert calls, f"detector {detector}: no Detection(...) call in its function; its fmt keys cannot be read"
    return frozenset(keys)


def _guarded_by(kw: str, test: ast.expr) -> bool:
    """``"kw" in <something>.fmt``: the addition happens only where the key is there already."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Constant)
        and test.left.value == kw
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In)
        and isinstance(test.comparators[0], ast.Attribute)
        and test.comparators[0].attr == "fmt"
    )


@cache
def evaluate_additions() -> tuple[frozenset[str], frozenset[str]]:
    """(keys ``evaluate`` always adds to a detection's fmt, keys it re-fills only where the
    detector put them): the keywords of its ``dict(<detection>.fmt, ...)`` calls."""
    tree = ast.parse(inspect.getsource(findings_module))
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "evaluate")
    parent = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    always: set[str] = set()
    refilled: set[str] = set()
    for node in ast.walk(func):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
            and node.args
            and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "fmt"
        ):
            continue
        up = parent.get(node)
        for kw in node.keywords:
            assert kw.arg is not None, "evaluate: dict(d.fmt, **...) cannot be read statically"
            if isinstance(up, ast.IfExp) and up.body is node and _guarded_by(kw.arg, up.test):
                refilled.add(kw.arg)
            else:
                always.add(kw.arg)
    return frozenset(always), frozenset(refilled)


def catalogue() -> list[dict]:
    return yaml.safe_load(CATALOGUE.read_text(encoding="utf-8"))["findings"]


# Placeholders no detector fills today (finding id -> why), each a strict expected failure:
# a fix of the detector or the text turns it into a passing test to remove from here.
UNFILLED: dict[str, str] = {}


def _finding_params():
    for spec in catalogue():
        marks = [pytest.mark.xfail(strict=True, reason=UNFILLED[spec["id"]])] if spec["id"] in UNFILLED else []
        yield pytest.param(spec, id=spec["id"], marks=marks)


@pytest.mark.parametrize("spec", list(_finding_params()))
def test_every_placeholder_of_a_finding_is_filled_by_its_detector(spec):
    always, _ = evaluate_additions()
    filled = detector_fmt_keys(spec["detector"]) | always
    unfilled = {
        where: sorted(placeholders(text) - filled)
        for where, text in finding_texts(spec).items()
        if placeholders(text) - filled
    }
    assert not unfilled, (
        f"{spec['id']}: placeholders that detector {spec['detector']} never puts in Detection.fmt "
        f"(it puts {sorted(filled)}): {unfilled}"
    )


def test_the_fmt_readers_see_what_the_code_does():
    """The static readers on the code they read: evaluate re-fills share_pct only where the
    detector put it; a detector with two Detection calls gives the keys of both."""
    always, refilled = evaluate_additions()
    assert "share_pct" in refilled and "share_pct" not in always
    assert detector_fmt_keys("divergence") == {"threads"}
    assert detector_fmt_keys("serial_kernel") == {
        "blocks",
        "sms",
        "idle_pct",
        "floor_us",
        "dur_us",
        "launches",
        "graph",
        "batched",
    }
    assert placeholders("{a:.0f}% of {b} ({c[0]}, {d.e}) {{literal}}") == {"a", "b", "c", "d"}


def test_a_fmt_that_is_not_a_dict_literal_cannot_be_read():
    tree = ast.parse(
        "def f(ctx, passes):\n    values = {}\n    return Detection(stall_share=0, speedup=1, fmt=values)\n"
    )
    with pytest.raises(AssertionError, match="not a dict literal"):
        _fmt_keys_of_calls(tree, "f")


def test_every_detector_of_the_catalogue_is_checked():
    assert {s["detector"] for s in catalogue()} <= set(REGISTRY)


# ---------------------------------------------------------------------------------------
# (c) the rule files the document's "Rule files" section describes
# ---------------------------------------------------------------------------------------
RULE_LAYOUT = "drgpu_py/analysis/detectors/<family>/<finding>.py"


@pytest.mark.parametrize("spec", catalogue(), ids=lambda spec: spec["id"])
def test_every_finding_has_the_rule_file_the_document_names(spec):
    """The layout the document states, ``detectors/<family>/<finding>.py`` (the id with ``_``
    for ``-``), holds one file for each finding of the catalogue, the module of its detector."""
    assert RULE_LAYOUT in doc_text()
    name = spec["id"].replace("-", "_")
    files = sorted(PACKAGE.joinpath("analysis", "detectors").glob(f"*/{name}.py"))
    assert len(files) == 1, (spec["id"], files)
    family = files[0].parent.name
    assert REGISTRY[spec["detector"]].run.__module__ == f"drgpu_py.analysis.detectors.{family}.{name}"
