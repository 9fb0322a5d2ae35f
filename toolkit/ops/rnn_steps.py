"""The recurrence of ``nn.RNN``/``LSTM``/``GRU`` and of the sequence ops ``aten::rnn_tanh``/``rnn_relu``/``gru``/
``lstm``, written once: the input products of every time step in one BLAS call, then per step the hidden product
and the cell (on the CPU the compiled cell ops of ``rnn_fused``, a step being two ops and two backward nodes).

The modules run it directly (script mode compiles these functions with them); the sequence ops, which a trace
of a module records as one node, run it too, so a traced model's replay and backward cost what eager does.
"""

from __future__ import annotations

from .._core.tensor_base import (
    TensorBase as Tensor,  # the annotations' name: toolkit.Tensor, for script mode too
)
from . import api


# One time step of each cell, from precomputed input gates ``gi`` (x @ W_ih.T + b_ih) and the hidden weight
# already transposed to (H, G) and made contiguous once per sequence: BLAS then sees row-major operands in every
# step, forward and backward.
def _rnn_step(gi: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None, relu: bool) -> Tensor:
    pre = api.addmm(gi, h, w_hh_t)
    if b_hh is not None:
        pre = pre + b_hh
    return api.relu(pre) if relu else api.tanh(pre)


def _fused(t: Tensor) -> bool:
    """Whether the compiled cell ops (``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell``) run for ``t``: a real
    tensor on the CPU. There a step is two ops (the hidden product and the cell) and two backward nodes."""
    return not t.is_cuda and not api.is_complex(t)


def _lstm_step(gi: Tensor, h: Tensor, c: Tensor, w_hh_t: Tensor, b_hh: Tensor | None,
               fused: bool) -> tuple[Tensor, Tensor]:
    """Gates in PyTorch's order i, f, g, o: ``c' = f*c + i*g``, ``h' = o*tanh(c')``; ``fused``: see ``_fused``."""
    if fused:
        gh = api.mm(h, w_hh_t) if b_hh is None else api.addmm(b_hh, h, w_hh_t)
        hy, cy, _ = api._thnn_fused_lstm_cell(gi, gh, c)
        return hy, cy
    gates = api.addmm(gi, h, w_hh_t)
    if b_hh is not None:
        gates = gates + b_hh
    i, f, g, o = api.chunk(gates, 4, 1)
    c2 = api.addcmul(api.sigmoid(f) * c, api.sigmoid(i), api.tanh(g))
    return api.sigmoid(o) * api.tanh(c2), c2


def _gru_step(gi: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None, fused: bool) -> Tensor:
    """Gates r, z, n; the new gate sees ``r * (W_hn h + b_hn)``; ``h' = n + z * (h - n)``."""
    gh = api.mm(h, w_hh_t) if b_hh is None else api.addmm(b_hh, h, w_hh_t)
    if fused:
        hy, _ = api._thnn_fused_gru_cell(gi, gh, h)
        return hy
    i_r, i_z, i_n = api.chunk(gi, 3, 1)
    h_r, h_z, h_n = api.chunk(gh, 3, 1)
    r = api.sigmoid(i_r + h_r)
    z = api.sigmoid(i_z + h_z)
    n = api.tanh(api.addcmul(i_n, r, h_n))
    return api.addcmul(n, z, h - n)


def _input_gates(x: Tensor, w_ih: Tensor, b_ih: Tensor | None) -> Tensor:
    """``x @ W_ih.T + b_ih`` for every time step of a (T, B, I) ``x`` at once (one BLAS call)."""
    flat = x.reshape(-1, x.size(2))
    w_t = w_ih.t().contiguous()
    out = api.mm(flat, w_t) if b_ih is None else api.addmm(b_ih, flat, w_t)
    return out.reshape(x.size(0), x.size(1), w_ih.size(0))


def run_direction(mode: str, x: Tensor, h: Tensor, c, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
                  b_hh: Tensor | None, w_hr: Tensor | None, reverse: bool):
    """One layer in one direction over time-major ``x`` (T, B, I): ``(outputs (T, B, H), last h, last c)``
    (``c`` None except for ``mode == "LSTM"``; ``mode`` is ``nn.RNNBase.mode``)."""
    w_hr_t = w_hr.t().contiguous() if w_hr is not None else None
    if mode != "GRU" and b_ih is not None and b_hh is not None:
        b_ih, b_hh = b_ih + b_hh, None  # both biases add before the nonlinearity
    steps = api.unbind(_input_gates(x, w_ih, b_ih), 0)
    w_hh_t = w_hh.t().contiguous()
    fused = _fused(w_hh_t)
    n = len(steps)
    outs = [h] * n
    for i in range(n):
        t = n - 1 - i if reverse else i
        if mode == "LSTM":
            h, c = _lstm_step(steps[t], h, c, w_hh_t, b_hh, fused)
            if w_hr_t is not None:
                h = api.mm(h, w_hr_t)
        elif mode == "GRU":
            h = _gru_step(steps[t], h, w_hh_t, b_hh, fused)
        else:
            h = _rnn_step(steps[t], h, w_hh_t, b_hh, mode == "RNN_RELU")
        outs[t] = h
    return api.stack(outs, 0), h, c


def run_packed_direction(step, gates: Tensor, sizes: list[int], h: Tensor, c, reverse: bool):
    """One direction over the input gates of packed data (N, G) whose time step ``t`` holds ``sizes[t]`` rows:
    ``(outputs (N, H), last h, last c)``, the last states in the initial states' row order. ``step(gi, h, c)``
    returns the next ``(h, c)`` (``c`` None except for LSTM), so float and quantized cells share the loop.

    Forward, the state shrinks as sequences end and their rows are kept as final states; in reverse it starts
    with the rows alive at the last step and grows, taking each new row from the initial state.
    """
    offsets = [0]
    for bs in sizes:
        offsets.append(offsets[-1] + bs)
    outs: list = [None] * len(sizes)
    h0, c0 = h, c
    ended_h, ended_c = [], []
    if reverse:
        h, c = h0[:sizes[-1]], None if c0 is None else c0[:sizes[-1]]
    order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    for t in order:
        bs = sizes[t]
        if bs < h.size(0):  # forward: sequences ended; keep their final states
            ended_h.append(h[bs:])
            h = h[:bs]
            if c is not None:
                ended_c.append(c[bs:])
                c = c[:bs]
        elif bs > h.size(0):  # reverse: sequences start; take their initial states
            h = api.cat([h, h0[h.size(0):bs]], 0)
            if c is not None:
                c = api.cat([c, c0[c.size(0):bs]], 0)
        h, c = step(gates[offsets[t]:offsets[t + 1]], h, c)
        outs[t] = h
    if ended_h:
        h = api.cat([h, *reversed(ended_h)], 0)
        if c is not None:
            c = api.cat([c, *reversed(ended_c)], 0)
    return api.cat(outs, 0), h, c


def run_packed_layers(run_dir, data: Tensor, h0: Tensor, c0, num_layers: int, bidirectional: bool,
                      dropout: float, training: bool):
    """Every layer and direction over packed ``data`` (N, I): ``(output (N, D*H), h_n, c_n)`` (``c_n`` None
    unless ``c0`` is given). ``run_dir(idx, x, h, c, reverse)`` runs layer ``idx // D`` in direction ``idx % D``
    (``run_packed_direction``'s result); dropout falls between layers in training, as PyTorch's."""
    num_directions = 2 if bidirectional else 1
    h0s = api.unbind(h0, 0)
    c0s = None if c0 is None else api.unbind(c0, 0)
    x = data
    h_n, c_n, outs = [], [], []
    for idx in range(num_layers * num_directions):
        layer, direction = idx // num_directions, idx % num_directions
        out, h, c = run_dir(idx, x, h0s[idx], None if c0s is None else c0s[idx], direction == 1)
        outs.append(out)
        h_n.append(h)
        if c is not None:
            c_n.append(c)
        if direction == num_directions - 1:
            x = outs[0] if num_directions == 1 else api.cat(outs, 1)
            outs = []
            if dropout > 0 and training and layer < num_layers - 1:
                x = api.dropout(x, dropout, True)
    return x, api.stack(h_n, 0), None if c0 is None else api.stack(c_n, 0)
