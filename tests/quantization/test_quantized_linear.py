"""``quantized::linear_prepack``/``linear``/``linear_relu``/``linear_dynamic`` against PyTorch's x86 engine:
static outputs integer for integer (the requantization is fbgemm's, in float32), dynamic ones to float
rounding, and the errors."""

import copy
import pickle

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import registry as R

from ..conftest import assert_close
from .torch_twins import qinput, qweight, tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")

prepack = R.get("quantized::linear_prepack")
unpack = R.get("quantized::linear_unpack")


def _pair(w, b):
    return torch.ops.quantized.linear_prepack(w, b), prepack(tk(w), None if b is None else tk(b))


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("w_zp", [0, 3])
def test_static_linear_int_repr_equals_torch(per_channel, bias, relu, w_zp):
    name = "linear_relu" if relu else "linear"
    for seed, (m, k, n) in enumerate([(5, 37, 7), (16, 64, 33), (1, 8, 1), (3, 1000, 9)]):
        w = qweight(n, k, per_channel, w_zp, seed)
        b = torch.randn(n, generator=torch.Generator().manual_seed(seed)) if bias else None
        p, tp = _pair(w, b)
        for x in (qinput(m, k, seed=seed), qinput(2, m, k, scale=0.013, zero_point=3, seed=seed)):
            for y_scale, y_zp in ((0.4, 70), (0.02, 0), (1.7, 255)):
                y = getattr(torch.ops.quantized, name)(x, p, y_scale, y_zp)
                ty = R.get(f"quantized::{name}")(tk(x), tp, y_scale, y_zp)
                assert ty.dtype is toolkit.quint8 and tuple(ty.shape) == tuple(y.shape)
                np.testing.assert_array_equal(ty.int_repr().numpy(), y.int_repr().numpy())
                assert ty.q_scale() == y.q_scale() and ty.q_zero_point() == y.q_zero_point()


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("reduce_range", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_dynamic_linear_matches_torch(per_channel, bias, reduce_range, relu):
    name = "linear_relu_dynamic" if relu else "linear_dynamic"
    g = torch.Generator().manual_seed(7)
    for seed, (shape, n) in enumerate([((5, 37), 7), ((3, 4, 64), 33), ((1, 8), 1), ((2, 0, 16), 4),
                                       ((6, 16), 5)]):
        k = shape[-1]
        w = qweight(n, k, per_channel, 0, seed)
        b = torch.randn(n, generator=g) if bias else None
        p, tp = _pair(w, b)
        for x in (torch.randn(*shape, generator=g) * 3, torch.rand(*shape, generator=g) + 1,
                  -torch.rand(*shape, generator=g), torch.zeros(*shape)):
            y = getattr(torch.ops.quantized, name)(x, p, reduce_range)
            ty = R.get(f"quantized::{name}")(tk(x), tp, reduce_range)
            assert_close(ty, y, accum=k)


def test_dynamic_reduce_range_changes_the_activation_grid():
    w = qweight(4, 32, False)
    p, tp = _pair(w, None)
    x = torch.randn(3, 32)
    full, reduced = (R.get("quantized::linear_dynamic")(tk(x), tp, rr).numpy() for rr in (False, True))
    assert not np.array_equal(full, reduced)
    np.testing.assert_allclose(reduced, torch.ops.quantized.linear_dynamic(x, p, True).numpy(), rtol=1e-5, atol=1e-5)


def test_unpack_returns_weight_and_bias():
    w = qweight(3, 4, True)
    b = torch.randn(3)
    _, tp = _pair(w, b)
    tw, tb = unpack(tp)
    np.testing.assert_array_equal(tw.int_repr().numpy(), w.int_repr().numpy())
    assert tw.qscheme() is toolkit.per_channel_affine
    np.testing.assert_array_equal(tb.numpy(), b.numpy())
    assert unpack(_pair(w, None)[1])[1] is None


def test_packed_params_copy_and_pickle_pack_again():
    w, b = qweight(5, 9, False), torch.randn(5)
    p, tp = _pair(w, b)
    x = qinput(4, 9)
    expected = torch.ops.quantized.linear(x, p, 0.3, 60).int_repr().numpy()
    for clone in (copy.deepcopy(tp), pickle.loads(pickle.dumps(tp))):
        np.testing.assert_array_equal(R.get("quantized::linear")(tk(x), clone, 0.3, 60).int_repr().numpy(), expected)


def test_qualified_names():
    assert R.get("quantized::linear").qualified_name == "quantized::linear"
    assert R.get("linear").qualified_name == "aten::linear"


def _raises(exc, match, fn, *args):
    with pytest.raises(exc, match=match):
        fn(*args)


def test_errors_name_the_op_or_say_what_torch_says():
    w = qweight(3, 4, False)
    _, tp = _pair(w, None)
    lin, dyn = R.get("quantized::linear"), R.get("quantized::linear_dynamic")
    _raises(NotImplementedError, "quantized::linear' with arguments from the 'CPU'", lin, toolkit.randn(2, 4), tp,
            0.1, 0)
    _raises(RuntimeError, "Expected input data type QUInt8 but got QInt8", lin,
            toolkit.quantize_per_tensor(toolkit.randn(2, 4), 0.1, 0, toolkit.qint8), tp, 0.1, 0)
    _raises(RuntimeError, "packB should be equal to K: 5", lin, tk(qinput(2, 5)), tp, 0.1, 0)
    _raises(RuntimeError, "larger than or equal to 2", lin, tk(qinput(4)), tp, 0.1, 0)
    _raises(RuntimeError, "packB should be equal to K: 5", dyn, toolkit.randn(2, 5), tp)
    _raises(RuntimeError, "expected scalar type Float but found Double", dyn, toolkit.randn(2, 4).double(), tp)
    _raises(NotImplementedError, "quantized::linear_dynamic' with arguments from the 'QuantizedCPU'", dyn,
            tk(qinput(2, 4)), tp)
    _raises(TypeError, "quantized::linear_dynamic", dyn, toolkit.randn(2, 4), "not packed")
    _raises(RuntimeError, "expected scalar type QInt8 but found QUInt8", prepack, tk(qinput(3, 4)), None)
    _raises(NotImplementedError, "quantized::linear_prepack' with arguments from the 'CPU'", prepack,
            toolkit.randn(3, 4), None)
    _raises(RuntimeError, "should be 2-dimensional", prepack,
            toolkit.quantize_per_tensor(toolkit.randn(3, 4, 2), 0.1, 0, toolkit.qint8), None)
    _raises(RuntimeError, "bias should have N elements: 3", prepack, tk(w), toolkit.randn(5))


def test_dynamic_linear_infinite_and_nan_inputs_as_torch():
    """An infinite activation makes fbgemm's scale infinite and its zero point C++'s cast of NaN; a NaN makes
    ``ChooseQuantizationParams`` refuse its range. Both used to end in Python's 'cannot convert float NaN'."""
    w = qweight(4, 3, False, 0, 0)
    p, tp = _pair(w, torch.zeros(4))
    dyn = R.get("quantized::linear_dynamic")
    inf = float("inf")
    for rows in ([[inf, 1.0, 2.0]], [[inf, -inf, 2.0]], [[inf, inf, inf]], [[1.0, 2.0, 3.0], [inf, 0.0, 1.0]]):
        x = torch.tensor(rows)
        np.testing.assert_array_equal(dyn(tk(x), tp).numpy(), torch.ops.quantized.linear_dynamic(x, p).numpy())
    with pytest.raises(RuntimeError, match="In ChooseQuantizationParams, min should be less than or equal to max"):
        torch.ops.quantized.linear_dynamic(torch.tensor([[float("nan"), 1.0, 2.0]]), p)
    _raises(RuntimeError, "In ChooseQuantizationParams, min should be less than or equal to max", dyn,
            toolkit.tensor([[float("nan"), 1.0, 2.0]]), tp)


def test_prepack_bias_checks_and_dtype_as_torch():
    """A 2-d bias is named as not a vector; a float64 bias is kept by prepack (unpack gives it back as float64)
    and refused when the product runs, as fbgemm's linear refuses it."""
    w = qweight(3, 4, False)
    _raises(RuntimeError, "bias should be a vector", prepack, tk(w), toolkit.zeros(3, 1))
    with pytest.raises(RuntimeError, match="bias should be a vector"):
        torch.ops.quantized.linear_prepack(w, torch.zeros(3, 1))
    b = torch.randn(3, dtype=torch.float64)
    p, tp = _pair(w, b)
    assert unpack(tp)[1].dtype is toolkit.float64
    assert torch.ops.quantized.linear_unpack(p)[1].dtype is torch.float64
    for name, x in (("linear", qinput(2, 4)), ("linear_dynamic", torch.randn(2, 4))):
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            getattr(torch.ops.quantized, name)(x, p, *((0.1, 0) if name == "linear" else ()))
        _raises(RuntimeError, "expected scalar type Float but found Double", R.get(f"quantized::{name}"), tk(x), tp,
                *((0.1, 0) if name == "linear" else ()))


def test_no_input_features_gives_the_bias():
    """K = 0 (PyTorch's result there is uninitialized memory): the product is empty, so the output is the bias,
    and the static output its quantized value. The reshape of the rows used to fail on numpy's -1 with K = 0."""
    b = toolkit.tensor([0.5, -1.0, 2.0])
    tp = prepack(toolkit.quantize_per_tensor(toolkit.ones(3, 0), 0.05, 0, toolkit.qint8), b)
    y = R.get("quantized::linear_dynamic")(toolkit.ones(2, 0), tp)
    np.testing.assert_array_equal(y.numpy(), np.tile(b.numpy(), (2, 1)))
    x = toolkit.quantize_per_tensor(toolkit.ones(2, 0), 0.1, 3, toolkit.quint8)
    q = R.get("quantized::linear")(x, tp, 0.5, 5)
    np.testing.assert_array_equal(q.int_repr().numpy(), [[6, 3, 9], [6, 3, 9]])
