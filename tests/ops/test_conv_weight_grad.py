"""Weight gradients of conv1d/conv2d against PyTorch on the compiled path of ``toolkit/ops/_conv_weight_grad.py``.

The cases are generated over stride, padding, dilation, groups, output channels (every tile edge: channels and
windows that the tiles do not divide, either way round), dtype and 1-d shapes, each with an output plane long
enough for the compiled products; a spy on the kernel's entry checks that every case ran there. The output
gradient comes in dense, broadcast (``y.sum()``'s, or over each plane) and transposed; the seed Net's layers and
the benchmark's convolution are included, and double backward still runs through the registered ``convolution``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn.functional as F
from toolkit.ops import _conv_weight_grad

from ..conftest import assert_close

STRIDES = [1, 2, (2, 1)]
PADDINGS = [0, 1, (2, 0)]
DILATIONS = [1, 2, (1, 3)]
GRID = [dict(stride=s, padding=p, dilation=d, groups=g)
        for s, p, d, g in itertools.product(STRIDES, PADDINGS, DILATIONS, [1, 2])]


@pytest.fixture
def kernel_calls(monkeypatch):
    """How many times the compiled weight-gradient products ran (the real function, counted)."""
    calls = []
    real = _conv_weight_grad.conv2d

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_conv_weight_grad, "conv2d", counted)
    return calls


def _weight_grads(fn, x, w, g=None, grad="dense", **kw):
    """(toolkit's, PyTorch's) weight gradient of ``fn(x, w, **kw)`` under the output gradient ``g``."""
    tw, ew = toolkit.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    tx, ex = toolkit.tensor(x), torch.tensor(x)
    y, ey = getattr(F, fn)(tx, tw, **kw), getattr(torch.nn.functional, fn)(ex, ew, **kw)
    if grad == "sum":
        y.sum().backward()
        ey.sum().backward()
    elif grad == "expanded":  # one value per sample and channel, broadcast over the plane (strides 0)
        corner = (slice(None), slice(None)) + (slice(0, 1),) * (g.ndim - 2)
        y.backward(toolkit.tensor(g[corner]).expand(*y.shape))
        ey.backward(torch.tensor(g[corner]).expand(*ey.shape))
    elif grad == "transposed":  # the output gradient as a non-contiguous view (a tensor copies an array's layout
        # away, so the view is made on the tensors themselves)
        tg = toolkit.tensor(np.ascontiguousarray(g.swapaxes(0, 1))).transpose(0, 1)
        assert not tg.is_contiguous()
        y.backward(tg)
        ey.backward(torch.tensor(np.ascontiguousarray(g.swapaxes(0, 1))).transpose(0, 1))
    else:
        y.backward(toolkit.tensor(g))
        ey.backward(torch.tensor(g))
    return tw.grad, ew.grad, y.shape


def _check(fn, x_shape, w_shape, dtype, seed, grad="dense", **kw):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    y_shape = tuple(getattr(torch.nn.functional, fn)(torch.tensor(x), torch.tensor(w), **kw).shape)
    g = rng.standard_normal(y_shape).astype(dtype)
    got, expected, _ = _weight_grads(fn, x, w, g, grad, **kw)
    batch = x_shape[0] if len(x_shape) == len(w_shape) else 1
    assert_close(got, expected, accum=batch * math.prod(y_shape[2:]))
    assert got.stride() == expected.stride()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", GRID, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items()))
def test_conv2d_weight_grad(kw, dtype, kernel_calls):
    groups = kw["groups"]
    _check("conv2d", (5, 4, 30, 27), (6, 4 // groups, 3, 2), dtype, 0, **kw)
    assert kernel_calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(stride=s, padding=p, dilation=d, groups=g)
                                for s, p, d, g in itertools.product([1, 3], [0, 2], [1, 2], [1, 3])])
def test_conv1d_weight_grad(kw, dtype, kernel_calls):
    _check("conv1d", (4, 6, 600), (6, 6 // kw["groups"], 4), dtype, 1, **kw)
    assert kernel_calls


OUT_CHANNELS = [1, 2, 3, 5, 8, 9, 10, 13, 17, 24]
IN_CHANNELS_KERNEL = [(1, 1), (1, 3), (2, 2), (3, 3), (1, 5)]


def test_tile_edges_reach_every_tile():
    """The grid below runs each tile shape both ways round."""
    plans = {_conv_weight_grad._plan(o, c * k * k) for o in OUT_CHANNELS for c, k in IN_CHANNELS_KERNEL}
    assert plans == {(t, swap) for t in range(len(_conv_weight_grad._TILES)) for swap in (False, True)}


@pytest.mark.parametrize("out_channels", OUT_CHANNELS)
@pytest.mark.parametrize("in_channels, kernel", IN_CHANNELS_KERNEL)
def test_tile_edges(out_channels, in_channels, kernel, kernel_calls):
    _check("conv2d", (6, in_channels, 20, 19), (out_channels, in_channels, kernel, kernel), np.float32, kernel,
           padding=kernel // 2)
    assert kernel_calls


@pytest.mark.parametrize("grad", ["sum", "expanded", "transposed"])
@pytest.mark.parametrize("groups", [1, 2])
def test_output_gradient_layouts(grad, groups, kernel_calls):
    _check("conv2d", (4, 4, 18, 18), (6, 4 // groups, 3, 3), np.float32, 2, grad=grad, padding=1, groups=groups)
    assert kernel_calls


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1},
                                {"groups": 2, "dilation": (2, 1), "stride": (1, 2)}])
def test_conv_transpose2d_weight_grad(kw, kernel_calls):
    """A transposed convolution's weight gradient is the same derived convolution with the roles swapped."""
    rng = np.random.default_rng(10)
    groups = kw.get("groups", 1)
    x = rng.standard_normal((8, 4, 14, 13)).astype(np.float32)
    w = rng.standard_normal((4, 6 // groups, 3, 3)).astype(np.float32)
    y_shape = tuple(torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), **kw).shape)
    got, expected, _ = _weight_grads("conv_transpose2d", x, w, rng.standard_normal(y_shape).astype(np.float32),
                                     **kw)
    assert_close(got, expected, accum=8 * 14 * 13)
    assert kernel_calls


def test_non_contiguous_input(kernel_calls):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((20, 22, 3, 6)).astype(np.float32).transpose(3, 2, 1, 0)  # (6, 3, 22, 20)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    g = rng.standard_normal((6, 4, 20, 18)).astype(np.float32)
    got, expected, _ = _weight_grads("conv2d", x, w, g, stride=1)
    assert_close(got, expected, accum=6 * 20 * 18)
    assert kernel_calls


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # PyTorch's own copy
@pytest.mark.parametrize("padding, dilation", [("same", 1), ("same", (2, 3)), ("valid", 2)])
def test_string_padding(padding, dilation, kernel_calls):
    _check("conv2d", (4, 2, 17, 16), (4, 2, 4, 2), np.float64, 3, padding=padding, dilation=dilation)
    assert kernel_calls


def test_unbatched_input(kernel_calls):
    _check("conv2d", (3, 40, 36), (5, 3, 3, 3), np.float32, 4, padding=1)
    assert kernel_calls


@pytest.mark.parametrize("x_shape, w_shape, kw", [
    ((64, 1, 28, 28), (10, 1, 5, 5), {}),  # the seed Net's first layer
    ((64, 10, 12, 12), (20, 10, 5, 5), {}),  # its second: 64 positions, few channels
    ((64, 3, 32, 32), (64, 3, 3, 3), {"padding": 1}),  # the Conv2d benchmark
])
def test_benchmark_shapes(x_shape, w_shape, kw, kernel_calls):
    _check("conv2d", x_shape, w_shape, np.float32, 6, **kw)
    assert kernel_calls


@pytest.mark.parametrize("x_shape, w_shape", [
    ((64, 8, 8, 8), (16, 8, 3, 3)),  # 36 positions
    ((32, 4, 10, 10), (32, 4, 3, 3)),  # 64 positions, 32 channels: BLAS's GEMMs are well shaped
])
def test_short_planes_stay_on_blas(x_shape, w_shape, kernel_calls):
    """Short dot products go to the BLAS products, with the same values."""
    _check("conv2d", x_shape, w_shape, np.float32, 7)
    assert not kernel_calls


def test_nan_and_inf_propagate(kernel_calls):
    """A NaN or infinity in the input reaches the weight gradient entries whose windows hold it, as in PyTorch
    (padding taps are zeros multiplied in, not skipped)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 2, 16, 16)).astype(np.float32)
    x[1, 0, 3, 5], x[2, 1, 0, 0] = np.nan, np.inf
    w = rng.standard_normal((5, 2, 3, 3)).astype(np.float32)
    g = rng.standard_normal((4, 5, 16, 16)).astype(np.float32)
    got, expected, _ = _weight_grads("conv2d", x, w, g, padding=1)
    assert_close(got, expected, accum=4 * 16 * 16, equal_nan=True)
    assert kernel_calls


def test_double_backward(kernel_calls):
    """The weight gradient is still a registered convolution: its own gradients match PyTorch's."""
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((3, 2, 16, 15)), rng.standard_normal((4, 2, 3, 3))
    tx, tw = toolkit.tensor(x, requires_grad=True), toolkit.tensor(w, requires_grad=True)
    ex, ew = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (gw,) = toolkit.autograd.grad(F.conv2d(tx, tw, padding=1).square().sum(), [tw], create_graph=True)
    (egw,) = torch.autograd.grad(torch.nn.functional.conv2d(ex, ew, padding=1).square().sum(), [ew],
                                 create_graph=True)
    assert_close(gw, egw, accum=3 * 16 * 15 * 18)
    gw.square().sum().backward()
    egw.square().sum().backward()
    assert_close(tx.grad, ex.grad, accum=3 * 16 * 15 * 18 * 2)
    assert_close(tw.grad, ew.grad, accum=3 * 16 * 15 * 18 * 2)
    assert kernel_calls
