"""Running reductions along a dim: cummax, cummin (values with indices) and logcumsumexp.

``cumsum`` and ``cumprod`` live with the reductions they accumulate
(``reduction.py``). Here, as in PyTorch, the running max (min) takes the
latest of tied elements, and a NaN, once seen, stays the running value with the
index of the latest NaN.

Example::

    >>> toolkit.tensor([1.0, 3.0, 2.0, 3.0]).cummax(0)
    toolkit.return_types.cummax(
    values=tensor([1., 3., 3., 3.]),
    indices=tensor([0, 1, 1, 3]))
"""

from __future__ import annotations

import numpy as np

from .. import return_types
from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .complex_refusal import no_complex_kernel, refuse_complex
from .registry import REDUCTION, op, takes_dim_names


def _running_extreme(self: np.ndarray, d: int, largest: bool):
    """Running max (min) along ``d`` and the index of the latest element equal to it.

    An element equal to the running value at its own position is where that value was last set; the running
    value only grows (shrinks), so the latest such position up to ``i`` is the index at ``i``.
    """
    ufunc = np.maximum if largest else np.minimum
    values = ufunc.accumulate(self, axis=d)
    hit = self == values
    if self.dtype.kind == "f":
        hit |= np.isnan(self)
    pos = np.arange(self.shape[d]).reshape([-1 if i == d else 1 for i in range(self.ndim)])
    indices = np.maximum.accumulate(np.where(hit, pos, 0), axis=d)
    return values, indices.astype(np.int64, copy=False)


def _scatter_to_indices(grad, indices, dim: int, self_shape):
    """The gradient of a running selection: each output's gradient added at the index it took its value from."""
    if not self_shape:
        return grad
    return api.zeros(self_shape, dtype=grad.dtype).scatter_add(dim, indices, grad)


def _values_indices_meta(self, dim: int, name: str):
    wrap_dim(dim, max(len(self.shape), 1), name)
    return TensorMeta(self.shape, self.dtype, self.device), TensorMeta(self.shape, _dt.int64, self.device)


def _scan_samples(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 1), {}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0, 0), {}
    yield (rng.permutation(24).reshape(2, 3, 4) / 8.0, -2), {}
    yield (np.array([[2, 1, 1, 3, 0], [0, 0, 5, 5, 1]]).astype(np.int32), 1), {}  # ties: the latest
    yield (np.array([True, False, True]), 0), {}
    yield (np.array(0.5), 0), {}
    yield (np.zeros((0, 3)), 1), {}


def _make_running_extreme(name: str, largest: bool):
    word = "maximum" if largest else "minimum"

    def kernel(self, dim):
        d = wrap_dim(dim, max(self.ndim, 1), name)
        if self.ndim == 0:
            return self.copy(), np.zeros((), np.int64)
        return _running_extreme(self, d, largest)

    kernel.__name__ = name
    o = op(f"{name}(Tensor self, int dim) -> (Tensor values, Tensor indices)", kind=REDUCTION,
           doc=f"Running {word} along ``dim`` and the index each value came from (the latest on ties; NaN "
               "propagates).")(kernel)
    o.return_type = getattr(return_types, name)
    o.meta_rule(lambda self, dim: _values_indices_meta(self, dim, name))
    o.grad(lambda grad, self_shape, result, dim: _scatter_to_indices(grad[0], result[1], dim, self_shape))
    o.sample_inputs(_scan_samples)
    return o


cummax = _make_running_extreme("cummax", True)
cummin = _make_running_extreme("cummin", False)


# ----------------------------------------------------------------------------- logcumsumexp
def _check_float(dtype) -> None:
    """``dtype``: a numpy dtype (kernels) or a toolkit dtype (meta rules)."""
    d = _dt.from_numpy_dtype(dtype) if isinstance(dtype, np.dtype) else dtype
    if not d.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_dt.title(d)}'")


@op("logcumsumexp(Tensor self, int dim) -> Tensor", kind=REDUCTION)
def logcumsumexp(self, dim):
    """``log(cumsum(exp(x)))`` along ``dim``, computed stably (pairwise ``logaddexp``); floating inputs only."""
    _check_float(self.dtype)
    d = wrap_dim(dim, max(self.ndim, 1), "logcumsumexp")
    if self.ndim == 0:
        return self.copy()
    x = self.astype(np.float32) if self.dtype == np.float16 else self
    with np.errstate(invalid="ignore"):  # NaN in, NaN out
        return np.logaddexp.accumulate(x, axis=d).astype(self.dtype, copy=False)


@logcumsumexp.meta_rule
def _(self, dim):
    _check_float(self.dtype)
    wrap_dim(dim, max(len(self.shape), 1), "logcumsumexp")
    return TensorMeta(self.shape, self.dtype, self.device)


def _reverse_logcumsumexp(x, dim: int):
    return x.flip(dim).logcumsumexp(dim).flip(dim)


@logcumsumexp.grad
def _(grad, self, result, dim):
    """``grad_i = sum_{j >= i} g_j exp(x_i - r_j)``, with positive and negative ``g`` summed apart in log space."""
    if self.ndim == 0:
        return grad
    lowest = float(np.finfo(grad.dtype.np).min)
    log_abs = grad.abs().log()
    positive = log_abs.masked_fill(grad <= 0, lowest)
    negative = log_abs.masked_fill(grad >= 0, lowest)
    up = (_reverse_logcumsumexp(positive - result, dim) + self).exp()
    down = (_reverse_logcumsumexp(negative - result, dim) + self).exp()
    return up - down


@logcumsumexp.sample_inputs
def _(rng):
    yield (rng.uniform(-3, 3, (3, 4)), 1), {}
    yield (rng.uniform(-3, 3, (4, 3)).T, 0), {}
    yield (rng.uniform(-3, 3, (2, 3, 4)), -1), {}
    yield (np.array([[500.0, 499.0, -2.0], [-1.0, 2.0, 700.0]]), 1), {}
    yield (np.array(0.7), 0), {}
    yield (rng.uniform(-3, 3, (0, 2)), 0), {}
    yield (rng.uniform(-3, 3, (3, 4)).astype(np.float32), 0), {}


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("cummax", "cummin"), no_complex_kernel("{name}_cpu"))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("cummax", "cummin", "logcumsumexp"))
