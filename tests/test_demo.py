"""``make demo`` runs end to end: the tour agrees with PyTorch, and the seed's Net learns the digits."""

from __future__ import annotations

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


def test_demo_net_reaches_95_percent_and_checkpoint_reloads(tmp_path):
    log_dir = tmp_path / "runs" / "demo"
    code = (
        "import toolkit.demo as d; "
        f"acc = d.train_net(checkpoint={str(tmp_path / 'net.tk')!r}, log_dir={str(log_dir)!r}); "
        "print('RELOADED', acc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    accuracy = float(re.search(r"RELOADED (\S+)", out.stdout).group(1))
    assert accuracy >= 0.95, out.stdout[-2000:]
    assert (tmp_path / "net.tk").exists()
    # every step's loss and accuracy reached a TensorBoard event file, and the demo says how to view it
    (event_file,) = log_dir.glob("events.out.tfevents.*")
    steps = int(re.search(r"loss and accuracy of all (\d+) steps logged to (.+?); view them with", out.stdout).group(1))
    assert f"--logdir {log_dir.parent}" in out.stdout
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(event_file))
    acc.Reload()
    assert set(acc.Tags()["scalars"]) == {"Loss/train", "Accuracy/train", "Accuracy/test"}
    losses = acc.Scalars("Loss/train")
    assert [e.step for e in losses] == list(range(steps)) and steps == 12 * 47
    assert all(0.0 <= e.value <= 1.0 for e in acc.Scalars("Accuracy/train"))
    test_acc = acc.Scalars("Accuracy/test")
    assert len(test_acc) == 12 and abs(test_acc[-1].value - accuracy) < 1e-6
    assert losses[-1].value < losses[0].value


def test_demo_logs_to_runs_by_default(tmp_path):
    code = "import toolkit.demo as d; w = d.open_writer(); w.add_scalar('x', 1.0, 0); w.close(); print(w.get_logdir())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    log_dir = tmp_path / out.stdout.strip().splitlines()[-1]
    assert log_dir.parent == tmp_path / "runs" and len(list(log_dir.glob("events.out.tfevents.*"))) == 1
