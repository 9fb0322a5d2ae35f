"""``vander``: the Vandermonde matrix of a 1-D tensor, as PyTorch composes it.

Column ``j`` holds ``x ** (N - 1 - j)`` (or ``x ** j`` when ``increasing``),
made by a running product along the row (``cumprod``, multiplying in double for
float32 as PyTorch's CPU kernel does) rather than by powers, so the numbers are
PyTorch's. Integer and bool inputs give int64, as
``cumprod`` promotes them.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import SHAPE, op


def _plan(shape: tuple, N) -> tuple:
    """PyTorch's checks; the result's number of columns."""
    if len(shape) != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        return shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    return N


def _result_dtype(dtype):
    return dtype if dtype.is_floating_point else _dt.int64


# The type PyTorch's CPU cumprod multiplies in (its acc_type): double for float, float for half.
_ACCUMULATE = {"float16": _dt.float32, "float32": _dt.float64}


@op("vander(Tensor x, int? N=None, bool increasing=False) -> Tensor", kind=SHAPE, out=False, method=False, composite=True)
def vander(x, N=None, increasing=False):
    """The matrix whose columns are powers of ``x``: decreasing from ``x ** (N-1)`` to ``x ** 0`` (ones), or
    increasing when asked. ``N`` defaults to ``len(x)``, giving a square matrix.

    >>> toolkit.vander(toolkit.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    n = _plan(tuple(x.shape), N)
    d = _result_dtype(x.dtype)
    rows = x.shape[0]
    if n == 0:
        return api.empty((rows, 0), dtype=d, device=x.device)
    ones = api.ones((rows, 1), dtype=d, device=x.device)
    if n == 1:
        result = ones
    else:
        acc = _ACCUMULATE.get(d.name, d)
        powers = api.cumprod(x.to(acc).unsqueeze(1).expand(rows, n - 1), 1).to(d)
        result = api.cat([ones, powers], 1)
    return result if increasing else api.flip(result, [1])


@vander.meta_rule
def _(x, N=None, increasing=False):
    return TensorMeta((x.shape[0], _plan(tuple(x.shape), N)), _result_dtype(x.dtype), x.device)


@vander.grad
def _(grad, x, N=None, increasing=False):
    """``d x**j / dx = j * x**(j-1)``: the increasing matrix one column shifted, times the powers."""
    n = grad.shape[1]
    g = grad if increasing else api.flip(grad, [1])
    if n <= 1:
        return api.zeros_like(x)
    below = api.vander(x, n - 1, increasing=True)
    powers = api.arange(1, n, dtype=below.dtype, device=x.device)
    return (g.narrow(1, 1, n - 1) * below * powers).sum(1)


@vander.sample_inputs
def _(rng):
    x = rng.standard_normal(4)
    yield (x,), {}
    yield (x, 3), {}
    yield (x,), {"N": 5, "increasing": True}
    yield (x, 1), {}
    yield (x, 0), {}
    yield (np.arange(1, 4, dtype=np.int32),), {}
    yield (np.array([True, False]),), {"increasing": True}
    yield (rng.standard_normal(3).astype(np.float32), 4, False), {}
    yield (np.zeros(0),), {}
