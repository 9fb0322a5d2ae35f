"""Covariance and correlation matrices: cov (with frequency and observation weights) and corrcoef.

Rows are variables and columns observations, as in numpy. Both are, as in
PyTorch, compositions of registered ops, so their dtypes follow those ops (an
integer input gives the default float dtype) and autograd follows the parts.
The derivative rules state the gradient for the JIT: with centred rows ``X`` and
weights ``w``, ``cov = X diag(w) X^T / norm``, and the centring adds nothing to
the gradient because the weighted rows of ``X`` sum to zero.

Example::

    >>> toolkit.cov(toolkit.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import REDUCTION, op


def _check_cov(self_dtype, ndim: int, n: int, fweights, aweights) -> None:
    if ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {ndim} "
                           "dimensions")
    if self_dtype is _dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    for name, w, ok, kind in (("fweights", fweights, lambda d: d.is_integral, "integral"),
                              ("aweights", aweights, lambda d: d.is_floating_point, "floating point")):
        if w is None:
            continue
        if len(w.shape) > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{len(w.shape)} dimensions")
        if not ok(w.dtype):
            raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                               f"{_dt.title(w.dtype)} dtype")
        numel = w.shape[0] if len(w.shape) else 1
        if numel != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                               f"input but got {numel} != {n}")


def _observations(self):
    """``self`` as (variables, observations): a vector or scalar is one variable."""
    return self.reshape(1, -1) if self.ndim < 2 else self


def _weights_and_norm(x, correction, fweights, aweights):
    """The observation weights (None for equal ones), their sum and the normalization (PyTorch's order of ops)."""
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is not None and w.numel() and bool((w < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = api.full([], x.shape[1], dtype=_dt.int64)
    else:
        w_sum = w.sum()
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=4)
        norm = norm * 0
    return w, w_sum, norm


def _centred(x, w, w_sum):
    return x - ((x * w if w is not None else x).sum(1) / w_sum).unsqueeze(1)


@op("cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
    kind=REDUCTION, out=False, composite=True, nondiff_args=("fweights", "aweights"))
def cov(self, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in ``self``'s rows (observations in its columns), dividing by
    ``N - correction``; ``fweights`` repeat observations, ``aweights`` weigh them. A 0-d result for one variable."""
    _check_cov(self.dtype, self.ndim, _observations(self).shape[1], fweights, aweights)
    x = _observations(self)
    w, w_sum, norm = _weights_and_norm(x, correction, fweights, aweights)
    xc = _centred(x, w, w_sum)
    return (xc.mm((xc * w if w is not None else xc).t()) / norm).squeeze()


def _cov_meta(self, correction=1, fweights=None, aweights=None):
    shape = tuple(self.shape)
    n = 1
    for s in shape[1:] if len(shape) == 2 else shape:
        n *= s
    _check_cov(self.dtype, len(shape), n, fweights, aweights)
    dtype = self.dtype
    for w in (fweights, aweights):
        if w is not None:
            dtype = _dt.promote_types(dtype, w.dtype)
    if not dtype.is_floating_point:
        dtype = _dt.get_default_dtype()
    v = shape[0] if len(shape) == 2 else 1
    return TensorMeta((v, v) if v != 1 else (), dtype, self.device)


cov.meta_rule(_cov_meta)


def _cov_backward(grad, self, correction, fweights, aweights):
    x = _observations(self.detach())
    w, w_sum, norm = _weights_and_norm(x, correction, fweights, aweights)
    xc = _centred(x, w, w_sum)
    g = grad.reshape(x.shape[0], x.shape[0])
    return ((g + g.t()).mm(xc * w if w is not None else xc) / norm).reshape(self.shape)


@cov.grad
def _(grad, self, correction, fweights, aweights):
    return _cov_backward(grad, self, correction, fweights, aweights), None, None


@cov.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 5)),), {}
    yield (rng.uniform(-2, 2, 6),), {"correction": 0}
    yield (rng.uniform(-2, 2, (5, 3)).T,), {"correction": 2}
    yield (rng.uniform(-2, 2, (1, 4)),), {}
    yield (rng.integers(-3, 3, (2, 5)).astype(np.int32),), {}
    yield (rng.uniform(-2, 2, (2, 4)).astype(np.float32),), {}


# ----------------------------------------------------------------------------- corrcoef
def _check_corrcoef(ndim: int) -> None:
    if ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with {ndim} "
                           "dimensions")


@op("corrcoef(Tensor self) -> Tensor", kind=REDUCTION, out=False, composite=True)
def corrcoef(self):
    """Pearson correlation coefficients of the variables in ``self``'s rows: the covariance divided by the standard
    deviations, clipped to ``[-1, 1]``; a single variable gives 1 (NaN for a constant one)."""
    _check_corrcoef(self.ndim)
    c = api.cov(self)
    if c.ndim == 0:
        return c / c
    s = c.diagonal().sqrt()
    return (c / s.reshape(-1, 1) / s.reshape(1, -1)).clip(-1, 1)


@corrcoef.meta_rule
def _(self):
    _check_corrcoef(len(self.shape))
    return _cov_meta(self)


@corrcoef.grad
def _(grad, self):
    """``R = C / (s s^T)`` with ``s = sqrt(diag C)``: ``dC = G / (s s^T)`` minus, on the diagonal, the rows' and
    columns' sums of ``G * R`` over ``2 s^2``; then back through ``cov``."""
    c = api.cov(self.detach())
    if c.ndim == 0:
        return api.zeros(list(self.shape), dtype=grad.dtype)
    s = c.diagonal().sqrt()
    outer = s.reshape(-1, 1) * s.reshape(1, -1)
    r = c / outer
    g = grad * ((r >= -1) & (r <= 1))
    gr = g * r
    dc = g / outer - api.diag_embed((gr.sum(0) + gr.sum(1)) / (2 * s * s))
    return _cov_backward(dc, self, 1, None, None)


@corrcoef.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 5)),), {}
    yield (rng.uniform(-2, 2, (5, 3)).T,), {}
    yield (rng.uniform(-2, 2, 4),), {}
    yield (rng.integers(-3, 3, (2, 6)).astype(np.int64),), {}
    yield (rng.uniform(-2, 2, (2, 4)).astype(np.float32),), {}
