"""Distances and norm-based ops: cdist, pdist, dist, cosine_similarity, pairwise_distance, renorm,
frobenius_norm, nuclear_norm, norm_except_dim.

Kernels are numpy; derivatives reuse the vector/matrix norm derivatives of
``norms`` and are written with registered ops, so they differentiate again.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from ._linalg_checks import _dtype, scalar_name
from .norms import _vector_norm, matrix_norm_grad, vector_norm_grad
from .products import _broadcast_or_raise, _promoted
from .registry import LINALG, NN, REDUCTION, op, refuses_names

_INF = float("inf")


def _float_or_raise(x, name="norm()"):
    if not _dtype(x).is_floating_point:
        raise RuntimeError(
            f"{name}: input dtype should be either floating point or complex. Got {scalar_name(x)} instead."
        )


def _p_norm(diff, p, axis, keepdims=False):
    a = np.abs(diff)
    if p == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdims).astype(diff.dtype)
    if p == 1:
        return a.sum(axis=axis, keepdims=keepdims)
    if p == 2:
        return np.sqrt((a * a).sum(axis=axis, keepdims=keepdims))
    if p == _INF:
        return a.max(axis=axis, keepdims=keepdims, initial=0)
    return np.power(np.power(a, p).sum(axis=axis, keepdims=keepdims), 1.0 / p)


def _pair_grad(g, diff, dist, p):
    """d dist / d diff times g, for ``dist = ||diff||_p`` over the last dim (g and dist broadcast over it)."""
    if p == 0:
        return diff * 0
    if p == 1:
        return g * diff.sign()
    safe = dist + (dist == 0).to(dist.dtype)
    if p == 2:
        return diff * (g / safe)
    if p == _INF:
        mask = (diff.abs() == dist).to(diff.dtype)
        return g * diff.sign() * mask / mask.sum(-1, keepdim=True).clamp_min(1)
    return diff * diff.abs().pow(p - 2) * (g / safe.pow(p - 1))


# ---------------------------------------------------------------------------------------------
# cdist
# ---------------------------------------------------------------------------------------------
def _cdist_check(x1, x2, p):
    for name, x in (("X1", x1), ("X2", x2)):
        if len(x.shape) < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {len(x.shape)}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if not _dtype(x1).is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {scalar_name(x1)}")
    if not _dtype(x2).is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: {scalar_name(x2)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if _dtype(x1) is not _dtype(x2):
        raise RuntimeError(f"expected scalar type {scalar_name(x1)} but found {scalar_name(x2)}")
    batch = _broadcast_or_raise(x1.shape[:-2], x2.shape[:-2])
    return TensorMeta(tuple(batch) + (x1.shape[-2], x2.shape[-2]), _dtype(x1), x1.device)


@op("cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor", kind=LINALG,
    name_rule=_names.cdist,
    autocast="fp32", function=False, method=False)
def cdist(x1, x2, p=2.0, compute_mode=None):
    """p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M): (..., P, R)."""
    _cdist_check(x1, x2, p)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return np.asarray(_p_norm(diff, p, -1)).astype(x1.dtype, copy=False)


def _cdist_grad(grad, x1, x2, p, result, needs_input_grad):
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    w = _pair_grad(grad.unsqueeze(-1), diff, result.unsqueeze(-1), p)
    g1 = w.sum(-2).sum_to_size(tuple(x1.shape)) if needs_input_grad[0] else None
    g2 = (-w.sum(-3)).sum_to_size(tuple(x2.shape)) if needs_input_grad[1] else None
    return g1, g2


cdist.meta_rule(lambda x1, x2, p=2.0, compute_mode=None: _cdist_check(x1, x2, p))


@cdist.grad
def _(grad, x1, x2, p, result, needs_input_grad):
    return _cdist_grad(grad, x1, x2, p, result, needs_input_grad)


def _cdist_samples(rng):
    r = rng.standard_normal
    yield (r((3, 2)), r((4, 2))), {}
    yield (r((2, 3, 2)), r((1, 2, 2))), {"p": 1.0}
    yield (r((3, 2)), r((2, 2))), {"p": 3.0}
    yield (r((3, 2)), r((2, 2))), {"p": _INF}
    yield (r((3, 2)), r((2, 2))), {"p": 0.0}


cdist.sample_inputs(_cdist_samples)

# ---------------------------------------------------------------------------------------------
# pdist
# ---------------------------------------------------------------------------------------------
def _pdist_check(x, p):
    if len(x.shape) != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {len(x.shape)}D")
    if not _dtype(x).is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = x.shape[0]
    return TensorMeta((n * (n - 1) // 2,), _dtype(x), x.device)


@op("pdist(Tensor self, float p=2.) -> Tensor", kind=LINALG, out=False, method=False)
def pdist(self, p=2.0):
    """p-norm distances between every pair of rows ``i < j`` of a 2-D tensor, in row-major pair order."""
    _pdist_check(self, p)
    i, j = np.triu_indices(self.shape[0], 1)
    return np.asarray(_p_norm(self[i] - self[j], p, -1)).astype(self.dtype, copy=False)


pdist.meta_rule(lambda self, p=2.0: _pdist_check(self, p))


@pdist.grad
def _(grad, self, p, result):
    n = self.shape[0]
    i, j = np.triu_indices(n, 1)
    pairs = np.arange(len(i))
    sel = np.zeros((n, len(i)))
    sel[i, pairs] = 1.0
    sel[j, pairs] = -1.0
    s = self.new_tensor(sel.astype(self.dtype.np))
    diff = s.t().matmul(self)  # row k: x[i_k] - x[j_k]
    w = _pair_grad(grad.unsqueeze(-1), diff, result.unsqueeze(-1), p)
    return s.matmul(w)


@pdist.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((4, 3)),), {}
    yield (r((3, 2)), 1.0), {}
    yield (r((3, 2)),), {"p": 3.0}
    yield (r((3, 2)),), {"p": _INF}


# ---------------------------------------------------------------------------------------------
# dist
# ---------------------------------------------------------------------------------------------
def _dist_check(self, other):
    for x in (self, other):
        _float_or_raise(x)
    _broadcast_or_raise(self.shape, other.shape)
    return TensorMeta((), _promoted(self, other), self.device)


@op("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", kind=REDUCTION, out=False, composite=True)
def dist(self, other, p=2):
    """The p-norm of ``self - other`` (broadcast), over all elements: ``vector_norm`` of the difference."""
    meta = _dist_check(self, other)
    return api.linalg_vector_norm((self - other).to(meta.dtype), p)


dist.meta_rule(lambda self, other, p=2: _dist_check(self, other))


@dist.grad
def _(grad, self, other, p, result, needs_input_grad):
    diff = self - other
    g = vector_norm_grad(grad, diff, p, None, False, result)
    if g is None:
        g = diff * 0
    ga = g.sum_to_size(tuple(self.shape)).to(self.dtype) if needs_input_grad[0] else None
    gb = (-g).sum_to_size(tuple(other.shape)).to(other.dtype) if needs_input_grad[1] else None
    return ga, gb


@dist.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), r(3)), {}
    yield (r((2, 3)), r((2, 3)), 1), {}
    yield (r((2, 3)), r((2, 1))), {"p": 3}
    yield (r(4), r(4)), {"p": _INF}


# ---------------------------------------------------------------------------------------------
# cosine_similarity, pairwise_distance
# ---------------------------------------------------------------------------------------------
def _cosine_check(x1, x2, dim):
    dtype = _promoted(x1, x2)
    if not dtype.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {dtype.title}")
    shape = _broadcast_or_raise(x1.shape, x2.shape)
    d = wrap_dim(dim, max(len(shape), 1))
    return TensorMeta(tuple(s for i, s in enumerate(shape) if i != d), dtype, x1.device), d


@op("cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-8) -> Tensor", kind=NN, method=False,
    composite=True)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``: ``x1.x2 / (|x1| |x2|)``,
    each norm clamped below at ``eps`` (a composition of elementwise ops and sums, as PyTorch's)."""
    meta, d = _cosine_check(x1, x2, dim)
    a, b = api.broadcast_tensors([x1.to(meta.dtype), x2.to(meta.dtype)])
    na = (a * a).sum(d, keepdim=True).sqrt().clamp_min(eps)
    nb = (b * b).sum(d, keepdim=True).sqrt().clamp_min(eps)
    return ((a / na) * (b / nb)).sum(d)


cosine_similarity.meta_rule(lambda x1, x2, dim=1, eps=1e-8: _cosine_check(x1, x2, dim)[0])


@cosine_similarity.grad
def _(grad, x1, x2, dim, eps, result, needs_input_grad):
    _, d = _cosine_check(x1, x2, dim)
    dtype = result.dtype
    a, b = api.broadcast_tensors([x1.to(dtype), x2.to(dtype)])
    na = a.pow(2).sum(d, keepdim=True).sqrt()
    nb = b.pow(2).sum(d, keepdim=True).sqrt()
    ca, cb = na.clamp_min(eps), nb.clamp_min(eps)
    g, r = grad.unsqueeze(d), result.unsqueeze(d)
    # cos = (a/ca).(b/cb); where the norm is above eps: d cos/da = b/(ca cb) - cos a/|a|^2
    ga = gb = None
    if needs_input_grad[0]:
        corr = (na > eps).to(dtype) * r / (ca * ca)
        ga = (g * (b / (ca * cb) - corr * a)).sum_to_size(tuple(x1.shape))
    if needs_input_grad[1]:
        corr = (nb > eps).to(dtype) * r / (cb * cb)
        gb = (g * (a / (ca * cb) - corr * b)).sum_to_size(tuple(x2.shape))
    return ga, gb


@cosine_similarity.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), r((2, 3))), {}
    yield (r((2, 3)), r(3)), {"dim": -1}
    yield (r((3, 2, 2)), r((1, 2, 2))), {"dim": 0, "eps": 1e-6}


def _pairwise_check(x1, x2, keepdim):
    shape = _broadcast_or_raise(x1.shape, x2.shape)
    dtype = _promoted(x1, x2)
    if not dtype.is_floating_point:
        dtype = _dt.get_default_dtype()
    if not shape:
        return TensorMeta((), dtype, x1.device)
    out = shape[:-1] + ((1,) if keepdim else ())
    return TensorMeta(out, dtype, x1.device)


@op("pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=1e-6, bool keepdim=False) -> Tensor",
    kind=NN, method=False, composite=True)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """p-norm of ``x1 - x2 + eps`` over the last dim (of the broadcast shape): ``vector_norm`` of the difference."""
    meta = _pairwise_check(x1, x2, keepdim)
    diff = (x1 - x2 + eps).to(meta.dtype)
    if diff.ndim == 0:
        return api.linalg_vector_norm(diff, p)
    return api.linalg_vector_norm(diff, p, -1, keepdim)


pairwise_distance.meta_rule(lambda x1, x2, p=2.0, eps=1e-6, keepdim=False: _pairwise_check(x1, x2, keepdim))


@pairwise_distance.grad
def _(grad, x1, x2, p, eps, keepdim, result, needs_input_grad):
    diff = (x1 - x2 + eps).to(result.dtype)
    if diff.ndim == 0:
        w = _pair_grad(grad, diff, result, p)
    else:
        g, n = (grad, result) if keepdim else (grad.unsqueeze(-1), result.unsqueeze(-1))
        w = _pair_grad(g, diff, n, p)
    ga = w.sum_to_size(tuple(x1.shape)) if needs_input_grad[0] else None
    gb = (-w).sum_to_size(tuple(x2.shape)) if needs_input_grad[1] else None
    return ga, gb


@pairwise_distance.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), r((2, 3))), {}
    yield (r((2, 3)), r(3)), {"keepdim": True}
    yield (r((2, 3)), r((2, 3)), 1.0), {}
    yield (r(3), r(3)), {"p": 3.0, "eps": 1e-3}


# ---------------------------------------------------------------------------------------------
# renorm
# ---------------------------------------------------------------------------------------------
def _renorm_check(self, p, dim, maxnorm):
    d = wrap_dim(dim, len(self.shape))
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if len(self.shape) <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {len(self.shape)} dimensions")
    if not _dtype(self).is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {scalar_name(self)}")
    return TensorMeta(tuple(self.shape), _dtype(self), self.device), tuple(i for i in range(len(self.shape))
                                                                          if i != d)


@op("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", kind=NN, out="exact", inplace=True)
def renorm(self, p, dim, maxnorm):
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` is scaled down to norm ``maxnorm``."""
    _, dims = _renorm_check(self, p, dim, maxnorm)
    norm = _vector_norm(self, p, dims, True, None)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(self.dtype)
    return (self * factor).astype(self.dtype, copy=False)


renorm.meta_rule(lambda self, p, dim, maxnorm: _renorm_check(self, p, dim, maxnorm)[0])


@renorm.grad
def _(grad, self, p, dim, maxnorm):
    _, dims = _renorm_check(self, p, dim, maxnorm)
    norm = api.linalg_vector_norm(self, p, list(dims), True)
    gsum = (self * grad).sum(list(dims), keepdim=True)
    nb = vector_norm_grad(gsum, self, p, list(dims), True, norm)
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * maxnorm
    return api.where(norm > maxnorm, factor * grad - (factor * invnorm) * nb, grad)


@renorm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((3, 4)), 2, 0, 1.0), {}
    yield (r((2, 3, 2)), 1, 1, 1.5), {}
    yield (r((3, 2)), 3, -1, 0.5), {}


# ---------------------------------------------------------------------------------------------
# frobenius_norm, nuclear_norm, norm_except_dim
# ---------------------------------------------------------------------------------------------
def _frobenius_check(self, dim, keepdim):
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    _float_or_raise(self)
    dims = sorted({wrap_dim(d, len(self.shape)) for d in dim}) if dim else list(range(len(self.shape)))
    shape = tuple((1 if i in dims else s) for i, s in enumerate(self.shape) if keepdim or i not in dims)
    return TensorMeta(shape, _dtype(self), self.device), dims


@op("frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", kind=REDUCTION, method=False,
    composite=True)
def frobenius_norm(self, dim, keepdim=False):
    """The Frobenius norm (the 2-norm of the entries) over ``dim`` (at most two dims): a ``vector_norm``."""
    _, dims = _frobenius_check(self, dim, keepdim)
    return api.linalg_vector_norm(self, 2, dims, keepdim)


frobenius_norm.meta_rule(lambda self, dim, keepdim=False: _frobenius_check(self, dim, keepdim)[0])


@frobenius_norm.grad
def _(grad, self, dim, keepdim, result):
    _, dims = _frobenius_check(self, dim, keepdim)
    return vector_norm_grad(grad, self, 2, dims, keepdim, result)


@frobenius_norm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), [0, 1]), {}
    yield (r((2, 3, 2)), [-1]), {"keepdim": True}


def _nuclear_check(self, dim, keepdim):
    _float_or_raise(self)
    if len(self.shape) < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (wrap_dim(d, len(self.shape)) for d in dim)
    shape = tuple((1 if i in (d0, d1) else s) for i, s in enumerate(self.shape) if keepdim or i not in (d0, d1))
    return TensorMeta(shape, _dtype(self), self.device), (d0, d1)


@op("nuclear_norm(Tensor self, bool keepdim=False) -> Tensor", kind=REDUCTION, method=False, composite=True)
def nuclear_norm(self, keepdim=False):
    """The nuclear norm (the sum of singular values) of the last two dims: ``matrix_norm(self, 'nuc')``."""
    _, dims = _nuclear_check(self, (-2, -1), keepdim)
    return api.linalg_matrix_norm(self, "nuc", list(dims), keepdim)


@op("nuclear_norm.dim(Tensor self, int[2] dim, bool keepdim=False) -> Tensor", kind=REDUCTION, method=False,
    composite=True)
def nuclear_norm_dim(self, dim, keepdim=False):
    """The nuclear norm (the sum of singular values) over the two dims in ``dim``: ``matrix_norm(self, 'nuc')``."""
    _, dims = _nuclear_check(self, dim, keepdim)
    return api.linalg_matrix_norm(self, "nuc", list(dims), keepdim)


nuclear_norm.meta_rule(lambda self, keepdim=False: _nuclear_check(self, (-2, -1), keepdim)[0])
nuclear_norm_dim.meta_rule(lambda self, dim, keepdim=False: _nuclear_check(self, dim, keepdim)[0])


@nuclear_norm.grad
def _(grad, self, keepdim, result):
    return matrix_norm_grad(grad, self, "nuc", _nuclear_check(self, (-2, -1), keepdim)[1], keepdim, result)


@nuclear_norm_dim.grad
def _(grad, self, dim, keepdim, result):
    return matrix_norm_grad(grad, self, "nuc", _nuclear_check(self, dim, keepdim)[1], keepdim, result)


nuclear_norm.sample_inputs(lambda rng: iter([((rng.standard_normal((3, 2)),), {}),
                                             ((rng.standard_normal((2, 2, 3)),), {"keepdim": True})]))
nuclear_norm_dim.sample_inputs(lambda rng: iter([((rng.standard_normal((3, 2, 2)), [0, 2]), {})]))


def _except_dim_check(v, pow, dim):
    _float_or_raise(v)
    if dim == -1:
        return TensorMeta((), _dtype(v), v.device), None
    d = wrap_dim(dim, len(v.shape))
    shape = tuple(s if i == d else 1 for i, s in enumerate(v.shape))
    return TensorMeta(shape, _dtype(v), v.device), [i for i in range(len(v.shape)) if i != d]


@op("norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor", kind=REDUCTION, out=False, method=False, composite=True)
def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm over every dim but ``dim`` (kept as size-1 dims); ``dim=-1``: over all of them.
    Weight normalization's norm (a ``vector_norm``)."""
    _, dims = _except_dim_check(v, pow, dim)
    return api.linalg_vector_norm(v, pow, dims, dims is not None)


norm_except_dim.meta_rule(lambda v, pow=2, dim=0: _except_dim_check(v, pow, dim)[0])


@norm_except_dim.grad
def _(grad, v, pow, dim, result):
    _, dims = _except_dim_check(v, pow, dim)
    return vector_norm_grad(grad, v, pow, dims, dims is not None, result)


@norm_except_dim.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3, 2)),), {}
    yield (r((2, 3, 2)), 2, 1), {}
    yield (r((2, 3)), 3, -1), {}

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("dist",))
