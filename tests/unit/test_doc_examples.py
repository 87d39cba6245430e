"""scripts/doc_examples.py reads its markers and selects lines as its docstring says, and
rewrites only the blocks it made (on literal documents; tests/e2e/test_doc_commands.py runs the
real examples)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "scripts" / "doc_examples.py")
doc_examples = importlib.util.module_from_spec(_spec)
sys.modules["doc_examples"] = doc_examples  # dataclasses look their module up by name
_spec.loader.exec_module(doc_examples)

LINES = ["title", "a 1", "b 2", "c 3", "d 4", "e 5", "f/6"]


@pytest.mark.parametrize(
    "keep, expect",
    [
        ("", LINES),
        ("1", ["title", "..."]),
        ("2-3", ["...", "a 1", "b 2", "..."]),
        ("6-", ["...", "e 5", "f/6"]),
        ("/^c/+1", ["...", "c 3", "d 4", "..."]),
        ("1, /[ab] /", ["title", "a 1", "b 2", "..."]),
        (r"/f\/6/ 1", ["title", "...", "f/6"]),
        ("/nothing/", ["..."]),
    ],
)
def test_keep_selects_lines_and_marks_each_gap_once(keep, expect):
    assert doc_examples.select(LINES, keep) == expect


@pytest.mark.parametrize("keep", ["x", "1 x", "/unclosed", "1-2-3"])
def test_a_keep_it_cannot_read_is_an_error(keep):
    with pytest.raises(doc_examples.ExampleError):
        doc_examples.select(LINES, keep)


def _doc(tmp_path: Path, marker: str, body: str = "old\n") -> Path:
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n\n{marker}\n```text\n{body}```\n\n```text\nnot an example\n```\n", encoding="utf-8")
    return doc


def test_markers_are_read_and_only_their_blocks_rewritten(tmp_path):
    doc = _doc(
        tmp_path,
        "<!-- example: drgpu list a.ncu-rep\n     keep: 1-2\n     files: a.ncu-rep=benchmarks/x.ncu-rep.xz\n"
        "     columns: 80\n     exit: 5 -->",
    )
    (ex,) = doc_examples.examples([doc])
    assert (ex.command, ex.keep, ex.files, ex.columns, ex.exit) == (
        "drgpu list a.ncu-rep",
        "1-2",
        {"a.ncu-rep": "benchmarks/x.ncu-rep.xz"},
        80,
        5,
    )
    assert ex.line == 3 and ex.body == "old\n" and not ex.shipped
    made = "$ drgpu list a.ncu-rep\nnew\n"
    assert "+new" in doc_examples.differences(ex, made)
    assert doc_examples.write({doc: [(ex, made)]}) == [doc]
    text = doc.read_text(encoding="utf-8")
    assert "```text\n$ drgpu list a.ncu-rep\nnew\n```" in text and "not an example" in text
    (again,) = doc_examples.examples([doc])
    assert not doc_examples.differences(again, made) and doc_examples.write({doc: [(again, made)]}) == []


@pytest.mark.parametrize(
    "marker",
    [
        "<!-- example: ls -la -->",  # not a drgpu command
        "<!-- example: drgpu list a\n     colour: 1 -->",  # unknown key
        "<!-- example: drgpu list a\n     files: a -->",  # not NAME=PATH
        "<!-- example: drgpu list a\n     keep: x -->",
    ],
)
def test_a_marker_it_cannot_read_is_an_error(tmp_path, marker):
    with pytest.raises(doc_examples.ExampleError):
        doc_examples.examples([_doc(tmp_path, marker)])
