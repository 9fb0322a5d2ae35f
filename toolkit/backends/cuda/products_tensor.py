"""More products on the device: addbmm, addr, kron, tensordot, inner, trace and the cross products.

They are lowered to the pieces :mod:`.products` and :mod:`.gemm` already run:
``addbmm`` is a batched GEMM summed over the batch, ``addr`` an outer product,
``kron``, ``tensordot`` and ``inner`` are ``einsum`` contractions (``kron``'s
output interleaves the two operands' dims, then is read as the product shape),
``trace`` sums a diagonal view, and each component of a cross product is one
map kernel over views of the operands. Shapes, dtypes and errors come from the
ops' meta rules and the CPU ops' checks.
"""

from __future__ import annotations

import string

import numpy as np

from ...ops import registry as R
from ...ops.products import _cross_dim, _kron_shapes, _tensordot_check
from .array import CudaArray, broadcast_to, full
from .codegen import run_map
from .gemm import gemm, scaled_sum
from .products import _column, einsum
from .reduce import row_reduce
from .registration import meta_of, register_table

_LETTERS = string.ascii_letters


def _cast(a: CudaArray, dtype) -> CudaArray:
    return a if a.dtype == np.dtype(dtype) else a.astype(dtype)


# ----------------------------------------------------------------------------- addbmm, addr
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    meta = meta_of(R.get("addbmm"), [self, batch1, batch2, beta, alpha])
    shape = tuple(meta.shape)
    if batch1.shape[0]:
        prod = row_reduce(gemm(batch1, batch2), (0,), "sum")[0].reshape(shape)
    else:
        prod = full(shape, 0, batch1.dtype)
    return scaled_sum(self, prod, beta, alpha)


def addr(self, vec1, vec2, beta=1, alpha=1):
    meta = meta_of(R.get("addr"), [self, vec1, vec2, beta, alpha])
    if not meta.dtype.is_floating_point and (isinstance(beta, float) or isinstance(alpha, float)):
        name = "beta" if isinstance(beta, float) else "alpha"
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    dtype = meta.dtype.np
    prod = run_map("a * b", CudaArray.empty(tuple(meta.shape), dtype),
                   {"a": _column(_cast(vec1, dtype)), "b": _cast(vec2, dtype)}, {})
    return scaled_sum(_cast(self, dtype), prod, beta, alpha)


# ----------------------------------------------------------------------------- kron, tensordot, inner
def kron(self, other):
    meta = meta_of(R.get("kron"), [self, other])
    pa, pb = _kron_shapes(self.shape, other.shape)
    n = len(pa)
    a = _cast(self, meta.dtype.np).reshape(pa)
    b = _cast(other, meta.dtype.np).reshape(pb)
    la, lb = _LETTERS[:n], _LETTERS[n:2 * n]
    out = "".join(x + y for x, y in zip(la, lb))
    return einsum(f"{la},{lb}->{out}", [a, b]).reshape(tuple(meta.shape))


def _contract(a: CudaArray, b: CudaArray, dims_a: list, dims_b: list) -> CudaArray:
    """Sum of products over the paired dims (``tensordot``), as one ``einsum``."""
    da, db, free_a, free_b, shape = _tensordot_check(a, b, dims_a, dims_b)
    la = _LETTERS[:a.ndim]
    lb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for x, y in zip(da, db):
        lb[y] = la[x]
    out = "".join(la[i] for i in free_a) + "".join(lb[i] for i in free_b)
    return einsum(f"{la},{''.join(lb)}->{out}", [a, b]).reshape(shape)


def tensordot(self, other, dims_self, dims_other):
    meta_of(R.get("tensordot"), [self, other, dims_self, dims_other])
    listed = [[d] if isinstance(d, int) else list(d) for d in (dims_self, dims_other)]
    return _contract(self, other, *listed)


def inner(self, other):
    meta = meta_of(R.get("inner"), [self, other])
    if self.ndim == 0 or other.ndim == 0:
        dtype = meta.dtype.np
        return run_map("a * b", CudaArray.empty(tuple(meta.shape), dtype), {"a": self, "b": other}, {})
    return _contract(self, other, [self.ndim - 1], [other.ndim - 1])


def trace(self):
    meta = meta_of(R.get("trace"), [self])
    m, n = self.shape
    diag = self.view_of((min(m, n),), (self.strides[0] + self.strides[1],), self.offset)
    return row_reduce(_cast(diag, meta.dtype.np), (0,), "sum")[0].reshape(())


# ----------------------------------------------------------------------------- cross products
def _select(a: CudaArray, dim: int, i: int) -> CudaArray:
    """The view ``a[..., i, ...]`` (index ``i`` along ``dim``, that dim dropped)."""
    return a.view_of(a.shape[:dim] + a.shape[dim + 1:], a.strides[:dim] + a.strides[dim + 1:],
                     a.offset + i * a.estrides[dim])


def _cross(a: CudaArray, b: CudaArray, dim: int, meta) -> CudaArray:
    shape = tuple(meta.shape)
    d = dim % len(shape)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    out = CudaArray.empty(shape, meta.dtype.np)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        run_map("aj * bk - ak * bj", _select(out, d, i),
                {"aj": _select(a, d, j), "bk": _select(b, d, k), "ak": _select(a, d, k), "bj": _select(b, d, j)}, {})
    return out


def linalg_cross(self, other, dim=-1):
    meta = meta_of(R.get("linalg_cross"), [self, other, dim])
    return _cross(self, other, dim, meta)


def cross(self, other, dim=None):
    meta = meta_of(R.get("cross"), [self, other, dim])
    return _cross(self, other, _cross_dim(self, other, dim), meta)


def register() -> list:
    return register_table({
        "addbmm": addbmm, "addr": addr, "kron": kron, "tensordot": tensordot,
        "inner": inner, "trace": trace,
        "linalg_cross": linalg_cross, "cross": cross,
    })
