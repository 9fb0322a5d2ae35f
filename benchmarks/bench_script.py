"""Script-mode benchmarks: the seed's ``rnn_loop`` (100 steps of a small RNN cell) scripted by toolkit against
``torch.jit.script`` of the same code, side by side, each library timed in its own process; and the compile time
of the seed's RNN ScriptModule.

Target: the scripted loop at most PyTorch's time per call.
"""

# ruff: noqa: UP045  (Optional[...] as the seed and TorchScript write it)

from __future__ import annotations

from typing import Optional

import numpy as np

from .common import cell, table
from .harness import Variant, library, measure

HERE = "benchmarks.bench_script"
STEPS, BATCH, HIDDEN = 100, 4, 16

# The seed's code below names its library as the seed writes it (``toolkit.tanh``, ``Optional[torch.Tensor]``),
# and both script compilers resolve those names in this module's globals. Neither library may be imported beside
# the other, so each name is bound only in the worker process whose setup asks for that library (``_bind``).
toolkit = torch = None


def _bind(lib_name: str):
    globals()[lib_name] = lib = library(lib_name)
    return lib


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


def _rnn_class():
    """The seed's RNN ScriptModule (its print every 10 steps included), defined once toolkit is bound."""

    class RNN(toolkit.jit.ScriptModule):
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

    return RNN


def _inputs() -> list:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((STEPS, BATCH, HIDDEN)).astype(np.float32),
            (rng.standard_normal((HIDDEN, HIDDEN)) * 0.1).astype(np.float32),
            (rng.standard_normal((HIDDEN, HIDDEN)) * 0.1).astype(np.float32),
            rng.standard_normal(HIDDEN).astype(np.float32)]


def _numpy_rnn_loop(x, w_ih, w_hh, b):
    """The loop in float64 numpy: the reference each library's result is checked against."""
    h = np.zeros((x.shape[1], w_hh.shape[0]))
    for x_t in x.astype(np.float64):
        h = np.tanh(x_t @ w_ih + h @ w_hh + b)
    return h


# -- setups: each runs in a fresh process with only its own library imported ----------------------------
def rnn_loop(lib_name: str, scripted: bool):
    """``rnn_loop`` on 100 steps of batch 4, hidden 16, eager or scripted (``toolkit.jit.script`` /
    ``torch.jit.script``), without grad; its result checked against numpy."""
    lib = _bind(lib_name)
    lib.set_grad_enabled(False)
    fn = tk_rnn_loop if lib_name == "toolkit" else torch_rnn_loop
    if scripted:
        fn = lib.jit.script(fn)
    args = [lib.from_numpy(a) for a in _inputs()]
    for _ in range(3):  # past the profiling runs (PyTorch's executor optimizes on the 2nd-3rd call)
        out = fn(*args)
    reference = _numpy_rnn_loop(*_inputs())
    if not np.allclose(out.numpy(), reference, rtol=1e-4, atol=1e-4):  # shown in the table in place of the figure
        raise SystemExit(f"{lib_name} rnn_loop, scripted={scripted}: wrong result (max abs difference from numpy "
                         f"{np.abs(out.numpy() - reference).max():.3g})")
    return lambda: fn(*args)


def rnn_script_module(lib_name: str = "toolkit"):
    """Constructing the seed's RNN ScriptModule, which compiles its ``script_method``."""
    lib = _bind(lib_name)
    rnn = _rnn_class()
    return lambda: rnn(lib.randn(3, 5), lib.randn(5, 5), lib.randn(5, 2), lib.randn(5), lib.randn(2))


# -- tables ------------------------------------------------------------------------------------------------
def loop_rows() -> list:
    return [("rnn_loop", measure([Variant("toolkit script", f"{HERE}:rnn_loop", ("toolkit", True), 10),
                                  Variant("torch.jit.script", f"{HERE}:rnn_loop", ("torch", True), 10),
                                  Variant("toolkit eager", f"{HERE}:rnn_loop", ("toolkit", False), 10)]))]


def compile_table() -> str:
    """Toolkit only, as this suite has always reported it."""
    t = measure([Variant("toolkit", f"{HERE}:rnn_script_module", ("toolkit",), 5)])["toolkit"]
    return "\n".join(["### Compile time of the seed's RNN ScriptModule", "",
                      "Per construction, after one in the same process (module-level set-up paid once).", "",
                      "| case | toolkit (best / median) |", "|---|---|",
                      f"| RNN(ScriptModule) construction + compile | {cell(t)} |", "",
                      f"Threads: toolkit: {t.threads}" if t.threads else "", ""])


def main() -> str:
    return "\n".join([
        "## Script mode", "",
        table(f"Scripted rnn_loop ({STEPS} steps, batch {BATCH}, hidden {HIDDEN})", loop_rows(),
              "toolkit's scripted loop at most torch.jit.script's time per call."),
        compile_table(),
    ])


if __name__ == "__main__":
    print(main())
