"""The LLTM cell as a toolkit extension: one ``toolkit.library.custom_op`` with a numba kernel.

The LLTM ("long-long-term memory") cell is PyTorch's C++-extension tutorial example. Its gates are computed with
ordinary ops; the fused elementwise core, ``new_cell = old_cell + candidate * input_gate`` and
``new_h = tanh(new_cell) * output_gate``, is the op ``extension::lltm_forward``: a numba kernel (compiled on first
use, cached on disk), a fake giving its output shapes, and a backward written with toolkit ops (so double backward
works). Being a registry op, it is one ``extension::lltm_forward`` node when a model calling it is traced or
scripted, an event in the profiler, and it round-trips through ``toolkit.jit.save``/``load`` in a process that has
imported this module.

```
python extensions/lltm.py        # trains a few steps and checks the gradient numerically
```
"""

from __future__ import annotations

import math

import numpy as np

import toolkit
from toolkit import Tensor
from toolkit.library import custom_op


def _compiled():
    """The numba kernel, imported (and compiled, or loaded from numba's cache) on first use."""
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    from _lltm_kernel import lltm_core

    return lltm_core


@custom_op("extension::lltm_forward", mutates_args=())
def lltm_forward(old_cell: Tensor, candidate: Tensor, input_gate: Tensor, output_gate: Tensor) -> tuple[Tensor, Tensor]:
    """``(new_h, new_cell)``: ``new_cell = old_cell + candidate * input_gate``, ``new_h = tanh(new_cell) *
    output_gate``, broadcasting its inputs, in one pass over memory."""
    shapes = [tuple(t.shape) for t in (old_cell, candidate, input_gate, output_gate)]
    try:
        arrays = np.broadcast_arrays(*(t.numpy() for t in (old_cell, candidate, input_gate, output_gate)))
    except ValueError:
        raise RuntimeError(f"extension::lltm_forward: shapes {', '.join(map(str, shapes))} cannot be broadcast") \
            from None
    dtype = np.result_type(*arrays)
    arrays = [np.ascontiguousarray(a, dtype) for a in arrays]
    new_h, new_cell = np.empty(arrays[0].shape, dtype), np.empty(arrays[0].shape, dtype)
    if new_h.size:
        _compiled()(*arrays, new_h, new_cell)
    return toolkit.from_numpy(new_h), toolkit.from_numpy(new_cell)


@lltm_forward.register_fake
def _(old_cell, candidate, input_gate, output_gate):
    shape = toolkit.broadcast_shapes(old_cell.shape, candidate.shape, input_gate.shape, output_gate.shape)
    dtype = toolkit.promote_types(toolkit.promote_types(old_cell.dtype, candidate.dtype),
                                  toolkit.promote_types(input_gate.dtype, output_gate.dtype))
    return old_cell.new_empty(shape, dtype=dtype), old_cell.new_empty(shape, dtype=dtype)


def _setup_context(ctx, inputs, output):
    old_cell, candidate, input_gate, output_gate = inputs
    ctx.save_for_backward(candidate, input_gate, output_gate, output[1])


def _backward(ctx, grad_h, grad_cell):
    """Written with toolkit ops, so autograd differentiates it again (double backward)."""
    candidate, input_gate, output_gate, new_cell = ctx.saved_tensors
    t = new_cell.tanh()
    d_cell = grad_h * output_gate * (1 - t * t) + grad_cell
    return d_cell, d_cell * input_gate, d_cell * candidate, grad_h * t


lltm_forward.register_autograd(_backward, setup_context=_setup_context)


def lltm_reference(old_cell, candidate, input_gate, output_gate):
    """The same core in toolkit ops, which autograd differentiates: what the op must agree with."""
    new_cell = old_cell + candidate * input_gate
    return new_cell.tanh() * output_gate, new_cell


class LLTM(toolkit.nn.Module):
    """The cell: gates from one linear map (``addmm``), then the registered core ``extension::lltm_forward``."""

    def __init__(self, input_features: int, state_size: int):
        super().__init__()
        self.state_size = state_size
        self.weights = toolkit.nn.Parameter(toolkit.empty(3 * state_size, input_features + state_size))
        self.bias = toolkit.nn.Parameter(toolkit.empty(3 * state_size))
        bound = 1.0 / math.sqrt(state_size)
        for p in self.parameters():
            p.data.uniform_(-bound, bound)

    def forward(self, x: Tensor, old_h: Tensor, old_cell: Tensor) -> tuple[Tensor, Tensor]:
        gates = toolkit.addmm(self.bias, toolkit.cat([old_h, x], 1), self.weights.t())
        s = self.state_size
        input_gate = gates[:, :s].sigmoid()
        output_gate = gates[:, s : 2 * s].sigmoid()
        candidate = gates[:, 2 * s :].tanh()  # the C++ tutorial uses ELU; tanh keeps to core ops
        return lltm_forward(old_cell, candidate, input_gate, output_gate)


def main() -> None:
    toolkit.manual_seed(0)
    cell = LLTM(8, 16)
    x, h, c = toolkit.randn(4, 8), toolkit.randn(4, 16), toolkit.randn(4, 16)
    opt = toolkit.optim.SGD(cell.parameters(), lr=0.01)
    for step in range(5):
        new_h, new_c = cell(x, h, c)
        loss = new_h.pow(2).sum() + new_c.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.4f}")
    rng = np.random.default_rng(1)
    args = [toolkit.tensor(rng.uniform(-1, 1, (2, 3)), requires_grad=True) for _ in range(4)]
    print("gradcheck:", toolkit.autograd.gradcheck(lltm_forward, args))


if __name__ == "__main__":
    main()
