"""im2col and col2im: the sliding-window unfold and fold behind ``F.unfold`` and ``F.fold``.

``im2col`` copies each (dilated, strided, zero-padded) kernel window of a
(N, C, H, W) input into a column of a (N, C*kh*kw, L) matrix; ``col2im`` sums
such columns back into an image. Each is the other's adjoint, so each one's
derivative is the other op and double backward works.
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from . import api
from .registry import NN, op


def _pair(v, name: str, op_name: str) -> tuple:
    v = tuple(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(f"{op_name}(): {name} must have 2 elements, but got {len(v)}")
    return v


def _params(op_name, kernel_size, dilation, padding, stride):
    k = _pair(kernel_size, "kernel_size", op_name)
    d = _pair(dilation, "dilation", op_name)
    p = _pair(padding, "padding", op_name)
    s = _pair(stride, "stride", op_name)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
                           f"kernel_width: {k[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} "
                           f"dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    return k, d, p, s


def _blocks(size, k, d, p, s) -> tuple:
    return tuple((size[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2))


def _im2col_shape(shape, kernel_size, dilation, padding, stride) -> tuple:
    k, d, p, s = _params("im2col", kernel_size, dilation, padding, stride)
    shape = tuple(shape)
    if len(shape) < 3:  # PyTorch reads the input's dimension 2 before checking its rank
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(len(shape), 1)}, "
                         f"{max(len(shape), 1) - 1}], but got 2)")
    if len(shape) not in (3, 4) or any(n == 0 for n in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    oh, ow = _blocks(shape[-2:], k, d, p, s)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({shape[-2]}, {shape[-1]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of "
                           f"the array of sliding blocks as ({oh}, {ow}), but its components must be at least one.")
    return shape[:-3] + (shape[-3] * k[0] * k[1], oh * ow)


def _col2im_shape(shape, output_size, kernel_size, dilation, padding, stride) -> tuple:
    k, d, p, s = _params("col2im", kernel_size, dilation, padding, stride)
    shape = tuple(shape)
    if len(output_size) != 2:
        raise RuntimeError(f"Expected output_size to have 2 elements, but got {len(output_size)}")
    if len(shape) not in (2, 3) or any(n == 0 for n in shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    if shape[-2] % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[-2]} and kernel_size=({k[0]}, {k[1]}).")
    oh, ow = _blocks(output_size, k, d, p, s)
    if oh * ow != shape[-1]:
        raise RuntimeError(f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected "
                           f"size of input's dimension 2 to match the calculated number of sliding blocks {oh} * "
                           f"{ow} = {oh * ow}, but got input.size(2)={shape[-1]}.")
    return shape[:-2] + (shape[-2] // (k[0] * k[1]), output_size[0], output_size[1])


def _windows(k, d, s, oh, ow):
    """For each kernel offset (i, j): the row and column slices of the padded image it reads."""
    for i in range(k[0]):
        for j in range(k[1]):
            yield i, j, slice(i * d[0], i * d[0] + s[0] * (oh - 1) + 1, s[0]), \
                slice(j * d[1], j * d[1] + s[1] * (ow - 1) + 1, s[1])


@op("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor", kind=NN,
    method=False, function=False)
def im2col(self, kernel_size, dilation, padding, stride):
    """Sliding (kh, kw) windows of a (N, C, H, W) input as columns of a (N, C*kh*kw, L) matrix."""
    _im2col_shape(self.shape, kernel_size, dilation, padding, stride)
    k, d, p, s = _params("im2col", kernel_size, dilation, padding, stride)
    batched = self.ndim == 4
    x = self if batched else self[None]
    n, c, h, w = x.shape
    oh, ow = _blocks((h, w), k, d, p, s)
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    out = np.empty((n, c, k[0], k[1], oh, ow), dtype=self.dtype)
    for i, j, rows, cols in _windows(k, d, s, oh, ow):
        out[:, :, i, j] = xp[:, :, rows, cols]
    out = out.reshape(n, c * k[0] * k[1], oh * ow)
    return out if batched else out[0]


@op("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
    "int[2] stride) -> Tensor", kind=NN, method=False, function=False)
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    """Sum (N, C*kh*kw, L) columns of sliding windows back into a (N, C, *output_size) image."""
    _col2im_shape(self.shape, output_size, kernel_size, dilation, padding, stride)
    k, d, p, s = _params("col2im", kernel_size, dilation, padding, stride)
    batched = self.ndim == 3
    cols = self if batched else self[None]
    h, w = output_size
    oh, ow = _blocks((h, w), k, d, p, s)
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    cols = cols.reshape(n, c, k[0], k[1], oh, ow)
    out = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dtype=self.dtype)
    for i, j, rows, cs in _windows(k, d, s, oh, ow):
        out[:, :, rows, cs] += cols[:, :, i, j]
    out = np.ascontiguousarray(out[:, :, p[0]:p[0] + h, p[1]:p[1] + w])
    return out if batched else out[0]


@im2col.meta_rule
def _(self, kernel_size, dilation, padding, stride):
    return TensorMeta(_im2col_shape(self.shape, kernel_size, dilation, padding, stride), self.dtype, self.device)


@col2im.meta_rule
def _(self, output_size, kernel_size, dilation, padding, stride):
    return TensorMeta(_col2im_shape(self.shape, output_size, kernel_size, dilation, padding, stride), self.dtype,
                      self.device)


@im2col.grad
def _(grad, self_shape, kernel_size, dilation, padding, stride):
    return api.col2im(grad, list(self_shape[-2:]), kernel_size, dilation, padding, stride)


@col2im.grad
def _(grad, kernel_size, dilation, padding, stride):
    return api.im2col(grad, kernel_size, dilation, padding, stride)


@im2col.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 5)), [2, 2], [1, 1], [0, 0], [1, 1]), {}
    yield (u(-1, 1, (2, 5, 5)), [3, 2], [1, 2], [1, 0], [2, 1]), {}
    yield (u(-1, 1, (1, 1, 6, 6)), [2, 3], [2, 1], [1, 1], [1, 2]), {}


@col2im.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 8, 12)), [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]), {}
    yield (u(-1, 1, (6, 9)), [5, 5], [3, 2], [1, 2], [1, 0], [2, 1]), {}
    yield (u(-1, 1, (1, 6, 18)), [6, 6], [2, 3], [2, 1], [1, 1], [1, 2]), {}
