// Graph views: scrolling canvas with zoom (buttons, Ctrl/Cmd + wheel), drag to pan, node details beside the
// clicked node, fusion groups and blocks expanding into a panel beside their box, search by name, a plumbing
// toggle, a minimap for drawings bigger than the canvas. Loads nothing from the network.
(function () {
  "use strict";

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

  // -- canvas: the drawing at its own size (1:1 keeps text legible), scrolled; zoom scales it -------------
  function setupCanvas(view) {
    var canvas = view.querySelector(":scope > .tk-stage > .tk-canvas");
    if (!canvas) return;
    var deferred = canvas.querySelector(":scope > script.tk-svg");
    // kept out of the markup untrusted outputs show; "</" was written "<\/" so no tag could close the script
    if (deferred) canvas.innerHTML = deferred.textContent.replace(/<\\\//g, "</");
    var svg = canvas.querySelector(":scope > svg");
    if (!svg) return;
    var w = parseFloat(svg.getAttribute("width")), h = parseFloat(svg.getAttribute("height"));
    var scale = 1;
    var mini = minimap(view, canvas, svg);
    function apply() {
      svg.setAttribute("width", (w * scale).toFixed(1));
      svg.setAttribute("height", (h * scale).toFixed(1));
      view.dataset.scale = scale.toFixed(4);
      mini.update();
    }
    function zoom(f, px, py) {  // keep the drawing point under (px, py) of the canvas where it is
      var sx = (canvas.scrollLeft + px) / scale, sy = (canvas.scrollTop + py) / scale;
      scale = Math.min(8, Math.max(0.05, scale * f));
      apply();
      canvas.scrollLeft = sx * scale - px;
      canvas.scrollTop = sy * scale - py;
    }
    canvas.addEventListener("wheel", function (ev) {
      if (!(ev.ctrlKey || ev.metaKey)) return;  // a plain wheel scrolls the page and the canvas
      ev.preventDefault();
      var r = canvas.getBoundingClientRect();
      zoom(ev.deltaY > 0 ? 1 / 1.15 : 1.15, ev.clientX - r.left, ev.clientY - r.top);
    }, {passive: false});
    var drag = null;
    canvas.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0) return;
      drag = {x: ev.clientX, y: ev.clientY, l: canvas.scrollLeft, t: canvas.scrollTop, moved: false};
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 3) drag.moved = true;
      if (drag.moved) {
        canvas.classList.add("tk-dragging");
        canvas.scrollLeft = drag.l - (ev.clientX - drag.x);
        canvas.scrollTop = drag.t - (ev.clientY - drag.y);
      }
    });
    window.addEventListener("mouseup", function () {
      if (drag && drag.moved) svg.dataset.dragged = "1";
      canvas.classList.remove("tk-dragging");
      drag = null;
    });
    // bring a node (of this drawing) to the middle of the canvas
    view.tkReveal = function (g) {
      var c = canvas.getBoundingClientRect(), r = g.getBoundingClientRect();
      canvas.scrollLeft += r.left + r.width / 2 - (c.left + canvas.clientWidth / 2);
      canvas.scrollTop += r.top + r.height / 2 - (c.top + canvas.clientHeight / 2);
      r = g.getBoundingClientRect();  // and the canvas itself into the window when it is off screen
      if (r.bottom < 0 || r.top > window.innerHeight) canvas.scrollIntoView({block: "nearest"});
    };
    var bar = view.querySelector(":scope > .tk-toolbar");
    if (bar) bar.addEventListener("click", function (ev) {
      var act = ev.target.getAttribute && ev.target.getAttribute("data-act");
      var cx = canvas.clientWidth / 2, cy = canvas.clientHeight / 2;
      if (act === "zoom-in") zoom(1.25, cx, cy);
      else if (act === "zoom-out") zoom(1 / 1.25, cx, cy);
      else if (act === "one") { scale = 1; apply(); }
      else if (act === "fit") {  // the whole drawing in the canvas's width and the window's height
        var maxH = Math.max(200, window.innerHeight * 0.8 - 8);
        scale = Math.min((canvas.clientWidth - 2) / w, maxH / h);
        apply();
        canvas.scrollLeft = 0; canvas.scrollTop = 0;
      }
    });
  }

  // -- minimap: a scaled copy of the drawing in the canvas's corner, the visible part framed; shown only while
  // the drawing is bigger than the canvas; a click there scrolls the canvas to that point ------------------
  var MINI = 160;  // px: the minimap's longer side
  function minimap(view, canvas, svg) {
    var stage = canvas.parentElement, box = null, frame = null, k = 1;
    function build() {
      box = document.createElement("div");
      box.className = "tk-minimap";
      box.title = "overview: click to scroll there";
      var copy = svg.cloneNode(true);  // a picture only: its boxes are neither found nor clicked as nodes
      copy.querySelectorAll(".tk-node").forEach(function (g) {
        g.classList.remove("tk-node", "tk-selected", "tk-match", "tk-current");
        g.removeAttribute("data-node");
      });
      var w = parseFloat(svg.getAttribute("viewBox").split(/[\s,]+/)[2]);
      var h = parseFloat(svg.getAttribute("viewBox").split(/[\s,]+/)[3]);
      k = MINI / Math.max(w, h);
      copy.setAttribute("width", (w * k).toFixed(1));
      copy.setAttribute("height", (h * k).toFixed(1));
      frame = document.createElement("div");
      frame.className = "tk-minimap-frame";
      box.appendChild(copy);
      box.appendChild(frame);
      box.addEventListener("mousedown", function (ev) { ev.stopPropagation(); });
      box.addEventListener("click", function (ev) {
        ev.stopPropagation();
        var r = copy.getBoundingClientRect(), f = svg.getBoundingClientRect().width / r.width;
        canvas.scrollLeft = (ev.clientX - r.left) * f - canvas.clientWidth / 2;
        canvas.scrollTop = (ev.clientY - r.top) * f - canvas.clientHeight / 2;
      });
      stage.appendChild(box);
    }
    function update() {
      var big = canvas.scrollWidth > canvas.clientWidth + 1 || canvas.scrollHeight > canvas.clientHeight + 1;
      if (!big) { if (box) box.hidden = true; return; }
      if (!box) build();
      box.hidden = false;
      var f = parseFloat(box.firstChild.getAttribute("width")) / canvas.scrollWidth;
      frame.style.left = (canvas.scrollLeft * f) + "px";
      frame.style.top = (canvas.scrollTop * f) + "px";
      frame.style.width = Math.max(2, canvas.clientWidth * f) + "px";
      frame.style.height = Math.max(2, canvas.clientHeight * f) + "px";
    }
    canvas.addEventListener("scroll", update);
    window.addEventListener("resize", update);
    if (window.ResizeObserver) new ResizeObserver(update).observe(canvas);
    update();
    return {update: update};
  }

  // -- search: nodes whose name (op, attribute path, value names) holds the text are highlighted, Enter
  // scrolls to the next one ------------------------------------------------------------------------
  function haystack(g, n) {
    var words = [g.textContent];
    if (n) {
      words.push(n.label, n.kind);
      (n.outputs || []).forEach(function (o) { words.push(o.name); });
    }
    return words.join("\n").toLowerCase();
  }

  function setupSearch(view, model) {
    var input = view.querySelector(":scope > .tk-toolbar > input.tk-search");
    var count = view.querySelector(":scope > .tk-toolbar > .tk-count");
    if (!input) return;
    var matches = [], at = -1;
    function nodes() { return view.querySelectorAll(":scope > .tk-stage > .tk-canvas > svg .tk-node"); }
    function run() {
      var q = input.value.trim().toLowerCase();
      matches = []; at = -1;
      nodes().forEach(function (g) {
        var hit = q !== "" && haystack(g, model.nodes[g.getAttribute("data-node")]).indexOf(q) >= 0;
        g.classList.toggle("tk-match", hit);
        g.classList.remove("tk-current");
        if (hit) matches.push(g);
      });
      count.textContent = q === "" ? "" : matches.length + (matches.length === 1 ? " match" : " matches");
      view.dataset.matches = String(matches.length);
    }
    input.addEventListener("input", run);
    input.addEventListener("keydown", function (ev) {
      ev.stopPropagation();  // typing here drives no notebook shortcut
      if (ev.key === "Escape") { input.value = ""; run(); return; }
      if (ev.key !== "Enter" || !matches.length) return;
      ev.preventDefault();
      if (at >= 0) matches[at].classList.remove("tk-current");
      at = at < 0 ? (ev.shiftKey ? matches.length - 1 : 0) : (at + (ev.shiftKey ? matches.length - 1 : 1)) % matches.length;
      matches[at].classList.add("tk-current");
      count.textContent = (at + 1) + " / " + matches.length;
      if (view.tkReveal) view.tkReveal(matches[at]);
    });
  }

  // -- plumbing toggle: the twin drawing with constants, GetAttr chains and lists as boxes, unpacked from its
  // JSON on first use and swapped with the view it belongs to ---------------------------------------
  function setupPlumbing(root, model, view) {
    var data = view.nextElementSibling;
    if (!data || !data.matches("script.tk-plumbing")) return;
    var twin = null;
    function swap(from, to) {
      from.hidden = true; to.hidden = false;
      var b = to.querySelector(':scope > .tk-toolbar > button[data-act="plumbing"]');
      if (b) b.focus();
    }
    view.querySelector(':scope > .tk-toolbar > button[data-act="plumbing"]').addEventListener("click", function () {
      if (!twin) {
        var packed = JSON.parse(data.textContent);
        Object.keys(packed.nodes).forEach(function (k) { model.nodes[k] = packed.nodes[k]; });
        var holder = document.createElement("div");
        holder.innerHTML = packed.html;
        twin = holder.firstElementChild;
        twin.hidden = true;
        data.parentNode.insertBefore(twin, data.nextSibling);
        [twin].concat(Array.prototype.slice.call(twin.querySelectorAll(".tk-view"))).forEach(function (v) {
          setupCanvas(v); setupSearch(v, model);
        });
        twin.querySelector(':scope > .tk-toolbar > button[data-act="plumbing"]').addEventListener(
          "click", function () { swap(twin, view); });
      }
      swap(view, twin);
    });
  }

  // -- node details -------------------------------------------------------------------------------------
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

  // place `box` (absolutely positioned) next to `target`: to its right when it fits there, else below it,
  // kept inside the view's width so nothing opens off screen
  function place(box, target, below) {
    var parent = box.offsetParent || box.parentElement;
    var pr = parent.getBoundingClientRect(), tr = target.getBoundingClientRect();
    var room = parent.clientWidth, w = box.offsetWidth;
    var left = tr.right - pr.left + 12, top = tr.top - pr.top;
    if (below || left + w > room) { left = tr.left - pr.left; top = tr.bottom - pr.top + 6; }
    left = Math.max(0, Math.min(left, room - w));
    box.style.left = (left + parent.scrollLeft) + "px";
    box.style.top = Math.max(0, top + parent.scrollTop) + "px";
  }

  // JupyterLab: the static picture this view was displayed after (for untrusted and saved notebooks) is
  // hidden once the interactive view runs.
  function hideStaticTwin(root) {
    if (!root.hasAttribute("data-static-twin") || !root.closest) return;
    var child = root.closest(".jp-OutputArea-child");
    var prev = child && child.previousElementSibling;
    if (prev && prev.querySelector(".jp-RenderedSVG, .jp-RenderedImage")) prev.style.display = "none";
  }

  function init(root) {
    var script = root.querySelector("script.tk-model");
    if (!script) return;
    var model = JSON.parse(script.textContent);
    root.querySelectorAll(".tk-view").forEach(function (v) { setupCanvas(v); setupSearch(v, model); });
    root.querySelectorAll(".tk-view").forEach(function (v) { setupPlumbing(root, model, v); });
    root.querySelectorAll(".tk-untrusted-note").forEach(function (e) { e.hidden = true; });
    hideStaticTwin(root);
    var info = root.querySelector(".tk-info");
    root.addEventListener("keydown", function (ev) { if (ev.key === "Escape" && info) info.hidden = true; });
    root.addEventListener("click", function (ev) {
      var g = ev.target.closest ? ev.target.closest(".tk-node") : null;
      if (!g || !root.contains(g)) return;
      var svg = g.ownerSVGElement;
      if (svg && svg.dataset.dragged) { delete svg.dataset.dragged; return; }
      var id = g.getAttribute("data-node");
      var n = model.nodes[id];
      root.querySelectorAll(".tk-node.tk-selected").forEach(function (e) { e.classList.remove("tk-selected"); });
      g.classList.add("tk-selected");
      if (info && n) { info.innerHTML = details(n); info.hidden = false; place(info, g, true); }
      var panel = root.querySelector(".tk-panel[data-panel='" + id + "']");
      if (panel) {
        var open = panel.hasAttribute("hidden");
        if (open) { panel.removeAttribute("hidden"); place(panel, g, false); }
        else panel.setAttribute("hidden", "");
        g.classList.toggle("tk-expanded", open);
        var mark = g.querySelector("text.tk-mark");
        if (mark) mark.textContent = open ? "\u2212" : "+";
      }
    });
  }

  window.toolkitGraph = {init: init};
})();
