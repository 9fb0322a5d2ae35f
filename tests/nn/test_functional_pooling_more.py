"""The rest of the pooling and convolution families against PyTorch: 1-d/3-d, adaptive, lp, unpooling, fractional,
conv3d, conv_transpose3d and conv_tbc; their ``torch.*`` names; values, gradients, double gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close


def _pair(x, requires_grad=True):
    return toolkit.tensor(x, requires_grad=requires_grad), torch.tensor(x, requires_grad=requires_grad)


def _outputs(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def _compare(fn, torch_fn, arrays, *args, grad=True, constants=0, **kw):
    """Run ``fn`` and ``torch_fn`` on the same arrays (first output differentiated, the last ``constants`` arrays
    not) and compare everything."""
    pairs = [_pair(a, grad and a.dtype.kind == "f" and i < len(arrays) - constants) for i, a in enumerate(arrays)]
    y = fn(*(p[0] for p in pairs), *args, **kw)
    ty = torch_fn(*(p[1] for p in pairs), *args, **kw)
    for a, e in zip(_outputs(y), _outputs(ty)):
        assert_close(a, e)
    if grad:
        g = np.random.default_rng(1).standard_normal(tuple(_outputs(ty)[0].shape))
        _outputs(y)[0].backward(toolkit.tensor(g))
        _outputs(ty)[0].backward(torch.tensor(g))
        for p in pairs:
            if p[1].requires_grad:
                assert_close(p[0].grad, p[1].grad)
    return y


def _raises_like(fn, torch_fn):
    """Both calls fail with the same exception type; return toolkit's message."""
    with pytest.raises(Exception) as expected:
        torch_fn()
    with pytest.raises(expected.type) as got:
        fn()
    return str(got.value)


@pytest.fixture
def u():
    return np.random.default_rng(0).uniform


# ---------------------------------------------------------------------------------------------
# torch.* names
# ---------------------------------------------------------------------------------------------
TORCH_NAMES = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "max_pool1d", "max_pool1d_with_indices",
               "max_pool2d", "max_pool3d", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "convolution", "conv_tbc"]


@pytest.mark.parametrize("name", TORCH_NAMES)
def test_torch_namespace_has(name):
    assert hasattr(torch, name) and callable(getattr(toolkit, name))


def test_torch_names_match_torch(u):
    x = u(-1, 1, (2, 3, 9))
    assert_close(toolkit.max_pool1d(toolkit.tensor(x), 2), torch.max_pool1d(torch.tensor(x), 2))
    assert_close(toolkit.avg_pool1d(toolkit.tensor(x), 3, 2, 1), torch.avg_pool1d(torch.tensor(x), 3, 2, 1))
    assert_close(toolkit.adaptive_avg_pool1d(toolkit.tensor(x), 4), torch.adaptive_avg_pool1d(torch.tensor(x), 4))
    assert_close(toolkit.adaptive_max_pool1d(toolkit.tensor(x), 4), torch.adaptive_max_pool1d(torch.tensor(x), 4))
    x3 = u(-1, 1, (1, 2, 4, 5, 6))
    assert_close(toolkit.max_pool3d(toolkit.tensor(x3), 2), torch.max_pool3d(torch.tensor(x3), 2))
    w = u(-1, 1, (3, 2, 2, 2, 2))
    assert_close(toolkit.convolution(toolkit.tensor(x3), toolkit.tensor(w), None, [1], [1], [1], False, [0], 1),
                 torch.convolution(torch.tensor(x3), torch.tensor(w), None, [1], [1], [1], False, [0], 1))


# ---------------------------------------------------------------------------------------------
# 1-d and 3-d max and average pooling
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,args,kw", [
    ((2, 3, 6, 6, 6), (2,), {}),
    ((1, 2, 7, 6, 5), (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ((2, 5, 7, 6), ((3, 2, 2),), {"stride": (1, 2, 1), "dilation": (2, 1, 2)}),
])
def test_max_pool3d(u, shape, args, kw):
    x = u(-1, 1, shape)
    _compare(F.max_pool3d, torch.nn.functional.max_pool3d, [x], *args, **kw)
    _compare(F.max_pool3d, torch.nn.functional.max_pool3d, [x], *args, return_indices=True, **kw)


def test_max_pool3d_stride_none_and_nan(u):
    x = u(-1, 1, (1, 1, 4, 4, 4))
    x[0, 0, 1, 1, 1] = np.nan
    _compare(F.max_pool3d_with_indices, torch.nn.functional.max_pool3d_with_indices, [x], 2, None, grad=False)


@pytest.mark.parametrize("shape,args,kw", [
    ((2, 3, 6, 6, 6), (2,), {}),
    ((1, 2, 7, 6, 5), (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ((2, 5, 7, 6), ((3, 2, 2),), {"stride": (1, 2, 1), "divisor_override": 5}),
])
def test_avg_pool3d(u, shape, args, kw):
    _compare(F.avg_pool3d, torch.nn.functional.avg_pool3d, [u(-1, 1, shape)], *args, **kw)


@pytest.mark.parametrize("shape,args,kw", [
    ((2, 3, 9), (2,), {}),
    ((3, 10), (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 9), (4, 3, 2), {"count_include_pad": False}),
])
def test_avg_pool1d(u, shape, args, kw):
    _compare(F.avg_pool1d, torch.nn.functional.avg_pool1d, [u(-1, 1, shape)], *args, **kw)


def test_integer_average_pooling():
    x = np.arange(-40, 41, dtype=np.int64)[:64].reshape(1, 1, 4, 4, 4)
    _compare(F.avg_pool3d, torch.nn.functional.avg_pool3d, [x], 2, grad=False)
    _compare(F.avg_pool1d, torch.nn.functional.avg_pool1d, [x[0, 0, 0]], 3, grad=False)


@pytest.mark.parametrize("call", [
    lambda m, x: m.max_pool3d(x, 4),
    lambda m, x: m.max_pool3d(x[0, 0, 0], 2),
    lambda m, x: m.max_pool3d(x, 2, padding=2),
    lambda m, x: m.max_pool3d(x, (2, 2)),
    lambda m, x: m.avg_pool3d(x, 4),
    lambda m, x: m.avg_pool3d(x, 2, divisor_override=0),
    lambda m, x: m.avg_pool1d(x[0, 0, 0, 0], 2),
    lambda m, x: m.avg_pool1d(x[0, 0, 0], (2, 2)),
])
def test_pool_errors(u, call):
    x = u(-1, 1, (1, 2, 3, 4, 4))
    _raises_like(lambda: call(F, toolkit.tensor(x)), lambda: call(torch.nn.functional, torch.tensor(x)))


def test_pool_error_names_the_sizes(u):
    msg = _raises_like(lambda: F.max_pool3d(toolkit.ones(1, 2, 3, 4, 4), 4),
                       lambda: torch.nn.functional.max_pool3d(torch.ones(1, 2, 3, 4, 4), 4))
    assert "Given input size: (2x3x4x4)" in msg


# ---------------------------------------------------------------------------------------------
# Adaptive pooling
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shape,size", [
    ("adaptive_avg_pool1d", (2, 3, 10), 4),
    ("adaptive_avg_pool1d", (3, 5), [7]),
    ("adaptive_avg_pool3d", (2, 2, 5, 6, 7), (2, 3, 4)),
    ("adaptive_avg_pool3d", (2, 5, 6, 7), (None, 3, 2)),
    ("adaptive_avg_pool3d", (1, 2, 3, 3, 3), 5),
    ("adaptive_max_pool1d", (2, 3, 10), 4),
    ("adaptive_max_pool2d", (2, 3, 7, 10), (3, None)),
    ("adaptive_max_pool2d", (3, 5, 4), 6),
    ("adaptive_max_pool3d", (2, 2, 5, 6, 7), (2, 3, 4)),
    ("adaptive_max_pool3d", (2, 5, 6, 7), 3),
])
def test_adaptive(u, name, shape, size):
    x = u(-1, 1, shape)
    _compare(getattr(F, name), getattr(torch.nn.functional, name), [x], size)
    if "max" in name:
        _compare(getattr(F, name), getattr(torch.nn.functional, name), [x], size, return_indices=True)
        _compare(getattr(F, name + "_with_indices"), getattr(torch.nn.functional, name + "_with_indices"), [x], size)


@pytest.mark.parametrize("call", [
    lambda m, x: m.adaptive_avg_pool3d(x[0, 0], 2),
    lambda m, x: m.adaptive_avg_pool3d(x.long(), 2),
    lambda m, x: m.adaptive_max_pool3d(x[0, 0], 2),
    lambda m, x: m.adaptive_max_pool2d(x[0, :, 0].long(), 2),
    lambda m, x: m.adaptive_max_pool2d(x[0, :, :, :0], 2),
    lambda m, x: m.adaptive_avg_pool1d(x[0, 0, 0, 0], 2),
    lambda m, x: m.adaptive_max_pool1d(x[0, 0, 0, 0], 2),
    lambda m, x: m.adaptive_avg_pool1d(x[0, 0, 0], [2, 2]),
    lambda m, x: m.adaptive_avg_pool3d(x, (2, None)),
])
def test_adaptive_errors(u, call):
    x = u(-1, 1, (1, 2, 3, 4, 4))
    _raises_like(lambda: call(F, toolkit.tensor(x)), lambda: call(torch.nn.functional, torch.tensor(x)))


# ---------------------------------------------------------------------------------------------
# Power-average pooling
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shape,args,kw", [
    ("lp_pool1d", (2, 3, 9), (2.0, 3), {}),
    ("lp_pool1d", (2, 3, 9), (3, 2), {"stride": 1, "ceil_mode": True}),
    ("lp_pool2d", (2, 3, 6, 7), (2, 2), {}),
    ("lp_pool2d", (2, 6, 7), (1.5, (3, 2)), {"stride": (2, 1)}),
    ("lp_pool2d", (2, 3, 6, 7), (float("inf"), 2), {}),
    ("lp_pool3d", (1, 2, 4, 6, 5), (2, 2), {}),
    ("lp_pool3d", (2, 4, 6, 5), (3, (2, 3, 2)), {"stride": 1}),
])
def test_lp_pool(name, shape, args, kw):
    x = np.random.default_rng(0).uniform(0.1, 1, shape)
    _compare(getattr(F, name), getattr(torch.nn.functional, name), [x], *args, **kw)


# ---------------------------------------------------------------------------------------------
# Max unpooling
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nd,shape,kw", [
    (1, (2, 3, 9), {}),
    (1, (3, 8), {"stride": 2, "output_size": [9]}),
    (2, (2, 3, 6, 8), {}),
    (2, (3, 7, 7), {"stride": 2, "padding": 1, "output_size": (1, 3, 7, 7)}),
    (3, (1, 2, 4, 6, 6), {}),
    (3, (2, 5, 6, 7), {"stride": 2, "output_size": (5, 6, 7)}),
])
def test_max_unpool(u, nd, shape, kw):
    x = u(-1, 1, shape)
    pool_kw = {k: v for k, v in kw.items() if k != "output_size"}
    tv, ti = getattr(torch.nn.functional, f"max_pool{nd}d")(torch.tensor(x), 2, return_indices=True, **pool_kw)
    v, i = getattr(F, f"max_pool{nd}d")(toolkit.tensor(x), 2, return_indices=True, **pool_kw)
    assert_close(i, ti)
    _compare(lambda a: getattr(F, f"max_unpool{nd}d")(a, i, 2, **kw),
             lambda a: getattr(torch.nn.functional, f"max_unpool{nd}d")(a, ti, 2, **kw), [tv.detach().numpy()])


def test_max_unpool_double_backward(u):
    x = toolkit.tensor(u(-1, 1, (1, 2, 3, 3)), requires_grad=True)
    idx = toolkit.tensor(np.array([0, 5, 7, 9, 11, 13, 16, 22, 35]).reshape(1, 1, 3, 3).repeat(2, 1))
    assert toolkit.autograd.gradcheck(lambda a: F.max_unpool2d(a, idx, 2), (x,))
    assert toolkit.autograd.gradgradcheck(lambda a: F.max_unpool2d(a, idx, 2), (x,))


@pytest.mark.parametrize("call", [
    lambda m, x, i: m.max_unpool2d(x, i, 2, output_size=(9, 9)),
    lambda m, x, i: m.max_unpool2d(x, i, 2, output_size=(4, 4, 4)),
    lambda m, x, i: m.max_unpool2d(x, i + 30, 2),
    lambda m, x, i: m.max_unpool2d(x, i.int(), 2),
    lambda m, x, i: m.max_unpool2d(x, i[0], 2),
    lambda m, x, i: m.max_unpool3d(x[0], i[0], 2),
])
def test_max_unpool_errors(u, call):
    x = u(-1, 1, (1, 1, 2, 2))
    i = np.array([[[[0, 3], [9, 14]]]])
    _raises_like(lambda: call(F, toolkit.tensor(x), toolkit.tensor(i)),
                 lambda: call(torch.nn.functional, torch.tensor(x), torch.tensor(i)))


# ---------------------------------------------------------------------------------------------
# Fractional max pooling
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nd,shape,k,kw", [
    (2, (2, 3, 9, 9), 2, {"output_size": (4, 3)}),
    (2, (3, 10, 7), (3, 2), {"output_ratio": (0.5, 0.7)}),
    (2, (1, 2, 11, 8), 2, {"output_ratio": (0.6, 0.5)}),
    (3, (1, 2, 7, 8, 9), (2, 2, 3), {"output_size": (3, 4, 3)}),
    (3, (2, 6, 7, 8), 2, {"output_ratio": 0.5}),
])
def test_fractional_max_pool(u, nd, shape, k, kw):
    x = u(-1, 1, shape)
    samples = u(0, 1, ((shape[0] if len(shape) == nd + 2 else 1), shape[-nd - 1], nd))
    name = f"fractional_max_pool{nd}d"
    for dtype in (np.float64, np.float32):
        xs, ss = x.astype(dtype), samples.astype(dtype)
        _compare(lambda a, s: getattr(F, name)(a, k, _random_samples=s, return_indices=True, **kw),
                 lambda a, s: getattr(torch.nn.functional, name)(a, k, _random_samples=s, return_indices=True, **kw),
                 [xs, ss], constants=1)


def test_fractional_max_pool_draws_samples(u):
    x = toolkit.tensor(u(-1, 1, (2, 3, 9, 9)))
    y = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5))
    assert tuple(y.shape) == (2, 3, 4, 4)
    assert tuple(F.fractional_max_pool3d(toolkit.randn(3, 6, 6, 6), 2, output_size=3).shape) == (3, 3, 3, 3)


@pytest.mark.parametrize("call", [
    lambda m, x, s: m.fractional_max_pool2d(x, 2),
    lambda m, x, s: m.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)),
    lambda m, x, s: m.fractional_max_pool2d(x, 2, output_ratio=0.5),
    lambda m, x, s: m.fractional_max_pool2d(x, 2, output_ratio=[0.5]),
    lambda m, x, s: m.fractional_max_pool2d(x, 3, output_size=8, _random_samples=s),
    lambda m, x, s: m.fractional_max_pool2d(x[0, 0], 2, output_size=2, _random_samples=s),
    lambda m, x, s: m.fractional_max_pool2d(x, 2, output_size=2, _random_samples=s.double()),
    lambda m, x, s: m.fractional_max_pool2d(x, 2, output_size=2, _random_samples=s[:, :1]),
    lambda m, x, s: m.fractional_max_pool3d(x, 2, output_size=2),
])
def test_fractional_errors(call):
    x = np.random.default_rng(0).uniform(-1, 1, (1, 2, 9, 9)).astype(np.float32)
    s = np.random.default_rng(1).uniform(0, 1, (1, 2, 2)).astype(np.float32)
    _raises_like(lambda: call(F, toolkit.tensor(x), toolkit.tensor(s)),
                 lambda: call(torch.nn.functional, torch.tensor(x), torch.tensor(s)))


# ---------------------------------------------------------------------------------------------
# Convolutions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs,ws,bias,kw", [
    ((2, 2, 4, 5, 6), (3, 2, 2, 3, 2), True, {}),
    ((1, 4, 5, 5, 5), (2, 2, 3, 3, 3), False, {"stride": 2, "padding": 1, "dilation": (1, 2, 1), "groups": 2}),
    ((2, 4, 5, 6), (3, 2, 2, 2, 3), True, {"padding": "same"}),
    ((1, 2, 4, 5, 6), (3, 2, 2, 3, 2), False, {"padding": "valid"}),
])
def test_conv3d(u, xs, ws, bias, kw):
    arrays = [u(-1, 1, xs), u(-1, 1, ws)] + ([u(-1, 1, ws[0])] if bias else [])
    _compare(F.conv3d, torch.nn.functional.conv3d, arrays, **kw)
    _compare(toolkit.conv3d, torch.conv3d, arrays, **kw)


@pytest.mark.parametrize("xs,ws,bias,kw", [
    ((2, 2, 3, 4, 3), (2, 3, 2, 3, 2), True, {}),
    ((1, 4, 3, 3, 2), (4, 1, 2, 2, 3), False, {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ((2, 3, 3, 3), (2, 2, 2, 2, 2), True, {"dilation": 2, "stride": (1, 2, 1)}),
])
def test_conv_transpose3d(u, xs, ws, bias, kw):
    arrays = [u(-1, 1, xs), u(-1, 1, ws)] + ([u(-1, 1, ws[1] * kw.get("groups", 1))] if bias else [])
    _compare(F.conv_transpose3d, torch.nn.functional.conv_transpose3d, arrays, **kw)


def test_conv3d_double_backward(u):
    x = toolkit.tensor(u(-1, 1, (1, 2, 3, 3, 3)), requires_grad=True)
    w = toolkit.tensor(u(-1, 1, (2, 2, 2, 2, 2)), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a, b: F.conv3d(a, b, padding=1), (x, w))
    assert toolkit.autograd.gradgradcheck(lambda a, b: F.conv_transpose3d(a, b, stride=2), (x, w))


@pytest.mark.parametrize("xs,ws,pad", [((5, 2, 3), (3, 3, 4), 0), ((4, 1, 2), (2, 2, 3), 1), ((2, 3, 2), (5, 2, 2), 2)])
def test_conv_tbc(u, xs, ws, pad):
    _compare(toolkit.conv_tbc, torch.conv_tbc, [u(-1, 1, xs), u(-1, 1, ws), u(-1, 1, ws[2])], pad)
    _compare(F.conv_tbc, torch.nn.functional.conv_tbc, [u(-1, 1, xs), u(-1, 1, ws), u(-1, 1, ws[2])], pad)


@pytest.mark.parametrize("call", [
    lambda m, x, w, b: m.conv_tbc(x[0], w, b),
    lambda m, x, w, b: m.conv_tbc(x, w[:, :1], b),
    lambda m, x, w, b: m.conv_tbc(x, w, b[:2]),
    lambda m, x, w, b: m.conv_tbc(x[:1], w, b),
    lambda m, x, w, b: m.conv3d(x, w[None, None]),
    lambda m, x, w, b: m.conv3d(x[None, None], w[None, None], stride=0),
])
def test_conv_errors(u, call):
    x, w, b = u(-1, 1, (3, 2, 2)), u(-1, 1, (3, 2, 3)), u(-1, 1, 3)
    tk = [toolkit.tensor(a) for a in (x, w, b)]
    th = [torch.tensor(a) for a in (x, w, b)]
    _raises_like(lambda: call(toolkit, *tk), lambda: call(torch, *th))
