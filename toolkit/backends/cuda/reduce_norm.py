"""Norms on the device: linalg.vector_norm, linalg.matrix_norm, linalg.norm and torch.norm.

A vector norm is a map (``|x|``, ``|x|**p``, ``x != 0``), a row reduction
(sum, max or min) and a final map (``sqrt``, ``**(1/p)``). Matrix norms
'fro', 1, -1, inf and -inf are sums and extremes of ``|x|`` over the two
dims. Orders 2, -2 and 'nuc' need the singular values (in float64, by the
one-sided Jacobi SVD of :mod:`.jacobi`), reduced with max, min or sum. Which norm is meant, and every
argument error, come from the CPU ops' own plans and meta rules.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.shape import wrap_dim
from ...ops import registry as R
from ...ops.moments import p_norm_plan
from ...ops.norms import norm_plan
from .array import CudaArray, copy_strided
from .codegen import typed_scalar
from .jacobi import svd_parts
from .reduce import _dims
from .reduce_more import kept_shape, map_new, reduce_to
from .registration import meta_of, register_table

_INF = math.inf


def vector_norm(x: CudaArray, ord, dims: tuple, dtype) -> CudaArray:
    """The ``ord``-norm of ``x`` over ``dims``, computed in ``dtype``: flat over the kept dims."""
    dtype = np.dtype(dtype)
    a = x if x.dtype == dtype else copy_strided(x, dtype)
    if ord in (_INF, -_INF):
        return reduce_to(map_new("abs(self)", a.shape, dtype, {"self": a}), dims, "max" if ord > 0 else "min")
    if ord == 0:
        ones = map_new("one if self != zero else zero", a.shape, dtype, {"self": a},
                       {"one": typed_scalar(1, dtype), "zero": typed_scalar(0, dtype)})
        return reduce_to(ones, dims, "sum")
    if ord == 1:
        return reduce_to(map_new("abs(self)", a.shape, dtype, {"self": a}), dims, "sum")
    if ord == 2:
        s = reduce_to(map_new("self * self", a.shape, dtype, {"self": a}), dims, "sum")
        return map_new("math.sqrt(self)", s.shape, dtype, {"self": s})
    p = typed_scalar(ord, dtype)
    s = reduce_to(map_new("abs(self) ** p", a.shape, dtype, {"self": a}, {"p": p}), dims, "sum")
    return map_new("self ** q", s.shape, dtype, {"self": s}, {"q": typed_scalar(1.0 / ord, dtype)})


def singular_values(x: CudaArray, dims: tuple) -> CudaArray:
    """The singular values (descending, float64) of the matrices over ``dims`` of ``x``: shape (batch, k)."""
    kept = [d for d in range(x.ndim) if d not in dims]
    work = copy_strided(x.transpose(kept + list(dims)), np.float64)
    s = svd_parts(work, False, None)[1]
    return s.reshape((math.prod(s.shape[:-1]), s.shape[-1]))


def matrix_norm(x: CudaArray, ord, dims: tuple, dtype) -> CudaArray:
    """The matrix ``ord``-norm over the two ``dims`` of ``x``, in ``dtype``: flat over the other dims."""
    dtype = np.dtype(dtype)
    if ord == "fro":
        return vector_norm(x, 2, tuple(sorted(dims)), dtype)
    d0, d1 = dims
    if ord in (1, -1, _INF, -_INF):
        a = x if x.dtype == dtype else copy_strided(x, dtype)
        first, second = ((d0,), (d1,)) if abs(ord) == 1 else ((d1,), (d0,))
        sums = reduce_to(map_new("abs(self)", a.shape, dtype, {"self": a}), first, "sum")
        return reduce_to(sums.reshape(kept_shape(a.shape, first)), second, "max" if ord > 0 else "min")
    kind = {"nuc": "sum", 2: "max", -2: "min"}[ord]
    return copy_strided(reduce_to(singular_values(x, dims), (1,), kind), dtype)


def _linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    meta = meta_of(R.get("linalg_vector_norm"), [self, ord, dim, keepdim, dtype])
    return vector_norm(self, ord, _dims(dim, self.ndim, "linalg.vector_norm"), meta.dtype.np).reshape(
        tuple(meta.shape))


def _matrix_op(overload: str):
    op = R.get("linalg_matrix_norm", overload)

    def kernel(self, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
        meta = meta_of(op, [self, ord, dim, keepdim, dtype])
        dims = tuple(wrap_dim(d, self.ndim) for d in dim)
        return matrix_norm(self, ord, dims, meta.dtype.np).reshape(tuple(meta.shape))

    kernel.__name__ = "linalg_matrix_norm_cuda"
    return kernel


def _planned(x: CudaArray, plan: tuple, dtype, name: str) -> CudaArray:
    """The norm a CPU plan ``(kind, ord, dims)`` names: a vector norm over ``dims`` or a matrix norm over two."""
    kind, o, d = plan
    if kind == "vector":
        return vector_norm(x, o, _dims(d, x.ndim, name), dtype)
    return matrix_norm(x, o, tuple(wrap_dim(i, x.ndim) for i in d), dtype)


def _norm_op(overload: str):
    op = R.get("linalg_norm", overload)

    def kernel(self, ord=None, dim=None, keepdim=False, dtype=None):
        meta = meta_of(op, [self, ord, dim, keepdim, dtype])
        return _planned(self, norm_plan(self, ord, dim), meta.dtype.np, "linalg.vector_norm").reshape(tuple(meta.shape))

    kernel.__name__ = "linalg_norm_cuda"
    return kernel


def _norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm``: a vector norm for numbers and 'fro' over at most two dims, else a matrix norm."""
    meta = meta_of(R.get("norm"), [self, p, dim, keepdim, dtype])
    return _planned(self, p_norm_plan(p, dim, self.ndim), meta.dtype.np, "norm").reshape(tuple(meta.shape))


def register() -> list:
    return register_table({
        "linalg_vector_norm": _linalg_vector_norm, "norm": _norm,
        "linalg_matrix_norm": _matrix_op(""), "linalg_matrix_norm.str_ord": _matrix_op("str_ord"),
        "linalg_norm": _norm_op(""), "linalg_norm.ord_str": _norm_op("ord_str"),
    })
