/* drgpu HTML report behaviour, inlined: unpack the packed kernel groups, build the lazily embedded trees, expand/collapse all, open the target of a link
   (a hot source line) so following "source" from a finding shows its SASS, and sort the
   summary table by a clicked column header (numbers by their data-value; empty last). */
(function () {
  "use strict";
  /* Trees of the lighter kernel groups come as JSON (keys: TREE_KEYS in html.py) and are built
     here, on first opening, into the same DOM the template draws; text only via textContent. */
  function el(tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text) { e.textContent = text; }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function label(n, s) {
    /* the template leaves one space around the name (its line breaks); so does this */
    if (n.k === "suggestion") { el("span", "arrow", "\u279c", s); }
    s.appendChild(document.createTextNode(" "));
    el("span", "n-name", n.n, s);
    s.appendChild(document.createTextNode(" "));
    if (n.v) { el("span", "n-val", n.v, s); }
    if (n.b !== undefined && n.b !== null) {
      el("span", "", "", el("span", "n-bar" + (n.k === "line" ? " n-bar-line" : ""), "", s)).style.width = n.b.toFixed(1) + "%";
    }
    if (n.id) {
      el("span", "sev sev-" + (n.sev || ""), n.sev, s);
      s.appendChild(document.createTextNode(" "));
      el("span", "mono muted small", n.id, s);
    }
    if (n.k === "line") {
      if (n.hr) {
        var a = el("a", "jump", "source \u2193", s);
        a.href = n.hr;
        a.title = "show in source";
      }
      if (n.cd) { el("code", "", n.cd, s); } else if (n.s) { el("span", "mono sass-inline", n.s, s); }
    }
    if (n.d) { el("span", "n-detail", n.d, s); }
  }
  function node(n) {
    var cls = "node kind-" + n.k + (n.c ? " chain" : "") + (n.h ? " hl" : "");
    if (!n.ch && !n.f) {
      var leaf = el("div", cls + " leaf");
      label(n, leaf);
      return leaf;
    }
    var d = el("details", cls);
    d.open = !!n.o;
    label(n, el("summary", "", "", d));
    var ul = el("ul", "", "", d);
    (n.ch || []).forEach(function (c) { el("li", "", "", ul).appendChild(node(c)); });
    if (n.f) {
      var fd = el("details", "node folded", "", el("li", "", "", ul));
      el("span", "n-name muted", n.fn, el("summary", "", "", fd));
      var ful = el("ul", "", "", fd);
      n.f.forEach(function (c) { el("li", "", "", ful).appendChild(node(c)); });
    }
    return d;
  }
  function build(root) {
    var src = root && root.getAttribute("data-tree-json");
    if (!src) { return; }
    root.removeAttribute("data-tree-json");
    root.appendChild(node(JSON.parse(document.getElementById(src).textContent)));
  }
  function pct(v) { return Math.round(v) + "%"; }
  function buildSource(box) {
    var src = box && box.getAttribute("data-src-json");
    if (!src) { return; }
    box.removeAttribute("data-src-json");
    var v = JSON.parse(document.getElementById(src).textContent);
    if (v.g.length) {
      var segs = el("div", "segs", "", box), bar = el("span", "seg-bar", "", segs), legend = el("span", "seg-legend", "", segs);
      v.g.forEach(function (g) {
        var s = el("span", "", "", bar);
        s.style.width = g[0].toFixed(1) + "%";
        s.style.background = g[1];
        s.title = g[2] + ": " + pct(g[0]);
        var item = el("span", "", "", legend);
        el("i", "", "", item).style.background = g[1];
        item.appendChild(document.createTextNode(g[2] + " " + pct(g[0])));
      });
    }
    var table = el("table", "sass sass-line", "", box), head = el("tr", "", "", el("thead", "", "", table));
    [["offset", ""], ["SASS", ""], ["executed", "num"], ["stall samples", "num"], ["top reasons", ""]].forEach(function (h) {
      el("th", h[1], h[0], head);
    });
    var body = el("tbody", "", "", table);
    v.r.forEach(function (r) {
      var tr = el("tr", r[6] ? "hot" : "", "", body);
      el("td", "", r[0], tr);
      var code = el("td", "", r[1], tr);
      r[2].forEach(function (fid) { code.appendChild(document.createTextNode(" ")); el("span", "tag", fid, code); });
      el("td", "", r[3], tr);
      el("td", "", r[4], tr);
      el("td", "", r[5], tr);
    });
    if (v.m) { el("p", "muted small", v.m + " more instructions on this line with fewer stall samples are not listed.", box); }
  }
  /* Handlers are delegated from the document (toggle does not bubble: caught while capturing),
     so the parts unpacked later work without wiring of their own. */
  document.addEventListener("toggle", function (e) {
    var d = e.target;
    if (!d.open || d.tagName !== "DETAILS") { return; }
    if (d.classList.contains("src-hot")) { buildSource(d.querySelector(".src-detail[data-src-json]")); }
    if (d.classList.contains("tree-lazy")) { build(d.querySelector(".tree[data-tree-json]")); }
  }, true);
  document.addEventListener("click", function (e) {
    var btn = e.target.closest ? e.target.closest("button[data-tree], button[data-fit]") : null;
    if (!btn) { return; }
    if (btn.hasAttribute("data-fit")) {
      var box = document.getElementById(btn.getAttribute("data-fit"));
      if (box) { btn.textContent = box.classList.toggle("fit") ? "Actual size" : "Fit to width"; }
      return;
    }
    var root = document.getElementById(btn.getAttribute("data-tree"));
    if (!root) { return; }
    build(root);
    var open = btn.getAttribute("data-action") === "expand";
    root.querySelectorAll("details").forEach(function (d) { d.open = open; });
    if (!open) {
      var top = root.querySelector("details");
      if (top) { top.open = true; }
    }
  });
  /* A page of many kernel groups carries each group's charts, model, tree and source lines as
     one gzip stream (html.py _pack: per block, an array over the groups). The markup is what
     the autoescaped template drew for the inline page; it takes the placeholder's place. The
     heaviest groups (data-eager) are unpacked at once, the others as they come near the window
     or a link points into them. */
  var bodies = null;
  var ready = (function () {
    var blob = document.getElementById("packed-bodies");
    if (!blob) { return Promise.resolve(); }
    /* Jumps, not smooth scrolls: a group unpacked during a smooth scroll moves its target away. */
    document.documentElement.style.scrollBehavior = "auto";
    document.documentElement.style.overflowAnchor = "none";   /* unpack() keeps the view in place */
    if (typeof DecompressionStream === "undefined") {
      document.querySelectorAll("div.packed > p").forEach(function (p) {
        p.textContent = "This browser cannot unpack this part of the page (it lacks DecompressionStream); drgpu analyze -k ID writes one kernel's page.";
      });
      return Promise.resolve();
    }
    var stream;
    try {   /* a failure here must not stop the rest of this script (the table sort below) */
      var bin = atob(blob.textContent.trim()), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
      stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Response(stream).text().then(function (text) {
      blob.parentNode.removeChild(blob);   /* its text is no longer needed (html.unpack_page drops it too) */
      var cols = JSON.parse(text);
      bodies = cols.length ? cols[0].map(function (_, n) {
        return cols.map(function (c) { return c[n]; }).join("");
      }) : [];
    });
  })();
  function unpack(box) {
    if (!box || !bodies || !box.parentNode) { return; }
    var n = parseInt(box.getAttribute("data-packed"), 10);
    /* A group unpacked above the window pushes what is shown down by its height: scroll by as
       much, so a link's target stays where the jump put it (the browser's own scroll anchoring
       is off on such pages: it missed groups unpacked above the last sections). */
    var above = box.getBoundingClientRect().top < 0, height = document.documentElement.scrollHeight;
    box.insertAdjacentHTML("afterend", bodies[n]);
    box.parentNode.removeChild(box);
    bodies[n] = "";   /* in the page now: free the string */
    if (above) { window.scrollBy(0, document.documentElement.scrollHeight - height); }
  }
  ready.then(function () {
    if (!bodies) { return; }
    document.querySelectorAll("div.packed[data-eager]").forEach(unpack);
    var rest = document.querySelectorAll("div.packed");
    if (typeof IntersectionObserver === "undefined") {
      rest.forEach(unpack);
    } else {
      var seen = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) {
          if (e.isIntersecting) { seen.unobserve(e.target); unpack(e.target); }
        });
      }, {rootMargin: "1500px 0px"});
      rest.forEach(function (box) { seen.observe(box); });
    }
    openTarget();
  }).catch(function (err) {
    document.querySelectorAll("div.packed > p").forEach(function (p) { p.textContent = "Could not unpack this part of the page: " + err; });
  });
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = Array.prototype.slice.call(table.querySelectorAll("thead th"));
    function key(row, col, numeric) {
      var cell = row.cells[col];
      if (!cell) { return null; }
      var v = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
      v = v.trim();
      if (v === "") { return null; }
      if (!numeric) { return v.toLowerCase(); }
      var n = parseFloat(v);
      return isNaN(n) ? null : n;
    }
    function sortBy(th) {
      var col = heads.indexOf(th);
      var numeric = th.getAttribute("data-sort") === "num";
      var now = th.getAttribute("aria-sort");
      var dir = now === "descending" ? "ascending" : now === "ascending" ? "descending" : numeric ? "descending" : "ascending";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows).map(function (r, i) {
        return {row: r, i: i, k: key(r, col, numeric)};
      });
      rows.sort(function (a, b) {
        if (a.k === null || b.k === null) {
          return a.k === b.k ? a.i - b.i : a.k === null ? 1 : -1;
        }
        var c = numeric ? a.k - b.k : a.k.localeCompare(b.k);
        return (dir === "descending" ? -c : c) || a.i - b.i;
      });
      rows.forEach(function (x) { body.appendChild(x.row); });
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir);
    }
    heads.forEach(function (th) {
      if (!th.hasAttribute("data-sort")) { return; }
      th.addEventListener("click", function () { sortBy(th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(th); }
      });
    });
  });
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    if (!id) { return; }
    var el = document.getElementById(id);
    var group = /^(k[0-9]+)(?:-|$)/.exec(id);
    if (group && bodies) {   /* a link into (or to) a group still packed: unpack it, then go there */
      var art = document.getElementById(group[1]);
      var packedTarget = !!(art && art.querySelector("div.packed"));
      unpack(art && art.querySelector("div.packed"));
      el = document.getElementById(id);
      /* The groups between the window's top and the target (the short, packed sections the
         jump passed over to reach one near the page's end) unpack now, not once seen: they
         would push the target down out of the window. Then jump again, at once, not smoothly:
         groups unpacked on the way would move the target during the scroll. */
      var moved = false;
      if (el) {
        document.querySelectorAll("div.packed").forEach(function (box) {
          var r = box.getBoundingClientRect();
          if (r.bottom > 0 && r.top < el.getBoundingClientRect().top) { unpack(box); moved = true; }
        });
      }
      if (el && (moved || packedTarget)) {
        try { el.scrollIntoView({behavior: "instant"}); } catch (e) { el.scrollIntoView(); }
      }
    }
    if (el && el.tagName === "DETAILS") {
      el.open = true;
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
