"""Renderer modules load on demand; only a missing optional package (graphviz, jinja2) makes
a format unavailable: any other import failure in a renderer is a bug and surfaces as one."""

import sys

import pytest

from drgpu_py import render
from drgpu_py.errors import UsageError


def _forget_html_package(monkeypatch):
    """Take the HTML renderer's package and every module of it out of sys.modules (put back after
    the test): a submodule left there would be reused by the next import, which then would not
    import what that submodule imports (such as graphviz, through render.dot)."""
    for mod in [m for m in sys.modules if m == "drgpu_py.render.html" or m.startswith("drgpu_py.render.html.")]:
        monkeypatch.delitem(sys.modules, mod)


def test_a_broken_renderer_module_is_not_an_unknown_format(monkeypatch):
    monkeypatch.delitem(render.RENDERERS, "html", raising=False)
    monkeypatch.setitem(sys.modules, "drgpu_py.render.html", None)  # its import fails
    with pytest.raises(ImportError) as e:
        render.render(None, "html")
    assert not isinstance(e.value, UsageError)


def test_a_missing_optional_package_leaves_the_format_unknown(monkeypatch):
    for fmt in ("html", "dot", "svg", "png"):
        monkeypatch.delitem(render.RENDERERS, fmt, raising=False)
    _forget_html_package(monkeypatch)
    monkeypatch.delitem(sys.modules, "drgpu_py.render.dot", raising=False)
    monkeypatch.setitem(sys.modules, "graphviz", None)  # not installed
    with pytest.raises(UsageError, match="unknown format 'html'"):
        render.render(None, "html")


def test_every_format_is_registered_by_the_module_named_for_it():
    """``render._MODULES`` names, per format, the module whose import registers it: loading
    that module alone registers the format (``gcc`` included) for analyses."""
    for fmt, module in render._MODULES.items():
        render._load(module)
        assert fmt in render.RENDERERS, (fmt, module)
    assert {"sarif", "gcc"} <= set(render.formats())
