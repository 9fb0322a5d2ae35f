"""VisdomWriter against a real visdom server on 127.0.0.1 (started offline), read back through its API; the
server's web page and every file it references, fetched over HTTP and rendered by a headless Chromium."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings

import numpy as np
import pytest

import toolkit
from toolkit.utils.visdom import VisdomWriter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
USER_STYLE = ".toolkit-user-style { color: #123456; }\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(base: str, endpoint: str, msg: dict):
    req = urllib.request.Request(f"{base}/{endpoint}", data=json.dumps(msg).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    env_path = tmp_path_factory.mktemp("visdom")
    (env_path / "style.css").write_text(USER_STYLE)  # the project stylesheet visdom serves at /user/style.css
    proc = subprocess.Popen([sys.executable, "-m", "toolkit.utils.visdom.server", "-port", str(port), "-bind_local",
                             "-env_path", str(env_path), "-logging_level", "WARNING"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while True:
            try:
                post(base, "env_state", {})
                break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                out = proc.stdout.read().decode() if proc.poll() is not None else ""
                pytest.fail(f"visdom server did not start: {out[-2000:]}")
            time.sleep(0.2)
        yield port, base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def window(base: str, env: str, win: str) -> dict:
    return post(base, "win_data", {"eid": env, "win": win})


def test_scalars_lines_append(server):
    port, base = server
    with VisdomWriter(env="run_scalars", server="http://127.0.0.1", port=port) as w:
        for step in range(4):
            w.add_scalar("loss", toolkit.tensor(1.0 / (step + 1)), step)
        w.add_scalars("acc", {"train": 0.5, "val": 0.25}, 0)
        w.add_scalars("acc", {"train": 0.75, "val": 0.5}, 1)
        w.add_scalar("auto_step", 3.0)
        w.add_scalar("auto_step", 4.0)
    assert "run_scalars" in post(base, "env_state", {})
    loss = window(base, "run_scalars", "loss")
    (trace,) = loss["content"]["data"]
    assert trace["x"] == [0, 1, 2, 3] and trace["y"] == pytest.approx([1.0, 0.5, 1 / 3, 0.25])
    assert trace["type"] == "scatter" and trace["name"] == "loss"
    acc = {t["name"]: (t["x"], t["y"]) for t in window(base, "run_scalars", "acc")["content"]["data"]}
    assert acc == {"train": ([0, 1], [0.5, 0.75]), "val": ([0, 1], [0.25, 0.5])}
    assert window(base, "run_scalars", "auto_step")["content"]["data"][0]["x"] == [0, 1]


def test_images_histogram_text_figure(server):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    port, base = server
    with VisdomWriter(env="run_media", server="http://127.0.0.1", port=port) as w:
        w.add_image("img", np.full((3, 4, 5), 0.5, np.float32), 0)
        w.add_images("grid", toolkit.rand(3, 1, 4, 4), 0)
        w.add_histogram("hist", np.arange(100.0), 2, bins=10)
        w.add_text("notes", "first", 0)
        w.add_text("notes", "**second** `x < 1`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<b>raw</b>", 1)
        fig = plt.figure(figsize=(2, 2))
        plt.plot([0, 1], [0, 1])
        w.add_figure("fig", fig, 0)
    img = window(base, "run_media", "img")
    assert img["type"] == "image" and img["content"]["src"].startswith("data:image/png;base64,")
    # 4x5 pixels, enlarged 52 times to a longer side of 256 or more, plus 40 pixels for the caption bar
    assert img["width"] == 5 * 52 and img["height"] == 4 * 52 + 40
    assert img["content"]["caption"] == "step 0"
    grid = window(base, "run_media", "grid")
    # three 4x4 images side by side, as add_images tiles them: 4x12, enlarged 22 times
    assert (grid["width"], grid["height"]) == (12 * 22, 4 * 22 + 40)
    (bar,) = window(base, "run_media", "hist")["content"]["data"]
    assert bar["type"] == "bar" and sum(bar["y"]) == 100 and len(bar["y"]) == 10
    text = window(base, "run_media", "notes")["content"]
    assert "<p>first</p>" in text  # markdown rendered to HTML, as TensorBoard's Text tab shows it
    assert "<strong>second</strong> <code>x &lt; 1</code>" in text and "<td>2</td>" in text
    assert "&lt;b&gt;raw&lt;/b&gt;" in text and "<b>" not in text  # raw HTML shown as text, never run
    fig_win = window(base, "run_media", "fig")
    assert "<svg" in fig_win["content"]
    assert not plt.get_fignums()


# Every socket connection this process attempts, with the thread that attempted it: "never blocks" is shown by
# where the connections happen (only on the writer's sender thread), not by a stopwatch.
_CONNECTS: list = []


def _record_connects(event: str, args: tuple) -> None:
    if event == "socket.connect" and isinstance(args[1], tuple):
        _CONNECTS.append((threading.current_thread().name, args[1][1]))


sys.addaudithook(_record_connects)


def test_unreachable_server_warns_once_and_never_blocks():
    port = free_port()  # nothing listens here
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = VisdomWriter(env="nowhere", server="http://127.0.0.1", port=port, retry_secs=60)
        for i in range(200):
            w.add_scalar("x", float(i), i)
        w.close()
    msgs = [str(c.message) for c in caught if issubclass(c.category, RuntimeWarning)]
    assert len(msgs) == 1 and f"127.0.0.1:{port}" in msgs[0] and "dropped" in msgs[0]
    assert w.dropped == 200
    tried = [name for name, p in _CONNECTS if p == port]
    assert tried == ["VisdomWriterSender"]  # one attempt, on the sender thread; then 60 s of dropping


def test_calls_return_while_the_sender_is_stuck():
    """A server that accepts and never answers holds the sender inside its first request; the caller's 200
    calls still all return (into a bounded queue that drops), before the server lets go."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted = threading.Event()
    release = threading.Event()

    def hold():
        conn, _ = listener.accept()
        accepted.set()
        release.wait(60)
        conn.close()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    w = VisdomWriter(env="stuck", server="http://127.0.0.1", port=port, max_queue=10, timeout=60, retry_secs=60)
    try:
        w.add_scalar("x", 0.0, 0)
        assert accepted.wait(60)  # the sender is now inside its request, waiting for an answer
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(1, 200):
                w.add_scalar("x", float(i), i)
            assert not release.is_set() and holder.is_alive()  # still stuck: every call above returned anyway
            assert w.dropped == 199 - 10  # ten queued, the rest dropped at once
    finally:
        release.set()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w.close()
        listener.close()
    assert [name for name, p in _CONNECTS if p == port] == ["VisdomWriterSender"]


def test_bounded_queue_drops_instead_of_blocking():
    port = free_port()
    w = VisdomWriter(env="full", server="http://127.0.0.1", port=port, max_queue=2, retry_secs=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(50):
            w.add_scalar("x", float(i), i)
        w.close()
    assert w.dropped == 50
    w.add_scalar("x", 1.0)  # after close: ignored


# -- the web page, offline ---------------------------------------------------------------------------------
def _assets_missing_reason() -> str | None:
    from toolkit.utils.visdom import assets

    absent = assets.missing()
    if not absent:
        return None
    if shutil.which("npm") is None:
        return ("visdom's web assets are not installed: npm was not found (install Node.js/npm, then run "
                "`make visdom-assets`)")
    return f"visdom's web assets are not installed ({len(absent)} files missing): run `make visdom-assets`"


def get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, "", b""


def page_references(html: str) -> list[str]:
    """The local files the page's <link href> and <script src> name (not its favicon or commented examples)."""
    refs = re.findall(r"""<(?:link|script)\b[^>]*?\b(?:href|src)=["']?([^"'\s>]+)""", html)
    return [r for r in refs if r.startswith("/")]


def test_web_page_and_every_file_it_references_are_served(server):
    reason = _assets_missing_reason()
    if reason:
        pytest.skip(reason)
    _, base = server
    status, ctype, body = get(base + "/")
    assert status == 200 and ctype.startswith("text/html")
    html = body.decode()
    assert "<title>visdom</title>" in html and '<div id="app">' in html
    refs = page_references(html)
    paths = {urllib.parse.urlsplit(r).path for r in refs}
    for expected in ("/static/js/main.js", "/static/js/plotly-plotly.min.js", "/static/js/react-dom.min.js",
                     "/static/js/mathjax/2.7.5/MathJax.js", "/static/css/bootstrap.min.css", "/user/style.css"):
        assert expected in paths, sorted(paths)
    assert len(refs) >= 18
    fonts = set()
    for ref in refs:
        status, ctype, data = get(base + ref)
        assert status == 200 and data, f"{ref}: HTTP {status}, {len(data)} bytes"
        if ref == "/user/style.css":
            assert data.decode() == "\n" + USER_STYLE
        elif ref.split("?")[0].endswith(".css"):  # the fonts a stylesheet loads (bootstrap's glyphicons)
            for url in re.findall(r"url\(['\"]?([^'\")]+)", data.decode()):
                if not url.startswith("data:"):
                    fonts.add(urllib.parse.urljoin(ref, url).split("#")[0])
    assert any("glyphicons-halflings-regular.woff2" in f for f in fonts)
    for font in fonts:
        status, _, data = get(base + font)
        assert status == 200 and data, f"{font}: HTTP {status}"
    # a file MathJax loads on demand, and a path outside static/ still refused
    assert get(base + "/static/js/mathjax/2.7.5/jax/output/SVG/jax.js")[0] == 200
    assert get(base + "/static/js/no-such-file.js")[0] == 404


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_web_page_renders_a_logged_plot_in_headless_chromium(server, tmp_path):
    reason = _assets_missing_reason()
    if reason:
        pytest.skip(reason)
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium found (Debian's `chromium` package) to render the visdom page")
    port, base = server
    with VisdomWriter(env="run_page", server="http://127.0.0.1", port=port) as w:
        for step in range(5):
            w.add_scalar("page_loss", 1.0 / (step + 1), step)
    out = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
                          "--virtual-time-budget=20000", "--dump-dom", f"{base}/env/run_page"],
                         capture_output=True, text=True, timeout=180)
    dom = out.stdout
    assert out.returncode == 0 and "</html>" in dom, out.stderr[-2000:]
    app = dom[dom.index('id="app"'):]
    assert 'class="navbar-brand visdom-title">visdom<' in app  # React (main.js) rendered the page
    assert "run_page" in app  # the environment selector shows the run's environment
    assert 'class="main-svg"' in app and "page_loss" in app  # plotly drew the window's line plot


def test_small_image_window_shows_the_whole_image_below_its_caption_in_chromium(server, tmp_path):
    """A 28x28 image (an MNIST digit's size) drawn by visdom's own page: the image is enlarged, and the caption
    bar sits above it instead of over it."""
    reason = _assets_missing_reason()
    if reason:
        pytest.skip(reason)
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium found (Debian's `chromium` package) to render the visdom page")
    playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not "
                                         "installed (pip install -e '.[dev]')")
    port, base = server
    digit = np.zeros((1, 28, 28), np.float32)
    digit[0, 4:24, 12:16] = 1.0
    with VisdomWriter(env="run_digit", server="http://127.0.0.1", port=port) as w:
        w.add_image("digit", digit, 7)
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=browser, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/env/run_digit")
            img = page.locator("img.content-image")
            img.wait_for(timeout=30_000)
            page.wait_for_function("() => { const i = document.querySelector('img.content-image');"
                                   " return i && i.complete && i.naturalWidth > 0; }", timeout=30_000)
            page.wait_for_function(f"() => ({RECTS})().captions.length > 0", timeout=30_000)
            rects = page.evaluate(RECTS)
            page.screenshot(path=str(tmp_path / "visdom_digit.png"))
        finally:
            b.close()
    box, pane, captions = rects["img"], rects["pane"], rects["captions"]
    assert box["width"] >= 200 and box["height"] >= 200, box  # enlarged from 28x28
    assert abs(box["width"] - box["height"]) <= 2, box  # square, as the image is
    assert pane["top"] <= box["top"] and box["bottom"] <= pane["bottom"] + 1, (box, pane)  # not cut off
    assert captions, "the caption is not on the page"
    for cap in captions:  # the caption is beside the image, never over it
        assert cap["bottom"] <= box["top"] + 1 or cap["top"] >= box["bottom"] - 1, (cap, box)


RECTS = """() => {
    const r = e => { const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, width: b.width,
                                                                   height: b.height}; };
    const img = document.querySelector('img.content-image');
    const captions = [...document.querySelectorAll('span, div')]
        .filter(e => e.children.length === 0 && e.textContent.trim() === 'step 7' && e.offsetParent !== null);
    return {img: r(img), pane: r(img.closest('.react-grid-item')), captions: captions.map(r)};
}"""
