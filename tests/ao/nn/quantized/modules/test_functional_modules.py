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


def test_float_functional_observes_matmul_but_not_the_scalar_ops():
    """As PyTorch's: ``matmul`` passes through the observer; ``add_scalar``/``mul_scalar`` do not, their quantized
    twins deriving the output parameters from the input's."""
    x, y = torch.randn(3, 4) * 2, torch.randn(4, 5)
    for lib, mod, args in ((toolkit, nnq, (tk(x), tk(y))), (torch, TQ, (x, y))):
        ff = mod.FloatFunctional()
        ff.activation_post_process = lib.ao.quantization.MinMaxObserver()
        ff.add_scalar(args[0], 100.0)
        ff.mul_scalar(args[0], -50.0)
        assert float(ff.activation_post_process.min_val) == float("inf")  # nothing observed yet
        np.testing.assert_allclose(ff.matmul(*args).numpy(), torch.matmul(x, y).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ff.activation_post_process.max_val.numpy(), torch.matmul(x, y).max().numpy(),
                                   rtol=1e-5)
    for name in ("add_scalar", "mul_scalar"):
        np.testing.assert_array_equal(getattr(nnq.FloatFunctional(), name)(tk(x), 2.5).numpy(),
                                      getattr(TQ.FloatFunctional(), name)(x, 2.5).numpy())


def test_qfunctional_scalar_ops_and_matmul_match_torch():
    """``add_scalar``/``mul_scalar`` (their own output parameters) and ``matmul`` (the module's) integer for
    integer: the float product under ``matmul`` sums in PyTorch's order or within an ulp of it, and no value here
    lies that close to a half."""
    observed, observed_theirs = _observed_functionals()
    ours, theirs = nnq.QFunctional.from_float(observed), TQ.QFunctional.from_float(observed_theirs)
    qa = torch.quantize_per_tensor(torch.randn(4, 6) * 2, 0.05, 120, torch.quint8)
    qb = torch.quantize_per_tensor(torch.randn(6, 3), 0.02, 130, torch.quint8)
    for b in (2.5, -1.0, 0.0, 100.0):
        assert_q_equal(ours.add_scalar(tk(qa), b), theirs.add_scalar(qa, b))
        assert_q_equal(ours.mul_scalar(tk(qa), b), theirs.mul_scalar(qa, b))
    assert_q_equal(ours.matmul(tk(qa), tk(qb)), theirs.matmul(qa, qb))
    per_channel = torch.quantize_per_channel(torch.randn(4, 6), torch.full((4,), 0.1, dtype=torch.double),
                                             torch.zeros(4, dtype=torch.long), 0, torch.quint8)
    with pytest.raises(RuntimeError, match="Only per tensor quantization is supported in Add"):
        ours.add_scalar(tk(per_channel), 1.0)
    with pytest.raises(RuntimeError, match="Only per-tensor quantization is supported in Matmul"):
        ours.matmul(tk(per_channel), tk(qb))
    with pytest.raises(RuntimeError, match="MatMul operands should have same data type"):
        ours.matmul(tk(qa), tk(torch.quantize_per_tensor(torch.randn(6, 3), 0.02, 0, torch.qint8)))


@pytest.mark.parametrize("name", ["FloatFunctional", "FXFloatFunctional", "QFunctional"])
def test_forward_refusal_names_the_module_as_torch_does(name):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.ao.nn.quantized, name)()(torch.ones(1))
    with pytest.raises(RuntimeError) as ours:
        getattr(nnq, name)()(toolkit.ones(1))
    assert str(ours.value) == str(theirs.value)
