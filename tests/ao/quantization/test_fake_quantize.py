"""Fake quantization ops and the ``FakeQuantize`` module against PyTorch: bit-equal forwards (ties and values
outside the range included), the straight-through gradient, gradcheck, and PyTorch's argument errors."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq


def _values(seed: int, shape, dtype=np.float32) -> np.ndarray:
    """Random values, a fifth of them exact ties of a 0.1 grid, some far outside the 8-bit range."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-30, 30, shape)
    flat = x.reshape(-1)
    flat[::5] = np.round(flat[::5] * 10) / 10 + 0.05
    return x.astype(dtype)


def _both(a: np.ndarray, requires_grad: bool = False):
    return (toolkit.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad))


def _bits_equal(actual, expected) -> None:
    assert actual.dtype is getattr(toolkit, str(expected.dtype).split(".")[1])
    np.testing.assert_array_equal(actual.detach().numpy().view(np.uint8),
                                  expected.detach().numpy().view(np.uint8))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("qparams", [(0.1, 0, -128, 127), (0.05, 10, 0, 255), (0.37, 3, 0, 15), (1e-3, 0, -5, 5)])
def test_per_tensor_bit_equal(seed, dtype, qparams):
    a, b = _both(_values(seed, (6, 7), dtype))
    _bits_equal(toolkit.fake_quantize_per_tensor_affine(a, *qparams), torch.fake_quantize_per_tensor_affine(b, *qparams))
    out, mask = toolkit.ops.api.fake_quantize_per_tensor_affine_cachemask(a, *qparams)
    t_out, t_mask = torch.ops.aten.fake_quantize_per_tensor_affine_cachemask(b, *qparams)
    _bits_equal(out, t_out)
    assert_close(mask, t_mask)


def test_per_tensor_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.05, 0.15, -0.25, 12.7, 12.8, -12.85], np.float32)
    a, b = _both(x)
    _bits_equal(toolkit.fake_quantize_per_tensor_affine(a, 0.1, 0, -128, 127),
                torch.fake_quantize_per_tensor_affine(b, 0.1, 0, -128, 127))


@pytest.mark.parametrize("seed", range(3))
def test_per_tensor_tensor_qparams(seed):
    a, b = _both(_values(seed, (5, 4)))
    for scale, zp in [(0.2, 3), (0.05, -7)]:
        args = (np.array([scale], np.float32), np.array([zp], np.int32))
        got = toolkit.fake_quantize_per_tensor_affine(a, *map(toolkit.tensor, args), -128, 127)
        want = torch.fake_quantize_per_tensor_affine(b, *map(torch.tensor, args), -128, 127)
        _bits_equal(got, want)
    got = toolkit.ops.api._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
        a, toolkit.tensor([0.2]), toolkit.tensor([1]), toolkit.tensor([0]), 0, 255)
    want = torch._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
        b, torch.tensor([0.2]), torch.tensor([1]), torch.tensor([0]), 0, 255)
    _bits_equal(got[0], want[0])
    assert_close(got[1], want[1])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("zp_dtype", [np.int32, np.float32])
@pytest.mark.parametrize("shape,axis", [((4, 5), 0), ((3, 4, 5), 1), ((2, 3, 6), 2)])
def test_per_channel_bit_equal(seed, dtype, zp_dtype, shape, axis):
    rng = np.random.default_rng(100 + seed)
    n = shape[axis]
    scale = rng.uniform(0.01, 0.5, n).astype(np.float32)
    zp = rng.integers(-20, 20, n).astype(zp_dtype)
    if zp_dtype == np.float32:
        zp = zp + rng.uniform(-0.5, 0.5, n).astype(np.float32)
    x = _values(seed, shape, dtype)
    a, b = _both(x)
    got = toolkit.fake_quantize_per_channel_affine(a, toolkit.tensor(scale), toolkit.tensor(zp), axis, -128, 127)
    want = torch.fake_quantize_per_channel_affine(b, torch.tensor(scale), torch.tensor(zp), axis, -128, 127)
    _bits_equal(got, want)
    got_mask = toolkit.ops.api.fake_quantize_per_channel_affine_cachemask(
        a, toolkit.tensor(scale), toolkit.tensor(zp), axis, -128, 127)[1]
    want_mask = torch.ops.aten.fake_quantize_per_channel_affine_cachemask(
        b, torch.tensor(scale), torch.tensor(zp), axis, -128, 127)[1]
    assert_close(got_mask, want_mask)


def test_per_channel_ties_round_half_to_even():
    x = np.array([[0.5, -0.5, 1.5, -1.5, 2.5, -2.5]], np.float32)
    a, b = _both(x)
    args = (np.array([1.0], np.float32), np.array([0], np.int32), 0, -128, 127)
    got = toolkit.fake_quantize_per_channel_affine(a, toolkit.tensor(args[0]), toolkit.tensor(args[1]), *args[2:])
    want = torch.fake_quantize_per_channel_affine(b, torch.tensor(args[0]), torch.tensor(args[1]), *args[2:])
    _bits_equal(got, want)
    assert got.tolist() == [[0.0, -0.0, 2.0, -2.0, 2.0, -2.0]]


@pytest.mark.parametrize("seed", range(3))
def test_gradients_match_torch(seed):
    x = _values(seed, (4, 6))
    a, b = _both(x, requires_grad=True)
    g = np.random.default_rng(seed).standard_normal((4, 6)).astype(np.float32)
    toolkit.fake_quantize_per_tensor_affine(a, 0.1, 2, -100, 100).backward(toolkit.tensor(g))
    torch.fake_quantize_per_tensor_affine(b, 0.1, 2, -100, 100).backward(torch.tensor(g))
    assert_close(a.grad, b.grad)
    a.grad = None
    b.grad = None
    scale, zp = np.full(6, 0.2, np.float32), np.arange(6, dtype=np.int32)
    toolkit.fake_quantize_per_channel_affine(a, toolkit.tensor(scale), toolkit.tensor(zp), 1, -50, 50).backward(
        toolkit.tensor(g))
    torch.fake_quantize_per_channel_affine(b, torch.tensor(scale), torch.tensor(zp), 1, -50, 50).backward(
        torch.tensor(g))
    assert_close(a.grad, b.grad)
    assert 0 < int((a.grad == 0).sum()) < a.numel()


def test_grad_fn_names():
    a = toolkit.ones(3, requires_grad=True)
    assert type(toolkit.fake_quantize_per_tensor_affine(a, 0.1, 0, 0, 255).grad_fn).__name__ == \
        "FakeQuantizePerTensorAffineCachemaskBackward0"


def test_double_gradients_and_double_backward():
    # the straight-through gradient is not the derivative of the step function, so gradcheck's finite
    # differences do not apply (torch's gradcheck fails on it too): compare with torch in float64 instead
    x = _values(7, (3, 5), np.float64) / 10
    a, b = _both(x, requires_grad=True)
    ga, = toolkit.autograd.grad(toolkit.fake_quantize_per_tensor_affine(a, 0.1, 0, -10, 10).sum(), a,
                                create_graph=True)
    gb, = torch.autograd.grad(torch.fake_quantize_per_tensor_affine(b, 0.1, 0, -10, 10).sum(), b,
                              create_graph=True)
    assert_close(ga, gb)
    assert ga.dtype is toolkit.float64


def _same_error(fn):
    """Run ``fn(module)`` with toolkit and torch; both raise the same type and message."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(toolkit)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("case", [
    lambda m: m.fake_quantize_per_tensor_affine(m.ones(3), 0.1, 0, 5, 3),
    lambda m: m.fake_quantize_per_tensor_affine(m.ones(3), 0.1, 10, 0, 3),
    lambda m: m.fake_quantize_per_tensor_affine(m.ones(3, dtype=m.int64), 0.1, 0, 0, 3),
    lambda m: m.fake_quantize_per_tensor_affine(m.ones(3), m.tensor([0.1, 0.2]), m.tensor(0), 0, 3),
    lambda m: m.fake_quantize_per_tensor_affine(m.ones(3), m.tensor(0.1, requires_grad=True), m.tensor(0), 0, 3),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3, dtype=m.float64),
                                                 m.zeros(3, dtype=m.int32), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3), m.zeros(3, dtype=m.int64), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(1, 3), m.zeros(3, dtype=m.int32), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3), m.zeros(2, dtype=m.int32), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3), m.zeros(3, dtype=m.int32), 0, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3), m.zeros(3, dtype=m.int32), 5, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3), m.zeros(3, dtype=m.int32), -1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3), m.zeros(3, dtype=m.int32) + 300, 1, 0,
                                                 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3), m.zeros(3, dtype=m.int32), 1, 3, 2),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3, dtype=m.int64), m.ones(3), m.zeros(3, dtype=m.int32),
                                                 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(m.ones(2, 3), m.ones(3, requires_grad=True),
                                                 m.zeros(3, dtype=m.int32), 1, 0, 255),
])
def test_errors_match_torch(case):
    _same_error(case)


# ----------------------------------------------------------------------------- the FakeQuantize module
def _fake_quant_pair(**kwargs):
    return tq.FakeQuantize(**kwargs), torch.ao.quantization.FakeQuantize(**kwargs)


def _translate(kwargs: dict, m) -> dict:
    """Keyword arguments naming toolkit's observers, dtypes and schemes, rewritten for module ``m``."""
    ns = tq if m is toolkit else torch.ao.quantization
    out = {}
    for k, v in kwargs.items():
        if k == "observer":
            v = getattr(ns, v)
        elif k in ("dtype", "qscheme"):
            v = getattr(ns, v) if m is toolkit else getattr(torch, v)
        out[k] = v
    return out


@pytest.mark.filterwarnings("ignore:Please use quant_min")
@pytest.mark.parametrize("kwargs", [
    {},
    {"observer": "MovingAverageMinMaxObserver", "quant_min": -128, "quant_max": 127, "dtype": "qint8",
     "qscheme": "per_tensor_symmetric"},
    {"observer": "MinMaxObserver", "quant_min": 0, "quant_max": 15},
    {"observer": "PerChannelMinMaxObserver", "quant_min": -128, "quant_max": 127, "dtype": "qint8",
     "qscheme": "per_channel_symmetric", "ch_axis": 1},
    {"observer": "PerChannelMinMaxObserver", "quant_min": 0, "quant_max": 255, "ch_axis": 0},
])
def test_fake_quantize_module_matches_torch(kwargs):
    ours = tq.FakeQuantize(**_translate(kwargs, toolkit))
    theirs = torch.ao.quantization.FakeQuantize(**_translate(kwargs, torch))
    for step in range(4):
        x = _values(step, (5, 6)) / 10
        a, b = _both(x, requires_grad=True)
        if step == 2:
            ours.disable_observer()
            theirs.disable_observer()
        ya, yb = ours(a), theirs(b)
        _bits_equal(ya, yb)
        ya.sum().backward()
        yb.sum().backward()
        assert_close(a.grad, b.grad)
    ours.disable_fake_quant()
    theirs.disable_fake_quant()
    a, b = _both(_values(9, (5, 6)))
    _bits_equal(ours(a), theirs(b))
    assert_close(ours.scale, theirs.scale)
    assert_close(ours.zero_point, theirs.zero_point)
    sd_ours, sd_theirs = ours.state_dict(), theirs.state_dict()
    assert list(sd_ours) == list(sd_theirs)
    for k in sd_theirs:
        assert_close(sd_ours[k], sd_theirs[k])


@pytest.mark.filterwarnings("ignore:Please use quant_min")
def test_defaults_and_with_args():
    ours, theirs = tq.default_fake_quant(), torch.ao.quantization.default_fake_quant()
    assert (ours.quant_min, ours.quant_max) == (theirs.quant_min, theirs.quant_max)
    assert ours.dtype is tq.quint8 and ours.qscheme is tq.per_tensor_affine
    assert tq.default_fake_quant() is not ours
    factory = tq.FakeQuantize.with_args(observer=tq.MinMaxObserver, quant_min=0, quant_max=31)
    fq = factory.with_args(dtype=tq.quint8)()
    assert (fq.quant_min, fq.quant_max) == (0, 31)
    assert toolkit.quantization.FakeQuantize is tq.FakeQuantize
    assert ours.fake_quant_enabled.dtype is toolkit.uint8


def test_per_channel_state_dict_round_trip():
    src = tq.FakeQuantize(observer=tq.PerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=tq.qint8,
                          qscheme=tq.per_channel_symmetric)
    src(toolkit.tensor(_values(0, (4, 3))))
    dst = tq.FakeQuantize(observer=tq.PerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=tq.qint8,
                          qscheme=tq.per_channel_symmetric)
    dst.load_state_dict(src.state_dict())
    assert_close(dst.scale, src.scale)
    assert_close(dst.activation_post_process.min_val, src.activation_post_process.min_val)


@pytest.mark.parametrize("kwargs,message", [
    ({"quant_min": 5, "quant_max": 3}, "quant_min must be less than or equal to quant_max"),
    ({"quant_min": -1, "quant_max": 255}, "quant_min out of bound"),
    ({"quant_min": 0, "quant_max": 256}, "quant_max out of bound"),
])
def test_fake_quantize_module_errors(kwargs, message):
    with pytest.raises(AssertionError, match=message):
        torch.ao.quantization.FakeQuantize(**kwargs)
    with pytest.raises(AssertionError, match=message):
        tq.FakeQuantize(**kwargs)
