"""Dynamic quantized LSTM and GRU against ``torch.ao.nn.quantized.dynamic``: the same float weights quantized by
``from_float`` give the same int8 weights and the same outputs (tensor and packed inputs, several layers, both
directions, batch first), PyTorch's state dict keys and repr, and PyTorch's errors."""

import math
import pickle

import numpy as np
import pytest
import torch

import toolkit
import toolkit.ao.nn.quantized.dynamic as nnqd
from tests.ao.nn.quantized.dynamic.twins import assert_same_qweight, float_twins, inputs
from tests.conftest import assert_close

pytestmark = pytest.mark.filterwarnings("ignore:.*quantize")
tnnqd = torch.ao.nn.quantized.dynamic

CONFIGS = [
    ("LSTM", {}),
    ("GRU", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"num_layers": 3, "batch_first": True}),
]


def _quantized(mode: str, seed: int = 0, **kwargs):
    ours, theirs = float_twins(mode, 4, 6, seed=seed, **kwargs)
    return getattr(nnqd, mode).from_float(ours), getattr(tnnqd, mode).from_float(theirs)


def _accum(q, steps: int) -> int:
    """The terms behind each output: an input and a hidden product per step and layer."""
    return steps * q.num_layers * (q.input_size + q.hidden_size)


def _states(mode: str, n: int, batch: int):
    h, th = inputs((n, batch, 6), seed=7)
    if mode == "GRU":
        return h, th
    c, tc = inputs((n, batch, 6), seed=8)
    return (h, c), (th, tc)


@pytest.mark.parametrize("mode,kwargs", CONFIGS)
@pytest.mark.parametrize("with_hx", [False, True])
def test_forward_matches_torch(mode, kwargs, with_hx):
    ours, theirs = _quantized(mode, **kwargs)
    x, tx = inputs((3, 5, 4) if kwargs.get("batch_first") else (5, 3, 4))
    n = ours.num_layers * (2 if ours.bidirectional else 1)
    hx, thx = _states(mode, n, 3) if with_hx else (None, None)
    out, hidden = ours(x, hx)
    t_out, t_hidden = theirs(tx, thx)
    assert_close(out, t_out, accum=_accum(ours, 5))
    assert_close(hidden, t_hidden, accum=_accum(ours, 5))


@pytest.mark.parametrize("mode,kwargs", CONFIGS[:3])
def test_packed_sequence_matches_torch(mode, kwargs):
    ours, theirs = _quantized(mode, seed=3, **kwargs)
    x, tx = inputs((5, 4, 4), seed=4)
    lengths = [3, 5, 1, 4]  # unsorted: the hidden states come back in the caller's order
    packed = toolkit.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    t_packed = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=False)
    n = ours.num_layers * (2 if ours.bidirectional else 1)
    hx, thx = _states(mode, n, 4)
    out, hidden = ours(packed, hx)
    t_out, t_hidden = theirs(t_packed, thx)
    assert isinstance(out, toolkit.nn.utils.rnn.PackedSequence)
    assert_close(out.data, t_out.data, accum=_accum(ours, 5))
    assert_close(out.batch_sizes, t_out.batch_sizes)
    assert_close(hidden, t_hidden, accum=_accum(ours, 5))


@pytest.mark.parametrize("mode,kwargs", CONFIGS[1:3])
def test_int8_weights_and_biases_match_torch(mode, kwargs):
    ours, theirs = _quantized(mode, **kwargs)
    weights, t_weights = ours.get_weight(), theirs.get_weight()
    assert list(weights) == list(t_weights)
    for name, w in weights.items():
        assert w.dtype is toolkit.qint8
        assert_same_qweight(w, t_weights[name])
    biases, t_biases = ours.get_bias(), theirs.get_bias()
    assert list(biases) == list(t_biases)
    for name, b in biases.items():
        assert_close(b, t_biases[name].detach())


def test_per_channel_weights_match_torch():
    ours, theirs = float_twins("LSTM", 4, 6, seed=5)
    ours.qconfig = toolkit.ao.quantization.qconfig.per_channel_dynamic_qconfig
    theirs.qconfig = torch.ao.quantization.per_channel_dynamic_qconfig
    q, tq = nnqd.LSTM.from_float(ours), tnnqd.LSTM.from_float(theirs)
    assert_same_qweight(q.get_weight()["weight_hh_l0"], tq.get_weight()["weight_hh_l0"])
    x, tx = inputs((4, 2, 4))
    assert_close(q(x)[0], tq(tx)[0], accum=_accum(q, 4))


def test_state_dict_keys_and_round_trip():
    ours, theirs = _quantized("LSTM", num_layers=2, bidirectional=True)
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict())
    fresh = nnqd.LSTM(4, 6, num_layers=2, bidirectional=True)
    x, _ = inputs((5, 3, 4))
    assert not np.allclose(fresh(x)[0].numpy(), ours(x)[0].numpy())
    fresh.load_state_dict(sd)
    assert_close(fresh(x)[0], ours(x)[0], rtol=0, atol=0)


def test_state_dict_survives_pickling():
    ours, _ = _quantized("GRU", num_layers=2)
    fresh = nnqd.GRU(4, 6, num_layers=2)
    fresh.load_state_dict(pickle.loads(pickle.dumps(ours.state_dict())))
    x, _ = inputs((5, 3, 4))
    assert_close(fresh(x)[0], ours(x)[0], rtol=0, atol=0)


@pytest.mark.parametrize("mode,kwargs", CONFIGS + [("LSTM", {"bias": False, "dropout": 0.5, "num_layers": 2})])
def test_repr_matches_torch(mode, kwargs):
    assert repr(getattr(nnqd, mode)(4, 6, **kwargs)) == repr(getattr(tnnqd, mode)(4, 6, **kwargs))


def test_constructed_module_runs_with_random_weights():
    q = nnqd.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    out, (h, c) = q(toolkit.randn(3, 5, 4))
    assert tuple(out.shape) == (3, 5, 12) and tuple(h.shape) == (4, 3, 6) and tuple(c.shape) == (4, 3, 6)
    assert q.get_weight()["weight_ih_l1_reverse"].q_scale() == 0.1
    assert not q.training and q.version == 2 and q.dtype is toolkit.qint8


def _raises_like_torch(ours_fn, theirs_fn):
    with pytest.raises(Exception) as theirs:
        theirs_fn()
    with pytest.raises(type(theirs.value)) as ours:
        ours_fn()
    assert str(ours.value).replace("toolkit.", "torch.") == str(theirs.value)


def test_from_float_errors_match_torch():
    rnn, t_rnn = float_twins("RNN", 4, 6)
    _raises_like_torch(lambda: nnqd.LSTM.from_float(rnn), lambda: tnnqd.LSTM.from_float(t_rnn))
    lstm, t_lstm = float_twins("LSTM", 4, 6)
    del lstm.qconfig, t_lstm.qconfig
    _raises_like_torch(lambda: nnqd.LSTM.from_float(lstm), lambda: tnnqd.LSTM.from_float(t_lstm))
    lstm, t_lstm = float_twins("LSTM", 4, 6, bias=False)
    _raises_like_torch(lambda: nnqd.LSTM.from_float(lstm), lambda: tnnqd.LSTM.from_float(t_lstm))
    lstm, t_lstm = float_twins("GRU", 4, 6)
    lstm.qconfig = toolkit.ao.quantization.qconfig.QConfig(
        activation=None, weight=toolkit.ao.quantization.MinMaxObserver.with_args(dtype=toolkit.quint8))
    t_lstm.qconfig = torch.ao.quantization.QConfig(
        activation=None, weight=torch.ao.quantization.MinMaxObserver.with_args(dtype=torch.quint8))
    _raises_like_torch(lambda: nnqd.GRU.from_float(lstm), lambda: tnnqd.GRU.from_float(t_lstm))


def test_from_float_refuses_what_it_cannot_keep():
    lstm, _ = float_twins("LSTM", 4, 6)
    lstm.qconfig = toolkit.ao.quantization.qconfig.float16_dynamic_qconfig
    with pytest.raises(NotImplementedError, match="float16"):
        nnqd.LSTM.from_float(lstm)
    lstm, _ = float_twins("LSTM", 4, 6, proj_size=2)
    with pytest.raises(NotImplementedError, match="proj_size=2"):
        nnqd.LSTM.from_float(lstm)


def test_from_float_without_qconfig_value_uses_the_default():
    lstm, t_lstm = float_twins("LSTM", 4, 6)
    lstm.qconfig, t_lstm.qconfig = None, None
    q, tq = nnqd.LSTM.from_float(lstm), tnnqd.LSTM.from_float(t_lstm)
    assert_same_qweight(q.get_weight()["weight_ih_l0"], tq.get_weight()["weight_ih_l0"])


@pytest.mark.parametrize("shape,hidden", [
    ((5, 4), None),                       # unbatched input is not accepted
    ((5, 3, 5), None),                    # wrong feature size
    ((5, 3, 4), ((1, 2, 6), (1, 3, 6))),  # wrong h_0 batch
    ((5, 3, 4), ((1, 3, 6), (1, 3, 7))),  # wrong c_0 size
])
def test_forward_errors_match_torch(shape, hidden):
    q, tq = nnqd.LSTM(4, 6), tnnqd.LSTM(4, 6)
    x, tx = inputs(shape)
    hx = thx = None
    if hidden is not None:
        hx = tuple(toolkit.zeros(s) for s in hidden)
        thx = tuple(torch.zeros(s) for s in hidden)
    _raises_like_torch(lambda: q(x, hx), lambda: tq(tx, thx))


def test_float64_input_and_missing_bias_errors_match_torch():
    q, tq = nnqd.LSTM(4, 6), tnnqd.LSTM(4, 6)
    _raises_like_torch(lambda: q(toolkit.zeros(5, 3, 4, dtype=toolkit.float64)),
                       lambda: tq(torch.zeros(5, 3, 4, dtype=torch.float64)))
    _raises_like_torch(lambda: nnqd.LSTM(4, 6, bias=False)(toolkit.zeros(5, 3, 4)),
                       lambda: tnnqd.LSTM(4, 6, bias=False)(torch.zeros(5, 3, 4)))
    _raises_like_torch(lambda: nnqd.GRU(4, 6, dropout=1.5), lambda: tnnqd.GRU(4, 6, dropout=1.5))
    with pytest.raises(ValueError, match="Unrecognized RNN mode: RNN_TANH"):
        nnqd.RNNBase("RNN_TANH", 4, 6)
    assert math.isclose(nnqd.GRU(4, 6, num_layers=2, dropout=0.25).dropout, 0.25)
