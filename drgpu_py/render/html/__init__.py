"""HTML renderer: one self-contained report file (CSS, JS and charts inline, nothing fetched).

Contract: ``render_html(analysis, options) -> str``, registered here as the ``html`` format
(``.html``, ``.htm``), built from the shipped Jinja2 templates (``data.share_dir("templates")``)
with autoescaping on: kernel names, source text and SASS are always escaped. The only markup
inserted unescaped is Graphviz's SVG (which escapes its labels), the JSON of lazily drawn parts
(``common.script_json``: ``<``, ``>``, ``&`` escaped) and packed groups (the template's own
escaped output, gzip + base64). ``unpack_page`` gives a packed page as its script leaves it.
The modules compute plain view data (numbers, strings, chart geometry); the templates only lay
it out.

Modules, each importing only those before it in this list:

- ``common``: number, duration and size formatting, stall-group colours, script-safe JSON;
- ``roofline``: the roofline's log-log geometry and label placement;
- ``charts``: the other inline-SVG charts (stalls, memory, occupancy, speed of light, time
  shares);
- ``source``: the source view (hot lines, their stalls and SASS);
- ``views``: one kernel group's view model (tree, findings, charts, source);
- ``summary``: the application summary of several kernel groups;
- ``page``: the templates' environment, packing, and ``render_html`` itself.

What the page shows, lazy and packed groups and their sizes: docs/rendering.md.
"""

from __future__ import annotations

from .. import register
from .page import GRAPH_KERNELS_MAX, packed_bodies, render_html, unpack_page

# The public names, importable from the package as before it was split. GRAPH_KERNELS_MAX here
# is a copy for reading: render_html reads page.GRAPH_KERNELS_MAX, so that is the one to change.
__all__ = ["GRAPH_KERNELS_MAX", "packed_bodies", "render_html", "unpack_page"]

register("html", (".html", ".htm"))(render_html)
