"""VisdomWriter against a real visdom server on 127.0.0.1 (started offline, API only), read back through its API."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import warnings

import numpy as np
import pytest

import toolkit
from toolkit.utils.visdom import VisdomWriter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
        w.add_text("notes", "second", 1)
        fig = plt.figure(figsize=(2, 2))
        plt.plot([0, 1], [0, 1])
        w.add_figure("fig", fig, 0)
    img = window(base, "run_media", "img")
    assert img["type"] == "image" and img["content"]["src"].startswith("data:image/png;base64,")
    assert img["width"] == 5 and img["height"] == 4
    grid = window(base, "run_media", "grid")
    assert (grid["width"], grid["height"]) == (12, 4)  # three images side by side, as add_images tiles them
    (bar,) = window(base, "run_media", "hist")["content"]["data"]
    assert bar["type"] == "bar" and sum(bar["y"]) == 100 and len(bar["y"]) == 10
    text = window(base, "run_media", "notes")["content"]
    assert "first" in text and "second" in text
    fig_win = window(base, "run_media", "fig")
    assert "<svg" in fig_win["content"]
    assert not plt.get_fignums()


def test_unreachable_server_warns_once_and_never_blocks():
    port = free_port()  # nothing listens here
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = VisdomWriter(env="nowhere", server="http://127.0.0.1", port=port, retry_secs=60)
        t0 = time.perf_counter()
        for i in range(200):
            w.add_scalar("x", float(i), i)
        assert time.perf_counter() - t0 < 2.0
        w.close()
    msgs = [str(c.message) for c in caught if issubclass(c.category, RuntimeWarning)]
    assert len(msgs) == 1 and f"127.0.0.1:{port}" in msgs[0] and "dropped" in msgs[0]
    assert w.dropped == 200


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
