"""Renderer modules load on demand; only a missing optional package (graphviz, jinja2) makes
a format unavailable: any other import failure in a renderer is a bug and surfaces as one."""

import sys

import pytest

from drgpu_py import render
from drgpu_py.errors import UsageError


def test_a_broken_renderer_module_is_not_an_unknown_format(monkeypatch):
    monkeypatch.delitem(render.RENDERERS, "html", raising=False)
    monkeypatch.setitem(sys.modules, "drgpu_py.render.html", None)  # its import fails
    with pytest.raises(ImportError) as e:
        render.render(None, "html")
    assert not isinstance(e.value, UsageError)


def test_a_missing_optional_package_leaves_the_format_unknown(monkeypatch):
    for fmt in ("html", "dot", "svg", "png"):
        monkeypatch.delitem(render.RENDERERS, fmt, raising=False)
    for mod in ("drgpu_py.render.html", "drgpu_py.render.dot"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
    monkeypatch.setitem(sys.modules, "graphviz", None)  # not installed
    with pytest.raises(UsageError, match="unknown format 'html'"):
        render.render(None, "html")
