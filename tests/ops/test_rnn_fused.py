"""The fused LSTM and GRU cell ops (``toolkit/ops/rnn_fused.py``) against PyTorch.

PyTorch's ``_thnn_fused_*`` ops have no CPU kernels, so the oracle is the cell's
formula run by PyTorch's own elementwise ops (as its CPU ``lstm_cell`` and
``gru_cell`` compose it), with PyTorch's autograd for the gradients; gradcheck
and gradgradcheck check the derivatives and double derivatives in float64, the
backward ops' own derivatives included. The recurrent modules that use the ops
are checked against ``torch.nn`` in tests/nn/test_rnn.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.ops import api

from ..conftest import assert_close, to_torch

torch = pytest.importorskip("torch")

B, H = 3, 5


def _rand(rng, *shape, dtype=np.float64, requires_grad=False):
    t = toolkit.tensor(rng.uniform(-1.5, 1.5, shape).astype(dtype))
    return t.requires_grad_() if requires_grad else t


def _torch_lstm(ig, hg, cx, ib=None, ih=None):
    """PyTorch's cell arithmetic: ``(hy, cy, activated gates)``."""
    gates = ig + hg if ib is None else ig + hg + ib + ih
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, torch.cat([i, f, g, o], 1)


def _torch_gru(ig, hg, hx, ib=None, ih=None):
    """PyTorch's cell arithmetic: ``(hy, workspace r, z, n, hx, h_n)``."""
    if ib is not None:
        ig, hg = ig + ib, hg + ih
    i_r, i_z, i_n = ig.chunk(3, 1)
    h_r, h_z, h_n = hg.chunk(3, 1)
    r, z = (i_r + h_r).sigmoid(), (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (hx - n), torch.cat([r, z, n, hx, h_n], 1)


def _inputs(rng, gates: int, bias: bool, dtype=np.float64, requires_grad=False):
    args = [_rand(rng, B, gates * H, dtype=dtype, requires_grad=requires_grad),
            _rand(rng, B, gates * H, dtype=dtype, requires_grad=requires_grad),
            _rand(rng, B, H, dtype=dtype, requires_grad=requires_grad)]
    if bias:
        args += [_rand(rng, gates * H, dtype=dtype, requires_grad=requires_grad),
                 _rand(rng, gates * H, dtype=dtype, requires_grad=requires_grad)]
    return args


CASES = [(dt, bias) for dt in (np.float32, np.float64) for bias in (True, False)]


@pytest.mark.parametrize("dtype,bias", CASES)
def test_lstm_cell_forward_and_backward_match_torch(dtype, bias):
    rng = np.random.default_rng(0)
    args = _inputs(rng, 4, bias, dtype, requires_grad=True)
    hy, cy, ws = api._thnn_fused_lstm_cell(*args)
    targs = to_torch(args)
    ehy, ecy, ews = _torch_lstm(*targs)
    assert_close((hy, cy, ws), (ehy, ecy, ews), accum=4)  # the pre-activation sums up to four terms
    ghy, gcy = _rand(rng, B, H, dtype=dtype), _rand(rng, B, H, dtype=dtype)
    grads = toolkit.autograd.grad((hy * ghy).sum() + (cy * gcy).sum(), args)
    expected = torch.autograd.grad((ehy * to_torch(ghy)).sum() + (ecy * to_torch(gcy)).sum(), targs)
    assert_close(grads, expected, accum=4 * B)  # bias gradients sum over the batch
    assert type(hy.grad_fn).__name__ == "ThnnFusedLstmCellBackward0"


@pytest.mark.parametrize("dtype,bias", CASES)
def test_gru_cell_forward_and_backward_match_torch(dtype, bias):
    rng = np.random.default_rng(1)
    args = _inputs(rng, 3, bias, dtype, requires_grad=True)
    hy, ws = api._thnn_fused_gru_cell(*args)
    targs = to_torch(args)
    ehy, ews = _torch_gru(*targs)
    assert_close((hy, ws), (ehy, ews), accum=4)
    ghy = _rand(rng, B, H, dtype=dtype)
    grads = toolkit.autograd.grad((hy * ghy).sum(), args)
    expected = torch.autograd.grad((ehy * to_torch(ghy)).sum(), targs)
    assert_close(grads, expected, accum=4 * B)


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_gradcheck_and_gradgradcheck(bias):
    args = _inputs(np.random.default_rng(2), 4, bias, requires_grad=True)

    def cell(*a):
        hy, cy, _ = api._thnn_fused_lstm_cell(*a)
        return hy, cy

    assert toolkit.autograd.gradcheck(cell, tuple(args))
    assert toolkit.autograd.gradgradcheck(cell, tuple(args))


@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell_gradcheck_and_gradgradcheck(bias):
    args = _inputs(np.random.default_rng(3), 3, bias, requires_grad=True)

    def cell(*a):
        return api._thnn_fused_gru_cell(*a)[0]

    assert toolkit.autograd.gradcheck(cell, tuple(args))
    assert toolkit.autograd.gradgradcheck(cell, tuple(args))


def _lstm_state(rng):
    """A real cell's ``cx``, ``cy`` and workspace (activated gates in their ranges), as leaves."""
    ig, hg, cx = _inputs(rng, 4, False)
    _, cy, ws = api._thnn_fused_lstm_cell(ig, hg, cx)
    return cx.requires_grad_(), cy.requires_grad_(), ws.requires_grad_()


@pytest.mark.parametrize("has_bias", [True, False])
@pytest.mark.parametrize("which", ["both", "hy", "cy"])
def test_lstm_backward_op_gradcheck_and_gradgradcheck(has_bias, which):
    rng = np.random.default_rng(4)
    cx, cy, ws = _lstm_state(rng)
    ghy, gcy = _rand(rng, B, H, requires_grad=True), _rand(rng, B, H, requires_grad=True)

    def backward(*a):
        gh = a[0] if which != "cy" else None
        gc = a[-4] if which != "hy" else None
        out = api._thnn_fused_lstm_cell_backward_impl(gh, gc, *a[-3:], has_bias)
        return out if has_bias else out[:2]

    inputs = {"both": (ghy, gcy), "hy": (ghy,), "cy": (gcy,)}[which] + (cx, cy, ws)
    assert toolkit.autograd.gradcheck(backward, inputs)
    assert toolkit.autograd.gradgradcheck(backward, inputs)


@pytest.mark.parametrize("has_bias", [True, False])
def test_gru_backward_op_gradcheck_and_gradgradcheck(has_bias):
    rng = np.random.default_rng(5)
    _, ws = api._thnn_fused_gru_cell(*_inputs(rng, 3, False))
    ghy = _rand(rng, B, H, requires_grad=True)
    ws.requires_grad_()

    def backward(g, w):
        out = api._thnn_fused_gru_cell_backward(g, w, has_bias)
        return out if has_bias else out[:3]

    assert toolkit.autograd.gradcheck(backward, (ghy, ws))
    assert toolkit.autograd.gradgradcheck(backward, (ghy, ws))


def test_backward_ops_give_the_forward_inputs_gradients():
    rng = np.random.default_rng(6)
    ig, hg, cx, ib, ih = _inputs(rng, 4, True)
    ghy, gcy = _rand(rng, B, H), _rand(rng, B, H)
    hy, cy, ws = api._thnn_fused_lstm_cell(ig, hg, cx, ib, ih)
    g_ig, g_hg, g_cx, g_ib, g_ih = api._thnn_fused_lstm_cell_backward(ghy, gcy, cx, cy, ws, True)
    targs = to_torch([ig, hg, cx, ib, ih], requires_grad=True)
    ehy, ecy, _ = _torch_lstm(*targs)
    expected = torch.autograd.grad((ehy * to_torch(ghy)).sum() + (ecy * to_torch(gcy)).sum(), targs)
    assert_close((g_ig, g_hg, g_cx, g_ib, g_ih), expected, accum=4 * B)
    gates, g_cx2, g_b = api._thnn_fused_lstm_cell_backward_impl(ghy, gcy, cx, cy, ws, False)
    assert_close((gates, g_cx2), (expected[0], expected[2]), accum=4)
    assert tuple(g_b.shape) == (0,)  # PyTorch leaves it undefined
    ig, hg, hx, ib, ih = _inputs(rng, 3, True)
    hy, ws = api._thnn_fused_gru_cell(ig, hg, hx, ib, ih)
    grads = api._thnn_fused_gru_cell_backward(ghy, ws, True)
    targs = to_torch([ig, hg, hx, ib, ih], requires_grad=True)
    expected = torch.autograd.grad((_torch_gru(*targs)[0] * to_torch(ghy)).sum(), targs)
    assert_close(grads, expected, accum=4 * B)


@pytest.mark.parametrize("bias", [True, False])
def test_aten_cells_match_torch(bias):
    """``torch.lstm_cell`` and ``torch.gru_cell``, which run the fused ops on the CPU, and a lone bias."""
    rng = np.random.default_rng(7)
    x, h, c = _rand(rng, B, 4), _rand(rng, B, H), _rand(rng, B, H)
    for gates, fn in ((4, "lstm_cell"), (3, "gru_cell")):
        w_ih, w_hh = _rand(rng, gates * H, 4), _rand(rng, gates * H, H)
        b_ih, b_hh = (_rand(rng, gates * H), _rand(rng, gates * H)) if bias else (_rand(rng, gates * H), None)
        hx = [h, c] if gates == 4 else h
        out = getattr(toolkit, fn)(x, hx, w_ih, w_hh, b_ih, b_hh)
        expected = getattr(torch, fn)(*to_torch([x, hx, w_ih, w_hh, b_ih, b_hh]))
        assert_close(out, expected, accum=4 + H)


def test_an_lstm_step_is_two_ops_and_two_backward_nodes():
    """What the fused cells are for: ``nn.LSTM`` runs the hidden product and one cell op per time step."""
    steps = 6
    lstm = toolkit.nn.LSTM(4, H)
    x = toolkit.randn(steps, B, 4)
    with toolkit.profiler.profile() as prof:
        lstm(x)[0].sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::_thnn_fused_lstm_cell"] == steps
    assert counts["ThnnFusedLstmCellBackward0"] == steps
    assert counts["aten::_thnn_fused_lstm_cell_backward_impl"] == steps
    assert "aten::sigmoid" not in counts and "aten::chunk" not in counts
    gru = toolkit.nn.GRU(4, H)
    with toolkit.profiler.profile() as prof:
        gru(x)[0].sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::_thnn_fused_gru_cell"] == counts["aten::_thnn_fused_gru_cell_backward"] == steps
    assert "aten::sigmoid" not in counts


def test_float16_computes_in_float32():
    rng = np.random.default_rng(8)
    args = _inputs(rng, 4, True, np.float16)
    hy, cy, ws = api._thnn_fused_lstm_cell(*args)
    assert hy.dtype == cy.dtype == ws.dtype == toolkit.float16
    expected = _torch_lstm(*to_torch([a.to(toolkit.float32) for a in args]))
    assert_close((hy, cy, ws), tuple(e.half() for e in expected))


def test_errors():
    rng = np.random.default_rng(9)
    ig, hg, cx, ib, ih = _inputs(rng, 4, True)
    cell = api._thnn_fused_lstm_cell
    with pytest.raises(RuntimeError, match=r"Expected 2-dimensional tensor, but got 1-dimensional tensor for "
                                           r"argument #1 'input_gates'"):
        cell(ig[0], hg[0], cx)
    with pytest.raises(RuntimeError, match=r"'input_gates' to have same size as tensor for argument #2 "
                                           r"'hidden_gates'; but \[3, 20\] does not equal \[3, 16\]"):
        cell(ig, hg[:, :16], cx)
    with pytest.raises(RuntimeError, match=r"'input_bias' to have 20 elements; but it actually has 8"):
        cell(ig, hg, cx, ib[:8], ih[:8])
    with pytest.raises(RuntimeError, match=r"'input_bias' to have same size as tensor for argument #4 'hidden_bias'"):
        cell(ig, hg, cx, ib, ih.reshape(4, 5))
    with pytest.raises(RuntimeError, match=r"'prev_hidden' to have 15 elements; but it actually has 12"):
        cell(ig, hg, cx[:, :4])
    with pytest.raises(RuntimeError, match="not 4 gates of equal size"):
        cell(ig[:, :18], hg[:, :18], cx)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        cell(ig.long(), hg.long(), cx.long())
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        cell(ig, hg.float(), cx)
    _, cy, ws = cell(ig, hg, cx)
    with pytest.raises(RuntimeError, match=r"'grad_hy' to have same size as tensor for argument #3 'cx'"):
        api._thnn_fused_lstm_cell_backward_impl(cx[:2], None, cx, cy, ws, False)
    with pytest.raises(RuntimeError, match=r"'workspace' to have 60 elements"):
        api._thnn_fused_lstm_cell_backward_impl(cx, cx, cx, cy, ws[:, :8], False)
    gru_ig = _rand(rng, B, 15)
    with pytest.raises(RuntimeError, match=r"'prev_hidden' to have 15 elements; but it actually has 3"):
        api._thnn_fused_gru_cell(gru_ig, gru_ig, cx[:, :1])
    _, gws = api._thnn_fused_gru_cell(gru_ig, gru_ig, cx)
    with pytest.raises(RuntimeError, match=r"'workspace' to have 75 elements"):
        api._thnn_fused_gru_cell_backward(cx, gws[:, :5], False)
