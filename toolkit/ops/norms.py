"""Vector and matrix norms: linalg.vector_norm, linalg.matrix_norm, linalg.norm.

``linalg.norm`` picks a vector or a matrix norm from ``ord`` and ``dim`` as
PyTorch does (``norm_plan``); kernels, meta rules and derivatives all follow
that one plan.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim, wrap_dims
from . import api
from ._linalg_checks import _dtype, scalar_name
from ._meta_rules import reduced_shape
from .decomposition import check_float, check_matrix
from .factorization import svd_backward
from .reduction import fast_reducible
from .registry import LINALG, op

_INF = math.inf


def _out_dtype(name, x, dtype):
    check_float(name, x)
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {scalar_name(np.empty(0, dtype.np))}")
    if dtype is not None and dtype.is_complex != _dtype(x).is_complex:
        kind = "complex for complex" if _dtype(x).is_complex else "real for real"
        raise RuntimeError(f"{name}: dtype should be {kind} inputs, but got {dtype.title}")
    return dtype or _dtype(x)


def _ord_str(o) -> str:
    return str(int(o)) if isinstance(o, float) and o.is_integer() else str(o)


# ---------------------------------------------------------------------------------------------
# vector norm
# ---------------------------------------------------------------------------------------------
def _vector_check(x, ord, dim, keepdim, dtype, name="linalg.vector_norm"):
    out = _out_dtype(name, x, dtype)
    shape = tuple(x.shape)
    dims = wrap_dims(dim, len(shape), name) if dim not in (None, ()) and shape else ()
    if ord < 0 or ord == _INF:
        empty = any(shape[d] == 0 for d in dims) if dim not in (None, ()) else 0 in shape
        if empty:
            raise RuntimeError(
                f"{name} cannot compute the {_ord_str(ord)} norm on an empty tensor because the operation does not "
                "have an identity"
            )
    return TensorMeta(reduced_shape(shape, dim, keepdim, name), out.to_real(), x.device)


def _vector_norm(x, ord, dim, keepdim, dtype):
    out = dtype.np if dtype is not None else x.dtype
    axis = None if dim in (None, ()) or x.ndim == 0 else wrap_dims(dim, x.ndim)
    if out.kind == "c":  # the norm of complex entries is real: their moduli's norm
        return _vector_norm(np.abs(x.astype(out, copy=False)), ord, dim, keepdim, None)
    if ord in (1, 2) and out == x.dtype and fast_reducible(x):
        from ._reduce_numba import ABS, SQUARES, sum_terms  # optional: numba, never loaded by import toolkit

        # squares are taken in x's dtype, so a float32 square overflows to inf exactly where PyTorch's does
        r = sum_terms(x, axis, keepdim, SQUARES if ord == 2 else ABS)
        if r is not None:
            return np.sqrt(r) if ord == 2 else r
    acc = np.float32 if out == np.float16 else out
    a = np.abs(x.astype(acc, copy=False))
    if ord == 2:
        r = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    elif ord == _INF:
        r = np.max(a, axis=axis, keepdims=keepdim)
    elif ord == -_INF:
        r = np.min(a, axis=axis, keepdims=keepdim)
    elif ord == 0:
        r = np.sum(a != 0, axis=axis, keepdims=keepdim).astype(acc)
    elif ord == 1:
        r = np.sum(a, axis=axis, keepdims=keepdim)
    else:
        with np.errstate(divide="ignore"):
            r = np.power(np.sum(np.power(a, ord), axis=axis, keepdims=keepdim), 1.0 / ord)
    return np.asarray(r).astype(out, copy=False)


def _keep(t, shape, dim, keepdim):
    """Re-insert reduced dims as size 1 so ``t`` broadcasts against the input."""
    if keepdim or not shape:
        return t
    for d in sorted(wrap_dims(dim if dim not in (None, ()) else None, len(shape))):
        t = t.unsqueeze(d)
    return t


def vector_norm_grad(grad, x, ord, dim, keepdim, norm):
    shape = tuple(x.shape)
    g, n = _keep(grad, shape, dim, keepdim), _keep(norm, shape, dim, keepdim)
    x = x.to(g.dtype.to_complex() if x.is_complex() else g.dtype)
    if ord == 0:
        return None  # piecewise constant: no gradient flows, as in PyTorch
    if ord == 1:
        return g * x.sgn()
    if ord in (_INF, -_INF):
        mask = (x.abs() == n).to(g.dtype)
        axes = list(range(len(shape))) if dim in (None, ()) else list(dim)
        return g * x.sgn() * mask / mask.sum(axes, keepdim=True)
    safe = n + (n == 0).to(n.dtype)
    if ord == 2:
        return x * (g / safe)
    return x * x.abs().pow(ord - 2) * (g / safe.pow(ord - 1))


@op("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", kind=LINALG, out="exact", namespace="linalg", function="vector_norm", method=False)
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    """The ``ord``-norm of the entries over ``dim`` (all of them by default), treated as one vector."""
    _vector_check(self, ord, dim, keepdim, dtype)
    return _vector_norm(self, ord, dim, keepdim, dtype)


@linalg_vector_norm.meta_rule
def _(self, ord=2, dim=None, keepdim=False, dtype=None):
    return _vector_check(self, ord, dim, keepdim, dtype)


@linalg_vector_norm.wirtinger_grad  # the rules give z's gradient as is: x |x|^(p-2) g / n^(p-1), real or complex
def _(grad, self, ord, dim, keepdim, result):
    return vector_norm_grad(grad, self, ord, dim, keepdim, result)


@linalg_vector_norm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)),), {}
    yield (r((3, 2)).T,), {"ord": 1, "dim": 1}
    yield (r((2, 3)),), {"ord": _INF, "dim": (0, 1), "keepdim": True}
    yield (r(4),), {"ord": -_INF}
    yield (r((2, 2)),), {"ord": 3, "dim": 0}
    yield (r((2, 3)),), {"ord": 0.5, "dim": -1}
    yield (r((2, 3)),), {"ord": 0}
    yield (r(()),), {}
    yield (r((0, 3)),), {"dim": 0}


# ---------------------------------------------------------------------------------------------
# matrix norm
# ---------------------------------------------------------------------------------------------
_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, _INF, -_INF)


def _matrix_check(x, ord, dim, keepdim, dtype, name="linalg.matrix_norm"):
    check_matrix(name, x)
    out = _out_dtype(name, x, dtype)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"{name}: Order {_ord_str(ord)} not supported.")
    d0, d1 = (wrap_dim(d, len(x.shape), name) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return TensorMeta(reduced_shape(tuple(x.shape), (d0, d1), keepdim, name), out.to_real(), x.device), (d0, d1)


def _matrix_norm(x, ord, dims, keepdim, dtype):
    out = dtype.np if dtype is not None else x.dtype
    if out.kind == "c":  # real: the entrywise norms are those of the moduli, the spectral ones of the real S
        x = x.astype(out, copy=False)
        x, out = (x if ord in ("nuc", 2, -2) else np.abs(x)), x.real.dtype
    acc = np.float32 if out == np.float16 else out
    a = x if x.dtype.kind == "c" else x.astype(acc, copy=False)
    d0, d1 = dims
    if ord == "fro":
        r = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    elif ord in (1, -1, _INF, -_INF):
        sums = np.sum(np.abs(a), axis=d0 if abs(ord) == 1 else d1, keepdims=True)
        axis = d1 if abs(ord) == 1 else d0
        if sums.size:
            r = (np.max if ord > 0 else np.min)(sums, axis=axis, keepdims=True)
        else:
            r = np.zeros(sums.shape[:axis] + (1,) + sums.shape[axis + 1:], acc)
        if not keepdim:
            r = np.squeeze(r, axis=dims)
    else:
        m = np.moveaxis(a, dims, (-2, -1))
        s = np.linalg.svd(m, compute_uv=False) if m.size else np.zeros(m.shape[:-2] + (0,), acc)
        if ord == "nuc":
            r = np.sum(s, axis=-1)
        elif s.shape[-1] == 0:
            r = np.zeros(m.shape[:-2], acc)
        else:
            r = s[..., 0] if ord == 2 else s[..., -1]
        if keepdim:
            r = np.expand_dims(r, tuple(sorted(dims)))
    return np.asarray(r).astype(out, copy=False)


def matrix_norm_grad(grad, x, ord, dims, keepdim, norm):
    shape = tuple(x.shape)
    g, n = _keep(grad, shape, dims, keepdim), _keep(norm, shape, dims, keepdim)
    x = x.to(g.dtype.to_complex() if x.is_complex() else g.dtype)
    d0, d1 = dims
    if ord == "fro":
        return x * (g / (n + (n == 0).to(n.dtype)))
    if ord in (1, -1, _INF, -_INF):
        sums = x.abs().sum(d0 if abs(ord) == 1 else d1, keepdim=True)
        mask = (sums == n).to(g.dtype)
        return g * x.sgn() * mask / mask.sum(d1 if abs(ord) == 1 else d0, keepdim=True)
    m = x.movedim((d0, d1), (-2, -1))
    U, S, Vh = api.linalg_svd(m, full_matrices=False)
    gm = g.movedim((d0, d1), (-2, -1)).squeeze(-1).squeeze(-1)
    if ord == "nuc":
        gS = gm.unsqueeze(-1) * api.ones_like(S)
    else:
        k = S.shape[-1]
        pick = np.zeros(k)
        pick[0 if ord == 2 else k - 1] = 1
        gS = gm.unsqueeze(-1) * S.new_tensor(pick)
    return svd_backward(None, gS, None, U, S, Vh).movedim((-2, -1), (d0, d1))


_MATRIX_DOC = "Matrix norm over the two dims in ``dim``: 'fro', 'nuc', or ord 1, -1, 2, -2, inf, -inf."


def _matrix_norm_node(ord) -> str:
    """The last op of PyTorch's matrix norm: a vector norm ('fro'), a sum of singular values ('nuc'), else the
    largest (``ord > 0``) or smallest row/column sum or singular value."""
    if isinstance(ord, str):
        return "LinalgVectorNormBackward0" if ord == "fro" else "SumBackward1"
    return "AmaxBackward0" if ord > 0 else "AminBackward0"


def _norm_node(bound, outputs) -> str:
    """``linalg.norm``: a vector norm without ``ord``, over one dim or of a vector, else a matrix norm."""
    self, ord, dim = bound[:3]
    if ord is None or (dim is None and self.dim() == 1) or (dim is not None and len(dim) == 1):
        return "LinalgVectorNormBackward0"
    return _matrix_norm_node(ord)


@op("linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", kind=LINALG, out="exact", namespace="linalg", function="matrix_norm", method=False,
    doc=_MATRIX_DOC, grad_fn=lambda bound, outputs: _matrix_norm_node(bound[1]))
def linalg_matrix_norm(self, ord, dim=(-2, -1), keepdim=False, dtype=None):
    _, dims = _matrix_check(self, ord, dim, keepdim, dtype)
    return _matrix_norm(self, ord, dims, keepdim, dtype)


@op("linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", kind=LINALG, out="exact", namespace="linalg", function="matrix_norm", method=False,
    doc=_MATRIX_DOC, grad_fn=lambda bound, outputs: _matrix_norm_node(bound[1]))
def linalg_matrix_norm_str(self, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    _, dims = _matrix_check(self, ord, dim, keepdim, dtype)
    return _matrix_norm(self, ord, dims, keepdim, dtype)


def _matrix_meta(self, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    return _matrix_check(self, ord, dim, keepdim, dtype)[0]


def _matrix_grad(grad, self, ord, dim, keepdim, result):
    dims = tuple(wrap_dim(d, self.ndim) for d in dim)
    return matrix_norm_grad(grad, self, ord, dims, keepdim, result)


def _matrix_samples(rng):
    r = rng.standard_normal
    yield (r((2, 3)),), {}
    yield (r((2, 3)), "nuc"), {}
    yield (r((2, 2, 3)), 2), {}
    yield (r((3, 2)), -2), {"keepdim": True}
    yield (r((3, 2)).T, 1), {}
    yield (r((2, 3, 2)), -1), {"dim": (0, 2)}
    yield (r((2, 3)), _INF), {"keepdim": True}
    yield (r((3, 2, 2)), -_INF), {"dim": (2, 0)}
    yield (r((2, 3)), "fro"), {"dim": (1, 0), "dtype": _dt.float64}


for _o in (linalg_matrix_norm, linalg_matrix_norm_str):
    _o.meta_rule(_matrix_meta)
    _o.wirtinger_grad(_matrix_grad)  # real or complex x: the rules give the conjugate-Wirtinger gradient
linalg_matrix_norm_str.sample_inputs(
    lambda rng: ((a, k) for a, k in _matrix_samples(rng) if len(a) == 1 or isinstance(a[1], str)))
linalg_matrix_norm.sample_inputs(
    lambda rng: ((a, k) for a, k in _matrix_samples(rng) if len(a) > 1 and not isinstance(a[1], str)))


# ---------------------------------------------------------------------------------------------
# linalg.norm: a vector or a matrix norm, chosen from ord and dim
# ---------------------------------------------------------------------------------------------
def norm_plan(x, ord, dim):
    """('vector', ord, dim) or ('matrix', ord, dims), as torch.linalg.norm decides."""
    nd = len(x.shape)
    if dim is not None:
        if len(dim) == 1:
            if isinstance(ord, str):
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim[0]}")
            return "vector", 2 if ord is None else ord, dim
        if len(dim) == 2:
            return "matrix", "fro" if ord is None else ord, dim
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if ord is None:
        return "vector", 2, None
    if isinstance(ord, str) or nd == 2:
        return "matrix", ord, (-2, -1)
    if nd != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {nd}D.")
    return "vector", ord, None


def _norm_meta(self, ord=None, dim=None, keepdim=False, dtype=None):
    kind, o, d = norm_plan(self, ord, dim)
    if kind == "vector":
        return _vector_check(self, o, d, keepdim, dtype, "linalg.vector_norm")
    return _matrix_check(self, o, d, keepdim, dtype)[0]


def _norm(self, ord, dim, keepdim, dtype):
    _norm_meta(self, ord, dim, keepdim, dtype)
    kind, o, d = norm_plan(self, ord, dim)
    if kind == "vector":
        return _vector_norm(self, o, d, keepdim, dtype)
    return _matrix_norm(self, o, tuple(wrap_dim(i, self.ndim) for i in d), keepdim, dtype)


_NORM_DOC = "Vector norm (1 dim, or a 1-D input) or matrix norm (2 dims, or a 2-D input with ``ord``)."


@op("linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", kind=LINALG, out="exact", namespace="linalg", function="norm", method=False,
    doc=_NORM_DOC, grad_fn=_norm_node)
def linalg_norm(self, ord=None, dim=None, keepdim=False, dtype=None):
    return _norm(self, ord, dim, keepdim, dtype)


@op("linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", kind=LINALG, out="exact", namespace="linalg", function="norm", method=False,
    doc=_NORM_DOC, grad_fn=_norm_node)
def linalg_norm_str(self, ord, dim=None, keepdim=False, dtype=None):
    return _norm(self, ord, dim, keepdim, dtype)


def _norm_grad(grad, self, ord, dim, keepdim, result):
    kind, o, d = norm_plan(self, ord, dim)
    if kind == "vector":
        return vector_norm_grad(grad, self, o, d, keepdim, result)
    return matrix_norm_grad(grad, self, o, tuple(wrap_dim(i, self.ndim) for i in d), keepdim, result)


for _o in (linalg_norm, linalg_norm_str):
    _o.meta_rule(_norm_meta)
    _o.wirtinger_grad(_norm_grad)


@linalg_norm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3, 2)),), {}
    yield (r(4), 3), {}
    yield (r((2, 3)), -_INF), {}
    yield (r((2, 3)), 2), {}
    yield (r((3, 2)).T,), {"dim": 1, "keepdim": True}
    yield (r((2, 3, 2)),), {"ord": 1, "dim": (0, 2)}
    yield (r((2, 3)),), {"ord": _INF, "dim": (0,)}


@linalg_norm_str.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), "fro"), {}
    yield (r((2, 2, 3)), "nuc"), {"dim": (1, 2)}
    yield (r((3, 2)), "fro"), {"keepdim": True, "dtype": _dt.float64}
