"""Notebook 05 in real JupyterLab, run from the page in Debian's Chromium (headless, driven by Playwright).

``make lab`` starts JupyterLab on 127.0.0.1 (a free port, a fresh token, its config and runtime files in a
temporary directory) serving a scratch copy of notebooks/, so nothing is saved back into the checkout. The page
runs every cell with ``jupyterapp.commands.execute('notebook:run-all-cells')`` (``window.jupyterapp`` is there
with ``--LabApp.expose_app_in_browser``); the test then checks that the GraphView outputs drew the traced graph's
six ops and a fusion-group box, that clicking the box opens the kernel source, and keeps a screenshot (in the
test's temporary directory, and in ``$TOOLKIT_TEST_ARTIFACTS`` when set). JupyterLab, its kernel and the
browser are stopped afterwards, and the test checks that none of their processes is left.
"""

from __future__ import annotations

import importlib.util
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = "05_fusion_and_graph_for.ipynb"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed "
                                     "(pip install -e '.[dev]')")
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (`make chromium` installs it with apt-get)",
                allow_module_level=True)
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

    def __init__(self, root, log_path) -> None:
        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.log_path = log_path
        self._log = open(log_path, "w")
        stamp = os.path.join(".venv", ".installed")
        self.proc = subprocess.Popen(
            ["make", "--no-print-directory", "-o", stamp, "lab", f"PY={sys.executable}", f"LAB_DIR={root}",
             f"LAB_PORT={self.port}", f"LAB_TOKEN={self.token}", "LAB_ARGS=--LabApp.expose_app_in_browser=True"],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        with open(self.log_path) as f:
            return f.read()[-4000:]

    def api(self, path: str, method: str = "GET") -> bytes:
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
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
            self.proc.wait(timeout=10)
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
    lab = Lab(root, tmp_path / "lab.log")
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
