"""The time loop of the dynamically quantized recurrent layers: every gate product is a dynamic int8 linear (the
input quantized on the fly with its own range), and the cell arithmetic is the float cell's.

PyTorch's CPU kernels project the *whole* input of a layer with one dynamic linear (so one quantization range
covers every time step, padded or packed alike) and the hidden state once per step; the same order here gives
the same integers, hence the same numbers. A batch of equal-length sequences is run as a packed one whose
batch size never changes, so one loop serves ``(T, B, I)`` tensors and ``PackedSequence`` data.
"""

from __future__ import annotations

from .....ops import api
from .....ops.rnn_steps import run_packed_direction, run_packed_layers
from .....tensor import Tensor
from ._packed import CellParamsDynamic


def cell_step(mode: str, params: CellParamsDynamic, gi: Tensor, h: Tensor, c: Tensor | None):
    """One step from the input gates ``gi`` (bias included): ``(h', c')`` (``c'`` None except for LSTM). The
    float cells' compiled ops do the gate arithmetic (gates i, f, g, o for LSTM; r, z, n for GRU)."""
    gh = params.linear_hh(h)
    if mode == "LSTM":
        hy, cy, _ = api._thnn_fused_lstm_cell(gi, gh, c)
        return hy, cy
    if mode == "GRU":
        hy, _ = api._thnn_fused_gru_cell(gi, gh, h)
        return hy, None
    pre = gi + gh
    return (api.relu(pre) if mode == "RNN_RELU" else api.tanh(pre)), None


def run_direction(mode: str, params: CellParamsDynamic, data: Tensor, sizes: list[int], h: Tensor,
                  c: Tensor | None, reverse: bool):
    """One layer in one direction over packed ``data`` (N, I) whose step ``t`` holds ``sizes[t]`` rows:
    ``(outputs (N, H), last h, last c)``, through the float layers' packed loop."""
    return run_packed_direction(lambda gi, h, c: cell_step(mode, params, gi, h, c), params.linear_ih(data), sizes,
                                h, c, reverse)


def run_layers(module, data: Tensor, sizes: list[int], h0: Tensor, c0: Tensor | None):
    """Every layer and direction of a dynamic ``RNNBase`` over packed ``data``: ``(output (N, D*H), h_n, c_n)``
    (``c_n`` None except for LSTM); dropout between layers in training mode, as the float modules."""
    cells = [m.param for m in module._all_weight_values]
    return run_packed_layers(
        lambda idx, x, h, c, reverse: run_direction(module.mode, cells[idx], x, sizes, h, c, reverse),
        data, h0, c0, module.num_layers, module.bidirectional, module.dropout, module.training)
