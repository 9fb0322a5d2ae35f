// ProfileView's interactive timeline (every event; wheel zooms, drag pans, double-click or "fit" resets)
// and its "open in Perfetto" button. Runs only in trusted outputs; the static drawing stays otherwise.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var PERFETTO = "https://ui.perfetto.dev";
  var LANE = 14, AXIS = 18;

  function fmt(us) {
    if (Math.abs(us) >= 1e6) return +(us / 1e6).toPrecision(4) + "s";
    if (Math.abs(us) >= 1e3) return +(us / 1e3).toPrecision(4) + "ms";
    return +us.toPrecision(4) + "us";
  }

  function ticks(lo, hi, target) {
    var raw = (hi - lo) / target, mag = Math.pow(10, Math.floor(Math.log10(raw))), step = 10 * mag;
    [1, 2, 5, 10].some(function (m) { if (m * mag >= raw) { step = m * mag; return true; } return false; });
    var out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(t);
    return out;
  }

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVGNS, name);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(e);
    return e;
  }

  function timeline(data, host) {
    var ev = data.ev, span = 0, depth = {};
    ev.forEach(function (e) {
      span = Math.max(span, e[2] + e[3]);
      depth[e[4]] = Math.max(depth[e[4]] || 0, e[5] + 1);
    });
    span = span || 1;
    var offsets = {}, y = AXIS + 2;
    Object.keys(depth).map(Number).sort(function (a, b) { return a - b; }).forEach(function (t) {
      offsets[t] = y; y += depth[t] * LANE + 6;
    });
    var height = y;
    var svg = el("svg", {"class": "tk-timeline", height: height});
    var axis = el("g", {"class": "tk-axis"}, svg);
    var bars = ev.map(function (e) {
      var name = data.names[e[0]], kind = data.kinds[e[1]];
      var g = el("g", {"class": "tk-event tk-" + kind}, svg);
      var r = el("rect", {y: offsets[e[4]] + e[5] * LANE, height: LANE - 2, fill: data.colors[e[1]]}, g);
      el("title", {}, r).textContent = name + " (" + kind + "): " + fmt(e[3]) + " at " + fmt(e[2]);
      var t = el("text", {y: offsets[e[4]] + e[5] * LANE + 10}, g);
      return {e: e, g: g, r: r, t: t, name: name};
    });
    host.appendChild(svg);
    var lo = 0, hi = span;

    function render() {
      var w = host.clientWidth || 1000;
      svg.setAttribute("width", w);
      svg.setAttribute("viewBox", "0 0 " + w + " " + height);
      var k = w / (hi - lo);
      bars.forEach(function (b) {
        var x = (b.e[2] - lo) * k, bw = Math.max(b.e[3] * k, 0.5);
        if (x + bw < 0 || x > w) { b.g.style.display = "none"; return; }
        b.g.style.display = "";
        b.r.setAttribute("x", x.toFixed(2));
        b.r.setAttribute("width", bw.toFixed(2));
        var chars = Math.floor((Math.min(bw, w - Math.max(x, 0)) - 4) / 6);
        b.t.setAttribute("x", (Math.max(x, 0) + 2).toFixed(2));
        b.t.textContent = chars >= 3 ? (b.name.length > chars ? b.name.slice(0, chars - 1) + "\u2026" : b.name) : "";
      });
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      ticks(lo, hi, Math.max(2, Math.floor(w / 110))).forEach(function (t) {
        var x = (t - lo) * k;
        el("line", {x1: x, x2: x, y1: 0, y2: height}, axis);
        var label = el("text", {x: x + 2, y: 11}, axis);
        label.textContent = fmt(t);
        if (x + 2 + label.getComputedTextLength() > w) {  // near the right edge: the label goes left of its tick
          label.setAttribute("x", x - 2);
          label.setAttribute("text-anchor", "end");
        }
      });
    }

    function zoom(f, at) {
      var nlo = at - (at - lo) * f, nhi = at + (hi - at) * f;
      if (nhi - nlo < 0.01) return;
      lo = Math.max(0, nlo); hi = Math.min(span, nhi);
      render();
    }
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var r = svg.getBoundingClientRect();
      zoom(ev.deltaY > 0 ? 1.2 : 1 / 1.2, lo + (ev.clientX - r.left) / r.width * (hi - lo));
    }, {passive: false});
    var drag = null;
    svg.addEventListener("mousedown", function (ev) { drag = {x: ev.clientX, lo: lo, hi: hi}; ev.preventDefault(); });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var d = (ev.clientX - drag.x) / (svg.getBoundingClientRect().width || 1) * (drag.hi - drag.lo);
      d = Math.max(Math.min(d, drag.lo), drag.hi - span);
      lo = drag.lo - d; hi = drag.hi - d;
      render();
    });
    window.addEventListener("mouseup", function () { drag = null; });
    window.addEventListener("resize", render);
    svg.addEventListener("dblclick", function () { lo = 0; hi = span; render(); });
    render();
    return {fit: function () { lo = 0; hi = span; render(); }, render: render};
  }

  function chromeTrace(data) {
    var events = data.ev.map(function (e) {
      return {name: data.names[e[0]], cat: data.kinds[e[1]], ph: "X", ts: e[2], dur: e[3], pid: 0, tid: e[4]};
    });
    return JSON.stringify({traceEvents: events, displayTimeUnit: "ms"});
  }

  // Perfetto's documented deep link: open the UI, PING until it answers PONG, then post the trace buffer.
  function openInPerfetto(data, status) {
    var win = window.open(PERFETTO);
    if (!win) { status("the browser blocked the Perfetto window"); return; }
    status("waiting for Perfetto UI\u2026");
    var tries = 0;
    function onMessage(ev) {
      if (ev.origin !== PERFETTO || ev.data !== "PONG") return;
      stop();
      var buffer = new TextEncoder().encode(chromeTrace(data)).buffer;
      win.postMessage({perfetto: {buffer: buffer, title: "toolkit profile", fileName: "toolkit-profile.json"}},
                      PERFETTO);
      status("sent " + data.ev.length + " events to Perfetto UI");
    }
    var timer = setInterval(function () {
      if (win.closed || ++tries > 80) {
        stop();
        status(win.closed ? "Perfetto window closed" : "Perfetto UI did not answer (offline?)");
        return;
      }
      try { win.postMessage("PING", PERFETTO); } catch (e) { /* not loaded yet */ }
    }, 250);
    function stop() { clearInterval(timer); window.removeEventListener("message", onMessage); }
    window.addEventListener("message", onMessage);
  }

  function init(root) {
    if (!root || root.dataset.tkProfileReady) return;
    root.dataset.tkProfileReady = "1";
    var script = root.querySelector("script.tk-timeline-data"), host = root.querySelector(".tk-timeline-live");
    if (!script || !host) return;
    var data = JSON.parse(script.textContent);
    host.removeAttribute("hidden");
    var stat = root.querySelector(".tk-static-timeline, .tk-timeline-static");
    if (stat) stat.style.display = "none";
    var tl = timeline(data, host);
    var tools = root.querySelector(".tk-tools"), status = root.querySelector(".tk-status");
    if (!tools) return;
    tools.style.display = "";
    tools.addEventListener("click", function (ev) {
      var act = ev.target.getAttribute && ev.target.getAttribute("data-act");
      if (act === "tl-fit") tl.fit();
      else if (act === "perfetto") openInPerfetto(data, function (s) { if (status) status.textContent = s; });
    });
  }

  window.toolkitProfile = {init: init};
})();
