"""The time loop of the dynamically quantized recurrent layers: every gate product is a dynamic int8 linear (the
input quantized on the fly with its own range), and the cell arithmetic is the float cell's.

PyTorch's CPU kernels project the *whole* input of a layer with one dynamic linear (so one quantization range
covers every time step, padded or packed alike) and the hidden state once per step; the same order here gives
the same integers, hence the same numbers.

The functions take the prepacked weights themselves (``LinearPackedParamsBase``) and are written in the subset
script mode compiles, as ``toolkit.ops.rnn_steps`` is for the float layers: ``toolkit.jit.script`` of a dynamic
module inlines them, the packed weights become graph constants and the time loop a ``prim::Loop``. A
``PackedSequence`` input (eager only) runs the float layers' packed loop with the same steps.
"""

from __future__ import annotations

from .....ops import api
from .....ops import quantized_linear as _ql
from .....ops.rnn_steps import run_packed_direction, run_packed_layers
from .....tensor import Tensor


def lstm_step(packed_hh, reduce_range: bool, gi: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """One LSTM step from the input gates ``gi`` (bias included): ``(h', c')``, gates i, f, g, o."""
    gh = _ql.linear_dynamic(h, packed_hh, reduce_range)
    hy, cy, _ = api._thnn_fused_lstm_cell(gi, gh, c)
    return hy, cy


def gru_step(packed_hh, reduce_range: bool, gi: Tensor, h: Tensor) -> Tensor:
    """One GRU step from the input gates ``gi``: ``h'``, gates r, z, n."""
    gh = _ql.linear_dynamic(h, packed_hh, reduce_range)
    hy, _ = api._thnn_fused_gru_cell(gi, gh, h)
    return hy


def rnn_step(packed_hh, reduce_range: bool, gi: Tensor, h: Tensor, relu: bool) -> Tensor:
    """One Elman step from the input gates ``gi``: ``relu`` or ``tanh`` of ``gi + h W_hh^T + b_hh``."""
    pre = gi + _ql.linear_dynamic(h, packed_hh, reduce_range)
    return api.relu(pre) if relu else api.tanh(pre)


def run_direction(mode: str, packed_ih, packed_hh, reduce_range: bool, x: Tensor, h: Tensor, c: Tensor,
                  reverse: bool) -> tuple[Tensor, Tensor, Tensor]:
    """One layer in one direction over time-major ``x`` (T, B, I): ``(outputs (T, B, H), last h, last c)``;
    ``mode`` is "LSTM" or "GRU" (``c`` is carried through unchanged for GRU)."""
    gates = _ql.linear_dynamic(x.reshape(-1, x.size(2)), packed_ih, reduce_range)
    steps = api.unbind(gates.reshape(x.size(0), x.size(1), gates.size(1)), 0)
    n = len(steps)
    outs = [h] * n
    for i in range(n):
        t = n - 1 - i if reverse else i
        if mode == "LSTM":
            h, c = lstm_step(packed_hh, reduce_range, steps[t], h, c)
        else:
            h = gru_step(packed_hh, reduce_range, steps[t], h)
        outs[t] = h
    return api.stack(outs, 0), h, c


def run_direction_packed(mode: str, packed_ih, packed_hh, reduce_range: bool, data: Tensor, sizes: list[int],
                         h: Tensor, c: Tensor | None, reverse: bool):
    """One layer in one direction over packed ``data`` (N, I) whose step ``t`` holds ``sizes[t]`` rows:
    ``(outputs (N, H), last h, last c)``, through the float layers' packed loop."""

    def step(gi: Tensor, h: Tensor, c: Tensor | None):
        if mode == "LSTM":
            return lstm_step(packed_hh, reduce_range, gi, h, c)
        return gru_step(packed_hh, reduce_range, gi, h), None

    return run_packed_direction(step, _ql.linear_dynamic(data, packed_ih, reduce_range), sizes, h, c, reverse)


def run_layers_packed(module, data: Tensor, sizes: list[int], h0: Tensor, c0: Tensor | None):
    """Every layer and direction of a dynamic ``RNNBase`` over packed ``data``: ``(output (N, D*H), h_n, c_n)``
    (``c_n`` None except for LSTM); dropout between layers in training mode, as the float modules."""
    cells = [m.param for m in module._all_weight_values]

    def run_dir(idx: int, x: Tensor, h: Tensor, c: Tensor | None, reverse: bool):
        p = cells[idx]
        return run_direction_packed(module.mode, p.packed_ih, p.packed_hh, p.reduce_range, x, sizes, h, c, reverse)

    return run_packed_layers(run_dir, data, h0, c0, module.num_layers, module.bidirectional, module.dropout,
                             module.training)
