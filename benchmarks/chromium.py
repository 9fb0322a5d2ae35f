"""Headless Chromium for timing what a saved page does in a browser: where to find it, how to launch it, and how
long a page takes from navigation to its drawing on screen.

Debian's ``chromium`` driven by Playwright, the pair the notebook browser tests use (``make chromium`` installs
Chromium with apt-get; Playwright comes with the dev extras). Where either is missing, :func:`missing` says
which, and a benchmark prints "no browser" instead of a figure.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]

#: a graph view has drawn once its script has run (``data-tk-ready``) and its canvas holds node boxes
GRAPH_DRAWN = ".tk-root[data-tk-ready] .tk-canvas svg g.tk-node"

# resolves after the next frame has been painted, with the page's clock then (ms since navigation started):
# the first requestAnimationFrame runs before that frame's paint, the second one only after it
_AFTER_PAINT = """() => new Promise(done =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))))"""


def chromium_path() -> str | None:
    """The Chromium executable, or None."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    return path if os.path.exists(path) else None


def missing() -> str:
    """Why no browser can be launched here ('' where Playwright's package and Chromium are both present)."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright's Python package is not installed (pip install -e '.[dev]')"
    if chromium_path() is None:
        return "Chromium is not installed (`make chromium` installs it with apt-get)"
    return ""


def launch(playwright):
    """A headless Chromium from a started ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=FLAGS)


def load_to_drawn(page, url: str, selector: str = GRAPH_DRAWN, timeout_ms: float = 60_000) -> dict:
    """Open ``url`` in ``page`` and wait until ``selector`` exists and a frame showing it has been painted.

    Returns ``page_ms``, the page's own clock at that frame (``performance.now()``, counted from the start of the
    navigation, so Playwright's messages are not in it), and ``wall_ms``, the same span seen from this process.
    """
    t0 = time.perf_counter()
    page.goto(url, timeout=timeout_ms)
    page.wait_for_selector(selector, state="attached", timeout=timeout_ms)
    page_ms = page.evaluate(_AFTER_PAINT)
    return {"page_ms": page_ms, "wall_ms": (time.perf_counter() - t0) * 1e3}
