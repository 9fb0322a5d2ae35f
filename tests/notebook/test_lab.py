"""Notebook 05 in real JupyterLab, run from the page in Debian's Chromium (headless, driven by Playwright).

``make lab`` starts JupyterLab on 127.0.0.1 (a free port, a fresh token, its config and data in a state folder of
the test's own, its runtime files in a temporary directory) serving a scratch copy of notebooks/, so nothing is
saved back into the checkout. The page runs every cell with
``jupyterapp.commands.execute('notebook:run-all-cells')`` (``window.jupyterapp`` is there with
``--LabApp.expose_app_in_browser``); the test then checks that the GraphView outputs drew the traced graph's six
ops and a fusion-group box, that clicking the box opens the kernel source, and keeps a screenshot (in the test's
temporary directory, and in ``$TOOLKIT_TEST_ARTIFACTS`` when set). JupyterLab, its kernel and the
browser are stopped afterwards, and the test checks that none of their processes is left.

The state folder outlives each server, as ``.lab/`` does for ``make lab``: notebooks saved trusted in one run
(through the contents API, or drawn and saved from the page) are still trusted by a new server on it, so an
AutogradView output comes back as its SVG; on a fresh state folder the same output shows its PNG fallback.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from .chromium import CHROMIUM, FLAGS, playwright_or_skip

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = "05_fusion_and_graph_for.ipynb"
playwright_api = playwright_or_skip()
if importlib.util.find_spec("jupyterlab") is None:
    pytest.skip("JupyterLab is not installed (pip install -e '.[dev]' installs it)", allow_module_level=True)
if shutil.which("make") is None:
    pytest.skip("`make` is not installed; the test starts JupyterLab with `make lab`", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (the kernel included: it runs in a session of its own, but is a child)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Lab:
    """``make lab`` on a free port with a fresh token, serving ``root``; stopped through its REST API."""

    def __init__(self, root, log_path, state) -> None:
        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.log_path = log_path
        self._log = open(log_path, "w")
        stamp = os.path.join(".venv", ".installed")
        self.proc = subprocess.Popen(
            ["make", "--no-print-directory", "-o", stamp, "lab", f"PY={sys.executable}", f"LAB_DIR={root}",
             f"LAB_STATE={state}",
             f"LAB_PORT={self.port}", f"LAB_TOKEN={self.token}", "LAB_ARGS=--LabApp.expose_app_in_browser=True"],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        with open(self.log_path) as f:
            return f.read()[-4000:]

    def api(self, path: str, method: str = "GET", body: dict | None = None) -> bytes:
        headers = {"Authorization": f"token {self.token}"}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        req = urllib.request.Request(f"{self.url}{path}", method=method, headers=headers, data=data)
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"make lab exited with {self.proc.returncode}:\n{self.log()}")
            try:
                self.api("/api/status")
                return
            except OSError:
                time.sleep(0.3)
        pytest.fail(f"JupyterLab did not answer on {self.url} within {timeout} s:\n{self.log()}")

    def stop(self) -> list[int]:
        """Shut JupyterLab down (it stops its kernels); returns the processes that outlived it, ended by id."""
        started = _descendants(self.proc.pid) | {self.proc.pid}
        try:
            self.api("/api/shutdown", method="POST")
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass  # ended by id below, and reported
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in started):
            time.sleep(0.2)
        left = sorted(p for p in started if _alive(p))
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        self._log.close()
        return left


RUN_ALL = """async () => {
    const app = window.jupyterapp;
    const panel = app.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    await app.commands.execute('notebook:run-all-cells');
    const problems = [], counts = [];
    const cells = panel.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
        const cell = cells.get(i);
        if (cell.type !== 'code') continue;
        counts.push(cell.executionCount);
        for (let j = 0; j < cell.outputs.length; j++) {
            const out = cell.outputs.get(j).toJSON();
            if (out.output_type === 'error') problems.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
        }
    }
    return {problems, counts};
}"""


def test_notebook_05_runs_in_jupyterlab_and_draws_graph_views(tmp_path):
    root = tmp_path / "notebooks"
    root.mkdir()
    shutil.copy(os.path.join(ROOT, "notebooks", NOTEBOOK), root)
    lab = Lab(root, tmp_path / "lab.log", tmp_path / "state")
    try:
        lab.wait_ready()
        with playwright_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            try:
                page = browser.new_page(viewport={"width": 1600, "height": 1200})
                errors: list = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}?token={lab.token}")
                page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                       " && window.jupyterapp.shell.currentWidget.sessionContext", timeout=60_000)
                result = page.evaluate(RUN_ALL)
                assert result["problems"] == [], f"{NOTEBOOK} failed in JupyterLab: {result['problems']}"
                assert result["counts"] and all(result["counts"]), f"cells left unrun: {result['counts']}"
                _check_views(page, tmp_path)
                page.screenshot(path=str(tmp_path / "lab_05.png"), full_page=True)
                _keep(tmp_path / "lab_05.png")
                assert errors == [], f"JavaScript errors on the page: {errors}"
            finally:
                browser.close()
    finally:
        left = lab.stop()
    assert left == [], f"processes outlived JupyterLab's shutdown (ended by id): {left}\n{lab.log()}"
    # JupyterLab's runtime files went to make lab's temporary directory, removed on exit, not the home directory
    m = re.search(r"cookie secret to (\S+)/runtime/jupyter_cookie_secret", lab.log())
    assert m, lab.log()
    assert not m.group(1).startswith(os.path.expanduser("~")) and not os.path.exists(m.group(1))


def _check_views(page, shots) -> None:
    """The compare view: six ops traced, one fusion group after; the group opens to its numba kernel."""
    side = page.locator(".jp-OutputArea-output .tk-side")
    side.first.wait_for(timeout=30_000)
    assert side.count() == 1
    before, after = side.locator(":scope > .tk-view").nth(0), side.locator(":scope > .tk-view").nth(1)
    assert before.locator(".tk-node.tk-op").count() == 6
    group = after.locator(".tk-node.tk-fusion")
    assert group.count() == 1
    assert page.locator(".jp-OutputArea-output .tk-node.tk-fusion").count() >= 2  # the profiled view's too
    kernel = after.locator("pre.tk-kernel")
    assert not kernel.is_visible()
    group.scroll_into_view_if_needed()
    group.click()
    kernel.wait_for(state="visible", timeout=10_000)
    assert "@numba.njit" in kernel.inner_text()
    side.screenshot(path=str(shots / "lab_05_graph_view.png"))
    _keep(shots / "lab_05_graph_view.png")


def _keep(path) -> None:
    if os.environ.get("TOOLKIT_TEST_ARTIFACTS"):
        os.makedirs(os.environ["TOOLKIT_TEST_ARTIFACTS"], exist_ok=True)
        shutil.copy(path, os.environ["TOOLKIT_TEST_ARTIFACTS"])


def _notebook_with_svg(trusted: bool) -> dict:
    """A notebook whose one code cell has an SVG output, as JupyterLab saves it (cells carry ``trusted``)."""
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><rect width="20" height="20"/></svg>'
    cell = {"cell_type": "code", "id": "view", "execution_count": 1, "metadata": {"trusted": trusted},
            "source": f"view  # trusted={trusted}",
            "outputs": [{"output_type": "display_data", "metadata": {},
                         "data": {"image/svg+xml": svg, "text/plain": "view"}}]}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]}


def _cells_trusted(lab: Lab, name: str) -> list:
    model = json.loads(lab.api(f"/api/contents/{name}?content=1"))
    return [c["metadata"].get("trusted") for c in model["content"]["cells"] if c["cell_type"] == "code"]


def test_trust_is_kept_between_lab_runs_in_the_state_folder(tmp_path):
    """Run 1 saves a trusted and an untrusted notebook with outputs; run 2, a fresh server on the same state
    folder, still trusts the first (its signature is in the kept database) and not the second; the repo's
    notebooks are signed at start."""
    root, state = tmp_path / "notebooks", tmp_path / "state"
    root.mkdir()
    shutil.copy(os.path.join(ROOT, "notebooks", NOTEBOOK), root)
    for run in (1, 2):
        lab = Lab(root, tmp_path / f"lab{run}.log", state)
        try:
            lab.wait_ready()
            if run == 1:
                for name, trusted in (("kept.ipynb", True), ("untrusted.ipynb", False)):
                    lab.api(f"/api/contents/{name}", "PUT",
                            {"type": "notebook", "format": "json", "content": _notebook_with_svg(trusted)})
            assert _cells_trusted(lab, "kept.ipynb") == [True]
            assert _cells_trusted(lab, "untrusted.ipynb") == [False]
        finally:
            assert lab.stop() == []
    for name in ("nbsignatures.db", "notebook_secret"):
        assert (state / "data" / name).is_file()
    import nbformat
    from nbformat.sign import NotebookNotary

    notary = NotebookNotary(data_dir=str(state / "data"))
    for name in sorted(os.listdir(os.path.join(ROOT, "notebooks"))):
        if name.endswith(".ipynb"):
            nb = nbformat.read(os.path.join(ROOT, "notebooks", name), as_version=4)
            assert notary.check_signature(nb), f"notebooks/{name} was not signed trusted by make lab"
    unsigned = nbformat.from_dict(_notebook_with_svg(False))
    assert not notary.check_signature(unsigned)
    m = re.search(r"cookie secret to (\S+)/runtime/jupyter_cookie_secret", lab.log())
    assert m and not os.path.exists(m.group(1)) and not m.group(1).startswith(str(state))


AUTOGRAD_CELL = """import toolkit
from toolkit.notebook import AutogradView


w = toolkit.randn(3, 4, requires_grad=True)
AutogradView(toolkit.randn(2, 3).mm(w).tanh().sum(), params={"w": w})"""

RUN_AND_SAVE = RUN_ALL.replace("    return {problems, counts};", """    await app.commands.execute('docmanager:save');
    while (panel.context.model.dirty) await new Promise(r => setTimeout(r, 100));
    return {problems, counts};""")

OUTPUT_IMAGE = """() => {
    const out = document.querySelector('.jp-OutputArea-output[data-mime-type^="image/"]');
    const img = out && out.querySelector('img');
    return img && img.complete && img.naturalWidth > 0
        ? {mime: out.getAttribute('data-mime-type'), width: img.naturalWidth, height: img.naturalHeight} : null;
}"""


def _open_notebook(browser, lab: Lab, name: str, shots, shot: str, run: bool) -> dict:
    """Open ``name`` in the lab's page (run every cell and save it when ``run``); the drawn output's image."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                               " && window.jupyterapp.shell.currentWidget.sessionContext", timeout=60_000)
        if run:
            result = page.evaluate(RUN_AND_SAVE)
            assert result["problems"] == [] and all(result["counts"]), result
        else:  # the kernel the page starts is up before the server is asked to shut down
            page.wait_for_function("() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
                                   " return s.session && s.session.kernel && s.session.kernel.status === 'idle'; }",
                                   timeout=60_000)
        image = page.wait_for_function(OUTPUT_IMAGE, timeout=30_000).json_value()
        page.screenshot(path=str(shots / shot))
        _keep(shots / shot)
        assert errors == [], f"JavaScript errors on the page: {errors}"
        return image
    finally:
        page.close()


def test_saved_autograd_view_draws_again_in_a_fresh_lab_on_the_kept_state(tmp_path):
    """Run 1 draws an AutogradView and saves the notebook; run 2, a new server on the same state folder, shows
    the saved SVG (the notebook is still trusted); a server on a fresh state folder shows the PNG fallback."""
    import nbformat

    root = tmp_path / "notebooks"
    root.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(AUTOGRAD_CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "autograd.ipynb")
    seen = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            for run, state in ((1, "state"), (2, "state"), (3, "fresh_state")):
                lab = Lab(root, tmp_path / f"lab{run}.log", tmp_path / state)
                try:
                    lab.wait_ready()
                    seen.append(_open_notebook(browser, lab, "autograd.ipynb", tmp_path, f"autograd_{run}.png",
                                               run=run == 1))
                finally:
                    assert lab.stop() == []
        finally:
            browser.close()
    saved = nbformat.read(root / "autograd.ipynb", as_version=4)
    (output,) = saved.cells[0].outputs
    assert {"image/svg+xml", "image/png", "text/plain"} <= set(output["data"])
    assert "MmBackward0" in output["data"]["image/svg+xml"] and "TanhBackward0" in output["data"]["text/plain"]
    assert [s["mime"] for s in seen] == ["image/svg+xml", "image/svg+xml", "image/png"]
    assert all(s["width"] > 50 and s["height"] > 100 for s in seen), seen
