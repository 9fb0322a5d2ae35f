"""Vector and matrix products on the device: dot, vdot, mv, addmv, outer, ger, baddbmm, bilinear and einsum.

Matrix-vector and batched products run the tiled GEMM of :mod:`.gemm` on
strided views (a vector is a one-column matrix view; no copy). ``dot`` is a
map kernel and a row reduction, ``outer`` one broadcast map kernel.
``einsum`` is lowered to those same pieces: repeated subscripts become
diagonal views (strides added), subscripts no later term needs are summed
out, and operands are contracted pairwise, left to right, each pair
permuted and reshaped to ``(batch, m, k) @ (batch, k, n)`` for the GEMM.
Shapes, dtypes and errors come from the ops' meta rules and the CPU parser.
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import registry as R
from ...ops._einsum import parse_einsum
from .array import CudaArray, broadcast_to, copy_strided
from .codegen import run_map
from .gemm import gemm, scaled_sum
from .reduce import row_reduce
from .registration import meta_of, register_table


def _column(v: CudaArray) -> CudaArray:
    """A (k,) vector as a (k, 1) matrix view."""
    return v.view_of((v.shape[0], 1), (v.strides[0], v.itemsize), v.offset)


def _row(v: CudaArray) -> CudaArray:
    """A (k,) vector as a (1, k) matrix view."""
    return v.view_of((1, v.shape[0]), (v.itemsize, v.strides[0]), v.offset)


# ----------------------------------------------------------------------------- vector products
def _dot(name: str):
    def kernel(self, other):
        meta_of(R.get(name), [self, other])
        prod = run_map("a * b", CudaArray.empty(self.shape, self.dtype), {"a": self, "b": other}, {})
        total, _ = row_reduce(prod, (0,), "sum")
        return total.reshape(())

    kernel.__name__ = f"{name}_cuda"
    return kernel


def mv(self, vec):
    meta_of(R.get("mv"), [self, vec])
    return gemm(self, _column(vec)).reshape((self.shape[0],))


def addmv(self, mat, vec, beta=1, alpha=1):
    meta_of(R.get("addmv"), [self, mat, vec, beta, alpha])
    return scaled_sum(self, mv(mat, vec), beta, alpha)


def _outer(name: str):
    def kernel(self, vec2):
        meta = meta_of(R.get(name), [self, vec2])
        dtype = meta.dtype.np
        a, b = (x if x.dtype == dtype else x.astype(dtype) for x in (self, vec2))
        return run_map("a * b", CudaArray.empty(tuple(meta.shape), dtype), {"a": _column(a), "b": b}, {})

    kernel.__name__ = f"{name}_cuda"
    return kernel


def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    meta_of(R.get("baddbmm"), [self, batch1, batch2, beta, alpha])
    return scaled_sum(self, gemm(batch1, batch2), beta, alpha)


def bilinear(input1, input2, weight, bias=None):
    meta = meta_of(R.get("bilinear"), [input1, input2, weight, bias])
    o, i, j = weight.shape
    dtype = np.result_type(input1.dtype, input2.dtype, weight.dtype)
    x1, x2, w = (a if a.dtype == dtype else a.astype(dtype) for a in (input1, input2, weight))
    x1 = x1.reshape((-1, i))
    x2 = x2.reshape((-1, j))
    n = x1.shape[0]
    wt = w.transpose((1, 0, 2)).reshape((i, o * j))
    t = gemm(x1, wt).reshape((n, o, j))
    y = gemm(t, x2.reshape((n, j, 1))).reshape((n, o))
    out = CudaArray.empty((n, o), np.result_type(input1.dtype, weight.dtype))
    if bias is not None:
        run_map("y + b", out, {"y": y, "b": bias}, {})
    else:
        run_map("y", out, {"y": y}, {})
    return out.reshape(tuple(meta.shape))


# ----------------------------------------------------------------------------- einsum
class _Term:
    """An operand with one subscript letter per dimension, all letters distinct."""

    __slots__ = ("a", "letters")

    def __init__(self, a: CudaArray, letters: str):
        self.a = a
        self.letters = letters


def _diagonal(a: CudaArray, letters: str) -> _Term:
    """Repeated letters merged into one dimension: the diagonal, a view whose stride is the strides' sum."""
    shape, strides, seen = [], [], ""
    for c, n, st in zip(letters, a.shape, a.strides):
        if c in seen:
            strides[seen.index(c)] += st
        else:
            seen += c
            shape.append(n)
            strides.append(st)
    return _Term(a.view_of(tuple(shape), tuple(strides), a.offset), seen)


def _sum_out(t: _Term, keep: set) -> _Term:
    """``t`` with every letter not in ``keep`` summed over."""
    dims = tuple(d for d, c in enumerate(t.letters) if c not in keep)
    if not dims:
        return t
    kept = "".join(c for c in t.letters if c in keep)
    vals, _ = row_reduce(t.a, dims, "sum")
    return _Term(vals.reshape(tuple(t.a.shape[d] for d, c in enumerate(t.letters) if c in keep)), kept)


def _permuted(t: _Term, order: str) -> CudaArray:
    return t.a.transpose(tuple(t.letters.index(c) for c in order))


def _contract(x: _Term, y: _Term, keep: set, sizes: dict) -> _Term:
    """``x`` and ``y`` multiplied, summing the letters both have that no later term needs: one batched GEMM."""
    batch = "".join(c for c in x.letters if c in y.letters and c in keep)
    inner = "".join(c for c in x.letters if c in y.letters and c not in keep)
    xs = "".join(c for c in x.letters if c not in y.letters)
    ys = "".join(c for c in y.letters if c not in x.letters)

    def size(s: str) -> int:
        return math.prod(sizes[c] for c in s)

    a = _permuted(x, batch + xs + inner).reshape((size(batch), size(xs), size(inner)))
    b = _permuted(y, batch + inner + ys).reshape((size(batch), size(inner), size(ys)))
    r = gemm(a, b)
    letters = batch + xs + ys
    return _Term(r.reshape(tuple(sizes[c] for c in letters)), letters)


def einsum(equation, tensors):
    spec = parse_einsum(equation, tensors)
    sizes = spec.sizes
    terms = []
    for a, letters in zip(tensors, spec.inputs):
        t = _diagonal(a, letters)
        full = tuple(sizes[c] for c in t.letters)
        if t.a.shape != full:
            t = _Term(broadcast_to(t.a, full), t.letters)  # size-1 dims broadcast as numpy's einsum does
        terms.append(t)
    out = set(spec.output)

    def needed(later) -> set:
        return out.union(*(set(t.letters) for t in later))

    acc = _sum_out(terms[0], needed(terms[1:]))
    for k in range(1, len(terms)):
        rest = terms[k + 1:]
        keep = needed(rest)
        y = _sum_out(terms[k], keep | set(acc.letters))
        acc = _sum_out(acc, keep | set(y.letters))
        acc = _contract(acc, y, keep, sizes)
    acc = _sum_out(acc, out)
    return copy_strided(_permuted(acc, spec.output))


def register() -> list:
    table = {
        "dot": _dot("dot"), "vdot": _dot("vdot"), "mv": mv, "addmv": addmv, "outer": _outer("outer"),
        "ger": _outer("ger"), "baddbmm": baddbmm, "bilinear": bilinear, "einsum": einsum,
    }
    return register_table(table)
