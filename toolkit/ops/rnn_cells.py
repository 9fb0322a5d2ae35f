"""Recurrent cells and layers with aten's signatures: ``torch.rnn_tanh_cell``, ``rnn_relu_cell``, ``gru_cell``,
``lstm_cell`` and the full-sequence ``torch.rnn_tanh``, ``rnn_relu``, ``gru`` and ``lstm``.

Each is one registry op composed of registered ops as ATen's ``RNN.cpp``
composes it: the gates from two matrix products, then, for the GRU and LSTM
on the CPU, one fused cell op (``rnn_fused``: a compiled pass with its own
backward, as ATen's CUDA cells), elsewhere the chunked gate arithmetic. So
autograd records registered ops and double backward works; the ops carry no
derivative rule of their own. The sequence ops run ``rnn_steps.run_direction``
(the recurrence ``nn.RNN`` runs: all input products in one call, then the
cells) layer by layer and direction by direction, taking ``params`` as the flat
list ``nn.RNN`` keeps: per layer and direction ``w_ih, w_hh`` (then ``b_ih,
b_hh`` when ``has_biases``, then ``w_hr`` for an LSTM with projections).
Packed sequences (the ``.data`` overloads) are not supported.
"""

from __future__ import annotations

from .._core.meta import TensorMeta
from . import api
from .registry import NN, op
from .rnn_fused import onnx_chunks
from .rnn_steps import run_direction


def _size(t) -> str:
    return f"[{', '.join(str(s) for s in t.shape)}]"


def _check_cell(input, hx, w_ih, w_hh, hidden_size: int) -> None:
    if input.dim() < 2 or input.shape[1] != w_ih.shape[1]:
        got = input.shape[1] if input.dim() >= 2 else _size(input)
        raise RuntimeError(f"input has inconsistent input_size: got {got} expected {w_ih.shape[1]}")
    if hx.shape[0] != input.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden0 batch size {hx.shape[0]}")
    if hx.dim() < 2 or hx.shape[1] != hidden_size:
        raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {hx.shape[1] if hx.dim() > 1 else _size(hx)}, "
                           f"expected {hidden_size}")


def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    return api.linear(input, w_ih, b_ih), api.linear(hx, w_hh, b_hh)


_CELL = "(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"


@op("rnn_tanh_cell" + _CELL, kind=NN, method=False, composite=True, differentiable=False)
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step: ``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    _check_cell(input, hx, w_ih, w_hh, w_hh.shape[1])
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


@op("rnn_relu_cell" + _CELL, kind=NN, method=False, composite=True, differentiable=False)
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with ReLU: ``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    _check_cell(input, hx, w_ih, w_hh, w_hh.shape[1])
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


def _fused(t) -> bool:
    """Whether the compiled cell kernels of ``rnn_fused`` run for ``t`` (a real tensor on the CPU)."""
    return t.device.type == "cpu" and not t.is_complex()


def _fused_gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    """The two gate products for a fused cell, and its biases: both biases go to the cell, as ATen passes them;
    a lone bias is added to its product instead, since the fused cells take both or neither."""
    if b_ih is not None and b_hh is not None:
        return api.mm(input, w_ih.t()), api.mm(hx, w_hh.t()), b_ih, b_hh
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return gi, gh, None, None


@op("gru_cell" + _CELL, kind=NN, method=False, composite=True, differentiable=False)
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: reset ``r``, update ``z`` and new ``n`` gates; ``(1 - z) * n + z * hx``."""
    _check_cell(input, hx, w_ih, w_hh, w_hh.shape[1])
    if _fused(input):
        gi, gh, bi, bh = _fused_gates(input, hx, w_ih, w_hh, b_ih, b_hh)
        return api._thnn_fused_gru_cell(gi, gh, hx, bi, bh)[0]
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    reset_gate = (h_r + i_r).sigmoid()
    input_gate = (h_z + i_z).sigmoid()
    new_gate = (i_n + h_n * reset_gate).tanh()
    return (hx - new_gate) * input_gate + new_gate


@op("lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "
    "-> (Tensor, Tensor)", kind=NN, method=False, composite=True, differentiable=False)
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step from ``hx = [h, c]``: returns ``(h', c')`` with ``c' = f * c + i * g``, ``h' = o * tanh(c')``."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check_cell(input, h, w_ih, w_hh, w_hh.shape[1])
    if _fused(input):
        gi, gh, bi, bh = _fused_gates(input, h, w_ih, w_hh, b_ih, b_hh)
        hy, cy, _ = api._thnn_fused_lstm_cell(gi, gh, c, bi, bh)
        return hy, cy
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    return hy, cy


def _cell_meta(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(input, hx, w_ih, w_hh, w_hh.shape[1])
    return TensorMeta((input.shape[0], w_hh.shape[1]), input.dtype, input.device)


rnn_tanh_cell.meta_rule(_cell_meta)
rnn_relu_cell.meta_rule(_cell_meta)
gru_cell.meta_rule(_cell_meta)


@lstm_cell.meta_rule
def _(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    m = _cell_meta(input, h, w_ih, w_hh)
    return m, TensorMeta(tuple(c.shape), c.dtype, c.device)


def _cell_samples(gates: int, lstm: bool = False):
    def samples(rng):
        u = rng.uniform
        n, i, h = 3, 4, 5

        def hidden():
            return [u(-1, 1, (n, h)), u(-1, 1, (n, h))] if lstm else u(-1, 1, (n, h))

        yield (u(-1, 1, (n, i)), hidden(), u(-0.5, 0.5, (gates * h, i)), u(-0.5, 0.5, (gates * h, h)),
               u(-0.5, 0.5, gates * h), u(-0.5, 0.5, gates * h)), {}
        yield (u(-1, 1, (n, i)), hidden(), u(-0.5, 0.5, (gates * h, i)), u(-0.5, 0.5, (gates * h, h))), {}

    return samples


rnn_tanh_cell.sample_inputs(_cell_samples(1))
rnn_relu_cell.sample_inputs(_cell_samples(1))
gru_cell.sample_inputs(_cell_samples(3))
lstm_cell.sample_inputs(_cell_samples(4, lstm=True))


# ----------------------------------------------------------------------------- full sequences
def _layer_params(params, has_biases: bool, num_layers: int, directions: int):
    """``params`` grouped per (layer, direction): ``(w_ih, w_hh, b_ih, b_hh, w_hr)``, absent ones None."""
    count = num_layers * directions
    per = len(params) // count if count else 0
    if per * count != len(params) or per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(f"rnn: expected {count * (4 if has_biases else 2)} parameters for {num_layers} layers, "
                           f"got {len(params)}")
    groups = []
    for k in range(count):
        p = list(params[k * per:(k + 1) * per])
        w_ih, w_hh = p[0], p[1]
        b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
        w_hr = p[-1] if per in (3, 5) else None
        groups.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return groups


def _sequence(mode: str, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """The layers and directions over ``input``, each run by ``rnn_steps.run_direction`` as ``nn.RNN`` runs them."""
    if input.dim() != 3:
        raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
    lstm = mode == "LSTM"
    x = input.transpose(0, 1) if batch_first else input
    directions = 2 if bidirectional else 1
    groups = _layer_params(params, has_biases, num_layers, directions)
    h_final, c_final = [], []
    layer_input = x
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            h, c = (hx[0][k], hx[1][k]) if lstm else (hx[k], None)
            seq, h, c = run_direction(mode, layer_input, h, c, *groups[k], d == 1)
            outs.append(seq)
            h_final.append(h)
            if lstm:
                c_final.append(c)
        layer_input = outs[0] if directions == 1 else api.cat(outs, 2)
        if dropout > 0 and train and layer < num_layers - 1:
            layer_input = api.dropout(layer_input, dropout, train)
    output = layer_input.transpose(0, 1) if batch_first else layer_input
    if lstm:
        return output, api.stack(h_final, 0), api.stack(c_final, 0)
    return output, api.stack(h_final, 0)


_SEQ = ("(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, "
        "bool bidirectional, bool batch_first) -> (Tensor, Tensor)")


@op("rnn_tanh.input" + _SEQ, kind=NN, method=False, composite=True, differentiable=False)
def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """A multi-layer Elman RNN (tanh) over a (T, N, I) sequence (N, T, I when ``batch_first``), from
    ``hx`` (layers * directions, N, H): returns the last layer's outputs and the final hidden states."""
    return _sequence("RNN_TANH", input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first)


@op("rnn_relu.input" + _SEQ, kind=NN, method=False, composite=True, differentiable=False)
def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """A multi-layer Elman RNN with ReLU; see :func:`rnn_tanh`."""
    return _sequence("RNN_RELU", input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first)


@op("gru.input" + _SEQ, kind=NN, method=False, composite=True, differentiable=False)
def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """A multi-layer GRU; see :func:`rnn_tanh`."""
    return _sequence("GRU", input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first)


@op("lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)", kind=NN, method=False,
    composite=True, differentiable=False)
def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """A multi-layer LSTM from ``hx = [h0, c0]``: returns the outputs and the final ``h`` and ``c``; a ``w_hr``
    after each layer's weights projects ``h`` (``proj_size``)."""
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return _sequence("LSTM", input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def _seq_meta(gates: int, lstm: bool = False):
    def meta(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        dirs = 2 if bidirectional else 1
        h = hx[0] if lstm else hx
        t, n = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0], input.shape[1])
        width = h.shape[2] * dirs
        out = (n, t, width) if batch_first else (t, n, width)
        metas = (TensorMeta(out, input.dtype, input.device), TensorMeta(tuple(h.shape), h.dtype, h.device))
        if lstm:
            c = hx[1]
            metas += (TensorMeta(tuple(c.shape), c.dtype, c.device),)
        return metas

    return meta


def _seq_samples(gates: int, lstm: bool = False):
    def samples(rng):
        u = rng.uniform
        t, n, i, h = 4, 2, 3, 5

        def params(layers, dirs, biases):
            ps = []
            for layer in range(layers):
                width = i if layer == 0 else h * dirs
                for _ in range(dirs):
                    ps += [u(-0.5, 0.5, (gates * h, width)), u(-0.5, 0.5, (gates * h, h))]
                    if biases:
                        ps += [u(-0.5, 0.5, gates * h), u(-0.5, 0.5, gates * h)]
            return ps

        def hidden(k):
            return [u(-1, 1, (k, n, h)), u(-1, 1, (k, n, h))] if lstm else u(-1, 1, (k, n, h))

        yield (u(-1, 1, (t, n, i)), hidden(1), params(1, 1, True), True, 1, 0.0, False, False, False), {}
        yield (u(-1, 1, (n, t, i)), hidden(4), params(2, 2, True), True, 2, 0.0, True, True, True), {}
        yield (u(-1, 1, (t, n, i)), hidden(2), params(2, 1, False), False, 2, 0.0, False, False, False), {}

    return samples


for _o, _g in ((rnn_tanh, 1), (rnn_relu, 1), (gru, 3)):
    _o.meta_rule(_seq_meta(_g))
    _o.sample_inputs(_seq_samples(_g))
lstm.meta_rule(_seq_meta(4, lstm=True))
lstm.sample_inputs(_seq_samples(4, lstm=True))


# ----------------------------------------------------------------------------- ONNX
# ONNX's RNN, LSTM and GRU run a whole layer (both directions) as one node. Their gates come in another order than
# ATen's: LSTM i, o, f, c for ATen's i, f, g, o; GRU z, r, h for ATen's r, z, n (``linear_before_reset`` is
# ATen's GRU, which applies the reset gate after the hidden product and its bias).
_ONNX_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN": (0,)}


def _onnx_gates(g, w, order: tuple):
    """A weight or bias with its gate blocks (dim 0) in ONNX's order."""
    if len(order) == 1:  # one gate (RNN): nothing to reorder
        return w
    parts = onnx_chunks(g, w, len(order), 0)
    return g.op("Concat", *(parts[k] for k in order), axis=0)


def _onnx_stack(g, ts: list, axis: int = 0):
    return g.op("Concat", *(g.op("Unsqueeze", t, g.constant([axis])) for t in ts), axis=axis)


def _onnx_layer(g, kind: str, x, states: list, weights: list, has_biases: bool, dirs: int, hidden: int,
                activation: str | None = None):
    """One layer of ONNX ``kind`` over time-major ``x``: ``(output (T, B, dirs*H), [final state per kind])``."""
    order = _ONNX_ORDER[kind]
    w = [_onnx_gates(g, p[0], order) for p in weights]
    r = [_onnx_gates(g, p[1], order) for p in weights]
    b = ([g.op("Concat", _onnx_gates(g, p[2], order), _onnx_gates(g, p[3], order), axis=0) for p in weights]
         if has_biases else None)
    attrs = {"hidden_size": hidden, "direction": "bidirectional" if dirs == 2 else "forward"}
    if kind == "GRU":
        attrs["linear_before_reset"] = 1
    if activation is not None:
        attrs["activations"] = [activation] * dirs
    outs = g.op(kind, x, _onnx_stack(g, w), _onnx_stack(g, r), None if b is None else _onnx_stack(g, b), None,
                *states, outputs=1 + len(states), **attrs)
    y = g.op("Transpose", outs[0], perm=[0, 2, 1, 3])  # (T, dirs, B, H) -> (T, B, dirs, H)
    return g.op("Reshape", y, g.constant([0, 0, -1])), list(outs[1:])


def _onnx_sequence(g, kind: str, input, hx: list, params, has_biases, num_layers, dropout, train, bidirectional,
                   batch_first, activation: str | None = None):
    for name, v in (("params", params), ("has_biases", has_biases), ("num_layers", num_layers),
                    ("dropout", dropout), ("train", train), ("bidirectional", bidirectional),
                    ("batch_first", batch_first)):
        if g.is_value(v):
            raise g.unsupported(f"{name} must be a constant to export")
    if dropout and train and num_layers > 1:
        raise g.unsupported("dropout between layers in training mode does not export")
    dirs = 2 if bidirectional else 1
    groups = _layer_params(params, has_biases, num_layers, dirs)
    if any(p[4] is not None for p in groups):
        raise g.unsupported("LSTM projections (proj_size) have no ONNX counterpart")
    shape = g.shape(groups[0][1])
    if shape is None or shape[1] is None:
        raise g.unsupported("the hidden size must be known")
    hidden = shape[1]
    x = g.op("Transpose", input, perm=[1, 0, 2]) if batch_first else input
    finals = [[] for _ in hx]
    for layer in range(num_layers):
        lo, hi = g.constant([layer * dirs]), g.constant([(layer + 1) * dirs])
        states = [g.op("Slice", s, lo, hi, g.constant([0])) for s in hx]
        x, last = _onnx_layer(g, kind, x, states, groups[layer * dirs:(layer + 1) * dirs], has_biases, dirs,
                              hidden, activation)
        for acc, s in zip(finals, last):
            acc.append(s)
    out = g.op("Transpose", x, perm=[1, 0, 2]) if batch_first else x
    return (out, *(s[0] if len(s) == 1 else g.op("Concat", *s, axis=0) for s in finals))


@rnn_tanh.symbolic
def _(g, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _onnx_sequence(g, "RNN", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional,
                          batch_first, "Tanh")


@rnn_relu.symbolic
def _(g, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _onnx_sequence(g, "RNN", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional,
                          batch_first, "Relu")


@gru.symbolic
def _(g, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _onnx_sequence(g, "GRU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional,
                          batch_first)


@lstm.symbolic
def _(g, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    if g.is_value(hx) or len(hx) != 2:
        raise g.unsupported("hx must be a list of two tensors")
    return _onnx_sequence(g, "LSTM", input, list(hx), params, has_biases, num_layers, dropout, train, bidirectional,
                          batch_first)
