"""Fixtures of the notebook tests."""

from __future__ import annotations

import pytest

from .chromium import CHROMIUM, FLAGS, playwright_or_skip


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a module's tests (the test skips with the reason where it is missing)."""
    api = playwright_or_skip()
    with api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()
