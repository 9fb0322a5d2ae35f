"""Factories: tensors made from sizes and values (zeros, ones, full, arange, eye, ...).

They take PyTorch's keyword arguments (``dtype``, ``layout``, ``device``,
``requires_grad``, ``pin_memory``); ``*_like`` forms copy shape, dtype and
device from a tensor.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .registry import FACTORY, op

_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False"
_LIKE_OPTS = _OPTS + ", str? memory_format=None"


def _float_or(dtype):
    return (dtype or _dt.get_default_dtype()).np


def _check_size(name, size):
    for s in size:
        if s < 0:
            raise RuntimeError(f"{name}: Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(size)


@op(f"empty(int[] size, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """Uninitialized memory of the given size."""
    return np.empty(_check_size("empty", size), dtype=_float_or(dtype))


@op(f"zeros(int[] size, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def zeros(size, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """A tensor filled with 0."""
    return np.zeros(_check_size("zeros", size), dtype=_float_or(dtype))


@op(f"ones(int[] size, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def ones(size, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """A tensor filled with 1."""
    return np.ones(_check_size("ones", size), dtype=_float_or(dtype))


@op(f"full(int[] size, Scalar fill_value, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """A tensor filled with ``fill_value``; the dtype is inferred from the value when not given."""
    d = dtype.np if dtype is not None else _dt.scalar_default_dtype(fill_value).np
    return np.full(_check_size("full", size), fill_value, dtype=d)


def _like(name, fill):
    def kernel(self, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False,
               memory_format=None, **extra):
        d = dtype.np if dtype is not None else self.dtype
        return fill(self.shape, d, **extra)

    kernel.__name__ = name
    return kernel


empty_like = op(f"empty_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY, method=False,
                differentiable=False)(_like("empty_like", lambda s, d: np.empty(s, d)))
zeros_like = op(f"zeros_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY, method=False,
                differentiable=False)(_like("zeros_like", lambda s, d: np.zeros(s, d)))
ones_like = op(f"ones_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY, method=False,
               differentiable=False)(_like("ones_like", lambda s, d: np.ones(s, d)))


@op(f"full_like(Tensor self, Scalar fill_value, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY, method=False,
    differentiable=False)
def full_like(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False,
              memory_format=None):
    """A tensor shaped like ``self`` filled with ``fill_value``."""
    return np.full(self.shape, fill_value, dtype=dtype.np if dtype is not None else self.dtype)


@op(f"eye(int n, int? m=None, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def eye(n, m=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """The identity matrix (``n`` x ``m``)."""
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n must be greater or equal to 0, got {n if n < 0 else m}")
    return np.eye(n, m, dtype=_float_or(dtype))


@op(f"arange(Scalar start, Scalar? end=None, Scalar step=1, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def arange(start, end=None, step=1, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """Values from ``start`` up to (not including) ``end`` by ``step``; integer args give int64."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange: upper bound and larger bound inconsistent with step sign (start={start}, end={end}, step={step})"
        )
    if dtype is None:
        is_float = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
        dtype = _dt.get_default_dtype() if is_float else _dt.int64
    n = max(0, math.ceil((end - start) / step))
    # Computed in double then cast, as PyTorch does, so float ranges match it exactly.
    if dtype.is_floating_point:
        return (start + np.arange(n, dtype=np.float64) * step).astype(dtype.np)
    return (np.arange(n, dtype=np.int64) * int(step) + int(start)).astype(dtype.np) if float(step).is_integer() and float(start).is_integer() else np.floor(start + np.arange(n) * step).astype(dtype.np)


@op(f"linspace(Scalar start, Scalar end, int steps, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    d = _float_or(dtype)
    if steps == 1:
        return np.array([start], dtype=d)
    # PyTorch fills the first half from start and the second half from end, for symmetric rounding.
    step = (end - start) / (steps - 1)
    idx = np.arange(steps, dtype=np.float64)
    half = steps // 2
    out = np.where(idx < half, start + step * idx, end - step * (steps - 1 - idx))
    if np.dtype(d).kind in "iu":
        return out.astype(np.float64).astype(d)
    return out.astype(d)


@op(f"logspace(Scalar start, Scalar end, int steps, float base=10.0, *, {_OPTS}) -> Tensor", kind=FACTORY,
    method=False)
def logspace(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    d = _float_or(dtype)
    lin = linspace.kernels["cpu"](start, end, steps, _dt.float64)
    return np.power(base, lin).astype(d)
