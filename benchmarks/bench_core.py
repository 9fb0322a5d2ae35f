"""Foundation benchmarks: per-op overhead, single large ops, and the seed's two-layer network, against
numpy and PyTorch, each library timed in its own process.

Targets: 1-element add at most 1.6x PyTorch's time; log_softmax of 4096x1000, sum of 10M and 1024x1024 matmul
(float32) at most PyTorch's; the 10M add keeps its lead; two-layer net with hand-written gradients at most 1.1x
numpy's; with autograd at most 1.15x PyTorch's.
"""

from __future__ import annotations

import numpy as np

from .common import per_library, table
from .harness import Variant, library, measure

N, D_in, H, D_out = 64, 1000, 100, 10
STEPS = 500
HERE = "benchmarks.bench_core"


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((N, D_in), (N, D_out), (D_in, H), (H, D_out))]


# -- setups: each runs in a fresh process with only its own library imported ----------------------------
def add_one(lib_name: str, requires_grad: bool = False):
    lib = library(lib_name)
    if lib_name == "numpy":
        a, b = np.ones(1, np.float32), np.ones(1, np.float32)
    else:
        a, b = lib.ones(1, requires_grad=requires_grad), lib.ones(1)
    return lambda: a + b


def _log_softmax_numpy(x: np.ndarray) -> np.ndarray:
    """log_softmax over dim 1 written in numpy, the stable way (shift by the row maximum)."""
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def big_op(lib_name: str, op: str):
    """One large op on float32 data: ``log_softmax`` of 4096x1000, ``sum`` of 10M, ``add`` of two 10M vectors,
    1024x1024 ``matmul``; ``numpy`` runs the same on arrays (log_softmax written out)."""
    rng = np.random.default_rng(0)
    shapes = {"log_softmax": [(4096, 1000)], "sum": [(10_000_000,)], "add": [(10_000_000,)] * 2,
              "matmul": [(1024, 1024)] * 2}[op]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if lib_name == "numpy":
        x = arrays[0]
        calls = {"log_softmax": lambda: _log_softmax_numpy(x), "sum": x.sum, "add": lambda: x + arrays[1],
                 "matmul": lambda: x @ arrays[1]}
        return calls[op]
    lib = library(lib_name)
    x, *rest = [lib.from_numpy(a) for a in arrays]
    calls = {"log_softmax": lambda: lib.log_softmax(x, dim=1), "sum": x.sum, "add": lambda: x + rest[0],
             "matmul": lambda: x @ rest[0]}
    return calls[op]


def numpy_manual(dtype: str):
    """The seed's numpy two-layer network with hand-written gradients, 500 steps."""
    def run():
        x, y, w1, w2 = [a.astype(dtype) for a in _data()]
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
        return w1, w2

    return run


def tensor_manual(lib_name: str):
    """The same network on a tensor library, hand-written gradients."""
    lib = library(lib_name)

    def run():
        x, y, w1, w2 = [lib.from_numpy(a) for a in _data()]
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
        return w1, w2

    return run


def tensor_autograd(lib_name: str):
    """The same network with autograd computing the gradients."""
    lib = library(lib_name)

    def run():
        x, y, w1, w2 = [lib.from_numpy(a) for a in _data()]
        w1.requires_grad_(True)
        w2.requires_grad_(True)
        for _ in range(STEPS):
            loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
            loss.backward()
            with lib.no_grad():
                w1 -= 1e-6 * w1.grad
                w2 -= 1e-6 * w2.grad
                w1.grad.zero_()
                w2.grad.zero_()
        return w1, w2

    return run


# -- tables ------------------------------------------------------------------------------------------------
# Each row's target is the largest ratio of toolkit's best time to torch's that the eager-speed work aims for
# (``keep``: toolkit already wins; the bound is the ratio it had, which it must not lose).
def per_op_overhead() -> list:
    rows = [("add, 1 element",
             measure(per_library(f"{HERE}:add_one", 20000, ("toolkit", "torch", "numpy"))), 1.6)]
    grad = [Variant(lib, f"{HERE}:add_one", (lib, True), 20000) for lib in ("toolkit", "torch")]
    rows.append(("add, 1 element, input requires grad", measure(grad)))
    return rows


def big_ops() -> list:
    cases = (("log_softmax, 4096x1000, dim 1", "log_softmax", 20, 1.0), ("sum, 10M elements", "sum", 20, 1.0),
             ("add, 10M elements (keep)", "add", 20, 0.5),
             ("matmul, 1024x1024 @ 1024x1024", "matmul", 5, 1.0))
    return [(title, measure(per_library(f"{HERE}:big_op", number, ("toolkit", "torch", "numpy"), op)), goal)
            for title, op, number, goal in cases]


def two_layer() -> tuple[list, list]:
    """The seed's loops: as written (numpy in float64, tensors in float32) and all in float32."""
    t = measure([Variant("toolkit", f"{HERE}:tensor_manual", ("toolkit",)),
                 Variant("numpy float64", f"{HERE}:numpy_manual", ("float64",)),
                 Variant("numpy float32", f"{HERE}:numpy_manual", ("float32",)),
                 Variant("torch", f"{HERE}:tensor_manual", ("torch",))])
    manual = [
        ("500 steps, seed as written: numpy float64",
         {"toolkit": t["toolkit"], "numpy": t["numpy float64"], "torch": t["torch"]}),
        ("500 steps, same dtype: numpy float32",
         {"toolkit": t["toolkit"], "numpy": t["numpy float32"], "torch": t["torch"]}),
    ]
    auto = [("500 steps, autograd", measure(per_library(f"{HERE}:tensor_autograd", 1)), 1.15)]
    return manual, auto


def main() -> str:
    manual, auto = two_layer()
    return "\n".join([
        table("Per-op overhead", per_op_overhead(), "1-element add at most 1.6x torch"),
        table("Single large ops (float32)", big_ops(), "toolkit at most torch's time; 10M add keeps its lead",
              extra=("numpy",)),
        table("Two-layer network, hand-written gradients", manual, "toolkit at most 1.1x numpy", ref="numpy"),
        table("Two-layer network, autograd", auto, "toolkit at most 1.15x torch"),
    ])
