"""Foundation benchmarks: per-op overhead and the seed's two-layer network, against numpy and PyTorch.

Targets: 1-element add at most 3x PyTorch's time; two-layer net with
hand-written gradients at most 1.1x numpy's; with autograd at most 1.3x PyTorch's.
"""

from __future__ import annotations

import numpy as np
import torch

import toolkit

from .common import compare, table

torch.set_num_threads(max(1, torch.get_num_threads()))

N, D_in, H, D_out = 64, 1000, 100, 10
STEPS = 500


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((N, D_in), (N, D_out), (D_in, H), (H, D_out))]


def per_op_overhead() -> list:
    a, b = toolkit.ones(1), toolkit.ones(1)
    ta, tb = torch.ones(1), torch.ones(1)
    na, nb = np.ones(1, np.float32), np.ones(1, np.float32)
    rows = [("add, 1 element", compare({
        "toolkit": lambda: a + b, "torch": lambda: ta + tb, "numpy": lambda: na + nb}, 20000, 7))]
    ga, gta = toolkit.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    t = compare({"toolkit": lambda: ga + b, "torch": lambda: gta + tb}, 20000, 7)
    rows.append(("add, 1 element, input requires grad", {**t, "numpy": float("nan")}))
    return rows


def _numpy_manual(x, y, w1, w2):
    for _ in range(STEPS):
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        np.square(y_pred - y).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h = grad_y_pred.dot(w2.T)
        grad_h[h < 0] = 0
        grad_w1 = x.T.dot(grad_h)
        w1 -= 1e-6 * grad_w1
        w2 -= 1e-6 * grad_w2


def _tensor_manual(lib, x, y, w1, w2):
    for _ in range(STEPS):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 -= 1e-6 * grad_w1
        w2 -= 1e-6 * grad_w2


def _tensor_autograd(lib, x, y, w1, w2):
    for _ in range(STEPS):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            w1 -= 1e-6 * w1.grad
            w2 -= 1e-6 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()


def two_layer() -> tuple[list, list]:
    """The seed's loops: as written (numpy in float64, tensors in float32) and all in float32."""

    def run_numpy(dtype):
        return lambda: _numpy_manual(*[a.astype(dtype) for a in _data()])

    def run_lib(lib, fn, grad):
        def run():
            ts = [lib.from_numpy(a) for a in _data()]
            if grad:
                ts[2].requires_grad_(True)
                ts[3].requires_grad_(True)
            fn(lib, *ts)

        return run

    t = compare({
        "toolkit": run_lib(toolkit, _tensor_manual, False),
        "numpy (float64, as in the seed)": run_numpy(np.float64),
        "numpy (float32)": run_numpy(np.float32),
        "torch": run_lib(torch, _tensor_manual, False),
    }, 1, 5)
    manual = [
        ("500 steps, seed as written: numpy float64", {"toolkit": t["toolkit"], "numpy": t["numpy (float64, as in the seed)"],
                                                       "torch": t["torch"]}),
        ("500 steps, same dtype: numpy float32", {"toolkit": t["toolkit"], "numpy": t["numpy (float32)"],
                                                  "torch": t["torch"]}),
    ]
    auto = [("500 steps, autograd", compare({
        "toolkit": run_lib(toolkit, _tensor_autograd, True),
        "torch": run_lib(torch, _tensor_autograd, True),
    }, 1, 5))]
    return manual, auto


def main() -> str:
    manual, auto = two_layer()
    return "\n".join([
        table("Per-op overhead", per_op_overhead(), "toolkit at most 3x torch"),
        table("Two-layer network, hand-written gradients", manual, "toolkit at most 1.1x numpy"),
        table("Two-layer network, autograd", auto, "toolkit at most 1.3x torch"),
    ])
