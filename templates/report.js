/* drgpu HTML report behaviour, inlined: expand/collapse all, open the target of a link
   (a hot source line) so following "source" from a finding shows its SASS, and sort the
   summary table by a clicked column header (numbers by their data-value; empty last). */
(function () {
  "use strict";
  document.querySelectorAll("button[data-tree]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var root = document.getElementById(btn.getAttribute("data-tree"));
      if (!root) { return; }
      var open = btn.getAttribute("data-action") === "expand";
      root.querySelectorAll("details").forEach(function (d) { d.open = open; });
      if (!open) {
        var top = root.querySelector("details");
        if (top) { top.open = true; }
      }
    });
  });
  document.querySelectorAll("button[data-fit]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var box = document.getElementById(btn.getAttribute("data-fit"));
      if (!box) { return; }
      var fit = box.classList.toggle("fit");
      btn.textContent = fit ? "Actual size" : "Fit to width";
    });
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
    if (el && el.tagName === "DETAILS") {
      el.open = true;
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
