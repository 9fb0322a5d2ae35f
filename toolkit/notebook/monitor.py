"""``TrainingMonitor``: live loss/metric plots and a progress bar, redrawn at a bounded rate.

Every ``update`` is recorded; the drawing is refreshed at most once per
``min_interval`` seconds (and always on the last step and on ``close``), so a
fast loop pays for one dictionary append per step, not for rendering. In a
Jupyter kernel the output cell is updated in place; elsewhere a one-line text
summary is printed at the same bounded rate.

Colours come from JupyterLab's theme variables (light fallbacks elsewhere). An
untrusted notebook (a reopened or shared one) loses the stylesheet and the SVG
curves to JupyterLab's sanitizer, so each curve also ships as inline-styled
``<div>`` bars that the stylesheet hides when trusted, and the bundle carries
the plots as an ``image/svg+xml`` image.

    with TrainingMonitor(total=len(loader) * epochs) as mon:
        for step, (x, y) in enumerate(batches):
            loss = train_step(x, y)
            mon.update(step + 1, loss=loss.item())
"""

from __future__ import annotations

import math
import sys
import time

from . import _html
from ._html import esc

PLOT_W, PLOT_H = 320, 150
MAX_POINTS = 400
LINE_COLORS = ("#0969da", "#cf222e", "#2da44e", "#8250df", "#bf8700")
PLOT_BG = "#afb8c1"  # at half opacity: a light panel on light pages, a dim one on dark pages
TEXT_GRAY = "#808080"  # the standalone image's labels: readable on light and dark pages alike
STATIC_COLUMNS = 60


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _downsample(points: list) -> list:
    if len(points) <= MAX_POINTS:
        return points
    stride = math.ceil(len(points) / MAX_POINTS)
    return points[::stride] + ([points[-1]] if (len(points) - 1) % stride else [])


def _bounds(points: list) -> tuple | None:
    """(finite points, x0, x1, lo, hi) of a curve, or None when it has no finite value yet."""
    pts = [(s, v) for s, v in _downsample(points) if math.isfinite(v)]
    if not pts:
        return None
    lo, hi = min(v for _, v in pts), max(v for _, v in pts)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    return pts, pts[0][0], pts[-1][0], lo, hi


def plot_svg(name: str, points: list, color: str, labels: bool = True, x: float = 0, y: float = 0) -> str:
    """One metric's curve; ``labels``: its range on the axes as SVG text (the standalone image), else none.

    Inside the HTML the labels are HTML, not SVG text: JupyterLab's sanitizer drops an untrusted
    output's ``<svg>`` but keeps the text inside, which would print as stray numbers."""
    b = _bounds(points)
    if b is None:
        return ""
    pts, x0, x1, lo, hi = b
    left = 44 if labels else 2
    bottom = 16 if labels else 2

    def sx(s):
        return left + (PLOT_W - left - 6) * ((s - x0) / (x1 - x0) if x1 != x0 else 0.5)

    def sy(v):
        return 6 + (PLOT_H - bottom - 6) * (1 - (v - lo) / (hi - lo))

    line = " ".join(f"{sx(s):.1f},{sy(v):.1f}" for s, v in pts)
    out = [f'<svg class="tk-plot" data-metric="{esc(name)}" xmlns="http://www.w3.org/2000/svg" x="{x}" y="{y}" '
           f'width="{PLOT_W}" height="{PLOT_H}" viewBox="0 0 {PLOT_W} {PLOT_H}" font-family="monospace" '
           f'font-size="9">',
           f'<rect class="tk-plot-bg" x="{left}" y="6" width="{PLOT_W - left - 6}" height="{PLOT_H - bottom - 6}" '
           f'fill="{PLOT_BG}" fill-opacity="0.5"/>',
           f'<polyline fill="none" stroke="{color}" style="--tk-line:{color}" stroke-width="1.5" points="{line}"/>']
    if labels:
        out += [f'<text x="{left - 3}" y="12" text-anchor="end" fill="{TEXT_GRAY}">{hi:.4g}</text>',
                f'<text x="{left - 3}" y="{PLOT_H - bottom}" text-anchor="end" fill="{TEXT_GRAY}">{lo:.4g}</text>',
                f'<text x="{left}" y="{PLOT_H - 3}" fill="{TEXT_GRAY}">{x0:g}</text>',
                f'<text x="{PLOT_W - 6}" y="{PLOT_H - 3}" text-anchor="end" fill="{TEXT_GRAY}">{x1:g}</text>',
                f'<text x="{left}" y="{PLOT_H + 12}" fill="{TEXT_GRAY}">{esc(name)} = {points[-1][1]:.5g}</text>']
    out.append("</svg>")
    return "".join(out)


def _static_bars(points: list, color: str) -> str:
    """The curve as a column of ``<div>`` bars: what an untrusted notebook shows in place of the SVG."""
    b = _bounds(points)
    pts, _, _, lo, hi = b
    stride = max(1, math.ceil(len(pts) / STATIC_COLUMNS))
    cols = pts[::stride]
    h = PLOT_H - 24
    width = max(1, (PLOT_W - 50) // len(cols) - 1)
    bars = "".join(f'<div style="display:inline-block;vertical-align:bottom;margin-right:1px;width:{width}px;'
                   f'height:{max(1, round(h * (v - lo) / (hi - lo)))}px;background-color:{color}"></div>'
                   for _, v in cols)
    return (f'<div class="tk-static-only" style="height:{h}px;white-space:nowrap;overflow:hidden;'
            f'line-height:0">{bars}</div>')


def plot_html(name: str, points: list, color: str) -> str:
    """One metric: its name and last value, the range as HTML labels, and the curve (SVG, and static bars)."""
    head = f'<div class="tk-plot-box" style="display:inline-block;margin-right:10px;vertical-align:top"><div><b>{esc(name)}</b>'
    b = _bounds(points)
    if b is None:
        return head + " (no finite values yet)</div></div>"
    _, x0, x1, lo, hi = b
    return (head + f" = {points[-1][1]:.5g}</div>"
            f'<div style="display:flex;align-items:stretch"><div class="tk-axis-labels" style="display:flex;'
            f'flex-direction:column;justify-content:space-between;text-align:right;padding-right:3px;'
            f'font-size:9px;font-family:monospace"><span>{hi:.4g}</span><span>{lo:.4g}</span></div>'
            f"<div>{plot_svg(name, points, color, labels=False)}{_static_bars(points, color)}</div></div>"
            f'<div class="tk-axis-labels" style="display:flex;justify-content:space-between;font-size:9px;'
            f'font-family:monospace;padding-left:30px"><span>{x0:g}</span><span>{x1:g}</span></div></div>')


def monitor_svg(history: dict, title: str) -> str:
    """Every metric's plot side by side in one standalone SVG image (the bundle's ``image/svg+xml``)."""
    curves = [(name, pts) for name, pts in history.items() if _bounds(pts) is not None]
    w, h = max(1, len(curves)) * (PLOT_W + 10), PLOT_H + 34
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
           f'font-family="monospace" font-size="11"><text x="0" y="12" fill="{TEXT_GRAY}">{esc(title)}</text>']
    for i, (name, pts) in enumerate(curves):
        color = LINE_COLORS[list(history).index(name) % len(LINE_COLORS)]
        out.append(plot_svg(name, pts, color, labels=True, x=i * (PLOT_W + 10), y=16))
    out.append("</svg>")
    return "".join(out)


class TrainingMonitor(_html.View):
    """Records metrics per step and shows them live (see the module docstring).

    ``total``: steps expected (for the bar and the ETA); ``min_interval``: the
    least time between two redraws; ``display``: False records without showing.
    """

    def __init__(self, total: int | None = None, *, title: str = "training", min_interval: float = 0.5,
                 display: bool = True):
        if total is not None and total <= 0:
            raise ValueError(f"TrainingMonitor: total must be a positive number of steps, got {total}")
        if min_interval < 0:
            raise ValueError(f"TrainingMonitor: min_interval must be >= 0 seconds, got {min_interval}")
        self.total = total
        self.title = title
        self.min_interval = min_interval
        self.display = display
        self.history: dict[str, list[tuple[float, float]]] = {}
        self.step = 0
        self.redraws = 0
        self.closed = False
        self._start = time.monotonic()
        self._last_draw = float("-inf")
        self._handle = None

    def update(self, step: int | None = None, **metrics: float) -> bool:
        """Record ``metrics`` at ``step`` (default: the next step); returns whether the view was redrawn."""
        if self.closed:
            raise RuntimeError("TrainingMonitor.update after close()")
        self.step = self.step + 1 if step is None else int(step)
        for name, value in metrics.items():
            value = float(value.item() if hasattr(value, "item") else value)
            self.history.setdefault(name, []).append((self.step, value))
        now = time.monotonic()
        last_step = self.total is not None and self.step >= self.total
        if now - self._last_draw >= self.min_interval or last_step:
            self._draw(now)
            return True
        return False

    def close(self) -> None:
        """Draw the final state once more (whatever the rate limit) and stop accepting updates."""
        if not self.closed:
            self.closed = True
            self._draw(time.monotonic())

    def __enter__(self) -> TrainingMonitor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- drawing --------------------------------------------------------------------------------
    def _draw(self, now: float) -> None:
        self._last_draw = now
        self.redraws += 1
        if not self.display:
            return
        if _in_kernel():
            from IPython.display import display  # optional: IPython

            if self._handle is None:
                self._handle = display(self, display_id=True)
            else:
                self._handle.update(self)
        else:
            print(self.text(), flush=True)

    def rate(self) -> float:
        elapsed = time.monotonic() - self._start
        return self.step / elapsed if elapsed > 0 else 0.0

    def text(self) -> str:
        """The one-line summary printed outside notebooks."""
        of = f"/{self.total}" if self.total else ""
        values = " ".join(f"{k}={v[-1][1]:.5g}" for k, v in self.history.items() if v)
        return f"{self.title}: step {self.step}{of} {values} ({self.rate():.1f} steps/s)"

    def to_html(self) -> str:
        elapsed = time.monotonic() - self._start
        rate = self.rate()
        bar = ""
        if self.total:
            frac = min(self.step / self.total, 1.0)
            eta = (self.total - self.step) / rate if rate > 0 and self.step < self.total else 0.0
            bar = (f'<div class="tk-progress" data-fraction="{frac:.4f}" style="height:12px;border-radius:6px;'
                   f'overflow:hidden;background-color:{PLOT_BG}"><div style="height:100%;background-color:#2da44e;'
                   f'width:{100 * frac:.1f}%">'
                   f"</div></div><div>step {self.step}/{self.total} ({100 * frac:.0f}%), {elapsed:.1f}s elapsed, "
                   f"{rate:.1f} steps/s, ETA {eta:.1f}s</div>")
        else:
            bar = f"<div>step {self.step}, {elapsed:.1f}s elapsed, {rate:.1f} steps/s</div>"
        plots = "".join(plot_html(name, pts, LINE_COLORS[i % len(LINE_COLORS)])
                        for i, (name, pts) in enumerate(self.history.items()))
        state = "done" if self.closed else "running"
        style = f"<style>{_html.static_text('monitor.css')}</style>"
        return _html.root(f'{style}<div class="tk-monitor" data-state="{state}"><div><b>{esc(self.title)}</b></div>'
                          f"{bar}<div>{plots}</div></div>", script=False)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """text/plain, the HTML (static bars inside for untrusted notebooks) and the plots as an SVG image."""
        bundle = {"text/plain": repr(self), "text/html": self.to_html()}
        if any(_bounds(p) is not None for p in self.history.values()):
            bundle["image/svg+xml"] = monitor_svg(self.history, self.title)
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def __repr__(self) -> str:
        return self.text()
