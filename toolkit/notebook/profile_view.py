"""``ProfileView``: a profile as a sortable op table with per-op bars and a timeline of its events.

Forward ops, backward nodes (``autograd::...``, the engine's events), fused JIT
kernels (``prim::FusionGroup_N: ...``) and ``record_function`` ranges get their
own colours in both. Built from a ``toolkit.profiler.profile``, its ``events()``
or its ``key_averages()`` (averages alone have no timeline). ``%%profile``
shows one under its text table.

The view draws twice. JupyterLab renders an untrusted notebook's HTML through a
sanitizer that drops ``<style>``, ``<script>`` and ``<svg>`` (and never shows
``image/svg+xml`` or a data-URI image there), so the HTML holds a static drawing
made of tables and inline-styled ``<div>`` bars, which that sanitizer keeps;
the script, once trusted, replaces the static timeline with an interactive one
(zoom, pan, ticks, every event) and offers the trace to Perfetto's UI. The
bundle also carries the timeline as ``image/svg+xml`` for frontends that do not
render HTML.

    >>> with toolkit.profiler.profile() as prof:
    ...     model(x).sum().backward()
    >>> ProfileView(prof)             # in a cell: draws it
"""

from __future__ import annotations

import os

from ..profiler import EventList, FunctionEvent, profile
from ..profiler.table import format_time
from . import _html
from ._html import esc
from .profile_static import static_timeline_html, timeline_svg

COLORS = {"forward": "#54aeff", "backward": "#fb8f44", "fused": "#2da44e", "annotation": "#a475f9"}
CELL_STYLE = "overflow:hidden;text-overflow:ellipsis;white-space:nowrap"  # a long name is cut, its tooltip is whole


def event_kind(e) -> str:
    """forward, backward, fused or annotation: how the views colour an event or a table row."""
    name = e.key if hasattr(e, "key") and e.key is not None else e.name
    if name.startswith("prim::FusionGroup"):
        return "fused"
    if name.startswith("autograd::") or getattr(e, "scope", 0) == 1:
        return "backward"
    if getattr(e, "is_user_annotation", False) or name.startswith("ProfilerStep#"):
        return "annotation"
    return "forward"


def _split(source) -> tuple[list | None, list]:
    """(raw events or None, averages) of a profile, an EventList of events, or an EventList of averages."""
    if isinstance(source, profile):
        return list(source.events()), list(source.key_averages())
    if isinstance(source, EventList) or isinstance(source, list):
        if source and isinstance(source[0], FunctionEvent):
            events = EventList(source) if not isinstance(source, EventList) else source
            return list(events), list(events.key_averages())
        return None, list(source)
    raise TypeError(f"ProfileView: expected a toolkit.profiler.profile or an EventList, got {type(source).__name__}")


def _depths(events: list) -> dict:
    depth: dict = {}
    for e in events:
        d, p = 0, getattr(e, "cpu_parent", None)
        while p is not None:
            d += 1
            p = p.cpu_parent
        depth[id(e)] = d
    return depth


class ProfileView(_html.View):
    """Sortable table (click a column), per-op bars of self CPU time, and a timeline (see the module docstring).

    ``row_limit``: rows of the table (the top ones by self CPU time); None shows every op.
    """

    def __init__(self, source, row_limit: int | None = None):
        if row_limit is not None and (not isinstance(row_limit, int) or row_limit <= 0):
            raise ValueError(f"ProfileView: row_limit must be a positive int or None, got {row_limit!r}")
        self.events, self.averages = _split(source)
        self.row_limit = row_limit

    # -- the table ------------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """One row per averaged key, sorted by self CPU time, at most ``row_limit`` (the widget's table state)."""
        total = sum(a.self_cpu_time_total for a in self.averages) or 1.0
        rows = []
        for a in sorted(self.averages, key=lambda a: -a.self_cpu_time_total):
            rows.append({"name": a.key, "kind": event_kind(a), "self_cpu_us": a.self_cpu_time_total,
                         "self_cpu_pct": 100.0 * a.self_cpu_time_total / total, "cpu_total_us": a.cpu_time_total,
                         "calls": a.count, "cpu_avg_us": a.cpu_time_total / max(a.count, 1),
                         "input_shapes": str(a.input_shapes) if a.input_shapes else ""})
        return rows[: self.row_limit] if self.row_limit else rows

    def table_html(self) -> str:
        """The op table: fixed layout, so a long name is cut (ellipsis, full name as tooltip), never overprinted."""
        rows = self.rows()
        top = max((r["self_cpu_us"] for r in rows), default=0.0) or 1.0
        shapes = any(r["input_shapes"] for r in rows)
        heads = [("Name", None), ("Kind", "84px"), ("Self CPU", "88px"), ("Self CPU %", "88px"),
                 ("CPU total", "88px"), ("CPU avg", "88px"), ("# Calls", "64px")]
        heads += [("Input shapes", "18%")] if shapes else []
        heads.append(("Self CPU share", "132px"))
        cols = "".join(f'<col style="width:{w}">' if w else "<col>" for _, w in heads)
        out = ['<table class="tk-table tk-ops" style="table-layout:fixed;width:100%">',
               f"<colgroup>{cols}</colgroup><thead><tr>",
               "".join(f'<th title="sort by {h}" style="{CELL_STYLE};text-align:left">{h}</th>' for h, _ in heads),
               "</tr></thead><tbody>"]
        for r in rows:
            bar = {"backward": " tk-bwd", "fused": " tk-fused"}.get(r["kind"], "")
            cells = [(r["name"], esc(r["name"])), (r["kind"], r["kind"]),
                     (r["self_cpu_us"], format_time(r["self_cpu_us"])), (r["self_cpu_pct"], f"{r['self_cpu_pct']:.2f}%"),
                     (r["cpu_total_us"], format_time(r["cpu_total_us"])), (r["cpu_avg_us"], format_time(r["cpu_avg_us"])),
                     (r["calls"], str(r["calls"]))]
            if shapes:
                cells.append((r["input_shapes"], esc(r["input_shapes"])))
            cells.append((r["self_cpu_us"], f'<span class="tk-bar{bar}" style="display:inline-block;height:9px;'
                                            f'background-color:{COLORS[r["kind"]]};'
                                            f'width:{120 * r["self_cpu_us"] / top:.1f}px"></span>'))
            tds = [f'<td data-v="{esc(v)}" style="{CELL_STYLE}">{c}</td>' for v, c in cells]
            name = esc(r["name"])
            tds[0] = f'<td data-v="{name}" title="{name}" style="{CELL_STYLE};text-align:left">{name}</td>'
            out.append("<tr>" + "".join(tds) + "</tr>")
        out.append("</tbody></table>")
        hidden = len(self.averages) - len(rows)
        if hidden > 0:
            out.append(f'<div class="tk-note">{len(rows)} of {len(self.averages)} ops shown (row_limit='
                       f"{self.row_limit}); {hidden} with less self CPU time are left out.</div>")
        return "".join(out)

    # -- the timeline ---------------------------------------------------------------------------
    def timeline(self) -> list[dict]:
        """Every event as a bar: name, kind, start and duration (us from the first event), thread lane and depth."""
        if not self.events:
            return []
        events = self.events
        t0 = min(e.time_range.start for e in events)
        depth = _depths(events)
        threads = {t: i for i, t in enumerate(sorted({e.thread for e in events}))}
        return [{"name": e.name, "kind": event_kind(e), "start_us": e.time_range.start - t0,
                 "dur_us": e.cpu_time_total, "thread": threads[e.thread], "depth": depth[id(e)]}
                for e in sorted(events, key=lambda e: e.time_range.start)]

    def timeline_data(self, bars: list[dict] | None = None) -> dict:
        """The timeline as compact JSON for the page's script: names and kinds interned, one array per event."""
        bars = self.timeline() if bars is None else bars
        names: dict = {}
        kinds = list(COLORS)
        ev = [[names.setdefault(b["name"], len(names)), kinds.index(b["kind"]), round(b["start_us"], 3),
               round(b["dur_us"], 3), b["thread"], b["depth"]] for b in bars]
        return {"names": list(names), "kinds": kinds, "colors": [COLORS[k] for k in kinds], "ev": ev}

    def timeline_svg(self) -> str:
        """The timeline as a standalone SVG image (ticks, lanes per thread; the longest events if there are many)."""
        return timeline_svg(self.timeline(), COLORS)

    # -- display --------------------------------------------------------------------------------
    def summary(self) -> str:
        total = sum(a.self_cpu_time_total for a in self.averages)
        n = len(self.events) if self.events is not None else sum(a.count for a in self.averages)
        return f"<ProfileView {len(self.averages)} ops, {n} events, self CPU total {format_time(total)}>"

    def to_html(self) -> str:
        uid = _html.new_uid("tkpv")
        legend = "".join(f'<span style="margin-right:10px"><span class="tk-swatch" style="display:inline-block;'
                         f'width:10px;height:10px;margin-right:3px;background-color:{c}"></span>{k}</span>'
                         for k, c in COLORS.items())
        bars = self.timeline()
        if bars:
            timeline = (static_timeline_html(bars, COLORS)
                        + '<div class="tk-timeline-live" hidden></div>'
                        + _html.json_script(self.timeline_data(bars), "tk-timeline-data"))
            tools = ('<div class="tk-tools" style="display:none">'
                     '<button type="button" data-act="tl-fit">fit</button> '
                     '<button type="button" data-act="perfetto" title="open these events in ui.perfetto.dev '
                     '(needs a network connection)">open in Perfetto</button>'
                     ' <span class="tk-status"></span></div>')
        else:
            timeline = "<p><i>no timeline: these are averages; pass the profile or its events()</i></p>"
            tools = ""
        body = (f'<style>{_html.static_text("profile.css")}</style>'
                f'<div class="tk-profile"><div class="tk-legend">{legend}</div>'
                f"<details open><summary><b>ops</b> (click a column to sort)</summary>{self.table_html()}</details>"
                f"<details open><summary><b>timeline</b></summary>{tools}{timeline}</details></div>"
                f"<script>{_html.static_text('profile.js')}"
                f'window.toolkitProfile.init(document.getElementById("{uid}"));</script>')
        return _html.root(body, uid)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """text/plain, the interactive HTML (with its static drawing inside) and, given events, the SVG timeline."""
        bundle = {"text/plain": repr(self), "text/html": self.to_html()}
        if self.events:
            bundle["image/svg+xml"] = self.timeline_svg()
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def save(self, path: str | os.PathLike) -> str:
        """Write a standalone HTML page of the view (atomically); returns the path."""
        return _html.write_atomic(path, _html.document(self.to_html(), "profile"))

    def __repr__(self) -> str:
        return self.summary()
