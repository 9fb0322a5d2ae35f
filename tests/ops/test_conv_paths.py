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


@pytest.fixture
def split_kernels(monkeypatch):
    """Every convolution large or small split over two threads (even after a late helper: this machine may be
    busy), and the names of the split kernels that ran: the forward's and the transposed convolution's slices
    of the batch, the weight gradient's channel blocks."""
    from toolkit._core import threads as _threads
    from toolkit.backends.cpu import split as _split
    from toolkit.ops import _conv_fast, _conv_weight_grad

    monkeypatch.setattr(_split, "PARALLEL_MIN", 1)
    monkeypatch.setattr(_split, "BUSY_BACKOFF", 0)
    monkeypatch.setattr(_split, "_busy", [0, 1])
    monkeypatch.setattr(_split, "free_cores", lambda: 2)  # as on a quiet machine, whatever else runs now
    monkeypatch.setitem(_threads._state, "intra", 2)
    ran = set()
    for module, name in ((_conv_fast, "_forward_samples"), (_conv_fast, "_transposed_samples"),
                         (_conv_weight_grad, "_products")):
        real = getattr(module, name)

        def spy(*args, _real=real, _name=name):
            ran.add(_name)
            return _real(*args)

        monkeypatch.setattr(module, name, spy)
    return ran


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, w_shape, kw", [CONV2D[0], CONV2D[1], CONV2D[3], CONV2D[9],
                                                   ((64, 3, 32, 32), (64, 3, 3, 3), {"padding": 1})])
def test_split_over_threads_matches_torch(x_shape, w_shape, kw, dtype, split_kernels):
    """Split over the threads, the batch's slices and the weight gradient's channel blocks give PyTorch's values,
    with and without a bias, the output gradient dense or broadcast (``y.sum()``'s)."""
    x, w, b = _data(x_shape, w_shape, dtype, w_shape[0])
    y_shape = tuple(torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **kw).shape)
    accums = _accums(x_shape, w_shape, y_shape, kw.get("groups", 1))
    _compare("conv2d", x, w, b, accums, **kw)
    _compare("conv2d", x, w, None, accums, **kw)
    assert split_kernels >= {"_forward_samples", "_transposed_samples"}
    tk = [toolkit.tensor(a, requires_grad=True) for a in (x, w)]
    th = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    F.conv2d(*tk, **kw).sum().backward()
    torch.nn.functional.conv2d(*th, **kw).sum().backward()
    for a, e, n in zip(tk, th, accums[1:]):
        assert_close(a.grad, e.grad, accum=n)


def test_split_weight_gradient_blocks(split_kernels):
    """The compiled weight gradient's channel blocks, computed on two threads, add up to PyTorch's gradient."""
    x, w, b = _data((64, 3, 32, 32), (64, 3, 3, 3), np.float32, 64)
    _compare("conv2d", x, w, b, _accums((64, 3, 32, 32), (64, 3, 3, 3), (64, 64, 32, 32), 1), padding=1)
    assert "_products" in split_kernels


def test_threads_convolving_at_once_keep_their_own_buffers():
    """Two threads' convolutions of the same shapes (``jit.fork`` tasks, a user's threads) each get their own
    work buffers: every result equals the one computed alone."""
    import threading

    rng = np.random.default_rng(11)
    w = toolkit.tensor(rng.standard_normal((8, 3, 3, 3)).astype(np.float32))
    xs = [toolkit.tensor(rng.standard_normal((4, 3, 16, 16)).astype(np.float32)) for _ in range(2)]
    alone = [F.conv2d(x, w, padding=1).numpy() for x in xs]
    mismatches = []

    def run(k):
        for _ in range(200):
            if not np.array_equal(F.conv2d(xs[k], w, padding=1).numpy(), alone[k]):
                mismatches.append(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not mismatches


@pytest.mark.parametrize("x_shape, w_shape, kw", TRANSPOSED[:3])
def test_split_transposed_convolution_matches_torch(x_shape, w_shape, kw, split_kernels):
    """ConvTranspose2d's own forward (the transposed products) and its gradients, split over the threads."""
    groups = kw.get("groups", 1)
    x, w, b = _data(x_shape, w_shape, np.float32, w_shape[1] * groups)
    y = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), **kw)
    accums = (w_shape[0] // groups * math.prod(w_shape[2:]), math.prod(w_shape[1:]),
              x_shape[0] * math.prod(x_shape[2:]), x_shape[0] * math.prod(y.shape[2:]))
    _compare("conv_transpose2d", x, w, b, accums, **kw)
    assert split_kernels >= {"_forward_samples", "_transposed_samples"}


def test_flat_views_of_every_layout():
    """``_flat`` gives the operand's memory as a flat array with its element strides, for dense, transposed,
    strided and overlapping layouts (one whose strides span exactly as many elements as it holds, though it
    repeats some and skips others, is not dense: numpy's ravel copies it, and the general view serves it)."""
    from numpy.lib.stride_tricks import as_strided

    from toolkit.ops._conv_fast import _flat

    base = np.arange(40.0)
    layouts = [np.arange(24.0).reshape(2, 3, 4), np.arange(120.0).reshape(4, 5, 6).transpose(1, 0, 2),
               base[::3].reshape(2, 7)[:, 1:], as_strided(base, (2, 2, 2), (8, 8, 40)),
               as_strided(base, (3, 4), (0, 8))]
    for a in layouts:
        flat, strides = _flat(a)
        assert np.shares_memory(flat, a) or not np.shares_memory(base, a)
        np.testing.assert_array_equal(as_strided(flat, a.shape, tuple(s * a.itemsize for s in strides)), a)
