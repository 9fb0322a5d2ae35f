"""``ProfileView``: a profile as a sortable op table with per-op bars and a timeline of its events.

Forward ops, backward nodes (``autograd::...``, the engine's events), fused JIT
kernels (``prim::FusionGroup_N: ...``) and ``record_function`` ranges get their
own colours in both. Built from a ``toolkit.profiler.profile``, its ``events()``
or its ``key_averages()`` (averages alone have no timeline). ``%%profile``
shows one under its text table.

    >>> with toolkit.profiler.profile() as prof:
    ...     model(x).sum().backward()
    >>> ProfileView(prof)             # in a cell: draws it
"""

from __future__ import annotations

import os

from . import _html
from ._html import esc, format_us

MAX_TIMELINE_EVENTS = 3000
TIMELINE_WIDTH = 1000
LANE_H = 16
COLORS = {"forward": "#54aeff", "backward": "#fb8f44", "fused": "#2da44e", "annotation": "#a475f9"}


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
    from ..profiler import EventList, FunctionEvent, profile

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
    """Sortable table (click a column), per-op bars of self CPU time, and a timeline (see the module docstring)."""

    def __init__(self, source, row_limit: int | None = None):
        self.events, self.averages = _split(source)
        self.row_limit = row_limit

    # -- the table ------------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """One row per averaged key, sorted by self CPU time (the widget's table state)."""
        total = sum(a.self_cpu_time_total for a in self.averages) or 1.0
        rows = []
        for a in sorted(self.averages, key=lambda a: -a.self_cpu_time_total):
            rows.append({"name": a.key, "kind": event_kind(a), "self_cpu_us": a.self_cpu_time_total,
                         "self_cpu_pct": 100.0 * a.self_cpu_time_total / total, "cpu_total_us": a.cpu_time_total,
                         "calls": a.count, "cpu_avg_us": a.cpu_time_total / max(a.count, 1),
                         "input_shapes": str(a.input_shapes) if a.input_shapes else ""})
        return rows[: self.row_limit] if self.row_limit else rows

    def table_html(self) -> str:
        rows = self.rows()
        top = max((r["self_cpu_us"] for r in rows), default=0.0) or 1.0
        shapes = any(r["input_shapes"] for r in rows)
        heads = ["Name", "Kind", "Self CPU", "Self CPU %", "CPU total", "CPU avg", "# Calls"]
        heads += ["Input shapes"] if shapes else []
        heads.append("Self CPU share")
        out = ['<table class="tk-table"><thead><tr>', "".join(f"<th>{h}</th>" for h in heads),
               "</tr></thead><tbody>"]
        for r in rows:
            bar = {"backward": " tk-bwd", "fused": " tk-fused"}.get(r["kind"], "")
            cells = [(r["name"], esc(r["name"])), (r["kind"], r["kind"]),
                     (r["self_cpu_us"], format_us(r["self_cpu_us"])), (r["self_cpu_pct"], f"{r['self_cpu_pct']:.2f}%"),
                     (r["cpu_total_us"], format_us(r["cpu_total_us"])), (r["cpu_avg_us"], format_us(r["cpu_avg_us"])),
                     (r["calls"], str(r["calls"]))]
            if shapes:
                cells.append((r["input_shapes"], esc(r["input_shapes"])))
            cells.append((r["self_cpu_us"], f'<span class="tk-bar{bar}" style="width:'
                                            f'{120 * r["self_cpu_us"] / top:.1f}px"></span>'))
            out.append("<tr>" + "".join(f'<td data-v="{esc(v)}">{c}</td>' for v, c in cells) + "</tr>")
        out.append("</tbody></table>")
        return "".join(out)

    # -- the timeline ---------------------------------------------------------------------------
    def timeline(self) -> list[dict]:
        """Events as bars: name, kind, start and duration (us from the first event), thread lane and depth."""
        if not self.events:
            return []
        events = sorted(self.events, key=lambda e: -e.cpu_time_total)[:MAX_TIMELINE_EVENTS]
        t0 = min(e.time_range.start for e in events)
        depth = _depths(events)
        threads = {t: i for i, t in enumerate(sorted({e.thread for e in events}))}
        return [{"name": e.name, "kind": event_kind(e), "start_us": e.time_range.start - t0,
                 "dur_us": e.cpu_time_total, "thread": threads[e.thread], "depth": depth[id(e)]}
                for e in sorted(events, key=lambda e: e.time_range.start)]

    def timeline_svg(self) -> str:
        bars = self.timeline()
        if not bars:
            return "<p><i>no timeline: these are averages; pass the profile or its events()</i></p>"
        span = max(b["start_us"] + b["dur_us"] for b in bars) or 1.0
        lanes: dict = {}
        for b in bars:
            lanes[b["thread"]] = max(lanes.get(b["thread"], 0), b["depth"] + 1)
        offsets, y = {}, 18
        for t in sorted(lanes):
            offsets[t] = y
            y += lanes[t] * LANE_H + 10
        scale = TIMELINE_WIDTH / span
        out = [f'<svg class="tk-timeline" xmlns="http://www.w3.org/2000/svg" width="{TIMELINE_WIDTH + 4}" '
               f'height="{y}" viewBox="0 0 {TIMELINE_WIDTH + 4} {y}" style="max-width:100%;height:auto">',
               f'<text x="0" y="11" font-size="10" font-family="monospace">0</text>'
               f'<text x="{TIMELINE_WIDTH}" y="11" font-size="10" font-family="monospace" text-anchor="end">'
               f"{esc(format_us(span))}</text>"]
        for b in bars:
            x, w = b["start_us"] * scale, max(b["dur_us"] * scale, 0.5)
            top = offsets[b["thread"]] + b["depth"] * LANE_H
            label = esc(b["name"]) if w > 7 * len(b["name"]) else ""
            out.append(f'<g class="tk-event tk-{b["kind"]}"><rect x="{x:.2f}" y="{top}" width="{w:.2f}" '
                       f'height="{LANE_H - 2}" fill="{COLORS[b["kind"]]}" opacity="0.85"><title>{esc(b["name"])} '
                       f"({b['kind']}): {esc(format_us(b['dur_us']))}</title></rect>"
                       + (f'<text x="{x + 2:.2f}" y="{top + 11}" font-size="10" font-family="monospace" '
                          f'pointer-events="none">{label}</text>' if label else "") + "</g>")
        out.append("</svg>")
        return "".join(out)

    # -- display --------------------------------------------------------------------------------
    def summary(self) -> str:
        total = sum(a.self_cpu_time_total for a in self.averages)
        n = len(self.events) if self.events is not None else sum(a.count for a in self.averages)
        return f"<ProfileView {len(self.averages)} ops, {n} events, self CPU total {format_us(total)}>"

    def to_html(self) -> str:
        legend = "".join(f'<span><span class="tk-swatch" style="background:{c}"></span>{k}</span>'
                         for k, c in COLORS.items())
        body = (f'<div class="tk-profile"><div class="tk-legend">{legend}</div>'
                f"<details open><summary><b>ops</b> (click a column to sort)</summary>{self.table_html()}</details>"
                f"<details open><summary><b>timeline</b></summary>{self.timeline_svg()}</details></div>")
        return _html.root(body)

    def save(self, path: str | os.PathLike) -> str:
        """Write a standalone HTML page of the view (atomically); returns the path."""
        return _html.write_atomic(path, _html.document(self.to_html(), "profile"))

    def __repr__(self) -> str:
        return self.summary()
