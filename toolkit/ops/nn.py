"""Neural-network ops that are not plain elementwise: softmax and log_softmax (more come with toolkit.nn).

Both subtract the max along ``dim`` before exponentiating, so large inputs
do not overflow; their derivatives are written with registered ops, so
double backward works.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from .reduction import dtype_title
from .registry import NN, op


def _softmax_input(self: np.ndarray, dim: int, dtype, name: str):
    """``self`` cast to ``dtype`` (if given), the wrapped dim; PyTorch's error for non-float inputs."""
    d = wrap_dim(dim, max(self.ndim, 1), name)
    x = self.astype(dtype.np) if dtype is not None else self
    if x.dtype.kind != "f":
        last = self.ndim <= 1 or d == self.ndim - 1
        kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtype_title(x.dtype)}'")
    if self.ndim == 0:
        return x, None
    return x, d


def _shifted(x: np.ndarray, d: int | None):
    """``x - max(x, d)`` computed in at least float32; the output dtype is ``x``'s."""
    acc = x.astype(np.float32) if x.dtype == np.float16 else x
    if d is None or acc.size == 0:
        return acc - acc if d is None else acc
    with np.errstate(invalid="ignore"):
        return acc - np.max(acc, axis=d, keepdims=True)


@op("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", kind=NN, out="exact")
def softmax(self, dim, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, stable for large inputs; ``dtype`` casts the input first."""
    x, d = _softmax_input(self, dim, dtype, "softmax")
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(_shifted(x, d))
        out = e / (np.sum(e, axis=d, keepdims=True) if d is not None else e)
    return out.astype(x.dtype, copy=False)


@op("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", kind=NN, out="exact")
def log_softmax(self, dim, dtype=None):
    """``x - logsumexp(x, dim)``, stable for large inputs; ``dtype`` casts the input first."""
    x, d = _softmax_input(self, dim, dtype, "log_softmax")
    s = _shifted(x, d)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        out = s - np.log(np.sum(np.exp(s), axis=d, keepdims=True)) if d is not None else s
    return out.astype(x.dtype, copy=False)


def _meta(name):
    def meta(self, dim, dtype=None):
        wrap_dim(dim, max(len(self.shape), 1), name)
        out = dtype or self.dtype
        if not out.is_floating_point:
            d = wrap_dim(dim, max(len(self.shape), 1), name)
            last = len(self.shape) <= 1 or d == len(self.shape) - 1
            kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtype_title(out)}'")
        return TensorMeta(self.shape, out, self.device)

    return meta


softmax.meta_rule(_meta("softmax"))
log_softmax.meta_rule(_meta("log_softmax"))


@softmax.grad
def _(grad, result, dim):
    if result.ndim == 0:
        return grad * 0
    return result * (grad - (grad * result).sum(dim, keepdim=True))


@log_softmax.grad
def _(grad, result, dim):
    if result.ndim == 0:
        return grad * 0
    return grad - result.exp() * grad.sum(dim, keepdim=True)


def _samples(rng):
    yield (rng.uniform(-3, 3, (3, 4)), 1), {}
    yield (rng.uniform(-3, 3, (3, 4)), 0), {}
    yield (rng.uniform(-3, 3, (4, 3)).T, -1), {}
    yield (rng.uniform(-3, 3, (2, 3, 4)), -2), {}
    yield (np.array([[1000.0, 999.0, -5.0], [-1000.0, -999.0, 0.0]]), 1), {}  # no overflow
    yield (np.array(0.7), 0), {}
    yield (rng.uniform(-3, 3, (0, 3)), 1), {}
    yield (rng.uniform(-3, 3, (2, 3)).astype(np.float32), 1), {"dtype": _dt.float64}
    yield (rng.integers(-3, 3, (2, 3)), 1, _dt.float32), {}


softmax.sample_inputs(_samples)
log_softmax.sample_inputs(_samples)
