"""``FloatFunctional``, ``FXFloatFunctional``, ``QFunctional``, ``Quantize``, ``DeQuantize`` and ``ReLU6`` against
``torch.ao.nn.quantized``'s."""

import numpy as np
import pytest
import torch

import toolkit
import toolkit.ao.nn.quantized as nnq

from .twins import assert_q_equal, state_dict_to_toolkit, tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")
TQ = torch.ao.nn.quantized


def _observed_functionals():
    """A FloatFunctional in each library whose MinMax observer saw PyTorch's ``a + b``."""
    a, b = torch.randn(4, 6) * 2, torch.randn(4, 6)
    pair = []
    for lib, mod in ((toolkit, nnq), (torch, TQ)):
        Q = lib.ao.quantization
        ff = mod.FloatFunctional()
        ff.activation_post_process = Q.MinMaxObserver()
        ff.add(*((tk(a), tk(b)) if lib is toolkit else (a, b)))
        pair.append(ff)
    return pair


def test_float_functional_runs_float_ops_through_its_observer():
    ours, theirs = _observed_functionals()
    np.testing.assert_array_equal(ours.activation_post_process.min_val.numpy(),
                                  theirs.activation_post_process.min_val.numpy())
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    for name in ("add", "mul", "add_relu"):
        np.testing.assert_allclose(getattr(nnq.FXFloatFunctional(), name)(tk(x), tk(y)).numpy(),
                                   getattr(TQ.FXFloatFunctional(), name)(x, y).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(nnq.FloatFunctional().cat([tk(x), tk(y)], 1).numpy(),
                                  TQ.FloatFunctional().cat([x, y], 1).numpy())
    with pytest.raises(RuntimeError, match="not intended to use the 'forward'"):
        nnq.FloatFunctional()(tk(x))


def test_qfunctional_from_float_matches_torch():
    observed, observed_theirs = _observed_functionals()
    ours, theirs = nnq.QFunctional.from_float(observed), TQ.QFunctional.from_float(observed_theirs)
    assert (ours.scale, ours.zero_point) == (theirs.scale, theirs.zero_point)
    assert repr(ours) == repr(theirs)
    qa = torch.quantize_per_tensor(torch.randn(4, 6) * 2, 0.05, 120, torch.quint8)
    qb = torch.quantize_per_tensor(torch.randn(4, 6), 0.02, 130, torch.quint8)
    for name in ("add", "add_relu", "mul"):
        assert_q_equal(getattr(ours, name)(tk(qa), tk(qb)), getattr(theirs, name)(qa, qb))
    assert_q_equal(ours.cat([tk(qa), tk(qb)], dim=1), theirs.cat([qa, qb], dim=1))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["scale", "zero_point"]
    fresh = nnq.QFunctional()
    fresh.load_state_dict(state_dict_to_toolkit(theirs.state_dict()))
    assert (fresh.scale, fresh.zero_point) == (theirs.scale, theirs.zero_point)
    with pytest.raises(AssertionError, match="expects an instance of FloatFunctional"):
        nnq.QFunctional.from_float(nnq.FXFloatFunctional())


def test_quantize_and_dequantize_match_torch():
    x = torch.randn(3, 5) * 3
    for lib_dtype in ("quint8", "qint8"):
        ours = nnq.Quantize(0.05, 7, getattr(toolkit, lib_dtype))
        theirs = TQ.Quantize(0.05, 7, getattr(torch, lib_dtype))
        assert_q_equal(ours(tk(x)), theirs(x))
        assert repr(ours).replace("toolkit.", "torch.") == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["scale", "zero_point"]
        np.testing.assert_array_equal(nnq.DeQuantize()(ours(tk(x))).numpy(), TQ.DeQuantize()(theirs(x)).numpy())


def test_quantize_from_float_reads_the_observer():
    x = torch.randn(4, 4)
    stubs = []
    for lib in (toolkit, torch):
        stub = lib.ao.quantization.QuantStub()
        stub.activation_post_process = lib.ao.quantization.MinMaxObserver()
        stub.activation_post_process(tk(x) if lib is toolkit else x)
        stubs.append(stub)
    ours, theirs = nnq.Quantize.from_float(stubs[0]), TQ.Quantize.from_float(stubs[1])
    assert_q_equal(ours(tk(x)), theirs(x))
    assert isinstance(nnq.DeQuantize.from_float(None), nnq.DeQuantize)


@pytest.mark.parametrize("inplace", [False, True])
def test_relu6_matches_torch(inplace):
    q = torch.quantize_per_tensor(torch.randn(50) * 8, 0.1, 30, torch.quint8)
    ours, theirs = nnq.ReLU6.from_float(toolkit.nn.ReLU6(inplace)), TQ.ReLU6.from_float(torch.nn.ReLU6(inplace))
    assert ours.inplace is inplace and repr(ours) == repr(theirs)
    assert_q_equal(ours(tk(q)), theirs(q.clone()))
