/* drgpu HTML report behaviour, inlined: expand/collapse all, and open the target of a link
   (a hot source line) so following "source" from a finding shows its SASS. */
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
