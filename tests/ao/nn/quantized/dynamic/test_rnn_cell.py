"""Dynamic quantized RNNCell, LSTMCell and GRUCell against ``torch.ao.nn.quantized.dynamic``: outputs, int8
weights, state dict keys and round trip, repr and errors."""

import pickle

import pytest
import torch

import toolkit
import toolkit.ao.nn.quantized.dynamic as nnqd
from tests.ao.nn.quantized.dynamic.test_rnn import _raises_like_torch
from tests.ao.nn.quantized.dynamic.twins import assert_same_qweight, float_twins, inputs
from tests.conftest import assert_close

pytestmark = pytest.mark.filterwarnings("ignore:.*quantize")
tnnqd = torch.ao.nn.quantized.dynamic

CELLS = [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"})]


def _quantized(name: str, seed: int = 0, **kwargs):
    ours, theirs = float_twins(name, 5, 7, seed=seed, **kwargs)
    return getattr(nnqd, name).from_float(ours), getattr(tnnqd, name).from_float(theirs)


def _hidden(name: str, batch: int = 3):
    h, th = inputs((batch, 7), seed=2)
    if name != "LSTMCell":
        return h, th
    c, tc = inputs((batch, 7), seed=3)
    return (h, c), (th, tc)


@pytest.mark.parametrize("name,kwargs", CELLS)
@pytest.mark.parametrize("with_hx", [False, True])
def test_step_matches_torch(name, kwargs, with_hx):
    ours, theirs = _quantized(name, **kwargs)
    x, tx = inputs((3, 5))
    hx, thx = _hidden(name) if with_hx else (None, None)
    assert_close(ours(x, hx), theirs(tx, thx), accum=5 + 7)


@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell"])
def test_steps_through_a_sequence_match_torch(name):
    ours, theirs = _quantized(name, seed=4)
    xs, txs = inputs((6, 2, 5), seed=5)
    hx, thx = _hidden(name, batch=2)
    for t in range(6):
        hx, thx = ours(xs[t], hx), theirs(txs[t], thx)
    assert_close(hx, thx, accum=6 * (5 + 7))


@pytest.mark.parametrize("name,kwargs", CELLS[:3])
def test_weights_and_state_dict_match_torch(name, kwargs):
    ours, theirs = _quantized(name, **kwargs)
    for key in ("weight_ih", "weight_hh"):
        assert_same_qweight(ours.get_weight()[key], theirs.get_weight()[key])
    for key in ("bias_ih", "bias_hh"):
        assert_close(ours.get_bias()[key], theirs.get_bias()[key].detach())
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict()) == ["_packed_weight_ih", "_packed_weight_hh"]
    fresh = getattr(nnqd, name)(5, 7, **kwargs)
    fresh.load_state_dict(pickle.loads(pickle.dumps(sd)))
    x, _ = inputs((3, 5))
    assert_close(fresh(x), ours(x), rtol=0, atol=0)


@pytest.mark.parametrize("name,kwargs", CELLS + [("RNNCell", {"bias": False}), ("GRUCell", {"bias": False})])
def test_repr_matches_torch(name, kwargs):
    assert repr(getattr(nnqd, name)(5, 7, **kwargs)) == repr(getattr(tnnqd, name)(5, 7, **kwargs))


def test_from_float_errors_match_torch():
    lstm, t_lstm = float_twins("LSTM", 5, 7)
    _raises_like_torch(lambda: nnqd.LSTMCell.from_float(lstm), lambda: tnnqd.LSTMCell.from_float(t_lstm))
    cell, t_cell = float_twins("GRUCell", 5, 7, bias=False)
    _raises_like_torch(lambda: nnqd.GRUCell.from_float(cell), lambda: tnnqd.GRUCell.from_float(t_cell))
    cell, t_cell = float_twins("RNNCell", 5, 7)
    del cell.qconfig, t_cell.qconfig
    _raises_like_torch(lambda: nnqd.RNNCell.from_float(cell), lambda: tnnqd.RNNCell.from_float(t_cell))


@pytest.mark.parametrize("x_shape,h_shapes", [
    ((3, 4), None),                 # wrong input size
    ((3, 5), ((2, 7), (3, 7))),     # h batch differs
    ((3, 5), ((3, 8), (3, 7))),     # h size differs
    ((3, 5), ((3, 7), (4, 7))),     # c batch differs
])
def test_forward_errors_match_torch(x_shape, h_shapes):
    q, tq = nnqd.LSTMCell(5, 7), tnnqd.LSTMCell(5, 7)
    hx = thx = None
    if h_shapes is not None:
        hx, thx = tuple(toolkit.zeros(s) for s in h_shapes), tuple(torch.zeros(s) for s in h_shapes)
    _raises_like_torch(lambda: q(toolkit.zeros(x_shape), hx), lambda: tq(torch.zeros(x_shape), thx))


def test_unknown_nonlinearity_matches_torch():
    q, tq = nnqd.RNNCell(5, 7, nonlinearity="sigmoid"), tnnqd.RNNCell(5, 7, nonlinearity="sigmoid")
    _raises_like_torch(lambda: q(toolkit.zeros(2, 5)), lambda: tq(torch.zeros(2, 5)))
