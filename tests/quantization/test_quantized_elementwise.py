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


SCALARS = (2.5, -1.0, 0.0, 3, 1.25, 0.3, -7.77, 100.0, -100.0)  # 1.25 / 0.5 is a half: c_q rounds to even


@pytest.mark.parametrize("dtype,zp", [(torch.quint8, 128), (torch.quint8, 3), (torch.quint8, 250), (torch.qint8, 0),
                                      (torch.qint8, -120), (torch.qint32, 5)])
@pytest.mark.parametrize("name", ["add_scalar", "add_scalar_relu", "mul_scalar", "mul_scalar_relu"])
def test_scalar_ops_match_torch(dtype, zp, name):
    """The output scale and zero point follow from the input's (the scale widening where ``add_scalar`` would push
    the zero point out of range, ``mul_scalar`` mirroring the integers for a negative factor): all exact."""
    g = torch.Generator().manual_seed(zp)
    for scale in (0.05, 0.5, 0.013):
        q = torch.quantize_per_tensor(torch.randn(3, 70, generator=g) * 4, scale, zp, dtype)
        for b in SCALARS:
            _equal(R.get(f"quantized::{name}")(tk(q), b), getattr(torch.ops.quantized, name)(q, b))


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("shapes", [((17, 33), (33, 9)), ((2, 17, 33), (33, 9)), ((3, 1, 5, 8), (4, 8, 6)), ((8,), (8, 3))])
def test_matmul_matches_torch(dtype, shapes):
    """``quantize_per_tensor(dequantize(qa) @ dequantize(qb))``, PyTorch's x86 path. The float products sum in
    another order than PyTorch's BLAS and differ by an ulp in about a third of the elements; the integers agree
    exactly wherever the float products do, and elsewhere by at most one (a product within an ulp of a half: 1 in
    3600 here)."""
    zp = 120 if dtype == torch.quint8 else 2
    for seed in range(5):
        g = torch.Generator().manual_seed(seed)
        a = torch.quantize_per_tensor(torch.randn(*shapes[0], generator=g), 0.03, zp, dtype)
        b = torch.quantize_per_tensor(torch.randn(*shapes[1], generator=g), 0.04, zp - 1, dtype)
        same_floats = (toolkit.matmul(tk(a).dequantize(), tk(b).dequantize()).numpy()
                       == torch.matmul(a.dequantize(), b.dequantize()).numpy())
        for scale, out_zp in ((0.05, zp + 1), (0.2, zp)):
            ours = R.get("quantized::matmul")(tk(a), tk(b), scale, out_zp)
            theirs = torch.ops.quantized.matmul(a, b, scale, out_zp)
            assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).split(".")[1]
            assert (ours.q_scale(), ours.q_zero_point()) == (theirs.q_scale(), theirs.q_zero_point())
            diff = np.abs(ours.int_repr().numpy().astype(int) - theirs.int_repr().numpy().astype(int))
            assert not diff[same_floats].any() and diff.max(initial=0) <= 1


def test_scalar_and_matmul_errors():
    a, b = _pair(torch.quint8, (3, 3), 0)
    c, _ = _pair(torch.qint8, (3, 3), 0)
    pc = torch.quantize_per_channel(torch.randn(3, 3), torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0, 1, 2]), 0,
                                    torch.quint8)
    i32 = torch.quantize_per_tensor(torch.randn(3, 3), 0.1, 0, torch.qint32)
    for name, verb in (("add_scalar", "Add"), ("add_scalar_relu", "Add"), ("mul_scalar", "Mul"),
                       ("mul_scalar_relu", "Mul")):
        with pytest.raises(RuntimeError, match=f"Only per tensor quantization is supported in {verb}"):
            R.get(f"quantized::{name}")(tk(pc), 2.0)
        with pytest.raises(NotImplementedError, match=f"quantized::{name}' with arguments from the 'CPU'"):
            R.get(f"quantized::{name}")(toolkit.randn(3), 2.0)
    mm = R.get("quantized::matmul")
    cases = [((a, c), "should have same data type"), ((i32, i32), "should use QInt8 or QUInt8"),
             ((a, pc), "same quantization scheme"), ((pc, a), "Only per-tensor quantization is supported in Matmul"),
             ((a, torch.randn(3, 3)), "should have same data type"), ((torch.randn(3, 3), a), "QInt8 or QUInt8")]
    for (x, y), message in cases:
        for lib_x, lib_y, fn in ((x, y, torch.ops.quantized.matmul), (tk(x), tk(y), mm)):
            with pytest.raises(RuntimeError, match=message):
                fn(lib_x, lib_y, 0.1, 0)
    wide = torch.quantize_per_tensor(torch.randn(4, 2), 0.1, 3, torch.quint8)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x3 and 4x2\)"):
        mm(tk(a), tk(wide), 0.1, 0)
    with pytest.raises(NotImplementedError, match="quantized::matmul' with arguments from the 'CPU'"):
        mm(toolkit.randn(3, 3), toolkit.randn(3, 3), 0.1, 0)


def test_shape_errors_are_toolkit_errors_not_numpy_ones():
    """Shapes that do not broadcast or concatenate are refused as the float ops refuse them (numpy's ValueError and
    AxisError used to reach the caller)."""
    a, _ = _pair(torch.quint8, (2, 3), 0)
    b, _ = _pair(torch.quint8, (3, 2), 1)
    for name in ("add", "add_relu", "mul", "mul_relu"):
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            getattr(torch.ops.quantized, name)(a, b, 0.1, 0)
        with pytest.raises(RuntimeError, match=rf"quantized::{name}: shapes \(2, 3\) and \(3, 2\) cannot be broadcast"):
            R.get(f"quantized::{name}")(tk(a), tk(b), 0.1, 0)
    cat = R.get("quantized::cat")
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"):
        torch.ops.quantized.cat([a, a], 5, 0.1, 0)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"):
        cat([tk(a), tk(a)], 5, 0.1, 0)
    message = "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1"
    with pytest.raises(RuntimeError, match=message):
        torch.ops.quantized.cat([a, b], 0, 0.1, 0)
    with pytest.raises(RuntimeError, match=message):
        cat([tk(a), tk(b)], 0, 0.1, 0)
    _equal(cat([tk(a), tk(a)], -1, 0.1, 0), torch.ops.quantized.cat([a, a], -1, 0.1, 0))
