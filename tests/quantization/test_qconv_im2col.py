"""The compiled im2col of quantized convolutions (``_qconv_im2col``) against numpy's strided window copy, byte for
byte: every geometry (stride, padding, dilation, groups; the unit case has a loop of its own), inputs of any
strides, rows padded with zeros to whole words, channels-last inputs unfolded run by run; the zero-padded rows
read by the int8 product in place equal the unpadded product; and convolutions of channels-last outputs equal
PyTorch's."""

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import _qconv_im2col as I
from toolkit.ops import _qgemm_numba as G
from toolkit.ops import registry as R

from .torch_twins import tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")

GEOMETRIES = [  # stride, padding, dilation, groups, kernel
    ((1, 1), (0, 0), (1, 1), 1, (5, 5)),
    ((1, 1), (0, 0), (1, 1), 2, (3, 2)),
    ((2, 1), (1, 2), (1, 1), 2, (3, 2)),
    ((1, 2), (1, 0), (2, 1), 1, (2, 3)),
    ((2, 2), (2, 2), (2, 2), 4, (1, 3)),
    ((1, 1), (4, 3), (1, 1), 1, (2, 2)),  # padding wider than the kernel: whole rows of the zero point
    ((3, 3), (0, 0), (1, 1), 1, (1, 1)),
]


def _reference(x, zp, stride, padding, dilation, groups, kh, kw):
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, w = x.shape
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=zp)
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(2, 3))
    win = win[:, :, ::sh, ::sw, ::dh, ::dw][:, :, :ho, :wo]
    cols = win.reshape(n, groups, c // groups, ho, wo, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
    return np.ascontiguousarray(cols).reshape(groups, n * ho * wo, (c // groups) * kh * kw)


@pytest.mark.parametrize("geometry", range(len(GEOMETRIES)))
@pytest.mark.parametrize("channels_last", [False, True])
def test_im2col_equals_the_strided_window_copy(geometry, channels_last):
    stride, padding, dilation, groups, (kh, kw) = GEOMETRIES[geometry]
    rng = np.random.default_rng(geometry)
    x = rng.integers(0, 256, (3, 4 * groups, 9, 11), dtype=np.uint8)
    if channels_last:  # a quantized convolution's output, read as (N, C, H, W)
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    expected = _reference(x, 37, stride, padding, dilation, groups, kh, kw)
    k = expected.shape[2]
    for kp in (k, -(-k // 4) * 4 + 4):
        cols = I.im2col(x, 37, stride, padding, dilation, groups, kh, kw, kp)
        assert cols.shape == expected.shape[:2] + (kp,)
        np.testing.assert_array_equal(cols[..., :k], expected)
        assert not cols[..., k:].any()


@pytest.mark.skipif(not G.FAST, reason="the CPU (or numba's target) has no AVX-512 VNNI, AVX-VNNI or AVX2")
@pytest.mark.parametrize("w_zp", [0, 3])
def test_product_reads_zero_padded_rows_in_place(w_zp):
    """Rows of k activations and zeros up to a whole word give the product of the k activations alone."""
    rng = np.random.default_rng(w_zp)
    m, n, k = 50, 13, 25
    x = rng.integers(0, 256, (m, k), dtype=np.uint8)
    padded = np.zeros((m, 28), np.uint8)
    padded[:, :k] = x
    packed = G.pack_weight(rng.integers(-128, 128, (n, k), dtype=np.int8))
    offset = rng.standard_normal(n).astype(np.float32) * 50
    mult = np.full(n, 0.002, np.float32)
    expected = G.gemm_u8s8_requantize(x, 17, packed, w_zp, offset, mult, 100, 0, 255)
    if G._vnni.STEP == 4:
        np.testing.assert_array_equal(G.gemm_u8s8_requantize(padded, 17, packed, w_zp, offset, mult, 100, 0, 255, k),
                                      expected)
    portable = G.pack_weight(rng.integers(-128, 128, (n, k), dtype=np.int8), fast=False)
    np.testing.assert_array_equal(G.gemm_u8s8_requantize(x, 17, portable, w_zp, offset, mult, 100, 0, 255, k),
                                  G.gemm_u8s8_requantize(x, 17, portable, w_zp, offset, mult, 100, 0, 255))


def test_channels_last_im2col_orders_taps_by_row_column_channel():
    rng = np.random.default_rng(1)
    x = np.ascontiguousarray(rng.integers(0, 256, (2, 6, 7, 9), dtype=np.uint8).transpose(0, 2, 3, 1))
    x = x.transpose(0, 3, 1, 2)  # channels last, read as (N, C, H, W)
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 2), axis=(2, 3))  # (N, C, Ho, Wo, kh, kw)
    expected = np.ascontiguousarray(win.transpose(0, 2, 3, 4, 5, 1)).reshape(1, -1, 36)
    cols = I.im2col_channels_last(x, 3, 2, 40)
    np.testing.assert_array_equal(cols[..., :36], expected)
    assert not cols[..., 36:].any()


@pytest.fixture
def fbgemm():
    """PyTorch's fbgemm engine (whose requantization toolkit follows) for the test, the engine before restored."""
    before = torch.backends.quantized.engine
    torch.backends.quantized.engine = "fbgemm"
    yield
    torch.backends.quantized.engine = before


@pytest.mark.parametrize("per_channel,w_zp", [(True, 0), (False, 0), (False, 4)])
def test_convolution_of_a_channels_last_output_equals_torch(fbgemm, per_channel, w_zp):
    """conv -> max_pool -> conv and conv -> conv, the second convolution reading its channels-last input run by
    run, integer for integer with PyTorch."""
    g = torch.Generator().manual_seed(2)

    def weight(o, c):
        w = torch.randn(o, c, 5, 5, generator=g) * 0.1
        if per_channel:
            return torch.quantize_per_channel(w, torch.rand(o, generator=g, dtype=torch.float64) * 0.01 + 0.005,
                                              torch.zeros(o, dtype=torch.long), 0, torch.qint8)
        return torch.quantize_per_tensor(w, 0.01, w_zp, torch.qint8)

    w1, w2, b1, b2 = weight(10, 3), weight(20, 10), torch.randn(10, generator=g), torch.randn(20, generator=g)
    x = torch.quantize_per_tensor(torch.rand(4, 3, 28, 28, generator=g), 0.01, 3, torch.quint8)
    geometry = ([1, 1], [0, 0], [1, 1], 1)
    tconv = torch.ops.quantized.conv2d_relu
    p1, p2 = (torch.ops.quantized.conv2d_prepack(w, b, *geometry) for w, b in ((w1, b1), (w2, b2)))
    t1 = tconv(x, p1, 0.02, 0)
    theirs = [t1, tconv(torch.nn.functional.max_pool2d(t1, 2), p2, 0.03, 5), tconv(t1, p2, 0.03, 5)]
    prepack, kconv = R.get("quantized::conv2d_prepack"), R.get("quantized::conv2d_relu.new")
    k1, k2 = (prepack(tk(w), tk(b), *geometry) for w, b in ((w1, b1), (w2, b2)))
    o1 = kconv(tk(x), k1, 0.02, 0)
    pooled = toolkit.nn.functional.max_pool2d(o1, 2)
    assert pooled._data.strides[1] == 1  # channels last, as the convolution wrote it
    ours = [o1, kconv(pooled, k2, 0.03, 5), kconv(o1, k2, 0.03, 5)]
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr().numpy())
