"""More reductions on the device: all/any, prod, count_nonzero, logsumexp, var/std (and with the mean), aminmax,
allclose, equal; :mod:`.reduce_scan` adds cumsum/cumprod and :mod:`.reduce_norm` the norms.

Each op is composed from :func:`.reduce.row_reduce` (a tree reduction per
row in shared memory) and generated map kernels, so nothing leaves the
device except the single truth value ``allclose``/``equal`` return as a
Python bool. Output shapes, dtypes and argument errors come from the op's
meta rule, as in :mod:`.reduce`. For example, ``var`` is two reductions
with a map between them::

    mean = sum(x, dims) / n;  var = sum((x - mean) ** 2, dims) / (n - correction)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtypes as _dt
from ...ops import registry as R
from ...ops.moments import MOMENT_OVERLOADS
from .array import CudaArray, copy_strided
from .codegen import run_map, typed_scalar
from .reduce import _dims, row_reduce
from .registration import meta_of, register_table


def map_new(expr: str, shape: tuple, dtype, inputs: dict, params: dict | None = None) -> CudaArray:
    """A new array of ``shape``/``dtype`` holding ``expr`` over broadcast ``inputs`` (a generated map kernel)."""
    return run_map(expr, CudaArray.empty(shape, dtype), inputs, params or {})


def kept_shape(shape: tuple, dims: tuple) -> tuple:
    """``shape`` with the reduced ``dims`` as 1: a reduction's flat result reshaped to broadcast against its input."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def reduce_to(a: CudaArray, dims: tuple, kind: str, dtype=None) -> CudaArray:
    """``row_reduce`` keeping only the values (flat, the kept dims in their order)."""
    return row_reduce(a, dims, kind, dtype)[0]


def all_true(a: CudaArray) -> bool:
    """Whether every element of bool ``a`` is True (True when empty): one value read back to the host."""
    if a.size == 0:
        return True
    return bool(reduce_to(a, tuple(range(a.ndim)), "prod", np.bool_).item())


# ----------------------------------------------------------------------------- all, any
def _logical(name: str, overload: str):
    op = R.get(name, overload)
    kind = "prod" if name == "all" else "max"  # on 0/1 values: and is the product, or the maximum

    def kernel(self, dim=None, keepdim=False):
        meta = meta_of(op, [self, dim, keepdim])
        truth = copy_strided(self, np.bool_)
        if dim != ():
            truth = reduce_to(truth, _dims(dim, self.ndim, name), kind, np.bool_)
        return truth.astype(meta.dtype.np, copy=False).reshape(tuple(meta.shape))

    kernel.__name__ = f"{name}_cuda"
    return kernel


# ----------------------------------------------------------------------------- prod, count_nonzero
def _prod(self, dtype=None):
    meta = meta_of(R.get("prod"), [self, dtype])
    return reduce_to(self, tuple(range(self.ndim)), "prod", meta.dtype.np).reshape(())


def _prod_dim(self, dim, keepdim=False, dtype=None):
    meta = meta_of(R.get("prod", "dim_int"), [self, dim, keepdim, dtype])
    return reduce_to(self, _dims(dim, self.ndim, "prod"), "prod", meta.dtype.np).reshape(tuple(meta.shape))


def _count_nonzero_dims(self, dim):
    meta = meta_of(R.get("count_nonzero", "dim_IntList"), [self, dim])
    vals = reduce_to(copy_strided(self, np.bool_), _dims(dim, self.ndim, "count_nonzero"), "sum", np.int64)
    return vals.reshape(tuple(meta.shape))


def _count_nonzero(self, dim=None):
    return _count_nonzero_dims(self, None if dim is None else (dim,))


# ----------------------------------------------------------------------------- logsumexp
def _logsumexp(self, dim, keepdim=False):
    """``log(sum(exp(x - m))) + m`` with ``m`` the max (0 where it is not finite), as the CPU kernel."""
    meta = meta_of(R.get("logsumexp"), [self, dim, keepdim])
    dt = meta.dtype.np
    x = self if self.dtype == dt else copy_strided(self, dt)
    dims = _dims(dim, x.ndim, "logsumexp")
    consts = {"inf": typed_scalar(math.inf, dt), "zero": typed_scalar(0, dt)}
    m = reduce_to(x, dims, "max")
    m = map_new("m if (m == m and abs(m) != inf) else zero", m.shape, dt, {"m": m}, consts)
    e = map_new("math.exp(self - m)", x.shape, dt, {"self": x, "m": m.reshape(kept_shape(x.shape, dims))})
    s = reduce_to(e, dims, "sum")
    out = map_new("(math.log(s) if s != zero else -inf) + m", s.shape, dt, {"s": s, "m": m}, consts)
    return out.reshape(tuple(meta.shape))


# ----------------------------------------------------------------------------- var, std, var_mean, std_mean
def var_and_mean(x: CudaArray, dims: tuple, correction, name: str) -> tuple:
    """(variance divided by ``max(0, N - correction)``, mean), both flat over the kept dims, in ``x``'s dtype."""
    dt = x.dtype
    n = math.prod(x.shape[d] for d in dims)
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    s = reduce_to(x, dims, "sum")
    mean = map_new("self / count" if n else "self * nan", s.shape, dt, {"self": s},
                   {"count": typed_scalar(n, dt)} if n else {"nan": typed_scalar(math.nan, dt)})
    sq = map_new("(self - m) * (self - m)", x.shape, dt, {"self": x, "m": mean.reshape(kept_shape(x.shape, dims))})
    ss = reduce_to(sq, dims, "sum")
    denom = max(0.0, n - correction)
    # A zero denominator gives what IEEE division would (0/0 is nan, s/0 is inf) without dividing by zero.
    var = map_new("self / d" if denom > 0 else "inf if self > 0 else nan", ss.shape, dt, {"self": ss},
                  {"d": typed_scalar(denom, dt)} if denom > 0 else
                  {"inf": typed_scalar(math.inf, dt), "nan": typed_scalar(math.nan, dt)})
    return var, mean


def _moments(name: str, overload: str, normalize):
    op = R.get(name, overload)
    with_mean = name.endswith("_mean")
    is_std = name.startswith("std")

    def kernel(self, *args):
        meta = meta_of(op, [self, *args])
        dim, correction, keepdim = normalize(*args)
        var, mean = var_and_mean(self, _dims(dim, self.ndim, name), correction, name)
        if is_std:
            var = map_new("math.sqrt(self)", var.shape, var.dtype, {"self": var})
        shape = tuple((meta[0] if with_mean else meta).shape)
        return (var.reshape(shape), mean.reshape(shape)) if with_mean else var.reshape(shape)

    kernel.__name__ = f"{name}_cuda"
    return kernel


# ----------------------------------------------------------------------------- aminmax
def _aminmax(self, dim=None, keepdim=False):
    lo_meta, hi_meta = meta_of(R.get("aminmax"), [self, dim, keepdim])
    dims = _dims(dim, self.ndim, "aminmax")
    lo = reduce_to(self, dims, "min").reshape(tuple(lo_meta.shape))
    return lo, reduce_to(self, dims, "max").reshape(tuple(hi_meta.shape))


# ----------------------------------------------------------------------------- allclose, equal
def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """``isclose`` everywhere: integers and bool meet the tolerances in the default float dtype, as on the CPU."""
    meta_of(R.get("allclose"), [self, other, rtol, atol, equal_nan])
    floating = self.dtype.kind == "f"
    inputs = {"a": self, "b": other}
    terms = ["a == b"]
    params = {}
    if equal_nan and floating:
        terms.append("(a != a and b != b)")
    if rtol != 0 or atol != 0:
        ft = self.dtype if floating else _dt.get_default_dtype().np
        if not floating:
            inputs.update(c=copy_strided(self, ft), d=copy_strided(other, ft))
        c, d = ("a", "b") if floating else ("c", "d")
        terms.append(f"(abs({c} - {d}) != inf and abs({c} - {d}) <= atol + abs(rtol * {d}))")
        params = {"inf": typed_scalar(math.inf, ft), "atol": typed_scalar(atol, ft), "rtol": typed_scalar(rtol, ft)}
    shape = np.broadcast_shapes(self.shape, other.shape)
    return all_true(map_new(" or ".join(terms), shape, np.bool_, inputs, params))


def _equal(self, other) -> bool:
    """Same shape and the same values, compared in the common dtype (NaN is not equal to itself)."""
    if self.shape != other.shape:
        return False
    common = _dt.promote_types(_dt.from_numpy_dtype(self.dtype), _dt.from_numpy_dtype(other.dtype)).np
    a = self if self.dtype == common else copy_strided(self, common)
    b = other if other.dtype == common else copy_strided(other, common)
    return all_true(map_new("a == b", self.shape, np.bool_, {"a": a, "b": b}))


def register() -> list:
    table = {("prod", ""): _prod, ("prod", "dim_int"): _prod_dim, ("logsumexp", ""): _logsumexp,
             ("count_nonzero", ""): _count_nonzero, ("count_nonzero", "dim_IntList"): _count_nonzero_dims,
             ("aminmax", ""): _aminmax, ("allclose", ""): _allclose, ("equal", ""): _equal}
    for name in ("all", "any"):
        for overload in ("", "dim", "dims"):
            table[name, overload] = _logical(name, overload)
    for name in ("var", "std", "var_mean", "std_mean"):
        for overload, _, normalize, _ in MOMENT_OVERLOADS:
            table[name, overload] = _moments(name, overload, normalize)
    return register_table(table)
