"""Debian's Chromium, headless, driven by Playwright: what the notebook browser tests share.

A test module calls ``playwright_or_skip()`` at import, so it skips with the reason where Playwright's package
or Chromium is missing (``make chromium`` installs Chromium with apt-get). Where Chromium is and how it is
launched are shared with the benchmarks (``benchmarks/chromium.py``).
"""

from __future__ import annotations

import pytest

from benchmarks.chromium import FLAGS, chromium_path, missing

CHROMIUM = chromium_path() or "/usr/bin/chromium"
__all__ = ["CHROMIUM", "FLAGS", "playwright_or_skip"]


def playwright_or_skip():
    """``playwright.sync_api``, or the calling test module skipped with the reason."""
    api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed "
                              "(pip install -e '.[dev]')")
    reason = missing()
    if reason:
        pytest.skip(reason, allow_module_level=True)
    return api
