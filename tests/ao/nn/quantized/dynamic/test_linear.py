"""Dynamic quantized Linear against ``torch.ao.nn.quantized.dynamic.Linear``: ``from_float`` gives the same int8
weight and, for the same input, the same output (the activation quantized per call, 7-bit as PyTorch's x86
engine does); PyTorch's state dict keys, repr and errors."""

import pickle

import pytest
import torch

import toolkit
import toolkit.ao.nn.quantized.dynamic as nnqd
from tests.ao.nn.quantized.dynamic.test_rnn import _raises_like_torch
from tests.ao.nn.quantized.dynamic.twins import assert_same_qweight, float_twins, inputs
from tests.conftest import assert_close
from toolkit.ao.quantization import qconfig as tqconfig

pytestmark = pytest.mark.filterwarnings("ignore:.*quantize")
tnnqd = torch.ao.nn.quantized.dynamic


def _quantized(*args, seed: int = 0, **kwargs):
    ours, theirs = float_twins("Linear", *args, seed=seed, **kwargs)
    return nnqd.Linear.from_float(ours), tnnqd.Linear.from_float(theirs)


@pytest.mark.parametrize("shape", [(5, 8), (2, 3, 8), (0, 8)])
@pytest.mark.parametrize("bias", [True, False])
def test_forward_matches_torch(shape, bias):
    ours, theirs = _quantized(8, 6, bias=bias)
    x, tx = inputs(shape, scale=3.0)
    assert_close(ours(x), theirs(tx), accum=8)


def test_weight_bias_match_torch():
    ours, theirs = _quantized(8, 6, seed=2)
    assert ours.weight().dtype is toolkit.qint8
    assert_same_qweight(ours.weight(), theirs.weight())
    assert_close(ours.bias(), theirs.bias().detach())
    assert nnqd.Linear(8, 6, bias_=False).bias() is None


def test_per_channel_weight_matches_torch():
    ours, theirs = float_twins("Linear", 8, 6, seed=3)
    ours.qconfig = tqconfig.per_channel_dynamic_qconfig
    theirs.qconfig = torch.ao.quantization.per_channel_dynamic_qconfig
    q, tq = nnqd.Linear.from_float(ours), tnnqd.Linear.from_float(theirs)
    assert_same_qweight(q.weight(), tq.weight())
    x, tx = inputs((4, 8))
    assert_close(q(x), tq(tx), accum=8)
    assert repr(q) == repr(tq).replace("torch.", "toolkit.")


def test_state_dict_keys_and_round_trip():
    ours, theirs = _quantized(8, 6)
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict())
    assert sd["_packed_params.dtype"] is toolkit.qint8
    fresh = nnqd.Linear(8, 6)
    fresh.load_state_dict(pickle.loads(pickle.dumps(sd)))
    x, _ = inputs((4, 8))
    assert_close(fresh(x), ours(x), rtol=0, atol=0)
    assert_same_qweight(fresh.weight(), theirs.weight())


def test_repr_matches_torch():
    ours, theirs = _quantized(8, 6)
    assert repr(ours) == repr(theirs).replace("torch.", "toolkit.")
    assert repr(ours) == ("DynamicQuantizedLinear(in_features=8, out_features=6, dtype=toolkit.qint8, "
                          "qscheme=toolkit.per_tensor_affine)")


def test_from_float_errors_match_torch():
    conv, _ = float_twins("Conv2d", 1, 1, 1)
    with pytest.raises(AssertionError, match=r"nn.quantized.dynamic.Linear.from_float only works for one of\["):
        nnqd.Linear.from_float(conv)
    lin, t_lin = float_twins("Linear", 4, 3)
    del lin.qconfig, t_lin.qconfig
    _raises_like_torch(lambda: nnqd.Linear.from_float(lin), lambda: tnnqd.Linear.from_float(t_lin))
    lin.qconfig = tqconfig.QConfig(activation=None,
                                   weight=toolkit.ao.quantization.MinMaxObserver.with_args(dtype=toolkit.quint8))
    t_lin.qconfig = torch.ao.quantization.QConfig(
        activation=None, weight=torch.ao.quantization.MinMaxObserver.with_args(dtype=torch.quint8))
    _raises_like_torch(lambda: nnqd.Linear.from_float(lin), lambda: tnnqd.Linear.from_float(t_lin))
    lin.qconfig = tqconfig.float16_dynamic_qconfig
    with pytest.raises(NotImplementedError, match="float16"):
        nnqd.Linear.from_float(lin)
    _raises_like_torch(lambda: nnqd.Linear(4, 3, dtype=toolkit.quint8),
                       lambda: tnnqd.Linear(4, 3, dtype=torch.quint8))


@pytest.mark.parametrize("x_shape,dtype", [((2, 4), "float64"), ((4,), "float32"), ((2, 5), "float32")])
def test_forward_errors_match_torch(x_shape, dtype):
    q, tq = _quantized(4, 3)
    _raises_like_torch(lambda: q(toolkit.zeros(x_shape, dtype=getattr(toolkit, dtype))),
                       lambda: tq(torch.zeros(x_shape, dtype=getattr(torch, dtype))))


def test_half_float_weights_quantize_as_torch():
    ours, theirs = float_twins("Linear", 8, 6, seed=4)
    ours.half()
    theirs.half()
    assert_same_qweight(nnqd.Linear.from_float(ours).weight(), tnnqd.Linear.from_float(theirs).weight())


def test_from_float_takes_the_linear_of_a_fused_linear_relu():
    lin, t_lin = float_twins("Linear", 8, 6, seed=6)
    fused = toolkit.ao.nn.intrinsic.LinearReLU(lin, toolkit.nn.ReLU())
    t_fused = torch.ao.nn.intrinsic.LinearReLU(t_lin, torch.nn.ReLU())
    fused.qconfig, t_fused.qconfig = lin.qconfig, t_lin.qconfig
    q, tq = nnqd.Linear.from_float(fused), tnnqd.Linear.from_float(t_fused)
    assert_same_qweight(q.weight(), tq.weight())
    x, tx = inputs((3, 8))
    assert_close(q(x), tq(tx), accum=8)
