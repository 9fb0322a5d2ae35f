"""Fused LSTM and GRU cell steps with ATen's schemas: ``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell`` and
their backward ops.

A cell step composed of separate ops (chunk, three sigmoids, tanh, products)
costs about ten dispatches forward and twenty backward nodes per time step; in
a training loop over a sequence that Python cost, not the arithmetic, is the
step's time. These ops take the two gate products (``x @ W_ih.T`` and
``h @ W_hh.T``, each (B, G*H)) with optional biases, and run the
nonlinearities and the state update in one compiled pass (``_rnn_numba``),
returning the new state and a *workspace* of activated gates; backward reads
only the workspace and the states, again in one pass. So an LSTM step is two
ops (``mm`` and the cell) and two backward nodes.

The forward ops' derivatives call the backward ops. The backward ops have
derivatives of their own, written with registered ops from the cell's
elementwise formulas, so double backward works through either; the forward
derivative also carries the gradient that reaches the workspace, which the
backward ops' own derivatives send there (in first-order backward that
gradient is zero, and skipped). PyTorch runs these ops on CUDA only; here they
run on CPU in float32 and float64 (float16 computes in float32). Where
PyTorch's backward ops leave a bias gradient undefined (no biases), these give
an empty tensor.

Example::

    hy, cy, ws = api._thnn_fused_lstm_cell(x.mm(w_ih.t()), h.mm(w_hh.t()), c, b_ih, b_hh)
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import NN, op

_COMPUTE = {np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float64, np.dtype(np.float16): np.float32}


def _shape(s) -> str:
    return f"[{', '.join(str(int(v)) for v in s)}]"


def _check_dim(fn: str, shape, dim: int, pos: int, name: str) -> None:
    if len(shape) != dim:
        raise RuntimeError(f"Expected {dim}-dimensional tensor, but got {len(shape)}-dimensional tensor for argument "
                           f"#{pos} '{name}' (while checking arguments for {fn})")


def _check_numel(fn: str, shape, numel: int, pos: int, name: str) -> None:
    have = int(np.prod(shape, dtype=np.int64))
    if have != numel:
        raise RuntimeError(f"Expected tensor for argument #{pos} '{name}' to have {numel} elements; but it actually "
                           f"has {have} elements (while checking arguments for {fn})")


def _check_same(fn: str, a, b, pa: tuple, pb: tuple) -> None:
    if tuple(a) != tuple(b):
        raise RuntimeError(f"Expected tensor for argument #{pa[0]} '{pa[1]}' to have same size as tensor for argument "
                           f"#{pb[0]} '{pb[1]}'; but {_shape(a)} does not equal {_shape(b)} (while checking "
                           f"arguments for {fn})")


def _check_cell(fn: str, input_gates, hidden_gates, prev, input_bias, hidden_bias, factor: int) -> int:
    """ATen's size checks of a fused cell's arguments (arrays or metas: shapes only); returns the hidden size."""
    ig, hg, prev = input_gates.shape, hidden_gates.shape, prev.shape
    ib = None if input_bias is None else input_bias.shape
    hb = None if hidden_bias is None else hidden_bias.shape
    _check_dim(fn, ig, 2, 1, "input_gates")
    _check_same(fn, ig, hg, (1, "input_gates"), (2, "hidden_gates"))
    gates = ig[1]
    if gates % factor:
        raise RuntimeError(f"{fn}: input_gates has {gates} columns, which is not {factor} gates of equal size")
    if ib is not None:
        _check_dim(fn, ib, 1, 3, "input_bias")
        _check_numel(fn, ib, gates, 3, "input_bias")
        if hb is None:
            raise RuntimeError(f"{fn}: input_bias is given but hidden_bias is not")
        _check_same(fn, ib, hb, (3, "input_bias"), (4, "hidden_bias"))
    _check_dim(fn, prev, 2, 5, "prev_hidden")
    _check_numel(fn, prev, ig[0] * gates // factor, 5, "prev_hidden")
    return gates // factor


def _compute_dtype(fn: str, *arrays) -> type:
    """The numpy type the kernel runs in, after checking every array has the first one's dtype."""
    first = arrays[0].dtype
    compute = _COMPUTE.get(first)
    if compute is None:
        raise RuntimeError(f"\"{fn}_cpu\" not implemented for '{_dt.title(first)}'")
    for a in arrays[1:]:
        if a is not None and a.dtype != first:
            raise RuntimeError(f"expected scalar type {_dt.title(first)} but found {_dt.title(a.dtype)}")
    return compute


def _c(a, dtype):
    return np.ascontiguousarray(a, dtype=dtype)


def _bias(b, dtype, n: int):
    """A bias for the kernels, which always add one: zeros where the op has none (adding 0 changes nothing)."""
    return np.zeros(n, dtype) if b is None else _c(b, dtype)


def _reaches(g) -> bool:
    """Whether gradient ``g`` of a workspace can change anything: backward gives unused outputs zeros, and
    the gradient reaching a workspace is non-zero, or part of a graph, only in double backward."""
    return g.requires_grad or bool(g._data.any())


def onnx_chunks(g, x, n: int, axis: int) -> tuple:
    """ONNX lowerings' ``chunk``: ``x`` cut into ``n`` equal parts along ``axis`` by one ``Split`` (whose
    arguments changed in opset 18)."""
    if g.opset >= 18:
        return g.op("Split", x, axis=axis, num_outputs=n, outputs=n)
    return g.op("Split", x, axis=axis, outputs=n)


def _onnx_with_biases(g, gates, *biases):
    for b in biases:
        if b is not None:
            gates = g.op("Add", gates, b)
    return gates


_TESTED_ELSEWHERE = ("PyTorch has no CPU kernels for these ops, so the registry's generated comparison has no oracle: "
                     "tests/ops/test_rnn_fused.py checks them against the composite cell formulas and torch.nn's cells, "
                     "with gradcheck and gradgradcheck.")


# ----------------------------------------------------------------------------- LSTM
@op("_thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? input_bias=None, "
    "Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)", kind=NN, method=False, function=False)
def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """One LSTM step from the gate products (B, 4H), gates in the order i, f, g, o: ``(hy, cy, workspace)`` with
    ``cy = f * cx + i * g``, ``hy = o * tanh(cy)`` and the activated gates as the (B, 4H) workspace."""
    from ._rnn_numba import lstm_forward  # optional: numba, never loaded by import toolkit

    fn = "_thnn_fused_lstm_cell"
    h = _check_cell(fn, input_gates, hidden_gates, cx, input_bias, hidden_bias, 4)
    dt = _compute_dtype(fn, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    b = input_gates.shape[0]
    hy, cy = np.empty((b, h), dt), np.empty((b, h), dt)
    ws = np.empty((b, 4 * h), dt)
    lstm_forward(_c(input_gates, dt), _c(hidden_gates, dt), _c(cx, dt).reshape(b, h), _bias(input_bias, dt, 4 * h),
                 _bias(hidden_bias, dt, 4 * h), dt(1), hy, cy, ws)
    out = input_gates.dtype
    return hy.reshape(cx.shape).astype(out, copy=False), cy.reshape(cx.shape).astype(out, copy=False), \
        ws.astype(out, copy=False)


@_thnn_fused_lstm_cell.meta_rule
def _(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    _check_cell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, input_bias, hidden_bias, 4)
    d, dev = input_gates.dtype, input_gates.device
    return TensorMeta(cx.shape, d, dev), TensorMeta(cx.shape, d, dev), TensorMeta(input_gates.shape, d, dev)


def _lstm_act_grads(gws, ws):
    """The gradient reaching the workspace, taken back through each gate's nonlinearity."""
    ui, uf, ug, uo = gws.chunk(4, 1)
    i, f, g, o = ws.chunk(4, 1)
    return api.cat([ui * i * (1 - i), uf * f * (1 - f), ug * (1 - g * g), uo * o * (1 - o)], 1)


@_thnn_fused_lstm_cell.grad
def _(grad, cx, input_bias_shape, result):
    ghy, gcy, gws = grad
    has_bias = input_bias_shape is not None
    gates, gcx, gb = api._thnn_fused_lstm_cell_backward_impl(ghy, gcy, cx, result[1], result[2], has_bias)
    if _reaches(gws):
        extra = _lstm_act_grads(gws, result[2])
        gates = gates + extra
        if has_bias:
            gb = gb + extra.sum(0)
    if not has_bias:
        gb = None
    return gates, gates, gcx, gb, gb


_thnn_fused_lstm_cell.tested_elsewhere(_TESTED_ELSEWHERE)


@_thnn_fused_lstm_cell.symbolic
def _(g, input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    if g.rank(cx) not in (None, 2):
        raise g.unsupported("only a 2-D cell state exports")
    gates = _onnx_with_biases(g, g.op("Add", input_gates, hidden_gates), input_bias, hidden_bias)
    i, f, c, o = onnx_chunks(g, gates, 4, 1)
    i, f, c, o = g.op("Sigmoid", i), g.op("Sigmoid", f), g.op("Tanh", c), g.op("Sigmoid", o)
    cy = g.op("Add", g.op("Mul", f, cx), g.op("Mul", i, c))
    return g.op("Mul", o, g.op("Tanh", cy)), cy, g.op("Concat", i, f, c, o, axis=1)


@op("_thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, "
    "Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)", kind=NN, method=False, function=False)
def _thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    """The gradients of :func:`_thnn_fused_lstm_cell`'s gate pre-activations (B, 4H), of ``cx`` and, with
    ``has_bias``, of the biases (the gates' sum over the batch), from those of ``hy`` and ``cy``."""
    from ._rnn_numba import lstm_backward  # optional: numba, never loaded by import toolkit

    fn = "_thnn_fused_lstm_cell_backward_impl"
    _check_lstm_backward(fn, grad_hy, grad_cy, cx, cy, workspace)
    b = workspace.shape[0]
    h = cx.size // b if b else 0
    dt = _compute_dtype(fn, workspace, cx, cy, grad_hy, grad_cy)
    gates, gcx = np.empty((b, 4 * h), dt), np.empty((b, h), dt)
    zero = np.zeros((b, h), dt)
    lstm_backward(zero if grad_hy is None else _c(grad_hy, dt).reshape(b, h),
                  zero if grad_cy is None else _c(grad_cy, dt).reshape(b, h),
                  _c(cx, dt).reshape(b, h), _c(cy, dt).reshape(b, h), _c(workspace, dt), dt(1), gates, gcx)
    out = workspace.dtype
    gb = gates.sum(0) if has_bias else np.empty(0, dt)
    return gates.astype(out, copy=False), gcx.reshape(cx.shape).astype(out, copy=False), gb.astype(out, copy=False)


def _check_lstm_backward(fn: str, grad_hy, grad_cy, cx, cy, workspace) -> None:
    _check_dim(fn, cx.shape, 2, 3, "cx")
    _check_same(fn, cx.shape, cy.shape, (3, "cx"), (4, "cy"))
    for pos, name, g in ((1, "grad_hy", grad_hy), (2, "grad_cy", grad_cy)):
        if g is not None:
            _check_dim(fn, g.shape, 2, pos, name)
            _check_same(fn, g.shape, cx.shape, (pos, name), (3, "cx"))
    _check_dim(fn, workspace.shape, 2, 5, "workspace")
    _check_numel(fn, workspace.shape, 4 * int(np.prod(cx.shape, dtype=np.int64)), 5, "workspace")


@_thnn_fused_lstm_cell_backward_impl.meta_rule
def _(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    _check_lstm_backward("_thnn_fused_lstm_cell_backward_impl", grad_hy, grad_cy, cx, cy, workspace)
    d, dev = workspace.dtype, workspace.device
    return (TensorMeta(workspace.shape, d, dev), TensorMeta(cx.shape, d, dev),
            TensorMeta((workspace.shape[1],) if has_bias else (0,), d, dev))


@_thnn_fused_lstm_cell_backward_impl.grad
def _(grad, grad_hy, grad_cy, cx, cy, workspace, has_bias):
    u, ucx, ub = grad
    if has_bias:
        u = u + ub
    zero = api.zeros_like(cy)
    gh = zero if grad_hy is None else grad_hy
    gc = zero if grad_cy is None else grad_cy
    ui, uf, ug, uo = u.chunk(4, 1)
    i, f, g, o = workspace.chunk(4, 1)
    ucx = ucx.reshape(cy.shape)
    tc = cy.tanh()
    dtc = 1 - tc * tc
    total = gh * o * dtc + gc  # the gradient reaching cy in the first backward
    di_act, df_act, do_act = i * (1 - i), f * (1 - f), o * (1 - o)
    a = ui * g * di_act + uf * cx * df_act + ug * i * (1 - g * g) + ucx * f  # coefficient of ``total``
    d_gh = a * o * dtc + uo * tc * do_act
    d_cx = uf * total * df_act
    d_cy = (uo * gh * do_act - 2 * a * gh * o * tc) * dtc
    d_ws = api.cat([ui * total * g * (1 - 2 * i) + ug * total * (1 - g * g),
                    uf * total * cx * (1 - 2 * f) + ucx * total,
                    ui * total * di_act - 2 * ug * total * i * g,
                    a * gh * dtc + uo * gh * tc * (1 - 2 * o)], 1)
    return (None if grad_hy is None else d_gh), (None if grad_cy is None else a), d_cx, d_cy, d_ws


_thnn_fused_lstm_cell_backward_impl.tested_elsewhere(_TESTED_ELSEWHERE)


@op("_thnn_fused_lstm_cell_backward(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, Tensor workspace, "
    "bool has_bias) -> (Tensor, Tensor, Tensor, Tensor, Tensor)", kind=NN, method=False, function=False,
    composite=True, differentiable=False)
def _thnn_fused_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    """:func:`_thnn_fused_lstm_cell_backward_impl` in the order of the forward op's inputs: the gates' gradient
    for both gate products, that of ``cx``, and the bias gradient for both biases."""
    gates, gcx, gb = _thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias)
    return gates, gates, gcx, gb, gb


@_thnn_fused_lstm_cell_backward.meta_rule
def _(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    gates, gcx, gb = _thnn_fused_lstm_cell_backward_impl.infer(grad_hy, grad_cy, cx, cy, workspace, has_bias)
    return gates, gates, gcx, gb, gb


_thnn_fused_lstm_cell_backward.tested_elsewhere(_TESTED_ELSEWHERE)


# ----------------------------------------------------------------------------- GRU
@op("_thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, Tensor? input_bias=None, "
    "Tensor? hidden_bias=None) -> (Tensor, Tensor)", kind=NN, method=False, function=False)
def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """One GRU step from the gate products (B, 3H), gates r, z, n: ``(hy, workspace)`` with
    ``n = tanh(i_n + r * h_n)``, ``hy = n + z * (hx - n)``; the (B, 5H) workspace holds ``r, z, n, hx, h_n``."""
    from ._rnn_numba import gru_forward  # optional: numba, never loaded by import toolkit

    fn = "_thnn_fused_gru_cell"
    h = _check_cell(fn, input_gates, hidden_gates, hx, input_bias, hidden_bias, 3)
    dt = _compute_dtype(fn, input_gates, hidden_gates, hx, input_bias, hidden_bias)
    b = input_gates.shape[0]
    hy, ws = np.empty((b, h), dt), np.empty((b, 5 * h), dt)
    gru_forward(_c(input_gates, dt), _c(hidden_gates, dt), _c(hx, dt).reshape(b, h), _bias(input_bias, dt, 3 * h),
                _bias(hidden_bias, dt, 3 * h), dt(1), hy, ws)
    out = input_gates.dtype
    return hy.reshape(hx.shape).astype(out, copy=False), ws.astype(out, copy=False)


@_thnn_fused_gru_cell.meta_rule
def _(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    h = _check_cell("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, input_bias, hidden_bias, 3)
    d, dev = input_gates.dtype, input_gates.device
    return TensorMeta(hx.shape, d, dev), TensorMeta((input_gates.shape[0], 5 * h), d, dev)


def _gru_workspace_grads(gws, ws):
    """The gradient reaching the workspace ``r, z, n, hx, h_n``, taken back to the gate products and ``hx``."""
    ur, uz, un, uhx, uhn = gws.chunk(5, 1)
    r, z, n, _, hn = ws.chunk(5, 1)
    dn = un * (1 - n * n)
    dr = (ur + dn * hn) * r * (1 - r)
    dz = uz * z * (1 - z)
    return api.cat([dr, dz, dn], 1), api.cat([dr, dz, dn * r + uhn], 1), uhx


@_thnn_fused_gru_cell.grad
def _(grad, hx_shape, input_bias_shape, result):
    ghy, gws = grad
    has_bias = input_bias_shape is not None
    g_ig, g_hg, ghx, g_ib, g_hb = api._thnn_fused_gru_cell_backward(ghy.reshape(-1, result[1].shape[1] // 5),
                                                                   result[1], has_bias)
    if _reaches(gws):
        e_ig, e_hg, e_hx = _gru_workspace_grads(gws, result[1])
        g_ig, g_hg, ghx = g_ig + e_ig, g_hg + e_hg, ghx + e_hx
        if has_bias:
            g_ib, g_hb = g_ib + e_ig.sum(0), g_hb + e_hg.sum(0)
    if not has_bias:
        g_ib = g_hb = None
    return g_ig, g_hg, ghx.reshape(hx_shape), g_ib, g_hb


_thnn_fused_gru_cell.tested_elsewhere(_TESTED_ELSEWHERE)


@_thnn_fused_gru_cell.symbolic
def _(g, input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    if g.rank(hx) not in (None, 2):
        raise g.unsupported("only a 2-D hidden state exports")
    xr, xz, xn = onnx_chunks(g, _onnx_with_biases(g, input_gates, input_bias), 3, 1)
    hr, hz, hn = onnx_chunks(g, _onnx_with_biases(g, hidden_gates, hidden_bias), 3, 1)
    r = g.op("Sigmoid", g.op("Add", xr, hr))
    z = g.op("Sigmoid", g.op("Add", xz, hz))
    n = g.op("Tanh", g.op("Add", xn, g.op("Mul", r, hn)))
    return g.op("Add", n, g.op("Mul", z, g.op("Sub", hx, n))), g.op("Concat", r, z, n, hx, hn, axis=1)


def _check_gru_backward(fn: str, grad_hy, workspace) -> None:
    _check_dim(fn, grad_hy, 2, 1, "grad_hy")
    _check_dim(fn, workspace, 2, 2, "workspace")
    _check_numel(fn, workspace, 5 * int(np.prod(grad_hy, dtype=np.int64)), 2, "workspace")


@op("_thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor)", kind=NN, method=False, function=False)
def _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias):
    """The gradients of :func:`_thnn_fused_gru_cell`'s input and hidden gate products (B, 3H), of ``hx`` and,
    with ``has_bias``, of both biases (the gate gradients summed over the batch), from that of ``hy``."""
    from ._rnn_numba import gru_backward  # optional: numba, never loaded by import toolkit

    fn = "_thnn_fused_gru_cell_backward"
    _check_gru_backward(fn, grad_hy.shape, workspace.shape)
    dt = _compute_dtype(fn, workspace, grad_hy)
    b, h = grad_hy.shape
    g_ig, g_hg, ghx = np.empty((b, 3 * h), dt), np.empty((b, 3 * h), dt), np.empty((b, h), dt)
    gru_backward(_c(grad_hy, dt), _c(workspace, dt), dt(1), g_ig, g_hg, ghx)
    out = workspace.dtype
    g_ib, g_hb = (g_ig.sum(0), g_hg.sum(0)) if has_bias else (np.empty(0, dt), np.empty(0, dt))
    return tuple(a.astype(out, copy=False) for a in (g_ig, g_hg, ghx, g_ib, g_hb))


@_thnn_fused_gru_cell_backward.meta_rule
def _(grad_hy, workspace, has_bias):
    _check_gru_backward("_thnn_fused_gru_cell_backward", grad_hy.shape, workspace.shape)
    d, dev = workspace.dtype, workspace.device
    b, h = grad_hy.shape
    gates, bias = TensorMeta((b, 3 * h), d, dev), TensorMeta((3 * h,) if has_bias else (0,), d, dev)
    return gates, gates, TensorMeta((b, h), d, dev), bias, bias


@_thnn_fused_gru_cell_backward.grad
def _(grad, grad_hy, workspace, has_bias):
    u_ig, u_hg, uhx, u_ib, u_hb = grad
    if has_bias:
        u_ig, u_hg = u_ig + u_ib, u_hg + u_hb
    uir, uiz, uin = u_ig.chunk(3, 1)
    uhr, uhz, uhn = u_hg.chunk(3, 1)
    ur, uz = uir + uhr, uiz + uhz
    r, z, n, hx, hn = workspace.chunk(5, 1)
    p = grad_hy
    dn_act, dr_act, dz_act = 1 - n * n, r * (1 - r), z * (1 - z)
    gn = p * (1 - z) * dn_act  # the first backward's gradient of the new gate's pre-activation
    wn = uin + uhn * r + ur * hn * dr_act  # coefficient of ``gn``
    d_p = wn * (1 - z) * dn_act + uz * (hx - n) * dz_act + uhx * z
    d_ws = api.cat([uhn * gn + ur * gn * hn * (1 - 2 * r),
                    uhx * p + uz * p * (hx - n) * (1 - 2 * z) - wn * p * dn_act,
                    -2 * wn * p * (1 - z) * n - uz * p * dz_act,
                    uz * p * dz_act,
                    ur * gn * dr_act], 1)
    return d_p, d_ws


_thnn_fused_gru_cell_backward.tested_elsewhere(_TESTED_ELSEWHERE)
