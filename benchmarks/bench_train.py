"""Training-step benchmarks where eager speed shows: a small MLP with Adam (per-op and per-node Python cost
dominates: dispatch, autograd recording, the engine, the optimizer's per-parameter loop), an nn.LSTM train
step, an MLP on 1M-element activations (kernel cost dominates) and an Adam step over 10M parameters, each
against PyTorch and, where the work is plain array math, numpy written by hand.

Targets: the MLP 64->256->256->10 Adam step at most 1.3x PyTorch; the others are reported against PyTorch.
Each setup takes its sizes as arguments (the benchmark's by default) so the tests can run it tiny, and its
callable returns what it computed (a loss, or the first parameter) for those tests to compare; the worker
drops every result before the next call.
"""

from __future__ import annotations

import numpy as np

from .common import per_library, table
from .harness import library, measure

HERE = "benchmarks.bench_train"
ADAM = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8}


def _inputs(*shapes) -> list:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _mlp(lib, widths: tuple):
    """Linear-ReLU layers of ``widths`` (no ReLU after the last), initialised from ``manual_seed(0)``."""
    lib.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        layers += [lib.nn.Linear(a, b)] + ([lib.nn.ReLU()] if i < len(widths) - 2 else [])
    return lib.nn.Sequential(*layers)


# -- setups: each runs in a fresh process with only its own library imported ----------------------------
def mlp_adam_step(lib_name: str, batch: int = 64, widths: tuple = (64, 256, 256, 10)):
    """One training step of an MLP (64->256->256->10 by default) with cross-entropy and Adam."""
    lib = library(lib_name)
    model = _mlp(lib, tuple(widths))
    opt = lib.optim.Adam(model.parameters(), **ADAM)
    (x,) = _inputs((batch, widths[0]))
    x = lib.from_numpy(x)
    target = lib.from_numpy(np.random.default_rng(1).integers(0, widths[-1], batch))

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        return loss

    return step


def lstm_step(lib_name: str, seq: int = 50, batch: int = 32, size: int = 256):
    """One training step of ``nn.LSTM(size, size)`` over ``seq`` x ``batch``: MSE loss, backward, SGD."""
    lib = library(lib_name)
    lib.manual_seed(0)
    lstm = lib.nn.LSTM(size, size)
    opt = lib.optim.SGD(lstm.parameters(), lr=0.01)
    x, y = (lib.from_numpy(a) for a in _inputs((seq, batch, size), (seq, batch, size)))

    def step():
        opt.zero_grad()
        out, _ = lstm(x)
        loss = lib.nn.functional.mse_loss(out, y)
        loss.backward()
        opt.step()
        return loss

    return step


def wide_mlp(lib_name: str, batch: int = 1024, width: int = 1024):
    """Forward and backward of Linear-ReLU-Linear at ``batch`` x ``width`` (1M-element activations), MSE loss;
    ``numpy`` computes the same loss and parameter gradients by hand. The parameters come from numpy's
    generator, scaled as nn.Linear's, so all three start from the same numbers."""
    x, y, w1, w2, b1, b2 = _inputs((batch, width), (batch, width), (width, width), (width, width), width, width)
    w1, w2, b1, b2 = (a * np.float32(width ** -0.5) for a in (w1, w2, b1, b2))
    if lib_name == "numpy":
        return _wide_mlp_numpy(x, y, w1, b1, w2, b2)
    lib = library(lib_name)
    model = _mlp(lib, (width, width, width))
    with lib.no_grad():
        for p, a in zip(model.parameters(), (w1, b1, w2, b2)):
            p.copy_(lib.from_numpy(a))
    x, y = lib.from_numpy(x), lib.from_numpy(y)

    def run():
        model.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    return run


def _wide_mlp_numpy(x, y, w1, b1, w2, b2):
    def run():
        h = x @ w1.T + b1
        r = np.maximum(h, 0)
        diff = r @ w2.T + b2 - y
        loss = np.square(diff).mean()
        g = diff * np.float32(2 / diff.size)
        grads = [g.T @ r, g.sum(0)]
        g = (g @ w2) * (h > 0)
        grads += [g.T @ x, g.sum(0)]
        return loss

    return run


def adam_big(lib_name: str, tensors: int = 10, numel: int = 1_000_000):
    """One Adam step over ``tensors`` parameters of ``numel`` elements (10M by default), gradients set;
    ``numpy`` runs PyTorch's single-tensor Adam update by hand."""
    params = _inputs(*[(numel,)] * tensors)
    grads = _inputs(*[(numel,)] * (2 * tensors))[tensors:]
    if lib_name == "numpy":
        return _adam_numpy(params, grads)
    lib = library(lib_name)
    ps = [lib.from_numpy(p).requires_grad_() for p in params]
    for p, g in zip(ps, grads):
        p.grad = lib.from_numpy(g)
    opt = lib.optim.Adam(ps, **ADAM)

    def step():
        opt.step()
        return ps[0]

    return step


def _adam_numpy(params: list, grads: list):
    lr, (beta1, beta2), eps = ADAM["lr"], ADAM["betas"], ADAM["eps"]
    state = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    count = [0]

    def step():
        count[0] += 1
        t = count[0]
        step_size = lr / (1 - beta1 ** t)
        bias2_sqrt = (1 - beta2 ** t) ** 0.5
        for p, g, (m, v) in zip(params, grads, state):
            m += (g - m) * np.float32(1 - beta1)
            v *= np.float32(beta2)
            v += np.float32(1 - beta2) * g * g
            denom = np.sqrt(v) / np.float32(bias2_sqrt) + np.float32(eps)
            p -= np.float32(step_size) * m / denom
        return params[0]

    return step


# -- tables ------------------------------------------------------------------------------------------------
def rows() -> list:
    both, all3 = ("toolkit", "torch"), ("toolkit", "torch", "numpy")
    return [
        ("MLP 64->256->256->10, Adam, batch 64, one step",
         measure(per_library(f"{HERE}:mlp_adam_step", 50, both)), 1.3),
        ("nn.LSTM 256->256, seq 50, batch 32, train step (MSE, SGD)",
         measure(per_library(f"{HERE}:lstm_step", 1, both)), None),
        ("MLP 1024->1024->1024, batch 1024 (1M activations), fwd+bwd",
         measure(per_library(f"{HERE}:wide_mlp", 2, all3)), None),
        ("Adam step, 10 x 1M parameters", measure(per_library(f"{HERE}:adam_big", 5, all3)), None),
    ]


def main() -> str:
    return table("Training steps", rows(), "MLP Adam step at most 1.3x torch; the rest reported against torch",
                 extra=("numpy",))
