"""Page assembly: the kernel views and the summary laid out by the Jinja2 templates as one
self-contained page, the bodies of many kernel groups packed.

Contract: ``render_html(analysis, options) -> str``, the whole page. ``template_environment()`` is the
templates' environment (the shipped ``templates`` folder, ``data.share_dir``; autoescape on,
undefined names an error). Past GRAPH_KERNELS_MAX groups each group's body travels packed
(``_pack``: gzip + base64 JSON); ``packed_bodies(doc)`` and ``unpack_page(doc)`` read a page
back as its script unpacks it. GRAPH_KERNELS_MAX and ``dot_available`` are read from this
module when a page is rendered, so that is where a test changes them.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
from functools import cache

import jinja2

from ...io import document_text
from ...version import __version__
from ...analysis import groups
from ...specs import loader as data
from .. import RenderOptions
from ..dot import dot_available
from ..quiet import split_notes, worth_of
from .summary import summary_view
from .views import kernel_view

GRAPH_KERNELS_MAX = 10  # kernel groups (by GPU time) drawn as a Graphviz picture: about 50 KB each;
# the others keep the outline tree (a report of 140 kernels was 17 MB)


@cache
def template_environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data.share_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _body_parts(kv: dict, **context) -> list[str]:
    """A kernel's body (kernel_body.html.j2) as the markup of each of its blocks, in order."""
    tmpl = template_environment().get_template("kernel_body.html.j2")
    ctx = tmpl.new_context({"kv": kv, "m": template_environment().get_template("_macros.html.j2").module, **context})
    return ["".join(tmpl.blocks[name](ctx)) for name in tmpl.blocks]


def _pack(parts: list[list[str]]) -> str:
    """The kernel bodies (each a list of block markups) as gzip-compressed JSON, base64 (no
    ``<``, ``>`` or ``&``, so it cannot close its script element): one array per block over
    all groups, the body of group i the concatenation of the arrays' i-th strings. Deflate
    looks back only 32 KB, so like parts side by side (every group's charts, then every tree)
    compress better: on a 139-group report the 7.3 MB of bodies gave 0.63 MB this way, 1.14
    MB group after group in one stream, 1.24 MB one stream per group. ``mtime=0``: the same
    page every run. Control characters and bidi overrides in a body (a hostile kernel name)
    become visible escapes here, as render() makes them in the page around it: the browser
    would otherwise put them raw into the document when it unpacks the group."""
    columns = [[document_text(markup) for markup in col] for col in zip(*parts)]
    raw = json.dumps(columns, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


_PACKED_RE = re.compile(r'<script type="application/octet-stream" id="packed-bodies">([A-Za-z0-9+/=]*)</script>')
_PLACEHOLDER_RE = re.compile(r'<div class="packed" data-packed="(\d+)"[^>]*>.*?</div>', re.S)


def packed_bodies(doc: str) -> list[str]:
    """The kernel bodies a page carries packed (``[]`` for a page that has none)."""
    m = _PACKED_RE.search(doc)
    if not m:
        return []
    return ["".join(p) for p in zip(*json.loads(gzip.decompress(base64.b64decode(m[1])).decode("utf-8")))]


def unpack_page(doc: str) -> str:
    """The page as it reads once its script has unpacked every kernel group (report.js puts
    each body in place of its placeholder, as this does); a page without packed groups as is."""
    bodies = packed_bodies(doc)
    if not bodies:
        return doc
    doc = _PACKED_RE.sub("", doc)
    return _PLACEHOLDER_RE.sub(lambda m: bodies[int(m[1])], doc)


def render_html(analysis, options) -> str:
    options = options or RenderOptions()
    with_svg = dot_available()
    order = _by_gpu_time(analysis)
    drawn = set(order[:GRAPH_KERNELS_MAX])
    # The same heaviest groups get their outline tree and hot lines' SASS as HTML; the others
    # carry them as JSON that report.js turns into the same DOM when opened (~1/3 the bytes).
    kernels = [
        kernel_view(i, ka, analysis, options, with_svg and i in drawn, i in drawn)
        for i, ka in enumerate(analysis.kernels)
    ]
    shared_notes = _share_notes(analysis, kernels)
    summary = summary_view(analysis, kernels, worth_of(options))  # reads the views in analysis order
    kernels = [kernels[i] for i in order]
    for rank, kv in enumerate(kernels, 1):
        kv["time_rank"] = rank
    report = str(analysis.profile.path or "")
    fold = f"{options.fold_share * 100:g}%"
    bodies = _packed_bodies(kernels, order, drawn, with_svg, fold, report)
    return (
        template_environment()
        .get_template("report.html.j2")
        .render(
            title=os.path.basename(report) or "drgpu report",
            report=report,
            fmt=analysis.profile.format,
            version=__version__,
            notes=list(analysis.profile.notes),
            shared_notes=shared_notes,
            kernels=kernels,
            summary=summary,
            launches=sum(kv["launches"] for kv in kernels),
            fold=fold,
            with_svg=with_svg,
            graph_max=GRAPH_KERNELS_MAX,
            packed=_pack(bodies) if bodies else "",
        )
    )


def _by_gpu_time(analysis) -> list[int]:
    """Kernel sections by GPU time, largest first (ties in launch order): the costliest kernel
    of a model step is the first one a reader meets, not the 13th."""
    times = [0.0 if t is None else t for t in (groups.total_ns(ka.kernel) for ka in analysis.kernels)]
    return sorted(range(len(times)), key=lambda i: -times[i])


def _share_notes(analysis, kernels: list[dict]) -> list[dict]:
    """A note several groups carry word for word is said once, at the top of the page, with
    links to its groups; each group's section keeps its own notes (JSON keeps them all)."""
    notes = split_notes(analysis.kernels)
    for kv, own in zip(kernels, notes.own):
        kv["shared_notes"] = sum(kv["id"] in ids for _, ids in notes.shared)
        kv["notes"] = own
    anchors = {kv["id"]: kv["anchor"] for kv in kernels}
    return [
        {"text": n, "every": len(ids) == len(kernels), "kernels": [{"id": i, "anchor": anchors[i]} for i in ids]}
        for n, ids in notes.shared
    ]


def _packed_bodies(
    kernels: list[dict], order: list[int], drawn: set[int], with_svg: bool, fold: str, report: str
) -> list[list[str]]:
    """Past GRAPH_KERNELS_MAX groups, each group's charts, model, tree and source lines (nine
    tenths of its bytes) travel packed; its head and findings stay in the page, so every link
    of the summary has its target. report.js unpacks the heaviest groups at once, the others
    as they come near the window or a link points into them."""
    pack = len(kernels) > GRAPH_KERNELS_MAX
    bodies: list[list[str]] = []
    for i, kv in zip(order, kernels):
        kv["graph_omitted"] = with_svg and i not in drawn
        kv["packed"], kv["eager"] = None, False
        if pack:
            kv["packed"], kv["eager"] = len(bodies), i in drawn
            bodies.append(_body_parts(kv, fold=fold, graph_max=GRAPH_KERNELS_MAX, report=report))
    return bodies
