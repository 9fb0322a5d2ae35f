"""Pooling against PyTorch: values, indices, gradients, layers, reprs and errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F
from toolkit.backends.cpu import split as _split
from toolkit.ops import api

from ..conftest import assert_close


def _run(name, x, *args, **kw):
    t = toolkit.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    y = getattr(F, name)(t, *args, **kw)
    ty = getattr(torch.nn.functional, name)(tt, *args, **kw)
    assert_close(y, ty)
    g = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(x.dtype)
    y.backward(toolkit.tensor(g))
    ty.backward(torch.tensor(g))
    assert_close(t.grad, tt.grad)


MAX2D = [
    ((2, 3, 8, 8), (2,), {}),
    ((2, 3, 9, 7), (3,), {"stride": 2, "padding": 1}),
    ((1, 2, 9, 9), ((3, 2),), {"stride": (2, 1), "dilation": 2}),
    ((1, 2, 7, 8), (2,), {"ceil_mode": True}),
    ((1, 2, 7, 8), (3, 2, 1), {"ceil_mode": True}),
    ((3, 8, 8), (2, 1), {}),
    ((64, 10, 24, 24), (2,), {}),
]


@pytest.mark.parametrize("shape,args,kw", MAX2D)
def test_max_pool2d(shape, args, kw):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    _run("max_pool2d", x, *args, **kw)
    v, i = F.max_pool2d(toolkit.tensor(x), *args, return_indices=True, **kw)
    tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), *args, return_indices=True, **kw)
    assert_close(v, tv)
    assert_close(i, ti)


@pytest.mark.parametrize("shape,args,kw", MAX2D[:3] + MAX2D[-1:])
def test_max_pool2d_split_over_threads(shape, args, kw, monkeypatch):
    """Split by planes over the threads (every call, even after a helper came too late on a busy machine), the
    values, indices and gradients are PyTorch's."""
    monkeypatch.setattr(_split, "free_cores", lambda: 2)  # as on a quiet machine, whatever else runs now
    old = _split.PARALLEL_MIN, _split.BUSY_BACKOFF
    try:
        _split.PARALLEL_MIN, _split.BUSY_BACKOFF, _split._busy[0] = 1, 0, 0
        test_max_pool2d(shape, args, kw)
        test_max_pool2d_nan_windows(kw, 2)
        test_max_pool2d_nan_windows(kw, 3)
    finally:
        _split.PARALLEL_MIN, _split.BUSY_BACKOFF = old


def test_max_pool2d_ties_and_neg_inf_and_int():
    x = np.zeros((1, 1, 4, 4), np.float32)
    x[0, 0, 2:, 2:] = -np.inf
    v, i = F.max_pool2d(toolkit.tensor(x), 2, return_indices=True)
    tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    assert_close(v, tv)
    assert_close(i, ti)
    xi = np.arange(32).reshape(2, 4, 4)
    assert_close(F.max_pool2d(toolkit.tensor(xi), 2), torch.nn.functional.max_pool2d(torch.tensor(xi), 2))


@pytest.mark.parametrize("kernel", [3, 2])
@pytest.mark.parametrize("kw", [{}, {"stride": 1}, {"stride": 3}, {"ceil_mode": True}])
def test_max_pool2d_nan_windows(kw, kernel):
    """NaN wins its window, and among several NaNs the last one scanned, on every kernel path (2x2 windows
    with stride 2 have one of their own); ties go to the first maximum."""
    x = np.random.default_rng(2).standard_normal((2, 2, 7, 7)).astype(np.float32)
    x[0, 0, 1, 1] = x[0, 0, 1, 0] = x[1, 1, 5, 6] = np.nan
    x[1, 0, 2:4, 2:4] = np.nan
    x[0, 1, 3, 3] = np.inf
    x[1, 1, 0:2, 0:2] = 1.5
    x[1, 1, 2, 3] = x[1, 1, 3, 2] = -np.inf
    v, i = F.max_pool2d(toolkit.tensor(x), kernel, return_indices=True, **kw)
    tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), kernel, return_indices=True, **kw)
    assert_close(v, tv, equal_nan=True)
    assert_close(i, ti)


@pytest.mark.parametrize("kernel", [3, 2])
@pytest.mark.parametrize("kw", [{}, {"stride": 1}, {"ceil_mode": True}])
def test_max_pool2d_backward_finds_the_forwards_maxima(kw, kernel):
    """``max_pool2d``'s gradient (``max_pool2d_backward``, the maxima found again) goes where PyTorch's does, with
    NaN and infinite windows and ties, odd plane sizes (the 2x2 one-pass kernel leaves the last row and column
    at zero), float64; and it equals the scatter at the forward's own indices."""
    x = np.random.default_rng(3).standard_normal((2, 2, 7, 9))
    x[0, 0, 1, 1] = x[0, 0, 1, 0] = x[1, 1, 5, 6] = np.nan
    x[1, 0, 2:4, 2:4] = np.nan
    x[0, 1, 3, 3] = np.inf
    x[1, 1, 0:2, 0:2] = 1.5
    x[1, 1, 2, 3] = x[1, 1, 3, 2] = -np.inf
    for dtype in (np.float32, np.float64):
        xd = x.astype(dtype)
        t, tt = toolkit.tensor(xd, requires_grad=True), torch.tensor(xd, requires_grad=True)
        y, ty = F.max_pool2d(t, kernel, **kw), torch.nn.functional.max_pool2d(tt, kernel, **kw)
        assert y.grad_fn.name() == ty.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
        g = np.random.default_rng(4).standard_normal(tuple(ty.shape)).astype(dtype)
        y.backward(toolkit.tensor(g))
        ty.backward(torch.tensor(g))
        assert_close(t.grad, tt.grad)
        _, idx = F.max_pool2d(toolkit.tensor(xd), kernel, return_indices=True, **kw)
        args = ([kernel] * 2, [kw.get("stride", kernel)] * 2, [0, 0], [1, 1], kw.get("ceil_mode", False))
        scattered = api.max_pool2d_with_indices_backward(toolkit.tensor(g), toolkit.tensor(xd), *args,
                                                                       idx)
        found = api.max_pool2d_backward(toolkit.tensor(g), toolkit.tensor(xd), *args)
        np.testing.assert_array_equal(found.numpy(), scattered.numpy())


def test_max_pool2d_backward_double_backward():
    """The gradient of ``max_pool2d_backward`` with respect to the output gradient gathers at the maxima."""
    x = toolkit.tensor(np.random.default_rng(5).standard_normal((2, 3, 6, 6)))
    g = toolkit.tensor(np.random.default_rng(6).standard_normal((2, 3, 3, 3)), requires_grad=True)
    assert toolkit.autograd.gradcheck(
        lambda a: api.max_pool2d_backward(a, x, [2, 2], [2, 2], [0, 0], [1, 1], False), (g,))
    assert toolkit.autograd.gradcheck(
        lambda a: api.max_pool2d_backward(a, x, [3, 3], [1, 1], [1, 1], [1, 1], False),
        (toolkit.tensor(np.random.default_rng(7).standard_normal((2, 3, 6, 6)), requires_grad=True),))


@pytest.mark.parametrize("shape,args,kw", [((2, 3, 10), (2,), {}), ((3, 11), (3,), {"stride": 2, "padding": 1}),
                                           ((1, 2, 9), (2, 1, 0, 2), {"ceil_mode": True})])
def test_max_pool1d(shape, args, kw):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    _run("max_pool1d", x, *args, **kw)
    v, i = F.max_pool1d(toolkit.tensor(x), *args, return_indices=True, **kw)
    tv, ti = torch.nn.functional.max_pool1d(torch.tensor(x), *args, return_indices=True, **kw)
    assert_close(v, tv)
    assert_close(i, ti)


AVG = [
    ((2, 3, 8, 8), (2,), {}),
    ((2, 3, 9, 7), (3,), {"stride": 2, "padding": 1}),
    ((2, 3, 9, 7), (3,), {"stride": 2, "padding": 1, "count_include_pad": False}),
    ((1, 2, 7, 8), (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 7, 8), (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ((1, 2, 6, 6), ((2, 3),), {"divisor_override": 5}),
    ((3, 6, 6), (2, None), {}),
]


@pytest.mark.parametrize("shape,args,kw", AVG)
def test_avg_pool2d(shape, args, kw):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    _run("avg_pool2d", x, *args, **kw)


@pytest.mark.parametrize("shape,size", [((2, 3, 8, 8), 2), ((2, 3, 7, 5), (3, 2)), ((3, 7, 9), (None, 4)),
                                        ((1, 2, 5, 5), 1), ((1, 2, 3, 3), (5, 6))])
def test_adaptive_avg_pool2d(shape, size):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    _run("adaptive_avg_pool2d", x, size)


def test_pooling_double_backward():
    x = toolkit.tensor(np.random.default_rng(0).standard_normal((1, 2, 5, 5)), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a: F.max_pool2d(a, 2, 1), (x,))
    assert toolkit.autograd.gradgradcheck(lambda a: F.avg_pool2d(a, 3, 2, 1, count_include_pad=False), (x,))
    assert toolkit.autograd.gradgradcheck(lambda a: F.adaptive_avg_pool2d(a, (3, 2)), (x,))
    x1 = toolkit.tensor(np.random.default_rng(1).standard_normal((2, 7)), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a: F.max_pool1d(a, 3, 2, 1, return_indices=True)[0], (x1,))


ERRORS = [
    (lambda: F.max_pool2d(toolkit.randn(3, 8), 2), "non-empty 3D or 4D (batch mode) tensor expected for input"),
    (lambda: F.max_pool2d(toolkit.randn(1, 3, 8, 8), 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    (lambda: F.max_pool2d(toolkit.randn(1, 3, 2, 2), 3),
     "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small"),
    (lambda: F.avg_pool2d(toolkit.randn(1, 3, 2, 2), 3),
     "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small"),
    (lambda: F.max_pool2d(toolkit.randn(1, 3, 8, 8), 2, stride=0), "stride should not be zero"),
    (lambda: F.max_pool2d(toolkit.randn(1, 3, 8, 8), 2, dilation=0),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    (lambda: F.max_pool1d(toolkit.randn(3), 1),
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[3]"),
    (lambda: F.max_pool1d(toolkit.randn(2, 8), (2, 2)),
     "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size 2"),
    (lambda: F.max_pool1d(toolkit.randn(2, 8), 2, (1, 1)),
     "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size 2"),
    (lambda: F.max_pool1d(toolkit.randn(2, 8), 2, 1, (0, 0)),
     "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got size 2"),
    (lambda: F.max_pool1d(toolkit.randn(2, 8), 2, (1, 1), return_indices=True),
     "max_pool1d() argument 'stride' should contain one int (got 2)"),
]


@pytest.mark.parametrize("fn,msg", ERRORS)
def test_errors(fn, msg):
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        fn()


def test_adaptive_avg_pool2d_int_not_implemented():
    with pytest.raises(NotImplementedError, match="\"adaptive_avg_pool2d\" not implemented for 'Long'"):
        F.adaptive_avg_pool2d(toolkit.arange(16).reshape(1, 4, 4), 2)


LAYERS = [
    ("MaxPool2d", (2,), {}),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "dilation": 1, "ceil_mode": True}),
    ("MaxPool1d", (2,), {}),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}),
    ("AvgPool2d", ((2, 3),), {}),
    ("AdaptiveAvgPool2d", ((3, None),), {}),
    ("AdaptiveAvgPool2d", (4,), {}),
]


@pytest.mark.parametrize("name,args,kw", LAYERS)
def test_layers(name, args, kw):
    m = getattr(toolkit.nn, name)(*args, **kw)
    tm = getattr(torch.nn, name)(*args, **kw)
    assert repr(m) == repr(tm)
    shape = (2, 3, 9) if "1d" in name else (2, 3, 9, 8)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_close(m(toolkit.tensor(x)), tm(torch.tensor(x)))


def test_maxpool2d_return_indices_layer():
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    v, i = toolkit.nn.MaxPool2d(2, return_indices=True)(toolkit.tensor(x))
    tv, ti = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    assert_close(v, tv)
    assert_close(i, ti)
