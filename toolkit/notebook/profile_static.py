"""The profile timeline drawn without script: inline-styled HTML bars, and a standalone SVG image.

Both show what an untrusted notebook (or a frontend without HTML) can show.
Neither can hold tens of thousands of bars cheaply, so past ``STATIC_MAX_BARS``
they draw the longest events and say, in the drawing, how many shorter ones
were left out and why; the interactive timeline (``profile.js``) always has
every event.
"""

from __future__ import annotations

import math

from ..profiler.table import format_time
from ._html import esc

STATIC_MAX_BARS = 1500
LANE_H = 14
AXIS_H = 16
SVG_WIDTH = 1000
TEXT_GRAY = "#808080"  # readable on light and dark pages alike


def nice_ticks(span: float, target: int = 8) -> list[float]:
    """Tick positions 0, step, 2*step, ... <= span, step one of 1, 2, 5 times a power of ten."""
    if span <= 0:
        return [0.0]
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(span / step + 1e-9) + 1)]


def tick_label(us: float) -> str:
    """A tick's time, short: ``0us``, ``250us``, ``1.5ms``, ``2s``."""
    for unit, scale in (("s", 1e6), ("ms", 1e3)):
        if abs(us) >= scale:
            return f"{us / scale:.4g}{unit}"
    return f"{us:.4g}us"


def drawn_bars(bars: list[dict], limit: int = STATIC_MAX_BARS) -> tuple[list[dict], str]:
    """The bars a static drawing holds (all, or the ``limit`` longest) and the note saying what was dropped."""
    if len(bars) <= limit:
        return bars, ""
    kept = sorted(bars, key=lambda b: -b["dur_us"])[:limit]
    shortest = kept[-1]["dur_us"]
    kept.sort(key=lambda b: b["start_us"])
    note = (f"This static drawing shows the {limit:,} longest of {len(bars):,} events (each at least "
            f"{format_time(shortest)}); the other {len(bars) - limit:,} are shorter and left out so the saved "
            "output stays small. Trust the notebook for the interactive timeline with every event, "
            "or export a Chrome trace (%%profile --trace path).")
    return kept, note


def _lanes(bars: list[dict]) -> tuple[dict, int]:
    """Top offset of each thread's lane (threads stacked, depth inside), and the total height."""
    depth: dict = {}
    for b in bars:
        depth[b["thread"]] = max(depth.get(b["thread"], 0), b["depth"] + 1)
    offsets, y = {}, AXIS_H + 2
    for t in sorted(depth):
        offsets[t] = y
        y += depth[t] * LANE_H + 6
    return offsets, y


def static_timeline_html(bars: list[dict], colors: dict) -> str:
    """The timeline as positioned ``<div>`` bars (percent of the span): survives JupyterLab's HTML sanitizer."""
    span = max(b["start_us"] + b["dur_us"] for b in bars) or 1.0
    drawn, note = drawn_bars(bars)
    offsets, height = _lanes(bars)
    out = [f'<div class="tk-timeline-static" data-drawn="{len(drawn)}" data-events="{len(bars)}">']
    if note:
        out.append(f'<div class="tk-note tk-dropped">{esc(note)}</div>')
    out.append(f'<div style="position:relative;width:100%;height:{height}px;overflow:hidden">')
    for t in nice_ticks(span):
        left = 100 * t / span
        out.append(f'<div style="position:absolute;left:{left:.3f}%;top:0;height:{height}px;'
                   f'border-left:1px solid {TEXT_GRAY};opacity:0.35"></div>'
                   f'<div style="position:absolute;left:{left:.3f}%;top:0;padding-left:2px;font-size:10px;'
                   f'white-space:nowrap">{tick_label(t)}</div>')
    for b in drawn:
        left, width = 100 * b["start_us"] / span, max(100 * b["dur_us"] / span, 0.05)
        top = offsets[b["thread"]] + b["depth"] * LANE_H
        tip = f'{b["name"]} ({b["kind"]}): {format_time(b["dur_us"])} at {format_time(b["start_us"])}'
        out.append(f'<div title="{esc(tip)}" style="position:absolute;left:{left:.3f}%;width:{width:.3f}%;'
                   f'top:{top}px;height:{LANE_H - 2}px;background-color:{colors[b["kind"]]};opacity:0.85;'
                   f'overflow:hidden;white-space:nowrap;text-overflow:ellipsis;font-size:9px;color:#000">'
                   f'{esc(b["name"]) if width > 6 else ""}</div>')
    out.append("</div></div>")
    return "".join(out)


def timeline_svg(bars: list[dict], colors: dict) -> str:
    """The timeline as a standalone SVG image (for ``image/svg+xml``), with ticks and the dropped-events note."""
    if not bars:
        return ""
    span = max(b["start_us"] + b["dur_us"] for b in bars) or 1.0
    drawn, note = drawn_bars(bars)
    offsets, height = _lanes(bars)
    top_pad = 14 if note else 0
    height += top_pad
    scale = SVG_WIDTH / span
    out = [f'<svg class="tk-timeline-image" xmlns="http://www.w3.org/2000/svg" width="{SVG_WIDTH + 40}" '
           f'height="{height}" viewBox="0 0 {SVG_WIDTH + 40} {height}" font-family="monospace" font-size="10">']
    if note:
        out.append(f'<text x="0" y="10" fill="{TEXT_GRAY}">{esc(note[:160])}</text>')
    for t in nice_ticks(span):
        x = t * scale
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top_pad}" y2="{height}" stroke="{TEXT_GRAY}" '
                   f'stroke-opacity="0.35"/><text x="{x + 2:.1f}" y="{top_pad + 11}" fill="{TEXT_GRAY}">'
                   f"{tick_label(t)}</text>")
    for b in drawn:
        x, w = b["start_us"] * scale, max(b["dur_us"] * scale, 0.5)
        y = top_pad + offsets[b["thread"]] + b["depth"] * LANE_H
        out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{LANE_H - 2}" fill="{colors[b["kind"]]}" '
                   f'opacity="0.85"><title>{esc(b["name"])} ({b["kind"]}): {esc(format_time(b["dur_us"]))}'
                   "</title></rect>")
    out.append("</svg>")
    return "".join(out)
