"""RNN, LSTM, GRU and their cells against torch.nn: same weights, outputs, input and parameter gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import nn


def _accum(T, I, H, layers=1, D=1):
    """The tolerance rule's accum for a recurrent net's outputs: each step sums W_ih x over the layer's input
    features (I, then D * H) and W_hh h over H; the recurrence chains T steps and the layers, whose rounding
    errors add in variance. Gradients go back through the same chain, and parameter gradients also sum over the
    T * B steps (see _grad_accum)."""
    return T * layers * (max(I, D * H) + H)


def _grad_accum(out, T, B=1):
    return 2 * out + T * B


def _copy_state(tm: torch.nn.Module, km: nn.Module) -> None:
    """Load torch's parameters into the toolkit module (through numpy)."""
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def _pair(cls: str, *args, **kwargs):
    tm = getattr(torch.nn, cls)(*args, **kwargs)
    km = getattr(nn, cls)(*args, **kwargs)
    _copy_state(tm, km)
    return tm, km


def _leaf(a: np.ndarray):
    return torch.tensor(a, requires_grad=True), toolkit.tensor(a, requires_grad=True)


def _loss(out, lib):
    """A loss touching every output with different weights, so each gradient path is checked."""
    flat = []
    for o in out if isinstance(out, (tuple, list)) else [out]:
        flat.extend(o if isinstance(o, (tuple, list)) else [o])
    total = 0
    for i, o in enumerate(flat):
        total = total + (o * o).sum() * (i + 1) + o.sum()
    return total


def _check_grads(tm, km, tin, kin, accum):
    for name, p in tm.named_parameters():
        assert_close(dict(km.named_parameters())[name].grad, p.grad, accum=accum)
    for t, k in zip(tin, kin):
        assert_close(k.grad, t.grad, accum=accum)


def _run_both(tm, km, x, h=None, state2=False):
    tx, kx = _leaf(x)
    tin, kin = [tx], [kx]
    targs, kargs = [tx], [kx]
    if h is not None:
        hs = [_leaf(a) for a in h]
        tin += [t for t, _ in hs]
        kin += [k for _, k in hs]
        if state2:
            targs.append(tuple(t for t, _ in hs))
            kargs.append(tuple(k for _, k in hs))
        else:
            targs.append(hs[0][0])
            kargs.append(hs[0][1])
    tout, kout = tm(*targs), km(*kargs)
    _loss(tout, torch).backward()
    _loss(kout, toolkit).backward()
    return tout, kout, tin, kin


MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {})]


@pytest.mark.parametrize("cls,extra", MODES)
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_h0", [False, True])
def test_forward_backward_matches_torch(cls, extra, num_layers, bidirectional, batch_first, with_h0, rng):
    I, H, T, B = 3, 4, 5, 2
    tm, km = _pair(cls, I, H, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first, **extra)
    x = rng.standard_normal((B, T, I) if batch_first else (T, B, I)).astype(np.float32)
    D = 2 if bidirectional else 1
    h = None
    if with_h0:
        h = [rng.standard_normal((num_layers * D, B, H)).astype(np.float32) for _ in range(2 if cls == "LSTM" else 1)]
    tout, kout, tin, kin = _run_both(tm, km, x, h, state2=cls == "LSTM")
    out = _accum(T, I, H, num_layers, D)
    assert_close(kout, tout, accum=out)
    _check_grads(tm, km, tin, kin, _grad_accum(out, T, B))


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_h0", [False, True])
def test_unbatched(cls, batch_first, with_h0, rng):
    tm, km = _pair(cls, 3, 4, num_layers=2, bidirectional=True, batch_first=batch_first)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    h = [rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2 if cls == "LSTM" else 1)] if with_h0 else None
    tout, kout, tin, kin = _run_both(tm, km, x, h, state2=cls == "LSTM")
    out = _accum(5, 3, 4, layers=2, D=2)
    assert_close(kout, tout, accum=out)
    assert kout[0].shape == (5, 8)
    _check_grads(tm, km, tin, kin, _grad_accum(out, 5))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_proj_size(bias, bidirectional, rng):
    tm, km = _pair("LSTM", 3, 5, num_layers=2, proj_size=2, bias=bias, bidirectional=bidirectional)
    assert [(n, tuple(p.shape)) for n, p in km.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in tm.named_parameters()
    ]
    D = 2 if bidirectional else 1
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    h = [rng.standard_normal((2 * D, 2, 2)).astype(np.float32), rng.standard_normal((2 * D, 2, 5)).astype(np.float32)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout, kout, tin, kin = _run_both(tm, km, x, h, state2=True)
    out = _accum(4, 3, 5, layers=2, D=D)  # (W_hh sums over proj_size 2, the projection over hidden_size 5)
    assert_close(kout, tout, accum=out)
    _check_grads(tm, km, tin, kin, _grad_accum(out, 4, 2))


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_no_bias_and_float64(cls, rng):
    tm = getattr(torch.nn, cls)(3, 4, bias=False, num_layers=2, dtype=torch.float64)
    km = getattr(nn, cls)(3, 4, bias=False, num_layers=2, dtype=toolkit.float64)
    _copy_state(tm, km)
    assert [n for n, _ in km.named_parameters()] == ["weight_ih_l0", "weight_hh_l0", "weight_ih_l1", "weight_hh_l1"]
    x = rng.standard_normal((4, 2, 3))
    tout, kout, tin, kin = _run_both(tm, km, x)
    out = _accum(4, 3, 4, layers=2)
    assert_close(kout, tout, accum=out)
    for name, p in tm.named_parameters():
        assert_close(dict(km.named_parameters())[name].grad, p.grad, accum=_grad_accum(out, 4, 2))


CONFIGS = [
    ("RNN", dict(num_layers=3, nonlinearity="relu", bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True, bias=False)),
    ("LSTM", dict(num_layers=2, proj_size=3)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
]


@pytest.mark.parametrize("cls,kw", CONFIGS)
def test_parameter_names_shapes_and_seeded_init(cls, kw):
    toolkit.manual_seed(123)
    km = getattr(nn, cls)(6, 5, **kw)
    torch.manual_seed(123)
    tm = getattr(torch.nn, cls)(6, 5, **kw)
    k_named = [(n, tuple(p.shape)) for n, p in km.named_parameters()]
    assert k_named == [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    for (_, kp), (_, tp) in zip(km.named_parameters(), tm.named_parameters()):
        np.testing.assert_array_equal(kp.detach().numpy(), tp.detach().numpy())
    assert km._flat_weights_names == tm._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in km.all_weights] == [
        [tuple(p.shape) for p in ws] for ws in tm.all_weights
    ]
    assert repr(km) == repr(tm)
    bound = 1 / np.sqrt(5)
    assert all(float(p.abs().max()) <= bound for p in km.parameters())
    km.flatten_parameters()


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_seeded_init_and_names(cls):
    toolkit.manual_seed(7)
    km = getattr(nn, cls)(3, 4)
    torch.manual_seed(7)
    tm = getattr(torch.nn, cls)(3, 4)
    for (kn, kp), (tn, tp) in zip(km.named_parameters(), tm.named_parameters(), strict=True):
        assert kn == tn
        np.testing.assert_array_equal(kp.detach().numpy(), tp.detach().numpy())
    assert repr(km) == repr(tm)
    kb = getattr(nn, cls)(3, 4, bias=False)
    assert [n for n, _ in kb.named_parameters()] == ["weight_ih", "weight_hh"]
    assert kb.bias_ih is None and repr(kb) == repr(getattr(torch.nn, cls)(3, 4, bias=False))


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {}),
         ("GRUCell", {"bias": False}), ("LSTMCell", {"bias": False})]


@pytest.mark.parametrize("cls,kw", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_h", [True, False])
def test_cells_match_torch(cls, kw, batched, with_h, rng):
    tm, km = _pair(cls, 3, 4, **kw)
    shape = (2,) if batched else ()
    x = rng.standard_normal(shape + (3,)).astype(np.float32)
    h = [rng.standard_normal(shape + (4,)).astype(np.float32) for _ in range(2 if cls == "LSTMCell" else 1)]
    tout, kout, tin, kin = _run_both(tm, km, x, h if with_h else None, state2=cls == "LSTMCell")
    out = _accum(1, 3, 4)
    assert_close(kout, tout, accum=out)
    _check_grads(tm, km, tin, kin, _grad_accum(out, 1, 2))


def test_cell_steps_equal_layer(rng):
    """Unrolling LSTMCell over time with the layer's weights gives the LSTM layer's output."""
    lstm = nn.LSTM(3, 4)
    cell = nn.LSTMCell(3, 4)
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = toolkit.tensor(rng.standard_normal((5, 2, 3)).astype(np.float32))
    out, (h, c) = lstm(x)
    hc = None
    for t in range(5):
        hc = cell(x[t], hc)
        assert_close(hc[0], out[t], accum=_accum(t + 1, 3, 4))
    assert_close(hc[1], c[0], accum=_accum(5, 3, 4))


def test_dropout_between_layers(rng):
    km = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = toolkit.tensor(rng.standard_normal((6, 2, 3)).astype(np.float32))
    km.eval()
    e1, e2 = km(x)[0], km(x)[0]
    assert_close(e1, e2)
    km.train()
    toolkit.manual_seed(0)
    t1 = km(x)[0]
    assert not np.allclose(t1.detach().numpy(), e1.detach().numpy())
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


def test_errors(rng):
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(TypeError, match="expected a Tensor or PackedSequence input, got tuple"):
        lstm((toolkit.zeros(2, 3), [2]))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        lstm(toolkit.zeros(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 5"):
        lstm(toolkit.zeros(2, 2, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"):
        lstm(toolkit.zeros(2, 2, 3), (toolkit.zeros(1, 2, 4), toolkit.zeros(2, 2, 4)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx and cx should also be 3-D"):
        lstm(toolkit.zeros(2, 2, 3), (toolkit.zeros(2, 4), toolkit.zeros(2, 4)))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
        nn.GRU(3, 4)(toolkit.zeros(2, 3), toolkit.zeros(1, 1, 4))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        nn.RNN(3, 4)(toolkit.zeros(2, 2, 3, dtype=toolkit.float64))
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.RNN(3, 0)
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.LSTMCell(3, 4)(toolkit.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="RNNCell: Expected hidden to be 1D or 2D, got 3D instead"):
        nn.RNNCell(3, 4)(toolkit.zeros(2, 3), toolkit.zeros(1, 2, 4))


def test_double_backward_through_lstm(rng):
    """The recurrence is built from registered ops, so gradients of gradients work."""
    km = nn.LSTM(2, 3, dtype=toolkit.float64)
    tm = torch.nn.LSTM(2, 3, dtype=torch.float64)
    _copy_state(tm, km)
    x = rng.standard_normal((3, 1, 2))
    tx, kx = _leaf(x)
    (tg,) = torch.autograd.grad(tm(tx)[0].pow(2).sum(), tx, create_graph=True)
    (kg,) = toolkit.autograd.grad(km(kx)[0].pow(2).sum(), kx, create_graph=True)
    grad = _grad_accum(_accum(3, 2, 3), 3)
    assert_close(kg, tg, accum=grad)
    tg.pow(2).sum().backward()
    kg.pow(2).sum().backward()
    assert_close(kx.grad, tx.grad, accum=2 * grad)  # second order: back through the first one's chain
    assert_close(km.weight_hh_l0.grad, tm.weight_hh_l0.grad, accum=2 * grad)


# (class, constructor keyword arguments) for PackedSequence inputs
PACKED_GRID = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
    ("GRU", {"bidirectional": True}),
    ("GRU", {"num_layers": 2, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True}),
]


@pytest.mark.parametrize("cls,kwargs", PACKED_GRID)
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
def test_packed_sequence_matches_torch(rng, cls, kwargs, enforce_sorted, with_hx):
    """A PackedSequence in gives a PackedSequence out, with torch's data, final states (in the caller's batch
    order) and gradients for the input, the initial states and every parameter."""
    from torch.nn.utils import rnn as trnn

    from toolkit.nn.utils import rnn as krnn

    T, B, I, H = 5, 4, 3, 4
    tm, km = _pair(cls, I, H, **kwargs)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    tx, kx = _leaf(rng.standard_normal((T, B, I)).astype(np.float32))
    tp = trnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    kp = krnn.pack_padded_sequence(kx, lengths, enforce_sorted=enforce_sorted)
    D = 2 if kwargs.get("bidirectional") else 1
    L = kwargs.get("num_layers", 1)
    real_h = kwargs.get("proj_size", 0) or H
    tin, kin = [tx], [kx]
    thx = khx = None
    if with_hx:
        th0, kh0 = _leaf(rng.standard_normal((L * D, B, real_h)).astype(np.float32))
        tin.append(th0)
        kin.append(kh0)
        thx, khx = th0, kh0
        if cls == "LSTM":
            tc0, kc0 = _leaf(rng.standard_normal((L * D, B, H)).astype(np.float32))
            tin.append(tc0)
            kin.append(kc0)
            thx, khx = (th0, tc0), (kh0, kc0)
    tout, th = tm(tp, thx)
    kout, kh = km(kp, khx)
    assert isinstance(kout, krnn.PackedSequence)
    accum = _accum(T, I, H, L, D)
    assert_close(kout.data, tout.data, accum=accum)
    np.testing.assert_array_equal(kout.batch_sizes.numpy(), tout.batch_sizes.numpy())
    assert (kout.sorted_indices is None) == (tout.sorted_indices is None)
    assert_close(kh, th, accum=accum)
    tpad, _ = trnn.pad_packed_sequence(tout)
    kpad, _ = krnn.pad_packed_sequence(kout)
    _loss([tpad, th], torch).backward()
    _loss([kpad, kh], toolkit).backward()
    _check_grads(tm, km, tin, kin, _grad_accum(accum, T, B))


def test_packed_sequence_errors():
    from toolkit.nn.utils import rnn as krnn

    lstm = nn.LSTM(3, 4, num_layers=2)
    packed = krnn.pack_sequence([toolkit.zeros(3, 3), toolkit.zeros(2, 3)])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"):
        lstm(packed, (toolkit.zeros(1, 2, 4), toolkit.zeros(2, 2, 4)))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 5"):
        lstm(krnn.pack_sequence([toolkit.zeros(3, 5)]))
    with pytest.raises(ValueError, match="RNN input dtype"):
        nn.GRU(3, 4)(krnn.pack_sequence([toolkit.zeros(3, 3, dtype=toolkit.float64)]))
