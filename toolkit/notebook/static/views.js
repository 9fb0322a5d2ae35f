// toolkit's notebook views: zoom/pan, expandable groups and node details for graph views;
// sortable tables for profile views. Shipped inside the package; loads nothing from the network.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  }

  function fmtTime(us) {
    if (us >= 1e6) return (us / 1e6).toFixed(3) + "s";
    if (us >= 1e3) return (us / 1e3).toFixed(3) + "ms";
    return us.toFixed(3) + "us";
  }

  // -- zoom and pan: the svg's viewBox moves; a drag is not a click --------------------------
  function setupZoom(view) {
    var svg = view.querySelector(":scope > .tk-canvas > svg");
    if (!svg) return;
    var full = svg.getAttribute("viewBox").split(/\s+/).map(Number);
    var box = full.slice();
    function apply() { svg.setAttribute("viewBox", box.join(" ")); }
    function zoom(f, cx, cy) {
      var nw = box[2] * f, nh = box[3] * f;
      box = [cx - (cx - box[0]) * f, cy - (cy - box[1]) * f, nw, nh];
      apply();
    }
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var r = svg.getBoundingClientRect();
      var cx = box[0] + (ev.clientX - r.left) / r.width * box[2];
      var cy = box[1] + (ev.clientY - r.top) / r.height * box[3];
      zoom(ev.deltaY > 0 ? 1.15 : 1 / 1.15, cx, cy);
    }, {passive: false});
    var drag = null;
    svg.addEventListener("mousedown", function (ev) {
      drag = {x: ev.clientX, y: ev.clientY, box: box.slice(), moved: false};
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var r = svg.getBoundingClientRect();
      var dx = (ev.clientX - drag.x) / r.width * box[2], dy = (ev.clientY - drag.y) / r.height * box[3];
      if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 3) drag.moved = true;
      if (drag.moved) { box = [drag.box[0] - dx, drag.box[1] - dy, box[2], box[3]]; apply(); }
    });
    window.addEventListener("mouseup", function () {
      if (drag && drag.moved) svg.dataset.dragged = "1";
      drag = null;
    });
    var bar = view.querySelector(":scope > .tk-toolbar");
    if (bar) bar.addEventListener("click", function (ev) {
      var act = ev.target.getAttribute && ev.target.getAttribute("data-act");
      if (act === "zoom-in") zoom(1 / 1.25, box[0] + box[2] / 2, box[1] + box[3] / 2);
      else if (act === "zoom-out") zoom(1.25, box[0] + box[2] / 2, box[1] + box[3] / 2);
      else if (act === "fit") { box = full.slice(); apply(); }
    });
  }

  // -- node details ---------------------------------------------------------------------------
  function details(n) {
    var rows = [];
    function row(k, v) { rows.push("<tr><td><b>" + esc(k) + "</b></td><td>" + v + "</td></tr>"); }
    row("node", "<code>" + esc(n.kind) + "</code>" + (n.label !== n.kind ? " (" + esc(n.label) + ")" : ""));
    if (n.outputs.length) row("outputs", n.outputs.map(function (o) {
      return "<code>" + esc(o.name) + " : " + esc(o.type) + "</code>"; }).join("<br>"));
    if (n.inputs.length) row("inputs", n.inputs.map(function (i) {
      return "<code>" + esc(i.name) + (i.constant != null ? " = " + esc(i.constant) : " : " + esc(i.type)) +
        "</code>"; }).join("<br>"));
    var attrs = Object.keys(n.attributes || {});
    if (attrs.length) row("attributes", attrs.map(function (k) {
      return "<code>" + esc(k) + "=" + esc(n.attributes[k]) + "</code>"; }).join(", "));
    if (n.source) row("source", "<code>" + esc(n.source) + "</code>" +
      (n.code ? "<br><code>" + esc(n.code) + "</code>" : ""));
    if (n.scope) row("scope", "<code>" + esc(n.scope) + "</code>");
    if (n.time_us != null) row("profiled", esc(fmtTime(n.time_us)) + " in " + n.calls + " call" +
      (n.calls === 1 ? "" : "s") + " of <code>" + esc(n.kind === "prim::FusionGroup" ? n.label : n.kind) + "</code>");
    if (n.children && n.children.length) row("expands to", n.children.length + " view" +
      (n.children.length === 1 ? "" : "s") + (n.kernel ? " and its kernel source" : ""));
    return "<table class='tk-kv'>" + rows.join("") + "</table>";
  }

  function setupGraph(root) {
    var script = root.querySelector("script.tk-model");
    if (!script) return;
    var model = JSON.parse(script.textContent);
    root.querySelectorAll(".tk-view").forEach(setupZoom);
    var info = root.querySelector(".tk-info");
    root.addEventListener("click", function (ev) {
      var g = ev.target.closest ? ev.target.closest(".tk-node") : null;
      if (!g || !root.contains(g)) return;
      var svg = g.ownerSVGElement;
      if (svg && svg.dataset.dragged) { delete svg.dataset.dragged; return; }
      var id = g.getAttribute("data-node");
      var n = model.nodes[id];
      root.querySelectorAll(".tk-node.tk-selected").forEach(function (e) { e.classList.remove("tk-selected"); });
      g.classList.add("tk-selected");
      if (info && n) info.innerHTML = details(n);
      var panel = root.querySelector(".tk-panel[data-panel='" + id + "']");
      if (panel) {
        var open = panel.hasAttribute("hidden");
        if (open) panel.removeAttribute("hidden"); else panel.setAttribute("hidden", "");
        g.classList.toggle("tk-expanded", open);
        var mark = g.querySelector("text.tk-mark");
        if (mark) mark.textContent = open ? "\u2212" : "+";
      }
    });
  }

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
    setupGraph(root);
    setupTables(root);
  }

  window.toolkitViews = {init: init, SVGNS: SVGNS};
})();
