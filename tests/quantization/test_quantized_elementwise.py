"""``quantized::add``/``add_relu``/``mul``/``mul_relu``/``cat``/``cat_relu``/``relu6`` and the quantized kernels of
``relu``, ``relu_``, ``hardtanh`` and ``relu6`` against PyTorch, integer for integer.

PyTorch's ``quantized::add`` dequantizes in its vectorized form (``fma(scale, q, -zero_point * scale)``) except for
the last elements that do not fill a vector (64 on AVX-512), which take ``(q - zero_point) * scale``: toolkit uses
the vectorized form throughout, so there a value near a half may round the other way (checked to differ by at most
one, and only in that tail)."""

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import registry as R

from .torch_twins import tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")
TAIL = 64


def _pair(dtype, shape, seed):
    g = torch.Generator().manual_seed(seed)
    za, zb = (100, 130) if dtype == torch.quint8 else (3, -5)
    a = torch.quantize_per_tensor(torch.randn(*shape, generator=g) * 3, 0.05, za, dtype)
    b = torch.quantize_per_tensor(torch.randn(*shape, generator=g) * 2, 0.037, zb, dtype)
    return a, b


def _equal(ours, theirs, tail: int = 0):
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    a, b = ours.int_repr().numpy().reshape(-1).astype(int), theirs.int_repr().numpy().reshape(-1).astype(int)
    body = a.size - a.size % tail if tail else a.size
    np.testing.assert_array_equal(a[:body], b[:body])
    assert np.abs(a[body:] - b[body:]).max(initial=0) <= 1


SHAPES = [(1000,), (3, 5, 7, 11), (4, 64)]


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["add", "add_relu", "mul", "mul_relu"])
def test_binary_ops_match_torch(dtype, shape, name):
    for seed in range(5):
        a, b = _pair(dtype, shape, seed)
        zp = 120 if dtype == torch.quint8 else 0
        for scale in (0.11, 0.02):
            ours = R.get(f"quantized::{name}")(tk(a), tk(b), scale, zp)
            _equal(ours, getattr(torch.ops.quantized, name)(a, b, scale, zp), TAIL if "add" in name else 0)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("name", ["cat", "cat_relu"])
def test_cat_matches_torch(dtype, name):
    for seed, shape in enumerate(SHAPES * 3):
        a, b = _pair(dtype, shape, seed)
        for dim, scale, zp in ((0, 0.08, 90 if dtype == torch.quint8 else 10), (-1, None, None)):
            ours = R.get(f"quantized::{name}")([tk(a), tk(b)], dim, scale, zp)
            _equal(ours, getattr(torch.ops.quantized, name)([a, b], dim, scale, zp))


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_activations_on_quantized_tensors_match_torch(dtype):
    F, TF = toolkit.nn.functional, torch.nn.functional
    for seed, shape in enumerate(SHAPES):
        a, _ = _pair(dtype, shape, seed)
        _equal(toolkit.relu(tk(a)), torch.relu(a))
        _equal(F.relu(tk(a)), TF.relu(a))
        _equal(F.hardtanh(tk(a), -0.7, 1.3), TF.hardtanh(a, -0.7, 1.3))
        _equal(F.relu6(tk(a)), TF.relu6(a))
        _equal(R.get("quantized::relu6")(tk(a)), torch.ops.quantized.relu6(a))


def test_relu_in_place_writes_the_integers_and_views_see_them():
    a, _ = _pair(torch.quint8, (4, 6), 0)
    t = tk(a)
    row = t[1]
    assert toolkit.relu_(t) is t
    _equal(t, torch.relu(a))
    np.testing.assert_array_equal(row.int_repr().numpy(), torch.relu(a)[1].int_repr().numpy())
    q = R.get("quantized::relu6")(t, True)
    assert q is t
    _equal(t, torch.ops.quantized.relu6(torch.relu(a)))


def test_errors():
    a, b = _pair(torch.quint8, (3,), 0)
    c, _ = _pair(torch.qint8, (3,), 0)
    with pytest.raises(NotImplementedError, match="quantized::add' with arguments from the 'CPU'"):
        R.get("quantized::add")(toolkit.randn(3), toolkit.randn(3), 0.1, 0)
    with pytest.raises(RuntimeError, match="quantized::mul operands should have same data type"):
        R.get("quantized::mul")(tk(a), tk(c), 0.1, 0)
    with pytest.raises(NotImplementedError, match="'aten::sigmoid' with arguments from the 'QuantizedCPU'"):
        toolkit.sigmoid(tk(a))
