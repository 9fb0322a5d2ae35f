"""The LLTM cell as a C++ extension, as in PyTorch's tutorial: ``lltm.cpp`` built with ``cpp_extension.load``.

The compiled functions become registry ops, as torch's ``TORCH_LIBRARY`` registrations do: ``forward`` is the op
``extension_cpp::lltm_forward`` (``toolkit.library.custom_op``, returning the tutorial's seven tensors), ``backward``
is ``extension_cpp::lltm_backward`` (``toolkit.library.Library.define``/``impl``), and the forward's autograd calls
the backward op (``register_autograd``). So a model calling the cell traces and scripts to ``extension_cpp::``
nodes, the profiler lists them, and ``toolkit.jit.save``/``load`` round-trips it in a process that imported this
module. The extension is built on the first call, not at import. ``lltm`` gives ``(new_h, new_cell)``; ``LLTM`` is
the module; ``lltm_reference`` is the same cell in toolkit ops (the tutorial's Python version), to compare with.

```
python extensions/lltm_cpp/lltm.py     # builds (or reuses) the extension, trains a few steps, gradchecks
```
"""

from __future__ import annotations

import functools
import math
import os

import toolkit
import toolkit.nn.functional as F
from toolkit import Tensor
from toolkit.library import Library, custom_op
from toolkit.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def build(**kwargs):
    """The compiled extension (cached: a second call with unchanged sources runs no compiler)."""
    return load("lltm_cpp", [os.path.join(HERE, "lltm.cpp")], extra_cflags=["-O2"], **kwargs)


@custom_op("extension_cpp::lltm_forward", mutates_args=())
def lltm_forward(input: Tensor, weights: Tensor, bias: Tensor, old_h: Tensor, old_cell: Tensor
                 ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The C++ forward: ``(new_h, new_cell, input_gate, output_gate, candidate_cell, X, gate_weights)``."""
    return tuple(build().forward(input.contiguous(), weights.contiguous(), bias.contiguous(), old_h.contiguous(),
                                 old_cell.contiguous()))


@lltm_forward.register_fake
def _(input, weights, bias, old_h, old_cell):
    b, s, k = input.shape[0], old_h.shape[1], weights.shape[1]
    return (*(input.new_empty((b, s)) for _ in range(5)), input.new_empty((b, k)), input.new_empty((b, 3 * s)))


# The backward through the lower-level route: a FRAGMENT of the namespace, one definition, the C++ function as its
# CPU kernel. Defined once per process (this file may be loaded again, as a module of another name); a later load
# gives the op its own build's kernel.
_lib = Library("extension_cpp", "FRAGMENT")
if not hasattr(toolkit.ops.extension_cpp, "lltm_backward"):
    _lib.define("lltm_backward(Tensor grad_h, Tensor grad_cell, Tensor new_cell, Tensor input_gate, "
                "Tensor output_gate, Tensor candidate_cell, Tensor X, Tensor gate_weights, Tensor weights) "
                "-> (Tensor, Tensor, Tensor, Tensor, Tensor)")
_lib.impl("lltm_backward", lambda *args: tuple(build().backward(*(t.contiguous() for t in args))), "CPU")
lltm_backward = toolkit.ops.extension_cpp.lltm_backward


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*output[1:], inputs[1])


def _backward(ctx, grad_h, grad_cell, *unused):
    """The tutorial's backward: the C++ op, from the two gradients that reach the cell's outputs."""
    d_old_h, d_input, d_weights, d_bias, d_old_cell = lltm_backward(grad_h, grad_cell, *ctx.saved_tensors)
    return d_input, d_weights, d_bias.reshape(-1), d_old_h, d_old_cell


lltm_forward.register_autograd(_backward, setup_context=_setup_context)


def lltm(input, weights, bias, old_h, old_cell):
    """``(new_h, new_cell)`` of the cell, through the op ``extension_cpp::lltm_forward``."""
    outputs = lltm_forward(input, weights, bias, old_h, old_cell)
    return outputs[0], outputs[1]


class LLTMFunction:
    """The cell's earlier face, an autograd Function's ``apply``: now the op itself (``lltm``)."""

    apply = staticmethod(lltm)


def lltm_reference(input, weights, bias, old_h, old_cell):
    """The tutorial's Python LLTM in toolkit ops: (new_h, new_cell)."""
    X = toolkit.cat([old_h, input], dim=1)
    gates = toolkit.addmm(bias, X, weights.t()).chunk(3, dim=1)
    input_gate, output_gate = gates[0].sigmoid(), gates[1].sigmoid()
    candidate_cell = F.elu(gates[2])
    new_cell = old_cell + candidate_cell * input_gate
    return toolkit.tanh(new_cell) * output_gate, new_cell


class LLTM(toolkit.nn.Module):
    def __init__(self, input_features: int, state_size: int):
        super().__init__()
        self.input_features, self.state_size = input_features, state_size
        self.weights = toolkit.nn.Parameter(toolkit.empty(3 * state_size, input_features + state_size))
        self.bias = toolkit.nn.Parameter(toolkit.empty(3 * state_size))
        stdv = 1.0 / math.sqrt(state_size)
        for weight in self.parameters():
            weight.data.uniform_(-stdv, +stdv)

    def forward(self, input: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        outputs = lltm_forward(input, self.weights, self.bias, state[0], state[1])
        return outputs[0], outputs[1]


def train(cell: LLTM, batch: int, steps: int, lr: float) -> list[float]:
    """A few SGD steps on random data towards zero output; the loss at each step."""
    x = toolkit.randn(batch, cell.input_features)
    h, c = toolkit.randn(batch, cell.state_size), toolkit.randn(batch, cell.state_size)
    opt = toolkit.optim.SGD(cell.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        new_h, new_c = cell(x, (h, c))
        loss = new_h.pow(2).sum() + new_c.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main() -> None:
    toolkit.manual_seed(0)
    for step, loss in enumerate(train(LLTM(8, 16), batch=4, steps=5, lr=0.01)):
        print(f"step {step}: loss {loss:.4f}")
    args = [toolkit.randn(3, 4, dtype=toolkit.float64, requires_grad=True), toolkit.randn(15, 9, dtype=toolkit.float64,
            requires_grad=True), toolkit.randn(15, dtype=toolkit.float64, requires_grad=True),
            toolkit.randn(3, 5, dtype=toolkit.float64, requires_grad=True),
            toolkit.randn(3, 5, dtype=toolkit.float64, requires_grad=True)]
    print("gradcheck:", toolkit.autograd.gradcheck(lltm, args))


if __name__ == "__main__":
    main()
