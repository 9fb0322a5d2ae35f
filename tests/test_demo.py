"""``make demo`` runs end to end and agrees with PyTorch where it checks."""

from __future__ import annotations

import re
import subprocess
import sys


def test_demo_runs_and_matches_pytorch():
    out = subprocess.run([sys.executable, "-m", "toolkit.demo"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    for section in ("Tensors", "Autograd: the RNN step", "Higher-order gradients", "two-layer network"):
        assert section in out.stdout
    diff = float(re.search(r"max \|w_h.grad difference\| = (\S+)", out.stdout).group(1))
    assert diff < 1e-4
    loss = float(re.search(r"final loss (\S+)", out.stdout).group(1))
    assert loss < 1.0
