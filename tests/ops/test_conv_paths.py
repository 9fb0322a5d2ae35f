"""The CPU convolution paths of ``toolkit/ops/_conv_fast.py`` against PyTorch, values and gradients.

Each shape is picked to reach one path: the batch folded into one GEMM's columns (few output positions per
sample), one GEMM per sample (many), the weight gradient's per-channel products (a long reduction, in place on
the output gradient, broadcast ones included), and the compiled col2im of the input gradient over both column
layouts, with strides, padding crops, dilation, output padding and groups; float32 and float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close

# (input shape, weight shape, keyword arguments)
CONV2D = [
    ((64, 10, 12, 12), (20, 10, 5, 5), {}),  # the seed Net's second layer: folded batch
    ((6, 1, 28, 28), (10, 1, 5, 5), {}),  # the seed Net's first layer: one GEMM per sample
    ((5, 3, 32, 32), (8, 3, 3, 3), {"padding": 1}),
    ((4, 6, 9, 7), (4, 3, 3, 2), {"groups": 2, "stride": (2, 1), "padding": (1, 2), "dilation": (2, 1)}),
    ((3, 4, 11, 10), (8, 1, 3, 3), {"groups": 4, "padding": 1, "stride": 3}),
    ((2, 3, 6, 6), (5, 3, 6, 6), {}),  # one output position
    ((7, 2, 5, 9), (3, 2, 1, 1), {"stride": 2}),
    ((3, 4, 8, 7), (4, 4, 4, 3), {"padding": "same", "dilation": (1, 2)}),
    ((2, 3, 20, 20), (4, 3, 3, 3), {"stride": 2, "padding": 1}),  # 100 positions: folded, padded, strided
    ((2, 2, 65, 65), (16, 2, 3, 3), {"padding": 1}),  # weight gradient: a reduction of 4225, the compiled products
    # padding past the dilated kernel's reach: whole rows of taps fall outside (their zeros stay in their row)
    ((1, 1, 1, 1), (1, 1, 1, 2), {"padding": (0, 3), "dilation": (1, 6)}),
    ((2, 1, 1, 1), (1, 1, 2, 1), {"padding": (3, 0), "dilation": (6, 1)}),
    ((2, 2, 1, 1), (3, 2, 1, 1), {"padding": 3, "stride": 100}),
]


def _accums(x_shape, w_shape, y_shape, groups):
    out = math.prod(w_shape[1:])
    back = w_shape[0] // groups * math.prod(w_shape[2:])
    positions = x_shape[0] * math.prod(y_shape[2:])
    return out, back, positions, positions


def _compare(fn_name, x, w, b, accums, **kw):
    tk = [None if a is None else toolkit.tensor(a, requires_grad=True) for a in (x, w, b)]
    th = [None if a is None else torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = getattr(F, fn_name)(*tk, **kw)
    ty = getattr(torch.nn.functional, fn_name)(*th, **kw)
    assert_close(y, ty, accum=accums[0])
    assert y.stride() == ty.stride()  # contiguous as torch's: ``y.view(n, -1)`` must work
    g = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(x.dtype)
    y.backward(toolkit.tensor(g))
    ty.backward(torch.tensor(g))
    for a, e, n in zip(tk, th, accums[1:]):
        if a is not None:
            assert_close(a.grad, e.grad, accum=n)
            assert a.grad.stride() == e.grad.stride()


def _data(x_shape, w_shape, dtype, bias, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    return x, w, rng.standard_normal(bias).astype(dtype) if bias else None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_shape, w_shape, kw", CONV2D)
def test_conv2d_paths_match_torch(x_shape, w_shape, kw, bias, dtype):
    x, w, b = _data(x_shape, w_shape, dtype, w_shape[0] if bias else 0)
    y_shape = tuple(torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **kw).shape)
    _compare("conv2d", x, w, b, _accums(x_shape, w_shape, y_shape, kw.get("groups", 1)), **kw)


# (input shape, weight shape (C_in, C_out/g, kh, kw), keyword arguments)
TRANSPOSED = [
    ((64, 20, 8, 8), (20, 10, 5, 5), {}),  # the input gradient of the seed Net's second layer
    ((3, 6, 17, 16), (6, 2, 3, 3), {"stride": 1, "padding": 1, "groups": 3}),  # one GEMM per sample
    ((4, 4, 5, 6), (4, 3, 3, 2), {"stride": (2, 3), "padding": (1, 1), "output_padding": (1, 2)}),
    ((2, 4, 5, 5), (4, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 2}),
    ((5, 2, 3, 4), (2, 3, 4, 4), {"stride": 3, "dilation": (1, 2), "output_padding": 1, "padding": (0, 3)}),
    ((3, 3, 16, 17), (3, 2, 2, 2), {"stride": 2}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_shape, w_shape, kw", TRANSPOSED)
def test_conv_transpose2d_paths_match_torch(x_shape, w_shape, kw, bias, dtype):
    groups = kw.get("groups", 1)
    x, w, b = _data(x_shape, w_shape, dtype, w_shape[1] * groups if bias else 0)
    kernel = math.prod(w_shape[2:])
    positions = x_shape[0] * math.prod(x_shape[2:])
    y = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), **kw)
    accums = (w_shape[0] // groups * kernel, math.prod(w_shape[1:]), positions, x_shape[0] * math.prod(y.shape[2:]))
    _compare("conv_transpose2d", x, w, b, accums, **kw)


@pytest.mark.parametrize("x_shape, w_shape, kw", [CONV2D[0], CONV2D[2], CONV2D[3]])
def test_broadcast_output_gradient(x_shape, w_shape, kw):
    """``y.sum().backward()`` hands the convolution a gradient of strides 0: read as BLAS operands all the same."""
    x, w, b = _data(x_shape, w_shape, np.float32, w_shape[0])
    tk = [toolkit.tensor(a, requires_grad=True) for a in (x, w, b)]
    th = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    F.conv2d(*tk, **kw).sum().backward()
    torch.nn.functional.conv2d(*th, **kw).sum().backward()
    y_shape = tuple(torch.nn.functional.conv2d(th[0], th[1], **kw).shape)
    for a, e, n in zip(tk, th, _accums(x_shape, w_shape, y_shape, kw.get("groups", 1))[1:]):
        assert_close(a.grad, e.grad, accum=n)


def test_conv1d_folded_batch():
    x, w, b = _data((16, 3, 40), (5, 3, 4), np.float32, 5)
    kw = {"stride": 2, "padding": 2, "dilation": 2}
    _compare("conv1d", x, w, b, (12, 20, 16 * 20, 16 * 20), **kw)


def test_non_contiguous_operands():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((12, 12, 3, 9)).astype(np.float32).transpose(3, 2, 1, 0)  # (9, 3, 12, 12)
    w = rng.standard_normal((3, 4, 3, 3)).astype(np.float32).transpose(1, 0, 3, 2)
    y = F.conv2d(toolkit.from_numpy(x), toolkit.from_numpy(w), padding=1)
    ty = torch.nn.functional.conv2d(torch.from_numpy(x.copy()), torch.from_numpy(w.copy()), padding=1)
    assert_close(y, ty, accum=27)


def test_unbatched_input():
    x, w, b = _data((3, 10, 10), (4, 3, 3, 3), np.float64, 4)
    _compare("conv2d", x, w, b, (27, 36, 64, 64), padding=1)


@pytest.mark.parametrize("transposed", [False, True])
def test_double_backward_through_folded_paths(transposed):
    rng = np.random.default_rng(4)
    x = toolkit.tensor(rng.standard_normal((4, 2, 5, 5)), requires_grad=True)
    if transposed:
        w = toolkit.tensor(rng.standard_normal((2, 3, 2, 2)), requires_grad=True)
        fn = lambda a, b: F.conv_transpose2d(a, b, stride=2, padding=1)  # noqa: E731
    else:
        w = toolkit.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
        fn = lambda a, b: F.conv2d(a, b, padding=1, dilation=2)  # noqa: E731
    assert toolkit.autograd.gradcheck(fn, (x, w))
    assert toolkit.autograd.gradgradcheck(fn, (x, w))
