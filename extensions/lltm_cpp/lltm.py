"""The LLTM cell as a C++ extension, as in PyTorch's tutorial: ``lltm.cpp`` built with ``cpp_extension.load``.

``LLTMFunction`` wraps the C++ forward and backward in an autograd Function; ``LLTM`` is the module;
``lltm_reference`` is the same cell in toolkit ops (the tutorial's Python version), which autograd
differentiates, to compare with.

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
from toolkit.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def build(**kwargs):
    """The compiled extension (cached: a second call with unchanged sources runs no compiler)."""
    return load("lltm_cpp", [os.path.join(HERE, "lltm.cpp")], extra_cflags=["-O2"], **kwargs)


class LLTMFunction(toolkit.autograd.Function):
    @staticmethod
    def forward(ctx, input, weights, bias, old_h, old_cell):
        outputs = build().forward(input.contiguous(), weights.contiguous(), bias.contiguous(),
                                  old_h.contiguous(), old_cell.contiguous())
        new_h, new_cell = outputs[:2]
        ctx.save_for_backward(*(outputs[1:] + [weights]))
        return new_h, new_cell

    @staticmethod
    def backward(ctx, grad_h, grad_cell):
        d_old_h, d_input, d_weights, d_bias, d_old_cell = build().backward(
            grad_h.contiguous(), grad_cell.contiguous(), *ctx.saved_tensors)
        return d_input, d_weights, d_bias.reshape(-1), d_old_h, d_old_cell


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

    def forward(self, input, state):
        return LLTMFunction.apply(input, self.weights, self.bias, *state)


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
    print("gradcheck:", toolkit.autograd.gradcheck(LLTMFunction.apply, args))


if __name__ == "__main__":
    main()
