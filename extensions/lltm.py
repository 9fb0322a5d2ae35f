"""The LLTM cell as a toolkit extension: one registry entry with a numba kernel.

The LLTM ("long-long-term memory") cell is PyTorch's C++-extension tutorial
example. Its gates are computed with ordinary ops; the fused elementwise core
``new_cell = old_cell + candidate * input_gate`` followed by
``new_h = tanh(new_cell) * output_gate`` is one registered op here, with a
numba kernel and a derivative written with registered ops.
"""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.ops.registry import ELEMENTWISE, PROMOTE_DEFAULT, op


def _compiled():
    """The numba kernel, imported (and compiled, or loaded from numba's cache) on first use."""
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _lltm_kernel import lltm_core

    return lltm_core


@op("lltm_output(Tensor old_cell, Tensor candidate, Tensor input_gate, Tensor output_gate) -> Tensor",
    kind=ELEMENTWISE, promotion=PROMOTE_DEFAULT, method=False,
    formula="math.tanh(old_cell + candidate * input_gate) * output_gate")
def lltm_output(old_cell, candidate, input_gate, output_gate):
    """``tanh(old_cell + candidate * input_gate) * output_gate``, in one pass over memory."""
    arrays = [np.ascontiguousarray(a) for a in np.broadcast_arrays(old_cell, candidate, input_gate, output_gate)]
    out = np.empty(arrays[0].shape, arrays[0].dtype)
    if out.size:
        _compiled()(*arrays, out)
    return out


@lltm_output.grad
def _(grad, old_cell, candidate, input_gate, output_gate):
    cell = old_cell + candidate * input_gate
    t = cell.tanh()
    d_cell = grad * output_gate * (1 - t * t)
    return d_cell, d_cell * input_gate, d_cell * candidate, grad * t


@lltm_output.sample_inputs
def _(rng):
    yield tuple(rng.uniform(-1, 1, (3, 4)) for _ in range(4)), {}
    yield (rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,)), rng.uniform(0, 1, (2, 3)), 0.5), {}


class LLTM:
    """The cell: gates from one linear map, then the registered elementwise core."""

    def __init__(self, input_features: int, state_size: int):
        bound = 1.0 / state_size**0.5
        self.weights = (toolkit.rand(3 * state_size, input_features + state_size) * 2 - 1) * bound
        self.bias = (toolkit.rand(1, 3 * state_size) * 2 - 1) * bound
        self.weights.requires_grad_()
        self.bias.requires_grad_()
        self.state_size = state_size

    def __call__(self, x, state):
        old_h, old_cell = state
        gates = toolkit.cat([old_h, x], 1).mm(self.weights.t()) + self.bias
        s = self.state_size
        input_gate, output_gate = gates[:, :s].sigmoid(), gates[:, s : 2 * s].sigmoid()
        candidate = gates[:, 2 * s :].tanh()  # the C++ tutorial uses ELU; tanh keeps to core ops
        new_cell = old_cell + candidate * input_gate
        return lltm_output(old_cell, candidate, input_gate, output_gate), new_cell


def main() -> None:
    toolkit.manual_seed(0)
    cell = LLTM(8, 16)
    x, h, c = toolkit.randn(4, 8), toolkit.randn(4, 16), toolkit.randn(4, 16)
    for step in range(5):
        new_h, new_c = cell(x, (h, c))
        loss = new_h.pow(2).sum() + new_c.pow(2).sum()
        loss.backward()
        with toolkit.no_grad():
            for p in (cell.weights, cell.bias):
                p -= 0.01 * p.grad
                p.grad.zero_()
        print(f"step {step}: loss {loss.item():.4f}")
    args = [toolkit.tensor(np.random.default_rng(1).uniform(-1, 1, (2, 3)), requires_grad=True) for _ in range(4)]
    print("gradcheck:", toolkit.autograd.gradcheck(lltm_output, args))


if __name__ == "__main__":
    main()
