"""Index and value sequences made from Python numbers: ``tril_indices``, ``triu_indices`` and ``range``.

``tril_indices``/``triu_indices`` give the ``(2, count)`` coordinates of a
matrix's lower/upper triangle in row-major order, as ``x[tuple(idx)]`` wants
them. ``range`` is PyTorch's deprecated inclusive-end sequence: it warns on
every call, as PyTorch's Python binding does, and computes ``start + i * step``
in the accumulate type (double for floats, int64 for integers) before rounding
to the dtype, so it gives PyTorch's numbers rather than ``arange``'s.

On CUDA these are made on the host and copied up once (the backend's rule for
factories), so ``set_default_device`` reaches them like every other factory.
"""

from __future__ import annotations

import math
import os
import sys
import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core.device import CPU
from .._core.meta import TensorMeta
from .registry import FACTORY, op

# The keyword arguments every factory takes (PyTorch's TensorOptions, plus the Python binding's requires_grad).
TENSOR_OPTIONS = ("ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
                  "bool requires_grad=False")


# ---------------------------------------------------------------------------------------------
# tril_indices / triu_indices
# ---------------------------------------------------------------------------------------------
_LONG_OPTIONS = TENSOR_OPTIONS.replace("dtype=None", "dtype=long")  # indices default to int64


def _triangle_plan(name: str, row: int, col: int, dtype) -> np.dtype:
    """PyTorch's checks, in its order, and the result's dtype (int64 unless int32 is asked)."""
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    d = _dt.int64 if dtype is None or dtype == "long" else dtype
    if d not in (_dt.int32, _dt.int64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{d.title}'")
    return d


def _triangle_count(row: int, col: int, offset: int, lower: bool) -> int:
    """How many elements of a ``row`` x ``col`` matrix lie on or below (above) diagonal ``offset``."""
    if lower:
        return sum(max(0, min(col, i + offset + 1)) for i in range(row))
    return sum(max(0, col - max(0, i + offset)) for i in range(row))


@op(f"tril_indices(int row, int col, int offset=0, *, {_LONG_OPTIONS}) -> Tensor", kind=FACTORY, out=False, method=False)
def tril_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """The row and column indices of the lower triangle of a ``row`` x ``col`` matrix, on and below diagonal
    ``offset`` (positive: above the main diagonal), one column per element in row-major order.

    >>> toolkit.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    d = _triangle_plan("tril_indices", row, col, dtype)
    return np.stack(np.tril_indices(row, offset, col)).astype(d.np).reshape(2, -1)


@op(f"triu_indices(int row, int col, int offset=0, *, {_LONG_OPTIONS}) -> Tensor", kind=FACTORY, out=False, method=False)
def triu_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """The row and column indices of the upper triangle of a ``row`` x ``col`` matrix, on and above diagonal
    ``offset``, one column per element in row-major order.

    >>> toolkit.triu_indices(2, 3, 1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    d = _triangle_plan("triu_indices", row, col, dtype)
    return np.stack(np.triu_indices(row, offset, col)).astype(d.np).reshape(2, -1)


def _triangle_meta(name: str, lower: bool):
    def meta(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
        d = _triangle_plan(name, row, col, dtype)
        return TensorMeta((2, _triangle_count(row, col, offset, lower)), d, device or CPU)

    return meta


tril_indices.meta_rule(_triangle_meta("tril_indices", True))
triu_indices.meta_rule(_triangle_meta("triu_indices", False))


def _triangle_samples(rng):
    yield (3, 3), {}
    yield (4, 3, 1), {}
    yield (3, 5, -1), {}
    yield (2, 4, 10), {}
    yield (3, 3, -5), {}
    yield (0, 3), {}
    yield (4, 2), {"dtype": _dt.int32}


tril_indices.sample_inputs(_triangle_samples)
triu_indices.sample_inputs(_triangle_samples)


# ---------------------------------------------------------------------------------------------
# range (deprecated)
# ---------------------------------------------------------------------------------------------
RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                 "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                 "[start, end).")

# The accumulate type of PyTorch's CPU range kernel (its acc_type): double for float and double, float for half.
_RANGE_ACC = {"float16": np.float32, "float32": np.float64, "float64": np.float64}


def _to_int64(value) -> int:
    """``Scalar::to<int64_t>()``: truncation, with PyTorch's overflow check."""
    if not -(2.0 ** 63) <= value < 2.0 ** 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return math.trunc(value)


def _range_plan(start, end, step, dtype):
    """Checks of ``range``, its dtype, accumulate type, start, step and length, from the arguments alone."""
    d = dtype or _dt.get_default_dtype()  # the Python binding's default: the default dtype, even for integers
    if d is _dt.bool:
        raise NotImplementedError("\"range_cpu\" not implemented for 'Bool'")
    if d.is_floating_point:
        acc = np.dtype(_RANGE_ACC[d.name])
        xstart, xend, xstep = (acc.type(v) for v in (start, end, step))
    else:
        acc = np.dtype(np.int64)
        xstart, xend, xstep = (_to_int64(v) for v in (start, end, step))
    if not (xstep > 0 or xstep < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xstart) and math.isfinite(xend)):
        raise RuntimeError(f"unsupported range: {float(xstart):g} -> {float(xend):g}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if acc.kind == "f":
        with np.errstate(over="ignore"):
            n = int((xend - xstart) / xstep + 1)
    else:
        n = abs(xend - xstart) // abs(xstep) + 1
    return d, acc, xstart, xstep, n


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that points a warning raised by this helper's caller at the first frame outside
    toolkit: the user's line, however many dispatch frames lie between (eager, CUDA, the JIT's interpreter)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _range_values(start, end, step, dtype) -> np.ndarray:
    warnings.warn(RANGE_WARNING, UserWarning, stacklevel=_caller_stacklevel())
    d, acc, xstart, xstep, n = _range_plan(start, end, step, dtype)
    with np.errstate(over="ignore"):
        return (xstart + np.arange(n, dtype=np.int64).astype(acc) * xstep).astype(d.np)


@op(f"range.step(Scalar start, Scalar end, Scalar step=1, *, {TENSOR_OPTIONS}) -> Tensor", kind=FACTORY,
    method=False)
def range_step(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """Deprecated: values from ``start`` to ``end`` *inclusive* by ``step``, ``floor((end - start) / step) + 1``
    of them, in the default dtype unless ``dtype`` is given (even for integer bounds). Use ``arange``, which
    stops before ``end`` as Python's ``range`` does. (Only this overload: PyTorch's Python ``range`` reaches
    ``aten::range.step`` for every call, so ``aten::range``'s two-argument form is left out.)

    >>> toolkit.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    return _range_values(start, end, step, dtype)


@range_step.meta_rule
def _(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    d, _, _, _, n = _range_plan(start, end, step, dtype)
    return TensorMeta((n,), d, device or CPU)


@range_step.sample_inputs
def _(rng):
    yield (0, 1, 0.1), {}
    yield (3, 0, -0.7), {}
    yield (-1.5, 2.5, 0.25), {"dtype": _dt.float64}
    yield (0.5, 3.7, 1), {"dtype": _dt.int32}
    yield (10, 1, -3), {"dtype": _dt.int64}
    yield (0, 4, 1.5), {"dtype": _dt.float16}
    yield (2, 2, 1), {}
    yield (1, 4), {}
    yield (-2.5, 3.2), {"dtype": _dt.float64}
