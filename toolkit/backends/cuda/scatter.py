"""Scatter and advanced indexing on the device: scatter (all overloads), scatter_add, index_*, index, index_put.

Every write op is one of two shapes. Row writes (``index_put``, ``index_add``,
``index_copy``, ``index_fill``) move the indexed dims first and make the target
contiguous, so each index names a whole row; element writes (``scatter``)
compute each source element's flat target position. Repeated targets are
resolved on the device: ``cuda.atomic.add`` accumulates, a plain write keeps
the last writer (an ``atomic.max`` over item numbers, so the result is the
CPU's), and ``reduce='multiply'`` lets the first writer of a target multiply
all its items in order. Indices are bounds-checked by a kernel that records
the first bad position in a one-element flag read back once, so a bad index
raises the CPU kernel's error instead of corrupting memory. Masks used as
indices become their ``nonzero`` coordinates (one count read back, as in PyTorch).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core import dtypes as _dt
from ..._core.shape import broadcast_shapes_or_none, wrap_dim
from ...ops import registry as R
from ...ops.indexing import MASK_INDEX_DTYPES, index_shape
from . import runtime
from .array import CudaArray, copy_into, copy_strided, fill, full, to_device
from .codegen import run_map, typed_scalar
from .indexing import take_rows
from .masked import as_1d, broadcast, checked_index, nonzero
from .registration import meta_of, register_table

_ATOMIC_ADD = {np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64, np.float32, np.float64)}


@functools.cache
def _k():
    """The kernels, compiled on first use."""

    @cuda.jit
    def scatter_pos(idx, n, ishape, ostrides, d, pos):
        """The flat target position of each index element: its own coordinates, with ``idx`` along ``d``."""
        for q in range(cuda.grid(1), n, cuda.gridsize(1)):
            r = q
            t = 0
            for k in range(len(ishape) - 1, -1, -1):
                c = r % ishape[k]
                r //= ishape[k]
                t += (idx[q] if k == d else c) * ostrides[k]
            pos[q] = t

    @cuda.jit
    def writer(pos, n, win, last):
        for q in range(cuda.grid(1), n, cuda.gridsize(1)):
            if last:
                cuda.atomic.max(win, pos[q], q)
            else:
                cuda.atomic.min(win, pos[q], q)

    @cuda.jit
    def set_rows(out, pos, src, n, row, win):
        for i in range(cuda.grid(1), n * row, cuda.gridsize(1)):
            q = i // row
            if win[pos[q]] == q:
                out[pos[q] * row + i % row] = src[i]

    @cuda.jit
    def add_rows(out, pos, src, n, row):
        for i in range(cuda.grid(1), n * row, cuda.gridsize(1)):
            cuda.atomic.add(out, pos[i // row] * row + i % row, src[i])

    @cuda.jit
    def mul_rows(out, pos, src, n, row, win):
        for i in range(cuda.grid(1), n * row, cuda.gridsize(1)):
            q = i // row
            r = i % row
            p = pos[q]
            if win[p] == q:
                acc = out[p * row + r]
                for j in range(q, n):
                    if pos[j] == p:
                        acc *= src[j * row + r]
                out[p * row + r] = acc
    return dict(scatter_pos=scatter_pos, writer=writer, set_rows=set_rows, add_rows=add_rows, mul_rows=mul_rows)


# ---------------------------------------------------------------------------------------------
# Building blocks: checked indices, prefix sums, row writes
# ---------------------------------------------------------------------------------------------
def write_rows(target: CudaArray, pos: CudaArray, src: CudaArray, mode: str) -> CudaArray:
    """``target[pos[q]] (=, +=, *=) src[q]`` over rows; ``target`` (P, ...) and ``src`` (n, ...) contiguous.

    Returns the target written (a new array when the dtype has no atomic add).
    """
    n = pos.size
    if n == 0 or target.size == 0:
        return target
    rows = target.shape[0]
    row = target.size // rows
    ks = _k()
    blocks, threads = runtime.launch_1d(n * row)
    if mode == "add":
        work = target if target.dtype in _ATOMIC_ADD else copy_strided(target, np.int64)
        s = src if src.dtype == work.dtype else copy_strided(src, work.dtype)
        ks["add_rows"][blocks, threads](work.flat_device(), pos.buf, s.flat_device(), n, row)
        return work if work is target else copy_strided(work, target.dtype)
    win = full((rows,), -1 if mode == "set" else n, np.int64)
    runtime.launch(ks["writer"], n, pos.buf, n, win.buf, mode == "set")
    k = ks["set_rows"] if mode == "set" else ks["mul_rows"]
    k[blocks, threads](target.flat_device(), pos.buf, src.flat_device(), n, row, win.buf)
    return target


def _moved_first(a: CudaArray, dims: list) -> tuple:
    """(``a`` with ``dims`` first, contiguous, as (prod of dims, rest...); the permutation)."""
    perm = list(dims) + [d for d in range(a.ndim) if d not in dims]
    t = copy_strided(a.transpose(perm))
    lead = math.prod(a.shape[d] for d in dims)
    return t.reshape((lead,) + t.shape[len(dims):]), perm


def _moved_back(w: CudaArray, shape: tuple, perm: list) -> CudaArray:
    w = w.reshape(tuple(shape[p] for p in perm))
    return copy_strided(w.transpose(tuple(int(i) for i in np.argsort(perm))))


# ---------------------------------------------------------------------------------------------
# scatter, scatter_add
# ---------------------------------------------------------------------------------------------
def _scatter(self, dim, index, src, value, reduce, name, overload):
    meta_of(R.get(name, overload), [self, dim, index] + ([src] if src is not None else [value])
            + ([reduce] if overload in ("reduce", "value_reduce") else []))
    out = copy_strided(self)
    target, ix = as_1d(out), as_1d(index)
    if ix.size == 0:
        return out
    d = wrap_dim(dim, target.ndim)
    idx, bad = checked_index(ix, target.shape[d], allow_negative=False)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {target.shape[d]}")
    pos = CudaArray.empty((idx.size,), np.int64)
    runtime.launch(_k()["scatter_pos"], idx.size, idx.buf, idx.size, tuple(ix.shape), target.estrides, d, pos.buf)
    if src is not None:
        s = as_1d(src)
        vals = copy_strided(s.view_of(ix.shape, s.strides, s.offset))
    else:
        vals = full(ix.shape, value, self.dtype)
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    mode = {None: "set", "add": "add", "multiply": "mul"}[reduce]
    flat = out.reshape((out.size,))
    return write_rows(flat, pos, vals.reshape((-1,)), mode).reshape(out.shape)


def _scatter_kernel(overload: str, with_src: bool, with_reduce: bool, name: str = "scatter"):
    def kernel(self, dim, index, x, reduce=None):
        src, value = (x, None) if with_src else (None, x)
        if name == "scatter_add":
            reduce = "add"
        return _scatter(self, dim, index, src, value, reduce if (with_reduce or name == "scatter_add") else None,
                        name, overload)

    kernel.__name__ = f"{name}_{overload}_cuda"
    return kernel


# ---------------------------------------------------------------------------------------------
# index_add, index_copy, index_fill
# ---------------------------------------------------------------------------------------------
def _index_write(self, dim, index, rows, how, allow_negative, exc):
    out = as_1d(self)
    d = wrap_dim(dim, out.ndim)
    idx, bad = checked_index(as_1d(index), out.shape[d], allow_negative)
    if bad is not None:
        raise exc(f"index {bad} is out of bounds for dimension {d} with size {out.shape[d]}")
    w, perm = _moved_first(out, [d])
    if callable(rows):  # index_fill: every row is the value
        src = CudaArray.empty((idx.size,) + w.shape[1:], self.dtype)
        rows(src)
    else:
        src, _ = _moved_first(as_1d(rows), [d])
    w = write_rows(w, idx, src, how)
    return _moved_back(w, out.shape, perm).reshape(self.shape)


def index_add(self, dim, index, source, alpha=1):
    meta_of(R.get("index_add"), [self, dim, index, source, alpha])
    if alpha != 1:
        scaled = CudaArray.empty(source.shape, source.dtype)
        a = typed_scalar(alpha, source.dtype) if source.dtype.kind == "f" or not isinstance(alpha, float) else alpha
        source = run_map("self * alpha", scaled, {"self": source}, {"alpha": a})
    return _index_write(self, dim, index, source, "add", False, RuntimeError)


def index_copy(self, dim, index, source):
    if index.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_title(index.dtype)}")
    meta_of(R.get("index_copy"), [self, dim, index, source])
    return _index_write(self, dim, index, source, "set", False, IndexError)


def index_fill(self, dim, index, value):
    meta_of(R.get("index_fill", "int_Tensor"), [self, dim, index, value])
    return _index_write(self, dim, index, lambda a: copy_into(a, value), "set", True, IndexError)


def index_fill_scalar(self, dim, index, value):
    meta_of(R.get("index_fill", "int_Scalar"), [self, dim, index, value])
    return _index_write(self, dim, index, lambda a: fill(a, value), "set", True, IndexError)


def _title(d) -> str:
    return _dt.title(_dt.from_numpy_dtype(d))


# ---------------------------------------------------------------------------------------------
# Advanced indexing: index, index_put
# ---------------------------------------------------------------------------------------------
class _MaskStandIn:
    """A mask's metadata with no True elements: lets index_shape raise its dtype and shape errors first."""

    def __init__(self, a):
        self.dtype, self.shape = a.dtype, a.shape
        self._data = np.broadcast_to(np.zeros((), bool), a.shape)


def _expand(self, indices: list, name: str) -> tuple:
    """(indices with masks replaced by their nonzero coordinates, result shape); PyTorch's errors first."""
    try:
        index_shape(self.shape, [_MaskStandIn(a) if a is not None and a.dtype in MASK_INDEX_DTYPES else a
                                 for a in indices], name)
    except IndexError as e:
        if not str(e).startswith("shape mismatch"):
            raise
    out = []
    for a in indices:
        if a is None or a.dtype not in MASK_INDEX_DTYPES:
            out.append(a)
            continue
        c = nonzero(a)
        out += [c.view_of((c.shape[0],), (c.strides[0],), c.offset + j) for j in range(a.ndim)]
    return out, index_shape(self.shape, out, name)


def _linear_index(self, indices: list) -> tuple:
    """(advanced dims, their broadcast shape, one int64 row number per element into those dims, moved first)."""
    adv = [d for d, a in enumerate(indices) if a is not None]
    block: tuple = ()
    for d in adv:
        block = broadcast_shapes_or_none(block, indices[d].shape)
    lin = full(block, 0, np.int64)
    for j, d in enumerate(adv):
        size = self.shape[d]
        idx, bad = checked_index(indices[d], size)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {_dims_before(indices, d)} with size {size}")
        w = math.prod(self.shape[e] for e in adv[j + 1:])
        run_map("acc + idx * w", lin, {"acc": lin, "idx": broadcast(idx, block)}, {"w": np.int64(w)})
    return adv, block, lin.reshape((-1,))


def _dims_before(indices: list, d: int) -> int:
    """PyTorch numbers an index tensor's dimension among the index tensors only (``None`` skipped)."""
    return sum(1 for a in indices[:d] if a is not None)


def _adjacent(adv: list) -> bool:
    return adv[-1] - adv[0] + 1 == len(adv)


def index(self, indices):
    idx_list, shape = _expand(self, list(indices), "index")
    if self.size == 0 or all(a is None for a in idx_list):
        return CudaArray.empty(shape, self.dtype) if self.size == 0 else copy_strided(self)
    adv, block, lin = _linear_index(self, idx_list)
    x, _ = _moved_first(self, adv)
    out = _take_rows(x, lin).reshape(block + x.shape[1:])
    if _adjacent(adv) and adv[0] > 0:
        nb, pre = len(block), adv[0]
        order = list(range(nb, nb + pre)) + list(range(nb)) + list(range(nb + pre, out.ndim))
        out = copy_strided(out.transpose(order))
    return out.reshape(shape)


def _take_rows(x: CudaArray, rows: CudaArray) -> CudaArray:
    return take_rows(x, 0, rows)[0]


def index_put(self, indices, values, accumulate=False):
    values = to_device(values)
    if values.dtype != self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {_title(self.dtype)} "
                           f"for the destination and {_title(values.dtype)} for the source.")
    idx_list, shape = _expand(self, list(indices), "index_put")
    if broadcast_shapes_or_none(tuple(values.shape), shape) != shape:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    if self.size == 0:
        return copy_strided(self)
    if all(a is None for a in idx_list):
        return copy_into(copy_strided(self), values)
    adv, block, lin = _linear_index(self, idx_list)
    v = broadcast(values, shape)
    if _adjacent(adv) and adv[0] > 0:  # values in (block, rest) order, as the rows are laid out
        nb, pre = len(block), adv[0]
        v = v.transpose(list(range(pre, pre + nb)) + list(range(pre)) + list(range(pre + nb, v.ndim)))
    v = copy_strided(v).reshape((lin.size,) + tuple(v.shape[len(block):]))
    w, perm = _moved_first(self, adv)
    w = write_rows(w, lin, v, "add" if accumulate else "set")
    return _moved_back(w, self.shape, perm)


# ---------------------------------------------------------------------------------------------
def register() -> list:
    table = {
        ("scatter", "src"): _scatter_kernel("src", True, False),
        ("scatter", "value"): _scatter_kernel("value", False, False),
        ("scatter", "reduce"): _scatter_kernel("reduce", True, True),
        ("scatter", "value_reduce"): _scatter_kernel("value_reduce", False, True),
        ("scatter_add", ""): _scatter_kernel("", True, False, "scatter_add"),
        ("index_add", ""): index_add, ("index_copy", ""): index_copy,
        ("index_fill", "int_Tensor"): index_fill, ("index_fill", "int_Scalar"): index_fill_scalar,
        ("index", "Tensor"): index, ("index_put", ""): index_put,
    }
    return register_table(table)
