"""The LLTM extension: an op registered from outside the package works like a built-in one.

It runs in a subprocess so the extension's op does not join this process's
registry (the generated registry tests compare every op with PyTorch).
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHECK = r"""
import sys
sys.path[:0] = ["extensions", "."]
import numpy as np, torch, toolkit
import lltm
from tests.conftest import assert_close

rng = np.random.default_rng(0)
arrays = [rng.uniform(-1, 1, (3, 4)) for _ in range(4)]
ours = [toolkit.tensor(a, requires_grad=True) for a in arrays]
theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
out = lltm.lltm_output(*ours)
ref = torch.tanh(theirs[0] + theirs[1] * theirs[2]) * theirs[3]
assert_close(out, ref)
out.sum().backward(); ref.sum().backward()
for a, b in zip(ours, theirs):
    assert_close(a.grad, b.grad)
assert toolkit.autograd.gradgradcheck(lltm.lltm_output, [toolkit.tensor(a, requires_grad=True) for a in arrays])
assert type(out.grad_fn).__name__ == "LltmOutputBackward0"
try:
    lltm.lltm_output(toolkit.ones(2, 3), toolkit.ones(4), toolkit.ones(1), toolkit.ones(1))
except RuntimeError as e:
    assert "lltm_output" in str(e) and "(2, 3)" in str(e), e
else:
    raise AssertionError("broadcast error expected")
print("ok")
"""


def test_registered_extension_op_matches_torch_and_differentiates():
    out = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def test_example_script_trains():
    out = subprocess.run([sys.executable, "extensions/lltm.py"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "gradcheck: True" in out.stdout
