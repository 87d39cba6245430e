"""The HTML report in a real browser: headless Chromium driven over the Chrome DevTools
protocol (a small client on ``websocket-client``). It loads a rendered sample report, checks
there are no console errors or exceptions and that nothing but the file itself is fetched,
expands and collapses a tree node with real mouse clicks, follows a finding's source link,
and saves a screenshot; on a report of several kernel groups it sorts the summary table by
clicking its column headers and follows a bar of the time-share chart; a page of packed kernel
groups unpacks them as ``html.unpack_page`` does, lands links on their targets, and keeps
hostile text as text.

Skips only where Chromium (or the ``websocket-client`` package) is absent. Run as a script to
refresh the documentation screenshot:
``python tests/e2e/test_browser.py sample_reports/aos_gather/aos_gather_bad.ncu-rep docs/img/report.png``;
``python tests/e2e/test_browser.py --docs`` refreshes docs/img/{report,many,diff}-{1400,800}.png,
whose sizes and pages (fitting their window, summary on top) the tests here check.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import pytest

# The shared DevTools client lives in tests/ (importable under pytest, and here when run as a script).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chromium import Chrome, find_browser

# Slow, left out of the fast tier (pytest -m "not slow"): the pages in Chromium.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"


def render_sample(report: Path, out: Path) -> Path:
    from drgpu_py.pipeline import analyze_reports, write_result

    write_result(analyze_reports([str(report)]), fmt="html", output=out, force=True)
    return out


def save_report_screenshot(report: Path, png: Path, width: int = 1280, height: int = 1500) -> None:
    """Render ``report`` to HTML and screenshot its first ``height`` pixels (docs/img)."""
    exe = find_browser()
    if exe is None:
        raise SystemExit("chromium not found")
    with tempfile.TemporaryDirectory() as tmp:
        html = render_sample(report, Path(tmp) / "report.html")
        c = Chrome(exe, width, height)
        try:
            c.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
            c.load(html.as_uri())
            c.screenshot(png)
        finally:
            c.close()


@pytest.fixture(scope="module")
def browser():
    exe = find_browser()
    if exe is None:
        pytest.skip("Chromium is not installed (apt-get install chromium); the browser test needs a real browser")
    pytest.importorskip("websocket", reason="the websocket-client package (test extra) drives Chromium")
    c = Chrome(exe)
    yield c
    c.close()


def _node_box(c: Chrome, selector: str) -> dict:
    return c.eval(f"""(() => {{
        const el = document.querySelector({json.dumps(selector)});
        el.scrollIntoView({{block: 'center', behavior: 'instant'}});
        const r = el.getBoundingClientRect();
        return {{x: r.left + 12, y: r.top + r.height / 2}};
    }})()""")


DEAD_LINKS = """[...document.querySelectorAll('a[href^="#"]')]
    .map(a => a.getAttribute('href'))
    .filter(h => !document.getElementById(decodeURIComponent(h.slice(1))))"""


def _open_lazy_trees(c: Chrome) -> None:
    """Opens every lazily built tree (report.js builds it on the toggle) and waits for them."""
    c.eval("document.querySelectorAll('details.tree-lazy').forEach(d => { d.open = true; })")
    _wait(c, "document.querySelectorAll('.tree[data-tree-json]').length === 0")


def test_report_in_chromium(browser, tmp_path):
    html = render_sample(SAMPLE, tmp_path / "report.html")
    c = browser
    c.load(html.as_uri())
    assert c.problems() == []
    fetched = c.requested_urls()
    assert fetched and all(u.startswith("file:") or u.startswith("data:") for u in fetched), fetched
    assert c.eval("document.title").startswith("drgpu")
    assert "scale_keys_aos" in c.eval("document.querySelector('h2.kname').textContent")
    assert c.eval("document.querySelectorAll('.finding').length") >= 1
    assert "global-uncoalesced" in c.eval("document.querySelector('.finding').textContent")

    # A collapsed tree node with children: mark it, click its summary, it opens; click again, it closes.
    found = c.eval("""(() => {
        const d = [...document.querySelectorAll('.tree details.node:not([open])')]
            .find(x => x.querySelector(':scope > ul > li'));
        if (!d) return null;
        d.setAttribute('data-probe', '1');
        return d.querySelector(':scope > summary').textContent.trim();
    })()""")
    assert found, "the tree has no collapsed node to expand"
    child_visible = "document.querySelector('[data-probe] > ul > li').checkVisibility()"
    assert c.eval(child_visible) is False
    box = _node_box(c, "[data-probe] > summary")
    c.click(box["x"], box["y"])
    assert c.eval("document.querySelector('[data-probe]').open") is True
    assert c.eval(child_visible) is True
    box = _node_box(c, "[data-probe] > summary")
    c.click(box["x"], box["y"])
    assert c.eval("document.querySelector('[data-probe]').open") is False

    # The report's own script: "Expand all" opens every node of the tree.
    box = _node_box(c, "button[data-action=expand]")
    c.click(box["x"], box["y"])
    assert c.eval("[...document.querySelectorAll('.tree details')].every(d => d.open)") is True

    # Following a finding's location opens the hot source line with its SASS.
    href = c.eval(
        "(document.querySelector('.finding a.where') || {}).getAttribute && document.querySelector('.finding a.where').getAttribute('href')"
    )
    assert href and href.startswith("#")
    box = _node_box(c, ".finding a.where")
    c.click(box["x"], box["y"])
    time.sleep(0.2)
    assert c.eval(f"document.getElementById({json.dumps(href[1:])}).open") is True
    assert "LDG" in c.eval(f"document.getElementById({json.dumps(href[1:])}).textContent")

    # Every in-page link ("source ↓" of the tree, a finding's line) has its target.
    assert c.eval(DEAD_LINKS) == []
    # The Graphviz picture: folded away at load; opened, fitted to the box's width.
    if c.eval("!!document.querySelector('details.graph')"):
        assert c.eval("document.querySelector('details.graph').open") is False
        c.eval("document.querySelector('details.graph').open = true")
        box = c.eval("""(() => { const b = document.querySelector('.graph-box'), s = b.querySelector('svg');
            return {box: b.clientWidth, svg: s.getBoundingClientRect().width, scroll: b.scrollWidth}; })()""")
        assert box["svg"] <= box["box"] + 1 and box["scroll"] <= box["box"] + 1, box

    assert c.problems() == []
    c.screenshot(tmp_path / "report.png")
    png = (tmp_path / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def _wait(c: Chrome, expr: str, timeout: float = 10.0):
    """Poll ``expr`` in the page until it is truthy (the page's script works asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        v = c.eval(expr)
        if v or time.monotonic() > deadline:
            assert v, f"still false after {timeout}s: {expr}"
            return v
        time.sleep(0.05)


def _summary_column(c: Chrome, col: int) -> list:
    """The data-values of one column of the summary table, in the page's current row order
    (numbers as floats, '' as None)."""
    return c.eval(f"""[...document.querySelectorAll('#summary-table tbody tr')].map(r => {{
        const v = r.cells[{col}].getAttribute('data-value');
        return v === '' ? null : parseFloat(v);
    }})""")


def _row_order(c: Chrome) -> list[str]:
    return c.eval("[...document.querySelectorAll('#summary-table tbody tr')].map(r => r.getAttribute('data-anchor'))")


def _click_header(c: Chrome, text: str) -> None:
    c.eval(f"""(() => {{
        document.querySelectorAll('[data-probe-th]').forEach(x => x.removeAttribute('data-probe-th'));
        const th = [...document.querySelectorAll('#summary-table thead th')].find(h => h.textContent.trim() === {json.dumps(text)});
        th.setAttribute('data-probe-th', '1');
    }})()""")
    box = _node_box(c, "[data-probe-th]")
    c.click(box["x"], box["y"])


def _sort_state(c: Chrome) -> dict:
    return c.eval(
        "Object.fromEntries([...document.querySelectorAll('#summary-table thead th[aria-sort]')]"
        ".map(h => [h.textContent.trim(), h.getAttribute('aria-sort')]))"
    )


def test_summary_table_sorts_in_chromium(browser, tmp_path):
    """The real PyTorch step (15 kernel groups): the summary table opens sorted by total time;
    clicking the 'Mean µs' header sorts by mean launch time (largest first, then smallest
    first), 'Saves µs' puts the kernels without a finding last, 'Total µs' restores the order,
    and a bar of the time-share chart leads to its kernel's section. No console errors."""
    from conftest import library_report

    html = render_sample(library_report("step"), tmp_path / "step.html")
    c = browser
    c.load(html.as_uri())
    assert c.problems() == []
    assert c.eval("document.querySelector('.app-summary h2').textContent") == "Application summary"
    start = _row_order(c)
    assert len(start) == 15
    totals, means = _summary_column(c, 2), _summary_column(c, 3)
    assert totals == sorted(totals, reverse=True) and means != sorted(means, reverse=True)
    assert _sort_state(c) == {"Total µs": "descending"}

    _click_header(c, "Mean µs")
    means = _summary_column(c, 3)
    assert means == sorted(means, reverse=True) and _row_order(c) != start
    assert _sort_state(c) == {"Mean µs": "descending"}
    _click_header(c, "Mean µs")
    assert _summary_column(c, 3) == sorted(means) and _sort_state(c) == {"Mean µs": "ascending"}

    _click_header(c, "Saves µs")
    saved = _summary_column(c, 7)
    known = [v for v in saved if v is not None]
    assert known and known == sorted(known, reverse=True)
    assert saved == known + [None] * (len(saved) - len(known)), "rows without a finding sort last"

    _click_header(c, "Launches")
    launches = _summary_column(c, 1)
    assert launches == sorted(launches, reverse=True) and launches[0] == 2

    _click_header(c, "Total µs")  # the first click on a number column sorts largest first
    assert _row_order(c) == start and _sort_state(c) == {"Total µs": "descending"}

    # A bar of the time-share chart is a link to its kernel's section.
    target = c.eval("document.querySelector('svg.share a').getAttribute('href')")
    assert target == "#" + start[0]
    box = c.eval("""(() => {
        const r = document.querySelector('svg.share a rect.share-bar');
        r.scrollIntoView({block: 'center', behavior: 'instant'});
        const b = r.getBoundingClientRect();
        return {x: b.left + b.width / 2, y: b.top + b.height / 2};
    })()""")
    c.click(box["x"], box["y"])
    time.sleep(0.2)
    assert c.eval("window.location.hash") == target
    assert c.problems() == []


# The documentation screenshots (docs/img): one kernel, several kernel groups and a diff, each at
# a wide and a narrow window. ``python tests/e2e/test_browser.py --docs`` writes them.
IMG = ROOT / "docs" / "img"
SHOT_WIDTHS = (1400, 800)
SHOT_HEIGHT = 1200
SHOT_PAGES = ("report", "many", "diff")


def render_page(name: str, out_dir: Path) -> Path:
    """One of SHOT_PAGES rendered to HTML under ``out_dir``: ``report`` the aos_gather sample
    (one kernel), ``many`` the PyTorch step (15 kernel groups), ``diff`` aos_gather bad vs fixed
    (paired by name, as docs/compare.md shows)."""
    out = Path(out_dir) / f"{name}.html"
    if name == "report":
        return render_sample(SAMPLE, out)
    if name == "many":
        from conftest import library_report

        return render_sample(library_report("step"), out)
    if name == "diff":
        import os
        import subprocess

        base = SAMPLE.relative_to(ROOT)  # the page shows the paths as given: relative to the repository
        fixed = base.with_name("aos_gather_fixed.ncu-rep.xz")
        argv = ["diff", str(base), str(fixed), "--pair", "scale_keys_aos=scale_keys_soa", "-f", "html", "-o", str(out)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        subprocess.run([sys.executable, "-m", "drgpu_py", *argv], check=True, cwd=ROOT, env=env, timeout=120)
        return out
    raise ValueError(name)


def show_at(c: Chrome, page: Path, width: int, height: int = SHOT_HEIGHT) -> None:
    """Loads ``page`` in a window ``width`` CSS pixels wide (scale 1: one CSS pixel, one pixel)."""
    c.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
    c.load(page.as_uri())
    c.eval("document.fonts.ready.then(() => true)")


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) read from a PNG's IHDR chunk."""
    head = Path(path).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def save_doc_screenshots(out_dir: Path = IMG) -> list[Path]:
    """Writes ``{page}-{width}.png`` for each of SHOT_PAGES and SHOT_WIDTHS (the top SHOT_HEIGHT
    pixels of the page)."""
    exe = find_browser()
    if exe is None:
        raise SystemExit("chromium not found")
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        c = Chrome(exe, max(SHOT_WIDTHS), SHOT_HEIGHT)
        try:
            for name in SHOT_PAGES:
                page = render_page(name, Path(tmp))
                for width in SHOT_WIDTHS:
                    show_at(c, page, width)
                    png = Path(out_dir) / f"{name}-{width}.png"
                    c.screenshot(png)
                    written.append(png)
        finally:
            c.close()
    return written


# What a reader sees first: the run's summary (one kernel: its verdict; a diff: the speedup).
TOP_OF_PAGE = {
    "report": ".kernel .verdict, .kernel .verdict-line",
    "many": ".app-summary",
    "diff": "main > section.card .hero",
}

# The widest element of the page that is not inside a box that scrolls on its own (a wide table
# in .table-scroll, the graph, a source line): what pushes the page past the window.
OVERFLOW = """(() => {
    const vw = document.documentElement.clientWidth;
    const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
        return false; };
    const wide = [...document.body.querySelectorAll('*')]
        .filter(el => el.getBoundingClientRect().right > vw + 1 && el.checkVisibility() && !scrolls(el))
        .map(el => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : '')
            + ' right=' + Math.round(el.getBoundingClientRect().right));
    return {vw, scroll: document.documentElement.scrollWidth, wide: wide.slice(0, 8)};
})()"""


@pytest.fixture(scope="module")
def shot_pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("shots")
    return {name: render_page(name, out) for name in SHOT_PAGES}


@pytest.mark.parametrize("width", SHOT_WIDTHS)
@pytest.mark.parametrize("name", SHOT_PAGES)
def test_page_fits_the_window_in_chromium(browser, shot_pages, name, width):
    """Each documentation page at 1400 and 800 px: nothing wider than the window but what scrolls
    inside its own box (so the page has no sideways scroll bar), no console errors, and the
    summary a reader came for in the first screen, inside the window's width."""
    c = browser
    try:
        show_at(c, shot_pages[name], width)
        assert c.problems() == []
        got = c.eval(OVERFLOW)
        assert got["vw"] == width
        assert got["scroll"] <= width and got["wide"] == [], got
        top = c.eval(f"""(() => {{
            const el = document.querySelector({json.dumps(TOP_OF_PAGE[name])});
            if (!el) return null;
            const r = el.getBoundingClientRect();
            return {{visible: el.checkVisibility(), top: r.top, left: r.left, right: r.right, h: r.height,
                     text: el.textContent.trim().slice(0, 80)}};
        }})()""")
        assert top and top["visible"] and top["h"] > 0 and top["text"], top
        assert 0 <= top["top"] < SHOT_HEIGHT and top["left"] >= 0 and top["right"] <= width + 1, top
    finally:
        c.send("Emulation.clearDeviceMetricsOverride")


@pytest.mark.parametrize("name", SHOT_PAGES)
def test_doc_screenshots_are_committed(name):
    """docs/img holds each page's screenshot at each width, as many pixels wide as its window
    (pixels are not compared: Chromium versions draw differently)."""
    for width in SHOT_WIDTHS:
        png = IMG / f"{name}-{width}.png"
        assert png.exists(), f"{png} missing: python tests/e2e/test_browser.py --docs"
        assert png_size(png) == (width, SHOT_HEIGHT)
        assert 10_000 < png.stat().st_size < 600_000
    assert sum(p.stat().st_size for p in IMG.glob("*-[0-9]*.png")) < 1_500_000


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:] == ["--docs"]:
        for p in save_doc_screenshots():
            print(p.relative_to(ROOT), png_size(p), p.stat().st_size)
    else:
        save_report_screenshot(Path(sys.argv[1]), Path(sys.argv[2]))


def test_lazy_tree_and_source_match_the_inline_page(browser, tmp_path, monkeypatch):
    """A kernel group below the GRAPH_KERNELS_MAX heaviest carries its tree and hot lines' SASS
    as JSON: opened in Chromium, report.js builds the same text as the page that draws them
    inline (the whole tree after "Expand all"; the hot line a finding links to, with its SASS)."""
    from drgpu_py.render.html import page as htmlmod

    inline = render_sample(SAMPLE, tmp_path / "inline.html")
    monkeypatch.setattr(htmlmod, "GRAPH_KERNELS_MAX", 0)  # also packs the kernel's body (more groups than that)
    lazy = render_sample(SAMPLE, tmp_path / "lazy.html")
    assert (
        'class="tree-lazy"' in htmlmod.unpack_page(lazy.read_text()) and 'class="tree-lazy"' not in inline.read_text()
    )

    def texts(root: str, sel: str) -> str:  # one text per element: whitespace between elements differs
        return f"[...{root}.querySelectorAll({json.dumps(sel)})].map(e => e.textContent.replace(/\\s+/g, ' ').trim())"

    tree_text = texts("document.getElementById('k0-tree')", "summary, .leaf")
    c = browser
    seen = {}
    for name, page in (("inline", inline), ("lazy", lazy)):
        c.load(page.as_uri())
        assert c.problems() == []
        if name == "lazy":
            _wait(c, "!!document.querySelector('details.tree-lazy')")  # its body unpacked
            assert c.eval("document.querySelectorAll('#k0-tree details').length") == 0
            box = _node_box(c, "details.tree-lazy > summary")
            c.click(box["x"], box["y"])
            assert c.eval("document.querySelector('details.tree-lazy').open") is True
        box = _node_box(c, "button[data-action=expand]")
        c.click(box["x"], box["y"])
        assert c.eval("[...document.querySelectorAll('#k0-tree details')].every(d => d.open)") is True
        href = c.eval("document.querySelector('.finding a.where').getAttribute('href')")
        box = _node_box(c, ".finding a.where")
        c.click(box["x"], box["y"])
        time.sleep(0.2)
        line = f"document.getElementById({json.dumps(href[1:])})"
        assert c.eval(f"{line}.open") is True
        seen[name] = (
            c.eval(tree_text),
            c.eval(texts(line, "summary, th, td, .seg-legend > span, .seg-bar > span, p")),
            c.eval(f"{line}.querySelectorAll('table.sass tbody tr').length"),
        )
        assert c.problems() == []
    assert seen["lazy"] == seen["inline"]
    assert any("LDG" in t for t in seen["lazy"][1]) and seen["lazy"][2] > 0 and len(seen["lazy"][0]) > 20


def _article_texts(c: Chrome) -> dict:
    """Each kernel section's text, one entry per element (whitespace between elements differs)."""
    return c.eval("""Object.fromEntries([...document.querySelectorAll('article.kernel')].map(a => [a.id,
        [...a.querySelectorAll('h3, p, summary, td, th, text, dt, dd, li, .leaf')].map(e => e.textContent.replace(/\\s+/g, ' ').trim())]))""")


def test_packed_groups_unpack_in_chromium(browser, tmp_path):
    """The real PyTorch step (15 kernel groups, more than GRAPH_KERNELS_MAX): its groups' bodies
    travel packed. In Chromium the heaviest groups are unpacked at load; scrolled through, every
    section reads as the page html.unpack_page writes (what the static tests read). Nothing
    fetched, no errors."""
    from conftest import library_report
    from drgpu_py.render.html.page import GRAPH_KERNELS_MAX, unpack_page

    page = render_sample(library_report("step"), tmp_path / "step.html")
    doc = page.read_text(encoding="utf-8")
    n = doc.count('<article class="kernel"')
    assert n > GRAPH_KERNELS_MAX and doc.count('<div class="packed"') == n
    c = browser
    c.load(page.as_uri())
    _wait(c, "document.querySelectorAll('div.packed[data-eager]').length === 0")
    assert c.eval("document.querySelectorAll('div.packed').length") <= n - GRAPH_KERNELS_MAX
    # A summary link to a section far down: it lands there though groups unpack around it.
    import re

    last = re.findall(r'<article class="kernel" id="(k\d+)">', doc)[-1]
    c.eval(f"document.querySelector('#summary-table a[href=\"#{last}\"]').click()")
    time.sleep(0.5)
    _wait(c, f"Math.abs(document.getElementById('{last}').getBoundingClientRect().top) < window.innerHeight / 2")
    assert c.eval("window.scrollY") > 1000
    # Scrolled through from the top, every group is unpacked.
    c.eval("window.scrollTo(0, 0)")
    for _ in range(400):
        if c.eval("document.querySelectorAll('div.packed').length") == 0:
            break
        c.eval("window.scrollBy(0, 1500)")
        time.sleep(0.05)
    assert c.eval("document.querySelectorAll('div.packed').length") == 0
    got = _article_texts(c)
    # Every group unpacked and every tree built: each in-page link has its target.
    _open_lazy_trees(c)
    assert c.eval(DEAD_LINKS) == []
    assert c.problems() == []
    assert all(u.startswith("file:") for u in c.requested_urls())
    # The same, read from the page unpacked in Python with the same line opened.
    full = tmp_path / "step-unpacked.html"
    full.write_text(unpack_page(doc), encoding="utf-8")
    c.load(full.as_uri())
    want = _article_texts(c)
    assert c.problems() == [] and len(want) == n
    assert got == want


def test_link_into_a_packed_group_in_chromium(browser, tmp_path, monkeypatch):
    """A page opened at a finding's source line of a group that is not unpacked at load (far
    down the page): the script unpacks that group, opens the line with its SASS and scrolls there."""
    import re
    from conftest import analysis_of
    from drgpu_py.analysis import Analysis
    from drgpu_py.profile import Profile
    from drgpu_py.render import RenderOptions, render
    from drgpu_py.render.html import page as htmlmod

    monkeypatch.setattr(htmlmod, "GRAPH_KERNELS_MAX", 1)
    kernels = [analysis_of(c, v).kernels[0] for c in ("aos_gather", "serial_norm") for v in ("bad", "fixed")]
    page = tmp_path / "four.html"
    doc = render(
        Analysis(profile=Profile(path="four.ncu-rep", format="ncu-rep"), kernels=kernels), "html", RenderOptions()
    )
    page.write_text(doc, encoding="utf-8")
    lazy = re.findall(
        r'<article class="kernel" id="(k\d+)">(?:(?!</article>).)*?<div class="packed" data-packed="\d+">', doc, re.S
    )
    assert len(lazy) == 3
    # The last packed group (sections follow GPU time) whose finding links to its source line.
    group, targets = next(
        (g, t) for g in reversed(lazy) if (t := re.findall(rf'<a class="mono where" href="#({g}-src-[^"]+)"', doc))
    )
    assert group != lazy[0], "a group far down the page"
    sel = f"document.getElementById({json.dumps(targets[0])})"
    c = browser
    c.load(page.as_uri() + "#" + targets[0])
    _wait(c, f"!!{sel} && {sel}.open")
    assert c.eval(f"{sel}.closest('article').id") == group
    _wait(c, f"{sel}.querySelectorAll('table.sass tbody tr').length > 0")  # its SASS built
    # scrolled into the window (smoothly: the page's CSS asks for it)
    _wait(c, f"{sel}.getBoundingClientRect().top >= -1 && {sel}.getBoundingClientRect().top < window.innerHeight - 20")
    assert c.eval("window.scrollY") > 1000
    assert c.problems() == []


def test_packed_hostile_text_stays_text_in_chromium(browser, tmp_path, monkeypatch):
    """Markup in a kernel name, source line and SASS of a packed group: unpacked and every part
    opened, nothing injected runs or exists, and the text shows as text."""
    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report
    from drgpu_py.render import RenderOptions, render
    from drgpu_py.render.html import page as htmlmod

    bad = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><svg onload="window.__pwned=3"/>'
    prof = open_report(SAMPLE)
    for k in prof.kernels:
        k.name = k.mangled = "k" + bad
        k.source_text = {f: [f"{bad} line {j}" for j, _ in enumerate(lines)] for f, lines in k.source_text.items()}
        k.instructions["sass"] = [f"{s} {bad}" for s in k.instructions["sass"]]
    monkeypatch.setattr(htmlmod, "GRAPH_KERNELS_MAX", 0)
    page = tmp_path / "hostile.html"
    page.write_text(render(analyze(prof), "html", RenderOptions()), encoding="utf-8")
    assert 'id="packed-bodies"' in page.read_text()
    c = browser
    c.load(page.as_uri())
    _wait(c, "document.querySelectorAll('div.packed').length === 0")
    for _ in range(3):  # open every part, so lazily built trees and SASS are in the DOM too
        c.eval("document.querySelectorAll('details').forEach(d => d.open = true); true")
        time.sleep(0.3)
    assert c.eval("window.__pwned === undefined"), "an injected script or handler ran"
    assert c.eval("document.querySelectorAll('img[onerror], svg[onload], img[src=\"x\"]').length") == 0
    # the text is in the lazily built parts' JSON, as data: no script that runs carries it
    carriers = c.eval("Array.from(document.scripts).filter(s => s.textContent.includes('__pwned')).map(s => s.type)")
    assert set(carriers) <= {"application/json"}, carriers
    text = c.eval("document.body.innerText")
    assert "window.__pwned=1" in text and "<img src=x" in text
    assert c.eval("document.querySelectorAll('table.sass-line tbody tr').length") > 0
