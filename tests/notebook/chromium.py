"""Debian's Chromium, headless, driven by Playwright: what the notebook browser tests share.

A test module calls ``playwright_or_skip()`` at import, so it skips with the reason where Playwright's package
or Chromium is missing (``make chromium`` installs Chromium with apt-get).
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def playwright_or_skip():
    """``playwright.sync_api``, or the calling test module skipped with the reason."""
    api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed "
                              "(pip install -e '.[dev]')")
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (`make chromium` installs it with apt-get)",
                    allow_module_level=True)
    return api
