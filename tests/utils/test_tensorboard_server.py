"""The real TensorBoard server reads what SummaryWriter wrote: its HTTP data API returns our values."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest

import toolkit
import toolkit.nn as nn
from toolkit.utils.tensorboard import SummaryWriter


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(base: str, path: str, **params):
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    with urllib.request.urlopen(url, timeout=10) as r:
        body = r.read()
    try:
        return json.loads(body)
    except ValueError:
        return body


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("tb")
    with SummaryWriter(str(logdir / "run1")) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_scalars("acc", {"train": 0.75, "val": 0.5}, 3)
        w.add_histogram("weights", np.arange(100, dtype=np.float32), 2)
        w.add_image("img", np.full((3, 4, 6), 0.5, np.float32), 1)
        w.add_text("notes", "hello tensorboard", 0)
        w.add_pr_curve("pr", np.array([0, 1, 1, 0]), np.array([0.1, 0.9, 0.8, 0.3]), 0, num_thresholds=5)
        w.add_graph(nn.Sequential(nn.Linear(3, 2), nn.ReLU()), toolkit.rand(1, 3))
        w.add_hparams({"lr": 0.01, "opt": "adam"}, {"hp/metric": 0.8}, run_name="hp")
        w.add_embedding(np.eye(3, dtype=np.float32), metadata=["a", "b", "c"], tag="emb")
        w.add_custom_scalars({"Main": {"losses": ["Multiline", ["loss"]]}})
    port = free_port()
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "tensorboard"), "--logdir", str(logdir), "--host", "127.0.0.1",
         "--port", str(port), "--load_fast=false", "--reload_interval", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 45
        while True:
            try:
                tags = get(base, "/data/plugin/scalars/tags")
                if "run1" in tags and "run1/hp" in tags and "loss" in tags["run1"]:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                out = proc.stdout.read().decode() if proc.poll() is not None else ""
                pytest.fail(f"tensorboard did not start or load the logs: {out[-2000:]}")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_scalars(server):
    rows = get(server, "/data/plugin/scalars/scalars", run="run1", tag="loss")
    assert [(r[1], r[2]) for r in rows] == [(s, pytest.approx(1.0 / (s + 1))) for s in range(5)]
    tags = get(server, "/data/plugin/scalars/tags")
    assert "acc" in tags["run1/acc_train"] and "acc" in tags["run1/acc_val"]
    assert get(server, "/data/plugin/scalars/scalars", run="run1/acc_val", tag="acc")[0][1:] == [3, 0.5]


def test_histogram_image_text(server):
    h = get(server, "/data/plugin/histograms/histograms", run="run1", tag="weights")
    step, buckets = h[0][1], h[0][2]
    assert step == 2 and sum(b[2] for b in buckets) == pytest.approx(100)
    imgs = get(server, "/data/plugin/images/images", run="run1", tag="img")
    assert imgs[0]["step"] == 1
    png = get(server, "/data/plugin/images/individualImage?" + imgs[0]["query"])
    from io import BytesIO

    from PIL import Image

    im = np.asarray(Image.open(BytesIO(png)))
    assert im.shape == (4, 6, 3) and (im == 127).all()
    text = get(server, "/data/plugin/text/text", run="run1", tag="notes/text_summary")
    assert "hello tensorboard" in text[0]["text"]


def test_graph(server):
    info = get(server, "/data/plugin/graphs/info")
    assert info["run1"]["run_graph"] is True and "step1" in info["run1"]["tags"]
    pbtxt = get(server, "/data/plugin/graphs/graph", run="run1", conceptual="false")
    text = pbtxt.decode() if isinstance(pbtxt, bytes) else str(pbtxt)
    assert 'op: "aten::linear"' in text and "Sequential/Linear[0]/" in text and "_output_shapes" in text


def test_hparams_pr_curves_projector_custom_scalars(server):
    req = urllib.request.Request(server + "/data/plugin/hparams/experiment",
                                 data=json.dumps({"experimentName": ""}).encode(),
                                 headers={"Content-Type": "application/json", "X-XSRF-Protected": "1"})
    with urllib.request.urlopen(req, timeout=10) as r:
        exp = json.loads(r.read())
    names = {h["name"] for h in exp["hparamInfos"]}
    assert names == {"lr", "opt"}
    assert [m["name"]["tag"] for m in exp["metricInfos"]] == ["hp/metric"]
    pr = get(server, "/data/plugin/pr_curves/pr_curves", run="run1", tag="pr")
    entry = pr["run1"][0]
    assert entry["step"] == 0
    assert entry["precision"] == pytest.approx([0.5, 2 / 3, 1.0, 1.0])  # the empty last threshold is trimmed
    assert entry["recall"] == pytest.approx([1.0, 1.0, 1.0, 1.0])
    runs = get(server, "/data/plugin/projector/runs")
    assert "run1" in runs
    cfg = get(server, "/data/plugin/projector/info", run="run1")
    assert cfg["embeddings"][0]["tensorName"] == "emb:00000"
    layout = get(server, "/data/plugin/custom_scalars/layout")
    assert layout["category"][0]["title"] == "Main"
