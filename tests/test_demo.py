"""``make demo`` runs end to end: the tour agrees with PyTorch; the seed's Net learns the digits, is traced,
profiled, logged to TensorBoard with its graph, and saved and reloaded as a TorchScript archive."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def test_demo_tour_runs_and_matches_pytorch():
    out = subprocess.run([sys.executable, "-m", "toolkit.demo", "--tour"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    for section in ("Tensors", "Autograd: the RNN step", "Higher-order gradients", "two-layer network"):
        assert section in out.stdout
    diff = float(re.search(r"max \|w_h.grad difference\| = (\S+)", out.stdout).group(1))
    assert diff < 1e-4
    loss = float(re.search(r"final loss (\S+)", out.stdout).group(1))
    assert loss < 1.0


def test_demo_story_trains_traces_profiles_logs_and_reloads_the_archive(tmp_path):
    """``make demo`` past the tour: each part of the story runs and prints what it says it does."""
    log_dir = tmp_path / "runs" / "demo"
    out = subprocess.run([sys.executable, "-m", "toolkit.demo", "--no-tour", "--log-dir", str(log_dir)],
                         capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    sections = [m.group(1) for m in re.finditer(r"^=== (.+?) =+$", text, re.M)]
    assert sections == ["The seed's Net on handwritten digits (28x28)", "Tracing the trained Net",
                        "Profiling one training step", "Saving and reloading the TorchScript archive",
                        "Where to look"]
    # training: the checkpoint reloads with the trained accuracy
    m = re.search(r"checkpoint (\S+): reloaded model's test accuracy (\S+)%", text)
    assert m and float(m.group(2)) >= 95.0, text[-3000:]
    assert os.path.exists(m.group(1))
    # tracing: graph_for of the traced Net, the inference graph (one output: no values saved for backward)
    assert "traced(x) matches model(x): True" in text
    graph = text.split("the optimization passes", 1)[1].split("=== Profiling", 1)[0]
    assert "graph(%self" in graph and graph.count("aten::conv2d(") == 2 and graph.count("aten::linear(") == 2
    assert re.search(r"^  return \(%\w+\)$", graph, re.M), graph[-500:]
    # every node names the demo's own line (not runpy's, which runs it under python -m)
    assert "runpy" not in graph and re.search(r"aten::conv2d\(.*# \S*toolkit/demo\.py:\d+$", graph, re.M)
    # profiling: the op table of one step, forward and backward ops under the step's annotation
    table = text.split("=== Profiling one training step", 1)[1].split("TensorBoard:", 1)[0]
    assert "Self CPU time total:" in table and "train_step" in table and "aten::conv2d" in table
    assert "ConvolutionBackward0" in table or "aten::convolution_backward" in table
    # TensorBoard: every step's scalars and the traced graph, and how to look at them
    steps = int(re.search(r"TensorBoard: loss and accuracy \(and the traced Net's graph, in the Graphs tab\) "
                          r"of all (\d+) steps logged to", text).group(1))
    assert steps == 12 * 47 and f"--logdir {log_dir.parent}" in text
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (event_file,) = log_dir.glob("events.out.tfevents.*")
    acc = EventAccumulator(str(event_file))
    acc.Reload()
    assert set(acc.Tags()["scalars"]) == {"Loss/train", "Accuracy/train", "Accuracy/test"}
    losses = acc.Scalars("Loss/train")
    assert [e.step for e in losses] == list(range(steps)) and losses[-1].value < losses[0].value
    assert len(acc.Scalars("Accuracy/test")) == 12
    assert acc.Tags()["graph"]
    assert {"aten::conv2d", "aten::linear"} <= {n.op for n in acc.Graph().node}
    # the archive: saved, reloaded, same outputs and accuracy as the trained model
    m = re.search(r"toolkit.jit.save\(traced, '(.+?)'\) \(\d+ bytes\), then toolkit.jit.load: "
                  r"max \|output difference\| = (\S+), test accuracy (\S+)%", text)
    assert m and float(m.group(2)) == 0.0 and os.path.exists(tmp_path / m.group(1))
    assert abs(float(m.group(3)) - float(re.search(r"reloaded model's test accuracy (\S+)%", text).group(1))) < 0.5  # one test image at most
    assert "def forward(self," in text
    # where to look
    where = text.split("=== Where to look", 1)[1]
    assert f"--logdir {log_dir.parent}" in where and "make lab" in where and m.group(1) in where


def test_demo_logs_to_runs_by_default(tmp_path):
    code = "import toolkit.demo as d; w = d.open_writer(); w.add_scalar('x', 1.0, 0); w.close(); print(w.get_logdir())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    log_dir = tmp_path / out.stdout.strip().splitlines()[-1]
    assert log_dir.parent == tmp_path / "runs" and len(list(log_dir.glob("events.out.tfevents.*"))) == 1
