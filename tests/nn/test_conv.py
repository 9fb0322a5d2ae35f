"""Convolutions against PyTorch: values and gradients for many configurations, layers, init, repr, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close


def _pair(rng, x_shape, w_shape, bias=True, dtype=np.float32):
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0] if bias else 0).astype(dtype) if bias else None
    return x, w, b


def _accums(transposed, x_shape, w_shape, y_shape, groups=1):
    """How many products each element of a convolution's output, input gradient, weight gradient and bias
    gradient sums (unbatched inputs count as a batch of one; strides and padding only make some sums shorter)."""
    spatial = len(w_shape) - 2
    batch = x_shape[0] if len(x_shape) == len(w_shape) else 1
    kernel = math.prod(w_shape[2:])
    if transposed:  # weight (C_in, C_out / groups, *kernel)
        out, back = w_shape[0] // groups * kernel, math.prod(w_shape[1:])
        weight = batch * math.prod(x_shape[-spatial:])
    else:  # weight (C_out, C_in / groups, *kernel)
        out, back = math.prod(w_shape[1:]), w_shape[0] // groups * kernel
        weight = batch * math.prod(y_shape[-spatial:])
    return out, back, weight, batch * math.prod(y_shape[-spatial:])


def _check(fn_name, x, w, b, **kw):
    tk = [toolkit.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
    th = [torch.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
    y = getattr(F, fn_name)(*tk, **kw)
    ty = getattr(torch.nn.functional, fn_name)(*th, **kw)
    out, *grads = _accums("transpose" in fn_name, x.shape, w.shape, tuple(ty.shape), kw.get("groups", 1))
    assert_close(y, ty, accum=out)
    g = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(x.dtype)
    y.backward(toolkit.tensor(g))
    ty.backward(torch.tensor(g))
    for a, e, n in zip(tk, th, grads):
        if a is not None:
            assert_close(a.grad, e.grad, accum=n)


CONV2D = [
    ((2, 3, 8, 8), (4, 3, 3, 3), {}),
    ((2, 3, 8, 8), (4, 3, 3, 3), {"padding": 1}),
    ((2, 3, 9, 7), (4, 3, 3, 2), {"stride": 2, "padding": (1, 0)}),
    ((1, 4, 9, 9), (6, 2, 3, 3), {"groups": 2, "dilation": 2}),
    ((1, 4, 8, 8), (4, 1, 3, 3), {"groups": 4, "padding": 1}),
    ((3, 8, 8), (5, 3, 3, 3), {"padding": 2}),
    ((2, 3, 8, 7), (4, 3, 2, 3), {"padding": "same"}),
    ((2, 3, 8, 7), (4, 3, 4, 3), {"padding": "same", "dilation": (1, 2)}),
    ((2, 3, 8, 7), (4, 3, 3, 3), {"padding": "valid"}),
    ((2, 3, 10, 10), (4, 3, 1, 1), {}),
    ((2, 3, 10, 10), (4, 3, 1, 1), {"stride": 3}),
    ((2, 3, 6, 6), (4, 3, 6, 6), {}),
    ((4, 1, 28, 28), (10, 1, 5, 5), {}),
]


@pytest.mark.parametrize("x_shape,w_shape,kw", CONV2D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_torch(x_shape, w_shape, kw, bias):
    x, w, b = _pair(np.random.default_rng(0), x_shape, w_shape, bias)
    _check("conv2d", x, w, b, **kw)


def test_conv2d_float64_and_noncontiguous():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6)).transpose(0, 1, 3, 2)
    w = rng.standard_normal((4, 3, 3, 3))
    _check("conv2d", x, w, None, stride=2, padding=1)
    y = F.conv2d(toolkit.tensor(x), toolkit.tensor(w))
    assert y.dtype is toolkit.float64


def test_conv2d_int64():
    x = np.arange(2 * 2 * 4 * 4).reshape(2, 2, 4, 4)
    w = np.arange(3 * 2 * 2 * 2).reshape(3, 2, 2, 2) - 10
    assert_close(F.conv2d(toolkit.tensor(x), toolkit.tensor(w)),
                 torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w)))


CONV1D = [
    ((2, 3, 10), (4, 3, 3), {}),
    ((2, 4, 11), (6, 2, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
    ((3, 10), (4, 3, 4), {"padding": "same"}),
    ((2, 3, 10), (4, 3, 2), {"padding": "valid"}),
]


@pytest.mark.parametrize("x_shape,w_shape,kw", CONV1D)
def test_conv1d_matches_torch(x_shape, w_shape, kw):
    x, w, b = _pair(np.random.default_rng(0), x_shape, w_shape)
    _check("conv1d", x, w, b, **kw)


CONVT2D = [
    ((2, 3, 5, 5), (3, 4, 3, 3), {}),
    ((2, 3, 5, 4), (3, 4, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"groups": 2, "dilation": 2, "stride": (2, 1)}),
    ((4, 5, 5), (4, 2, 2, 2), {"stride": 2}),
    ((1, 2, 4, 4), (2, 2, 2, 2), {"dilation": 3, "output_padding": 2}),
]


@pytest.mark.parametrize("x_shape,w_shape,kw", CONVT2D)
def test_conv_transpose2d_matches_torch(x_shape, w_shape, kw):
    rng = np.random.default_rng(0)
    x, w, _ = _pair(rng, x_shape, w_shape, bias=False)
    out_c = w_shape[1] * kw.get("groups", 1)
    b = rng.standard_normal(out_c).astype(np.float32)
    _check("conv_transpose2d", x, w, b, **kw)


def test_conv_transpose1d_matches_torch():
    rng = np.random.default_rng(0)
    x, w, _ = _pair(rng, (2, 4, 6), (4, 3, 3), bias=False)
    _check("conv_transpose1d", x, w, None, stride=2, padding=1, output_padding=1)


def test_conv2d_double_backward_matches_torch():
    rng = np.random.default_rng(0)
    x, w, b = _pair(rng, (2, 3, 6, 6), (4, 3, 3, 3), dtype=np.float64)
    tk = [toolkit.tensor(a, requires_grad=True) for a in (x, w, b)]
    th = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    gs = toolkit.autograd.grad(F.conv2d(*tk, stride=2, padding=1).pow(2).sum(), tk, create_graph=True)
    tgs = torch.autograd.grad(torch.nn.functional.conv2d(*th, stride=2, padding=1).pow(2).sum(), th,
                              create_graph=True)
    sum(g.pow(2).sum() for g in gs).backward()
    sum(g.pow(2).sum() for g in tgs).backward()
    # second order: each element sums over the conv's 2*4*3*3 outputs terms that are themselves sums of 3*3*3
    for a, e in zip(tk, th):
        assert_close(a.grad, e.grad, accum=72 * 27)


def test_conv_gradgradcheck_same_padding():
    rng = np.random.default_rng(0)
    x = toolkit.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    w = toolkit.tensor(rng.standard_normal((2, 2, 2, 2)), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a, b: F.conv2d(a, b, padding="same"), (x, w))


ERRORS = [
    (lambda: F.conv2d(toolkit.randn(3, 4), toolkit.randn(6, 3, 5, 5)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 4]"),
    (lambda: F.conv2d(toolkit.randn(1, 4, 32, 32), toolkit.randn(6, 3, 5, 5)),
     "Given groups=1, weight of size [6, 3, 5, 5], expected input[1, 4, 32, 32] to have 3 channels, but got 4 "
     "channels instead"),
    (lambda: F.conv2d(toolkit.randn(1, 3, 3, 3), toolkit.randn(6, 3, 5, 5)),
     "Calculated padded input size per channel: (3 x 3). Kernel size: (5 x 5). Kernel size can't be greater "
     "than actual input size"),
    (lambda: F.conv2d(toolkit.randn(1, 6, 8, 8), toolkit.randn(6, 2, 3, 3), groups=4),
     "Given groups=4, expected weight to be divisible by 4 at dimension 0"),
    (lambda: F.conv2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(6, 3, 3, 3), stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(6, 3, 3, 3), padding="foo"),
     "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(6, 3, 3, 3), stride=0),
     "non-positive stride is not supported"),
    (lambda: F.conv2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(6, 3, 3, 3), padding=-1),
     "negative padding is not supported"),
    (lambda: F.conv2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(6, 3, 3, 3), toolkit.randn(5)),
     "Given weight of size [6, 3, 3, 3], expected bias to be 1-dimensional with 6 elements, but got bias of "
     "size [5] instead"),
    (lambda: F.conv2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(6, 3, 3, 3).double()),
     "expected scalar type Float but found Double"),
    (lambda: F.conv1d(toolkit.randn(3, 8, 8, 8), toolkit.randn(6, 3, 3)),
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [3, 8, 8, 8]"),
    (lambda: F.conv_transpose2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(4, 3, 3, 3)),
     "Given transposed=1, weight of size [4, 3, 3, 3], expected input[1, 3, 8, 8] to have 4 channels, but got 3 "
     "channels instead"),
    (lambda: F.conv_transpose2d(toolkit.randn(1, 3, 8, 8), toolkit.randn(3, 3, 3, 3), output_padding=1),
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 1 "
     "output_padding_width: 1 stride_height: 1 stride_width: 1 dilation_height: 1 dilation_width: 1"),
]


@pytest.mark.parametrize("fn,msg", ERRORS)
def test_errors(fn, msg):
    with pytest.raises(RuntimeError, match=__import__("re").escape(msg)):
        fn()


# ---------------------------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------------------------
LAYERS = [
    ("Conv2d", (3, 6, 5), {}),
    ("Conv2d", (4, 8, (3, 2)), {"stride": 2, "padding": 1, "groups": 2, "bias": False}),
    ("Conv2d", (3, 6, 3), {"padding": "same", "dilation": 2}),
    ("Conv2d", (3, 6, 3), {"padding": "valid"}),
    ("Conv1d", (3, 6, 3), {"stride": 2}),
    ("Conv1d", (3, 6, 4), {"padding": "same"}),
    ("ConvTranspose2d", (3, 6, 3), {"stride": 2, "output_padding": 1, "padding": 1}),
    ("ConvTranspose2d", (4, 6, 2), {"groups": 2, "dilation": 2, "bias": False}),
    ("ConvTranspose1d", (3, 6, 3), {"stride": 2}),
]


def _input(name, rng):
    shape = (2, 4, 9, 9) if "2d" in name else (2, 4, 11)
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name,args,kw", LAYERS)
def test_layer_init_forward_backward_repr(name, args, kw):
    toolkit.manual_seed(0)
    m = getattr(toolkit.nn, name)(*args, **kw)
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kw)
    assert repr(m) == repr(tm)
    for (n, p), (tn, tp) in zip(m.named_parameters(), tm.named_parameters()):
        assert n == tn
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())
    c = args[0]
    x = _input(name, np.random.default_rng(0))[:, :c]
    x = np.ascontiguousarray(x)
    y = m(toolkit.tensor(x))
    ty = tm(torch.tensor(x))
    out, _, weight, bias = _accums("Transpose" in name, x.shape, tuple(tm.weight.shape), tuple(ty.shape), tm.groups)
    assert_close(y, ty, accum=out)
    y.sum().backward()
    ty.sum().backward()
    for (n, p), tp in zip(m.named_parameters(), tm.parameters()):
        assert_close(p.grad, tp.grad, accum=weight if n == "weight" else bias)


def test_conv2d_layer_defaults_and_bias_bound():
    m = toolkit.nn.Conv2d(1, 10, kernel_size=5)
    assert m.weight.shape == (10, 1, 5, 5) and m.bias.shape == (10,)
    assert m.stride == (1, 1) and m.padding == (0, 0) and m.dilation == (1, 1) and m.groups == 1
    bound = 1 / math.sqrt(25)
    assert float(m.bias.abs().max()) <= bound
    assert float(m.weight.abs().max()) <= bound  # kaiming_uniform_(a=sqrt(5)) gives the same bound


def test_conv_transpose2d_output_size():
    toolkit.manual_seed(0)
    m = toolkit.nn.ConvTranspose2d(3, 4, 3, stride=2)
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose2d(3, 4, 3, stride=2)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    assert_close(m(toolkit.tensor(x), output_size=[12, 12]), tm(torch.tensor(x), output_size=[12, 12]), accum=3 * 9)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(toolkit.tensor(x), output_size=[20, 20])


@pytest.mark.parametrize("kw,err", [
    ({"groups": 0}, "groups must be a positive integer"),
    ({"groups": 2}, "in_channels must be divisible by groups"),
    ({"padding": "full"}, "Invalid padding string 'full'"),
    ({"padding": "same", "stride": 2}, "padding='same' is not supported for strided convolutions"),
    ({"padding_mode": "wrap"}, "padding_mode must be one of"),
])
def test_layer_errors(kw, err):
    with pytest.raises(ValueError, match=__import__("re").escape(err)):
        toolkit.nn.Conv2d(3, 4, 3, **kw)
    with pytest.raises(ValueError, match=__import__("re").escape(err)):
        torch.nn.Conv2d(3, 4, 3, **kw)


# The compiled im2col/col2im paths: long reductions (the weight gradient's rows layout), padding read as zero,
# asymmetric 'same' padding, groups with bias folded into the product, transposed crops, float64, 1-d.
FAST = [
    ("conv2d", (3, 4, 30, 28), (6, 2, 3, 3), {"groups": 2, "padding": 1}),
    ("conv2d", (2, 3, 26, 26), (4, 3, 5, 4), {"stride": (2, 3), "padding": (2, 1), "dilation": (1, 2)}),
    ("conv2d", (1, 2, 33, 33), (3, 2, 4, 4), {"padding": "same", "dilation": 3}),
    ("conv2d", (4, 1, 28, 28), (10, 1, 5, 5), {}),
    ("conv1d", (3, 4, 70), (6, 4, 3), {"stride": 2, "padding": 3}),
    ("conv_transpose2d", (2, 4, 7, 6), (4, 3, 3, 2), {"stride": (2, 3), "padding": (1, 1), "output_padding": 1}),
    ("conv_transpose2d", (2, 4, 5, 5), (4, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 2}),
    ("conv_transpose1d", (2, 3, 9), (3, 2, 4), {"stride": 3, "padding": 2, "output_padding": 2}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn_name, x_shape, w_shape, kw", FAST)
def test_compiled_paths_match_torch(fn_name, x_shape, w_shape, kw, dtype):
    x, w, b = _pair(np.random.default_rng(5), x_shape, w_shape, dtype=dtype)
    if "transpose" in fn_name:
        b = b[:w_shape[1] * kw.get("groups", 1)]
    _check(fn_name, x, w, b, **kw)
    _check(fn_name, x, w, None, **kw)


def test_compiled_path_non_contiguous_input_and_weight():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 2, 12, 10)).astype(np.float32).transpose(1, 0, 3, 2)  # (2, 3, 10, 12)
    w = rng.standard_normal((3, 3, 4, 2)).astype(np.float32).transpose(1, 0, 3, 2)[:, :, ::-1]
    tx, tw = toolkit.tensor(np.ascontiguousarray(x)), toolkit.tensor(np.ascontiguousarray(w))
    y = F.conv2d(toolkit.from_numpy(x), toolkit.from_numpy(w.copy()), stride=2, padding=1)
    assert_close(y, F.conv2d(tx, tw, stride=2, padding=1))
    assert_close(y, torch.nn.functional.conv2d(torch.from_numpy(np.ascontiguousarray(x)),
                                               torch.from_numpy(np.ascontiguousarray(w)), stride=2, padding=1),
                 accum=w[0].size)


def test_empty_batch_takes_the_general_path():
    x = np.random.default_rng(7).standard_normal((0, 2, 5, 5)).astype(np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    assert tuple(F.conv2d(toolkit.tensor(x), toolkit.tensor(w)).shape) == (0, 3, 3, 3)
    assert tuple(F.conv_transpose2d(toolkit.tensor(x), toolkit.tensor(w.transpose(1, 0, 2, 3).copy())).shape) == (
        0, 3, 7, 7)
