"""Shape ops on the device: joins, flips, rolls, repeats, triangles, diagonals, slice/select writes, view(dtype).

Almost every op here is a strided view plus a copy: ``cat`` copies each input
into its slice of the output, ``flip`` copies a view with negated strides,
``repeat``/``tile``/``repeat_interleave`` copy a zero-stride (broadcast) view
of the input into the output seen as (copies, size) pairs, and the diagonal
ops copy into a diagonal view of zeros. The copies are the strided map kernel
of :mod:`.codegen`, so every input layout works. Shapes, dtypes and errors
come from the CPU ops' own shape helpers and meta rules.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core import dtypes as _dt
from ..._core.shape import contiguous_strides, wrap_dim
from ...ops import registry as R
from ...ops.shape import (
    cat_shape,
    interleave_dim,
    promoted_dtype,
    repeat_shape,
    stack_plan,
    stack_shape,
    tile_reps,
)
from ...ops.shape_order import flip_dims, roll_dims
from . import runtime
from .array import CudaArray, copy_into, copy_strided, full
from .codegen import run_map
from .masked import repeat_counts
from .registration import meta_of, register_table


def _narrow(a: CudaArray, dim: int, start: int, length: int, step: int = 1) -> CudaArray:
    """The view ``a[..., start:start + length * step:step, ...]`` along ``dim``."""
    shape = list(a.shape)
    shape[dim] = length
    strides = list(a.strides)
    strides[dim] *= step
    return a.view_of(tuple(shape), tuple(strides), a.offset + start * a.estrides[dim])


def _np_dtypes(arrays) -> list:
    return [_dt.from_numpy_dtype(a.dtype) for a in arrays]


# ---------------------------------------------------------------------------------------------
# cat, stack and the *stack family
# ---------------------------------------------------------------------------------------------
def _cat(arrays: list, dim: int, name: str) -> CudaArray:
    shape, d, kept = cat_shape([a.shape for a in arrays], dim, name)
    out = CudaArray.empty(shape, promoted_dtype(_np_dtypes(arrays)).np)
    pos = 0
    for i in kept:
        a = arrays[i]
        if a.size:
            copy_into(_narrow(out, d, pos, a.shape[d]), a)
        pos += a.shape[d]
    return out


def _cat_kernel(name: str):
    def kernel(tensors, dim=0):
        return _cat(tensors, dim, name)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def stack(tensors, dim=0):
    _, d = stack_shape([a.shape for a in tensors], dim)
    return _cat([a.view_of(a.shape[:d] + (1,) + a.shape[d:], a.strides[:d] + (0,) + a.strides[d:], a.offset)
                 for a in tensors], d, "stack")


def _joined(name: str):
    def kernel(tensors):
        promoted, dim = stack_plan(name, [a.shape for a in tensors])
        return _cat([a.reshape(s) for a, s in zip(tensors, promoted)], dim, name)

    kernel.__name__ = f"{name}_cuda"
    return kernel


# ---------------------------------------------------------------------------------------------
# flip, roll
# ---------------------------------------------------------------------------------------------
def _flipped(a: CudaArray, axes) -> CudaArray:
    strides, offset = list(a.strides), a.offset
    for ax in axes:
        if a.shape[ax] > 1:
            offset += (a.shape[ax] - 1) * a.estrides[ax]
            strides[ax] = -strides[ax]
    return copy_strided(a.view_of(a.shape, tuple(strides), offset) if a.size else a)


def flip(self, dims):
    axes = flip_dims(self.ndim, dims)
    return _flipped(self, axes) if self.ndim else copy_strided(self)


def fliplr(self):
    meta_of(R.get("fliplr"), [self])
    return _flipped(self, (1,))


def flipud(self):
    meta_of(R.get("flipud"), [self])
    return _flipped(self, (0,))


def roll(self, shifts, dims=()):
    axes = roll_dims(self.ndim, shifts, dims)
    if not axes:
        return roll(self.reshape((-1,)), shifts[:1], (0,)).reshape(self.shape)
    x = self
    for shift, ax in zip(shifts, axes):
        n = x.shape[ax]
        out = CudaArray.empty(x.shape, x.dtype)
        if x.size:
            s = shift % n
            copy_into(_narrow(out, ax, s, n - s), _narrow(x, ax, 0, n - s))
            if s:
                copy_into(_narrow(out, ax, 0, s), _narrow(x, ax, n - s, s))
        x = out
    return x if x is not self else copy_strided(self)


# ---------------------------------------------------------------------------------------------
# repeat, tile, repeat_interleave
# ---------------------------------------------------------------------------------------------
def _tiled(self, reps, name: str) -> CudaArray:
    padded, shape = repeat_shape(self.shape, reps, name)
    lead = len(padded) - self.ndim
    src_strides = (0,) * lead + self.strides
    split, src = [], []
    for p, r, st in zip(padded, reps, src_strides):
        split += [r, p]
        src += [0, st]
    out = CudaArray.empty(shape, self.dtype)
    if out.size:
        dst = out.view_of(tuple(split), contiguous_strides(tuple(split), out.itemsize), 0)
        copy_into(dst, self.view_of(tuple(split), tuple(src), self.offset))
    return out


def repeat(self, repeats):
    return _tiled(self, tuple(repeats), "repeat")


def tile(self, dims):
    return _tiled(self, tile_reps(self.ndim, dims), "tile")


def repeat_interleave(self, repeats, dim=None, output_size=None):
    meta = meta_of(R.get("repeat_interleave", "self_int"), [self, repeats, dim, output_size])
    d, _ = interleave_dim(self.shape, dim)
    x, d = (self.reshape((-1,)), 0) if d is None else (self, d)
    shape = x.shape[:d] + (x.shape[d], repeats) + x.shape[d + 1:]
    out = CudaArray.empty(tuple(meta.shape), self.dtype)
    if out.size:
        src = x.view_of(shape, x.strides[:d + 1] + (0,) + x.strides[d + 1:], x.offset)
        copy_into(out.view_of(shape, contiguous_strides(shape, out.itemsize), 0), src)
    return out


def _counts(repeats: CudaArray, n: int) -> CudaArray:
    """The CPU op's checks on a repeats tensor, then the counts as contiguous int64 of length ``n``."""
    if repeats.dtype.kind not in "iu":
        raise NotImplementedError(f"repeat_interleave: \"repeat_interleave_cpu\" not implemented for '{repeats.dtype}'")
    if repeats.ndim > 1:
        raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
    r = repeats.reshape((-1,))
    if r.size == 1:
        r = r.view_of((n,), (0,), r.offset)
    elif r.size != n:
        raise RuntimeError("repeat_interleave: repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.size} and input.size = {n}")
    return copy_strided(r, np.int64)


def _positions(counts: CudaArray, output_size) -> CudaArray:
    idx, negative = repeat_counts(counts)
    if negative:
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    if output_size is not None and output_size != idx.size:
        raise RuntimeError("repeat_interleave: allocated size does not match required size")
    return idx


def repeat_interleave_tensor(self, repeats, dim=None, output_size=None):
    d, n = interleave_dim(self.shape, dim)
    idx = _positions(_counts(repeats, n), output_size)
    x, d = (self.reshape((-1,)), 0) if d is None else (self, d)
    return R.get("index_select").kernels["cuda"](x, d, idx)


def repeat_interleave_counts(repeats, output_size=None):
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave: repeat_interleave only accept 1D vector as repeat")
    return copy_strided(_positions(_counts(repeats, repeats.size), output_size), repeats.dtype)


# ---------------------------------------------------------------------------------------------
# tril, triu, diagonals, unfold_backward
# ---------------------------------------------------------------------------------------------
@functools.cache
def _tri_kernel():

    @cuda.jit
    def k(out, n, rows, cols, diagonal, lower, zero):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            c = i % cols
            r = (i // cols) % rows
            if (lower and c - r > diagonal) or (not lower and c - r < diagonal):
                out[i] = zero

    return k


def _tri(name: str, lower: bool):
    def kernel(self, diagonal=0):
        meta_of(R.get(name), [self, diagonal])
        out = copy_strided(self)
        if out.size:
            runtime.launch(_tri_kernel(), out.size, out.buf, out.size, self.shape[-2], self.shape[-1], diagonal,
                           lower, out.dtype.type(0))
        return out

    kernel.__name__ = f"{name}_cuda"
    return kernel


def _diagonal_of(a: CudaArray, offset: int, dim1: int, dim2: int) -> CudaArray:
    return R.get("diagonal").kernels["cuda"](a, offset, dim1, dim2)


def diag(self, diagonal=0):
    meta = meta_of(R.get("diag"), [self, diagonal])
    if self.ndim == 2:
        return copy_strided(_diagonal_of(self, diagonal, 0, 1))
    out = full(tuple(meta.shape), 0, self.dtype)
    if self.size:
        copy_into(_diagonal_of(out, diagonal, 0, 1), self)
    return out


def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    meta = meta_of(R.get("diag_embed"), [self, offset, dim1, dim2])
    out = full(tuple(meta.shape), 0, self.dtype)
    if self.size:
        n = out.ndim
        copy_into(_diagonal_of(out, offset, wrap_dim(dim1, n), wrap_dim(dim2, n)), self)
    return out


def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    meta_of(R.get("diagonal_backward"), [grad_output, input_sizes, offset, dim1, dim2])
    out = full(tuple(input_sizes), 0, grad_output.dtype)
    if grad_output.size:
        copy_into(_diagonal_of(out, offset, dim1, dim2), grad_output)
    return out


def unfold_backward(grad_in, input_sizes, dim, size, step):
    meta_of(R.get("unfold_backward"), [grad_in, input_sizes, dim, size, step])
    shape = tuple(input_sizes)
    if not shape:
        return unfold_backward(grad_in.reshape((1, size)), (1,), 0, size, step).reshape(())
    d = wrap_dim(dim, len(shape))
    out = full(shape, 0, grad_in.dtype)
    windows = grad_in.shape[d]
    if not windows or not grad_in.size:
        return out
    last = grad_in.ndim - 1
    for k in range(size):
        part = _narrow(out, d, k, windows, step)
        g = grad_in.view_of(grad_in.shape[:-1], grad_in.strides[:-1], grad_in.offset + k * grad_in.estrides[last])
        if step >= size:
            copy_into(part, g)  # windows do not overlap: each position is written once
        else:
            run_map("a + b", part, {"a": part, "b": g}, {})
    return out


# ---------------------------------------------------------------------------------------------
# select_scatter, slice_scatter, view(dtype)
# ---------------------------------------------------------------------------------------------
def _scatter_into(self, src, view_of_out, name: str) -> CudaArray:
    out = copy_strided(self)
    view = view_of_out(out)
    if view.shape != src.shape:
        raise RuntimeError(f"{name}: Expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")
    if view.size:
        copy_into(view, src)
    return out


def select_scatter(self, src, dim, index):
    meta_of(R.get("select_scatter"), [self, src, dim, index])
    return _scatter_into(self, src, lambda o: R.get("select").kernels["cuda"](o, dim, index), "select_scatter")


def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, self.ndim, "slice_scatter")
    lo, _, _ = slice(start, end, step).indices(self.shape[d])
    n = len(range(*slice(start, end, step).indices(self.shape[d])))
    return _scatter_into(self, src, lambda o: _narrow(o, d, lo if n else 0, n, step), "slice_scatter")


def view_dtype(self, dtype):
    """The same device bytes as ``dtype``: the CPU kernel decides on a stand-in host view, mapped back."""
    host = np.empty(max(self.buf.shape[0], 1), self.dtype)
    view = np.lib.stride_tricks.as_strided(host[self.offset:], self.shape, self.strides) if self.size \
        else np.empty(self.shape, self.dtype)
    r = R.get("view", "dtype").kernels["cpu"](view, dtype)
    buf = self.buf.view(dtype.np)
    if not r.size:
        return CudaArray(buf, 0, r.shape, r.strides, dtype.np, self.root())
    byte = r.__array_interface__["data"][0] - host.__array_interface__["data"][0]
    return CudaArray(buf, byte // dtype.itemsize, r.shape, r.strides, dtype.np, self.root())


def register() -> list:
    table = {
        ("cat", ""): _cat_kernel("cat"), ("concat", ""): _cat_kernel("concat"),
        ("concatenate", ""): _cat_kernel("concatenate"), ("stack", ""): stack,
        ("hstack", ""): _joined("hstack"), ("vstack", ""): _joined("vstack"), ("dstack", ""): _joined("dstack"),
        ("flip", ""): flip, ("fliplr", ""): fliplr, ("flipud", ""): flipud, ("roll", ""): roll,
        ("repeat", ""): repeat, ("tile", ""): tile, ("repeat_interleave", "self_int"): repeat_interleave,
        ("repeat_interleave", "self_Tensor"): repeat_interleave_tensor,
        ("repeat_interleave", "Tensor"): repeat_interleave_counts,
        ("tril", ""): _tri("tril", True), ("triu", ""): _tri("triu", False), ("diag", ""): diag,
        ("diag_embed", ""): diag_embed, ("diagonal_backward", ""): diagonal_backward,
        ("unfold_backward", ""): unfold_backward, ("select_scatter", ""): select_scatter,
        ("slice_scatter", ""): slice_scatter, ("view", "dtype"): view_dtype,
    }
    return register_table(table)
