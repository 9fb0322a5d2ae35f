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
    code = (
        "import toolkit.demo as d; "
        f"acc = d.train_net(checkpoint={str(tmp_path / 'net.tk')!r}); print('RELOADED', acc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    accuracy = float(re.search(r"RELOADED (\S+)", out.stdout).group(1))
    assert accuracy >= 0.95, out.stdout[-2000:]
    assert (tmp_path / "net.tk").exists()
