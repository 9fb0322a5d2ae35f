"""Quantized tensors against PyTorch: the stored integers bit for bit, dequantized values, prints and errors."""

import warnings

import numpy as np
import pytest
import torch

import toolkit

warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
QDTYPES = [("quint8", 0, 255), ("qint8", -128, 127), ("qint32", -1000, 1000)]


def _inputs(rng, n):
    """Random magnitudes over many decades, exact halves (ties), and the specials."""
    x = (rng.standard_normal(n) * 10 ** rng.uniform(-3, 5)).astype(np.float32)
    halves = (np.round(rng.standard_normal(n) * 40) * 0.5).astype(np.float32)
    return np.concatenate([x, halves, np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)])


@pytest.mark.parametrize("name,zlo,zhi", QDTYPES)
def test_quantize_per_tensor_int_repr_matches_torch(name, zlo, zhi):
    rng = np.random.default_rng(0)
    for _ in range(40):
        x = _inputs(rng, int(rng.integers(1, 70)))
        scale = float(rng.choice([0.5, 1.0, 2.0, 0.25])) if rng.random() < 0.4 else float(10 ** rng.uniform(-4, 2))
        zp = int(rng.integers(zlo, zhi + 1))
        q_t = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, getattr(torch, name))
        q = toolkit.quantize_per_tensor(toolkit.from_numpy(x), scale, zp, getattr(toolkit, name))
        np.testing.assert_array_equal(q.int_repr().numpy(), q_t.int_repr().numpy())
        assert q.int_repr().dtype is getattr(toolkit, q_t.int_repr().dtype.__repr__().split(".")[1])
        np.testing.assert_array_equal(q.dequantize().numpy(), q_t.dequantize().numpy())
        assert q.q_scale() == q_t.q_scale() and q.q_zero_point() == q_t.q_zero_point()


@pytest.mark.parametrize("name,zlo,zhi", QDTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_quantize_per_channel_each_axis(name, zlo, zhi, axis):
    rng = np.random.default_rng(axis)
    x = (rng.standard_normal((3, 4, 5)) * 30).astype(np.float32)
    x.reshape(-1)[:7] = np.round(x.reshape(-1)[:7]) + 0.5
    n = x.shape[axis]
    scales = 10 ** rng.uniform(-2, 1, n)
    zps = rng.integers(zlo, zhi + 1, n)
    q_t = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales), torch.from_numpy(zps), axis,
                                     getattr(torch, name))
    q = toolkit.quantize_per_channel(toolkit.from_numpy(x), toolkit.from_numpy(scales), toolkit.from_numpy(zps), axis,
                                     getattr(toolkit, name))
    np.testing.assert_array_equal(q.int_repr().numpy(), q_t.int_repr().numpy())
    np.testing.assert_array_equal(q.dequantize().numpy(), q_t.dequantize().numpy())
    np.testing.assert_array_equal(q.q_per_channel_scales().numpy(), q_t.q_per_channel_scales().numpy())
    np.testing.assert_array_equal(q.q_per_channel_zero_points().numpy(), q_t.q_per_channel_zero_points().numpy())
    assert q.q_per_channel_axis() == axis and q.qscheme() is toolkit.per_channel_affine


def _pair(values, scale=0.1, zp=10, dtype="quint8"):
    return (torch.quantize_per_tensor(torch.tensor(values), scale, zp, getattr(torch, dtype)),
            toolkit.quantize_per_tensor(toolkit.tensor(values), scale, zp, getattr(toolkit, dtype)))


def _same_repr(q, q_t):
    assert repr(q) == repr(q_t).replace("torch.", "toolkit.")


def test_prints_as_torch():
    vals = [[0.1, -0.25, 3.0], [1.05, -2.0, 0.35]]
    for args in [(0.1, 10, "quint8"), (0.05, -3, "qint8"), (0.01, 7, "qint32")]:
        _same_repr(*reversed(_pair(vals, *args)))
    _same_repr(*reversed(_pair(2.5, 1.0, 0)))
    _same_repr(*reversed(_pair((np.arange(3000.0) / 3).tolist(), 0.1, 0, "qint32")))
    x = [[0.1, -0.25, 3.0], [1.05, -2.0, 0.35]]
    q_t = torch.quantize_per_channel(torch.tensor(x), torch.tensor([0.1, 0.2]), torch.tensor([1, 2]), 0, torch.qint8)
    q = toolkit.quantize_per_channel(toolkit.tensor(x), toolkit.tensor([0.1, 0.2]), toolkit.tensor([1, 2]), 0,
                                     toolkit.qint8)
    _same_repr(q, q_t)
    q_t = torch.quantize_per_tensor(torch.tensor(x), torch.tensor(0.1), torch.tensor(10), torch.quint8)
    q = toolkit.quantize_per_tensor(toolkit.tensor(x), toolkit.tensor(0.1), toolkit.tensor(10), toolkit.quint8)
    _same_repr(q, q_t)
    assert repr(toolkit.per_tensor_affine) == "toolkit.per_tensor_affine"


def test_views_and_copies_keep_integers_and_parameters():
    q_t, q = _pair((np.arange(24.0).reshape(2, 3, 4) / 7 - 1).tolist())
    cases = [lambda a: a[0], lambda a: a[:, 1:], lambda a: a[1, :, ::2], lambda a: a.t() if a.dim() == 2 else
             a.transpose(0, 2), lambda a: a.permute(2, 0, 1), lambda a: a.view(6, 4), lambda a: a.reshape(-1),
             lambda a: a.permute(2, 0, 1).contiguous(), lambda a: a.clone(), lambda a: a.flatten(),
             lambda a: a.unsqueeze(0), lambda a: a.select(1, 2), lambda a: a.narrow(2, 1, 2),
             lambda a: a[[0, 1]]]
    for f in cases:
        r_t, r = f(q_t), f(q)
        assert r.shape == tuple(r_t.shape) and r.is_quantized and r.dtype is toolkit.quint8
        np.testing.assert_array_equal(r.int_repr().numpy(), r_t.int_repr().numpy())
        assert (r.q_scale(), r.q_zero_point()) == (r_t.q_scale(), r_t.q_zero_point())
    assert q.numel() == 24 and q.size() == (2, 3, 4)
    assert q.equal(q.clone()) and toolkit.equal(q, q) and not q.equal(_pair([0.0], 0.1, 11)[1])
    assert not q.equal(q.dequantize()) and q.stride() == tuple(q_t.stride())


def test_make_per_tensor_quantized_tensor():
    for np_dtype, name in [(np.uint8, "quint8"), (np.int8, "qint8"), (np.int32, "qint32")]:
        ints = np.array([1, 2, 7], dtype=np_dtype)
        q_t = torch._make_per_tensor_quantized_tensor(torch.from_numpy(ints), 0.5, 3)
        q = toolkit._make_per_tensor_quantized_tensor(toolkit.from_numpy(ints), 0.5, 3)
        assert q.dtype is getattr(toolkit, name)
        _same_repr(q, q_t)


def test_dtypes():
    for name, size in [("quint8", 1), ("qint8", 1), ("qint32", 4), ("quint4x2", 1)]:
        d, d_t = getattr(toolkit, name), getattr(torch, name)
        assert repr(d) == repr(d_t).replace("torch.", "toolkit.")
        assert d.itemsize == d_t.itemsize == size and d.is_floating_point is False and d.is_complex is False
        with pytest.raises(RuntimeError, match="isSignedType not supported for quantized types"):
            assert d.is_signed
    assert toolkit.promote_types(toolkit.qint8, toolkit.qint8) is toolkit.qint8
    with pytest.raises(RuntimeError, match="offending types: QUInt8 Float"):
        toolkit.promote_types(toolkit.quint8, toolkit.float32)


def _error(fn_t, fn):
    with pytest.raises(Exception) as e_t:
        fn_t()
    with pytest.raises(type(e_t.value)) as e:
        fn()
    return str(e_t.value).splitlines()[0], str(e.value).splitlines()[0]


@pytest.mark.parametrize("call", [lambda lib, q: q + q, lambda lib, q: q.sum(), lambda lib, q: lib.exp(q),
                                  lambda lib, q: q.mm(q.t())])
def test_refused_ops_name_the_op_and_backend(call):
    q_t, q = _pair([[1.0, 2.0], [3.0, 4.0]])
    first_t, first = _error(lambda: call(torch, q_t), lambda: call(toolkit, q))
    head = "with arguments from the 'QuantizedCPU' backend"
    assert head in first_t and head in first and first.startswith("Could not run 'aten::")


@pytest.mark.parametrize("f", [
    lambda lib, x: lib.quantize_per_tensor(x.double(), 0.1, 1, lib.quint8),
    lambda lib, x: lib.quantize_per_tensor(x, 0.1, 300, lib.quint8),
    lambda lib, x: lib.quantize_per_tensor(x, 0.1, -1, lib.quint8),
    lambda lib, x: lib.quantize_per_tensor(x, 0.1, 1, lib.float32),
    lambda lib, x: lib.quantize_per_channel(x, lib.tensor([0.1]), lib.tensor([1]), 2, lib.quint8),
    lambda lib, x: lib.quantize_per_channel(x, lib.tensor([0.1]), lib.tensor([1]), 1, lib.quint8),
    lambda lib, x: lib.quantize_per_channel(x, lib.tensor([0.1, 1]), lib.tensor([1, 300]), 1, lib.quint8),
    lambda lib, x: x.int_repr(),
    lambda lib, x: lib._make_per_tensor_quantized_tensor(x, 0.1, 1),
])
def test_errors_as_torch(f):
    x_t, x = torch.tensor([[1.0, 2.0]]), toolkit.tensor([[1.0, 2.0]])
    first_t, first = _error(lambda: f(torch, x_t), lambda: f(toolkit, x))
    assert first_t.replace("torch.", "toolkit.").startswith(first)


@pytest.mark.parametrize("f", [lambda q: q.q_per_channel_scales(), lambda q: q.numpy(), lambda q: q.float(),
                               lambda q: q.requires_grad_()])
def test_quantized_tensor_refusals_as_torch(f):
    q_t, q = _pair([1.0])
    first_t, first = _error(lambda: f(q_t), lambda: f(q))
    assert first.split(",")[0] == first_t.split(",")[0].replace("torch.", "toolkit.")


@pytest.mark.parametrize("dtype, scale, zero_point", [("qint8", 0.08, 90), ("quint8", 0.037, 128),
                                                       ("qint32", 0.0013, -7)])
def test_values_near_a_half_round_as_torch_per_tensor_and_per_channel(dtype, scale, zero_point):
    """Per tensor, PyTorch rounds fma(x, 1/scale, zero_point) once to float32; per channel it adds in float32,
    rounding twice. Values a hair from a half step land on different integers in the two, about 1 in 25."""
    rng = np.random.default_rng(3)
    k = rng.integers(-100, 100, 20000)
    x = ((k + 0.5) * scale + rng.normal(0, scale * 1e-5, k.size)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.quantize_per_tensor(torch.tensor(x), scale, zero_point, getattr(torch, dtype))
        theirs_c = torch.quantize_per_channel(torch.tensor(x).reshape(-1, 1), torch.tensor([scale], dtype=torch.float64),
                                              torch.tensor([zero_point]), 1, getattr(torch, dtype))
    mine = toolkit.quantize_per_tensor(toolkit.tensor(x), scale, zero_point, getattr(toolkit, dtype))
    mine_c = toolkit.quantize_per_channel(toolkit.tensor(x).reshape(-1, 1),
                                          toolkit.tensor([scale], dtype=toolkit.float64),
                                          toolkit.tensor([zero_point]), 1, getattr(toolkit, dtype))
    np.testing.assert_array_equal(mine.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(mine_c.int_repr().numpy(), theirs_c.int_repr().numpy())
