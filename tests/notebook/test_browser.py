"""The views' JavaScript in a real browser: Debian's Chromium, headless, driven by Playwright.

Saved views are opened from disk (nothing else is served or fetched); the tests
click a fusion group and check that its subgraph and kernel source appear, click
nodes for their details, zoom, and sort a profile table. Screenshots are kept
in the test's temporary directory (and in ``$TOOLKIT_TEST_ARTIFACTS`` when set).
"""

from __future__ import annotations

import os
import shutil

import pytest

import toolkit
from toolkit.notebook import GraphView, ProfileView

from .chromium import playwright_or_skip
from .views_helpers import looped, traced_chain

playwright_api = playwright_or_skip()


@pytest.fixture
def open_page(browser, tmp_path):
    pages = []

    def _open(view, name):
        path = view.save(tmp_path / f"{name}.html")
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("file://" + os.path.abspath(path))
        pages.append((page, errors, name))
        return page

    yield _open
    for page, errors, name in pages:
        shot = tmp_path / f"{name}.png"
        page.screenshot(path=str(shot), full_page=True)
        if os.environ.get("TOOLKIT_TEST_ARTIFACTS"):
            os.makedirs(os.environ["TOOLKIT_TEST_ARTIFACTS"], exist_ok=True)
            shutil.copy(shot, os.environ["TOOLKIT_TEST_ARTIFACTS"])
        page.close()
        assert errors == [], f"{name}: JavaScript errors {errors}"


def test_clicking_a_fusion_group_expands_it_to_subgraph_and_kernel_source(open_page):
    tr, x, y = traced_chain()
    gf = tr.graph_for(x, y)
    page = open_page(GraphView.compare(tr, x, y), "compare")
    assert page.locator(".tk-side > .tk-view").count() == 2
    before = page.locator(".tk-side > .tk-view").nth(0)
    assert before.locator(".tk-node.tk-op").count() == 6
    group = page.locator(".tk-node.tk-fusion")
    assert group.count() == 1
    panel = page.locator(".tk-panel")
    kernel = page.locator("pre.tk-kernel")
    assert not panel.is_visible() and not kernel.is_visible()
    group.click()
    assert panel.is_visible() and kernel.is_visible()
    assert kernel.inner_text().strip() == gf.kernels[0].source().strip()
    assert panel.locator(".tk-node.tk-op").count() == 6  # the fused subgraph, drawn
    assert group.locator("text.tk-mark").text_content() == "\u2212"
    assert "prim::FusionGroup" in page.locator(".tk-info").inner_text()
    group.click()
    assert not panel.is_visible()


def test_clicking_a_node_shows_types_and_source_line(open_page):
    tr, _, _ = traced_chain()
    page = open_page(GraphView(tr.graph), "node")
    page.locator('.tk-node[data-kind="aten::sigmoid"]').click()
    info = page.locator(".tk-info").inner_text()
    assert "aten::sigmoid" in info and "Float(4, 8, strides=[8, 1]" in info
    assert "views_helpers.py:" in info and "return toolkit.sigmoid(x * y + 1.5)" in info
    assert page.locator(".tk-node.tk-selected").count() == 1


def test_nested_blocks_expand_one_inside_the_other(open_page):
    page = open_page(GraphView(looped), "blocks")
    page.locator('.tk-node[data-kind="prim::Loop"]').click()
    if_box = page.locator('.tk-node[data-kind="prim::If"]')
    assert if_box.is_visible()
    if_box.click()
    assert page.locator('.tk-node[data-kind="aten::mul"]').is_visible()
    assert page.locator('.tk-node[data-kind="aten::sub"]').is_visible()


def test_profile_table_sorts_by_clicked_column(open_page):
    x = toolkit.randn(16, 16, requires_grad=True)
    with toolkit.profiler.profile() as prof:
        for _ in range(3):
            x.mm(x).sigmoid().sum().backward()
    page = open_page(ProfileView(prof), "profile")
    calls = page.locator("th", has_text="# Calls")
    calls.click()
    values = [int(v) for v in page.locator("tbody tr td:nth-child(7)").all_inner_texts()]
    assert values == sorted(values, reverse=True)
    calls.click()
    values = [int(v) for v in page.locator("tbody tr td:nth-child(7)").all_inner_texts()]
    assert values == sorted(values)
    assert page.locator(".tk-timeline .tk-event").count() == len(prof.events())
