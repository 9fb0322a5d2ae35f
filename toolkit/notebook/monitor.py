"""``TrainingMonitor``: live loss/metric plots and a progress bar, redrawn at a bounded rate.

Every ``update`` is recorded; the drawing is refreshed at most once per
``min_interval`` seconds (and always on the last step and on ``close``), so a
fast loop pays for one dictionary append per step, not for rendering. In a
Jupyter kernel the output cell is updated in place; elsewhere a one-line text
summary is printed at the same bounded rate.

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


def plot_svg(name: str, points: list, color: str) -> str:
    """One metric's curve with its range on the axes."""
    pts = [(s, v) for s, v in _downsample(points) if math.isfinite(v)]
    head = f'<div style="display:inline-block;margin-right:10px"><div><b>{esc(name)}</b>'
    if not pts:
        return head + " (no finite values yet)</div></div>"
    last = points[-1][1]
    x0, x1 = pts[0][0], pts[-1][0]
    lo, hi = min(v for _, v in pts), max(v for _, v in pts)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    left, bottom = 44, 16

    def sx(s):
        return left + (PLOT_W - left - 6) * ((s - x0) / (x1 - x0) if x1 != x0 else 0.5)

    def sy(v):
        return 6 + (PLOT_H - bottom - 6) * (1 - (v - lo) / (hi - lo))

    line = " ".join(f"{sx(s):.1f},{sy(v):.1f}" for s, v in pts)
    return (head + f" = {last:.5g}</div>"
            f'<svg class="tk-plot" data-metric="{esc(name)}" xmlns="http://www.w3.org/2000/svg" width="{PLOT_W}" '
            f'height="{PLOT_H}" viewBox="0 0 {PLOT_W} {PLOT_H}" font-family="monospace" font-size="9">'
            f'<rect x="{left}" y="6" width="{PLOT_W - left - 6}" height="{PLOT_H - bottom - 6}" fill="#f6f8fa"/>'
            f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{line}"/>'
            f'<text x="{left - 3}" y="12" text-anchor="end">{hi:.4g}</text>'
            f'<text x="{left - 3}" y="{PLOT_H - bottom}" text-anchor="end">{lo:.4g}</text>'
            f'<text x="{left}" y="{PLOT_H - 3}">{x0:g}</text>'
            f'<text x="{PLOT_W - 6}" y="{PLOT_H - 3}" text-anchor="end">{x1:g}</text></svg></div>')


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
            from IPython.display import display

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
            bar = (f'<div class="tk-progress" data-fraction="{frac:.4f}"><div style="width:{100 * frac:.1f}%">'
                   f"</div></div><div>step {self.step}/{self.total} ({100 * frac:.0f}%), {elapsed:.1f}s elapsed, "
                   f"{rate:.1f} steps/s, ETA {eta:.1f}s</div>")
        else:
            bar = f"<div>step {self.step}, {elapsed:.1f}s elapsed, {rate:.1f} steps/s</div>"
        plots = "".join(plot_svg(name, pts, LINE_COLORS[i % len(LINE_COLORS)])
                        for i, (name, pts) in enumerate(self.history.items()))
        state = "done" if self.closed else "running"
        return _html.root(f'<div class="tk-monitor" data-state="{state}"><div><b>{esc(self.title)}</b></div>'
                          f"{bar}<div>{plots}</div></div>", script=False)

    def __repr__(self) -> str:
        return self.text()
