"""Script-mode benchmarks: the seed's ``rnn_loop`` (100 steps of a small RNN cell) scripted by toolkit against
``torch.jit.script`` of the same code, side by side; and the compile time of the seed's RNN ScriptModule.

Target: the scripted loop at most PyTorch's time per call.
"""

# ruff: noqa: UP045  (Optional[...] as the seed and TorchScript write it)

from __future__ import annotations

import time
from typing import Optional

import torch

import toolkit

from .common import compare, fmt

STEPS, BATCH, HIDDEN = 100, 4, 16


def tk_cell(x, hidden: Optional[toolkit.Tensor], w_ih, w_hh, b):
    if hidden is None:
        hidden = toolkit.zeros(x.size(0), w_hh.size(0))
    h = toolkit.tanh(x @ w_ih + hidden @ w_hh + b)
    return h, h


def tk_rnn_loop(x, w_ih, w_hh, b):
    hidden: Optional[toolkit.Tensor] = None
    out = x[0]
    for x_t in x.split(1):
        out, hidden = tk_cell(x_t.squeeze(0), hidden, w_ih, w_hh, b)
    return out


def torch_cell(x, hidden: Optional[torch.Tensor], w_ih, w_hh, b):
    if hidden is None:
        hidden = torch.zeros(x.size(0), w_hh.size(0))
    h = torch.tanh(x @ w_ih + hidden @ w_hh + b)
    return h, h


def torch_rnn_loop(x, w_ih, w_hh, b):
    hidden: Optional[torch.Tensor] = None
    out = x[0]
    for x_t in x.split(1):
        out, hidden = torch_cell(x_t.squeeze(0), hidden, w_ih, w_hh, b)
    return out


class RNN(toolkit.jit.ScriptModule):
    """The seed's RNN (its print every 10 steps included)."""

    def __init__(self, W_h, U_h, W_y, b_h, b_y):
        super().__init__()
        self.W_h = toolkit.nn.Parameter(W_h)
        self.U_h = toolkit.nn.Parameter(U_h)
        self.W_y = toolkit.nn.Parameter(W_y)
        self.b_h = toolkit.nn.Parameter(b_h)
        self.b_y = toolkit.nn.Parameter(b_y)

    @toolkit.jit.script_method
    def forward(self, x, h):
        y = []
        for t in range(x.size(0)):
            h = toolkit.tanh(x[t] @ self.W_h + h @ self.U_h + self.b_h)
            y += [toolkit.tanh(h @ self.W_y + self.b_y)]
            if t % 10 == 0:
                print("stats: ", h.mean(), h.var())
        return toolkit.stack(y), h


def main() -> str:
    torch.manual_seed(0)
    tx = torch.randn(STEPS, BATCH, HIDDEN)
    tw = [torch.randn(HIDDEN, HIDDEN) * 0.1, torch.randn(HIDDEN, HIDDEN) * 0.1, torch.randn(HIDDEN)]
    kx = toolkit.tensor(tx.numpy())
    kw = [toolkit.tensor(w.numpy()) for w in tw]
    ts = torch.jit.script(torch_rnn_loop)
    ks = toolkit.jit.script(tk_rnn_loop)
    with torch.no_grad(), toolkit.no_grad():
        assert abs(float(ks(kx, *kw).sum().item()) - float(ts(tx, *tw).sum())) < 1e-3
        times = compare({"toolkit script": lambda: ks(kx, *kw), "torch.jit.script": lambda: ts(tx, *tw),
                         "toolkit eager": lambda: tk_rnn_loop(kx, *kw)}, number=10)
    mods = []
    t0 = time.perf_counter()
    for _ in range(5):
        mods.append(RNN(toolkit.randn(3, 5), toolkit.randn(5, 5), toolkit.randn(5, 2), toolkit.randn(5),
                        toolkit.randn(2)))
    compile_s = (time.perf_counter() - t0) / 5
    lines = ["## Script mode (issue 6)", "", f"### Scripted rnn_loop ({STEPS} steps, batch {BATCH}, hidden {HIDDEN})",
             "", "Target: toolkit's scripted loop at most torch.jit.script's time per call.", "",
             "| case | toolkit script | torch.jit.script | toolkit eager | ratio |", "|---|---|---|---|---|",
             f"| rnn_loop | {fmt(times['toolkit script']).strip()} | {fmt(times['torch.jit.script']).strip()} | "
             f"{fmt(times['toolkit eager']).strip()} | {times['toolkit script'] / times['torch.jit.script']:.2f}x |",
             "", "### Compile time of the seed's RNN ScriptModule", "",
             "| case | toolkit |", "|---|---|", f"| RNN(ScriptModule) construction + compile | {fmt(compile_s).strip()} |",
             ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
