// toolkit's notebook views: sortable tables for profile views; graph views bring graph.js.
// Shipped inside the package; loads nothing from the network.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";

  // -- sortable tables ------------------------------------------------------------------------
  function setupTables(root) {
    root.querySelectorAll("table.tk-table").forEach(function (table) {
      var heads = table.querySelectorAll("th");
      heads.forEach(function (th, col) {
        th.addEventListener("click", function () {
          var desc = !th.classList.contains("tk-sorted-desc");
          heads.forEach(function (h) { h.classList.remove("tk-sorted-asc", "tk-sorted-desc"); });
          th.classList.add(desc ? "tk-sorted-desc" : "tk-sorted-asc");
          var body = table.tBodies[0];
          var rows = Array.prototype.slice.call(body.rows);
          rows.sort(function (a, b) {
            var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
            var nx = parseFloat(x), ny = parseFloat(y), c;
            if (!isNaN(nx) && !isNaN(ny)) c = nx - ny; else c = String(x).localeCompare(String(y));
            return desc ? -c : c;
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
    });
  }

  function init(root) {
    if (!root || root.dataset.tkReady) return;
    root.dataset.tkReady = "1";
    if (window.toolkitGraph) window.toolkitGraph.init(root);  // graph.js, shipped with graph views
    setupTables(root);
  }

  window.toolkitViews = {init: init, SVGNS: SVGNS};
})();
