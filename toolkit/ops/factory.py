"""Factories: tensors made from sizes and values (zeros, ones, full, arange, eye, ...).

They take PyTorch's keyword arguments (``dtype``, ``layout``, ``device``,
``requires_grad``, ``pin_memory``); ``*_like`` forms copy shape, dtype and
device from a tensor.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.device import CPU
from .._core.layout import dim_order as stride_order
from .._core.memory_format import (
    as_memory_format,
    dim_order,
    is_contiguous_as,
    is_non_overlapping_and_dense,
    preserve_format,
)
from .._core.meta import TensorMeta
from .._core.threads import get_num_threads
from ._fma import fma
from .registry import FACTORY, op

_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False"
_LIKE_OPTS = _OPTS + ", str? memory_format=None"


def _float_or(dtype):
    return (dtype or _dt.get_default_dtype()).np


def _spaced_dtype(name: str, start, end, dtype):
    """``linspace``/``logspace``'s dtype: complex endpoints infer the default complex dtype, which a passed
    real dtype may not narrow (PyTorch's error)."""
    if not isinstance(start, complex) and not isinstance(end, complex):
        return dtype or _dt.get_default_dtype()
    inferred = _dt.get_default_dtype().to_complex()
    if dtype is not None and not dtype.is_complex:
        part = "double" if inferred is _dt.complex128 else "float"
        raise RuntimeError(f"torch.{name}(): inferred dtype c10::complex<{part}> can't be safely cast to passed "
                           f"dtype {_dt.title(dtype)}")
    return dtype or inferred


def _complex_linspace(start: complex, end: complex, steps: int, d: np.dtype) -> np.ndarray:
    """Complex ``linspace``: each part is spaced as a real ``linspace`` of the parts' dtype."""
    s, e = complex(start), complex(end)
    out = np.empty(steps, d)
    real = np.empty(0, d).real.dtype
    out.real = linspace.kernels["cpu"](s.real, e.real, steps, _dt.from_numpy_dtype(real))
    out.imag = linspace.kernels["cpu"](s.imag, e.imag, steps, _dt.from_numpy_dtype(real))
    return out


def _check_size(name, size):
    for s in size:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
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
    d = np.dtype(dtype.np if dtype is not None else _dt.scalar_default_dtype(fill_value).np)
    return np.full(_check_size("full", size), _dt.checked_scalar(fill_value, d), dtype=d)


def empty_in_format(self: np.ndarray, d: np.dtype, memory_format) -> np.ndarray:
    """Uninitialized memory shaped like ``self``, laid out as ``memory_format`` asks: ``preserve_format`` (the
    default) keeps the strides of a dense ``self`` and the dim order of another (PyTorch's dense-stride
    inference), ``channels_last`` gives NHWC strides, ``contiguous_format`` row-major ones."""
    fmt = as_memory_format(memory_format) or preserve_format
    if fmt is preserve_format:
        strides = tuple(s // self.itemsize for s in self.strides)
        if is_non_overlapping_and_dense(self.shape, strides):
            return np.empty_like(self, dtype=d, order="K", subok=False)
        order = stride_order(self.shape, strides, is_contiguous_as(self.shape, strides, None))[0]
    else:
        order = dim_order(fmt, self.ndim)
    inverse = tuple(sorted(range(len(order)), key=order.__getitem__))
    return np.empty(tuple(self.shape[i] for i in order), d).transpose(inverse)


def _like(name, make, fill, doc):
    def kernel(self, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False,
               memory_format=None, **extra):
        d = dtype.np if dtype is not None else self.dtype
        if memory_format is None and self.flags.c_contiguous:
            return make(self.shape, d)  # the common case: row-major in, row-major out (np.zeros: calloc's pages)
        out = empty_in_format(self, d, memory_format)
        if fill is not None:
            out[...] = fill
        return out

    kernel.__name__ = name
    kernel.__doc__ = doc
    return kernel


empty_like = op(f"empty_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY, name_rule=_names.KEEP,
                method=False,
                differentiable=False)(_like("empty_like", np.empty, None, "Uninitialized memory shaped like ``self``."))
zeros_like = op(f"zeros_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY, name_rule=_names.KEEP,
                method=False,
                differentiable=False)(_like("zeros_like", np.zeros, 0, "Zeros shaped like ``self``."))
ones_like = op(f"ones_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY, name_rule=_names.KEEP,
               method=False,
               differentiable=False)(_like("ones_like", np.ones, 1, "Ones shaped like ``self``."))


@op(f"full_like(Tensor self, Scalar fill_value, *, {_LIKE_OPTS}) -> Tensor", kind=FACTORY,
    name_rule=_names.KEEP, method=False,
    differentiable=False)
def full_like(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False,
              memory_format=None):
    """A tensor shaped like ``self`` filled with ``fill_value``."""
    out = empty_in_format(self, dtype.np if dtype is not None else self.dtype, memory_format)
    out[...] = _dt.checked_scalar(fill_value, out.dtype)
    return out


def _new(name: str, make, doc: str):
    """``self.new_zeros(size)`` and its kin: a fresh tensor of ``size`` with ``self``'s dtype and device unless
    given. Ops of their own, as in PyTorch, so a trace records ``aten::new_zeros`` and its replay follows the
    input's dtype instead of the one seen while tracing."""
    def kernel(self, size, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
        return make(_check_size(name, size), dtype.np if dtype is not None else self.dtype)

    kernel.__name__ = name
    kernel.__doc__ = doc
    return op(f"{name}(Tensor self, int[] size, *, {_OPTS}) -> Tensor", kind=FACTORY, function=False,
              differentiable=False)(kernel)


new_empty = _new("new_empty", np.empty, "Uninitialized memory of ``size``, with this tensor's dtype and device "
                                        "unless given.")
new_zeros = _new("new_zeros", np.zeros, "Zeros of ``size``, with this tensor's dtype and device unless given.")
new_ones = _new("new_ones", np.ones, "Ones of ``size``, with this tensor's dtype and device unless given.")


@op(f"new_full(Tensor self, int[] size, Scalar fill_value, *, {_OPTS}) -> Tensor", kind=FACTORY, function=False,
    differentiable=False)
def new_full(self, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """``fill_value`` over ``size``, with this tensor's dtype and device unless given."""
    d = np.dtype(dtype.np if dtype is not None else self.dtype)
    return np.full(_check_size("new_full", size), _dt.checked_scalar(fill_value, d), dtype=d)


@op(f"eye(int n, int? m=None, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def eye(n, m=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """The identity matrix (``n`` x ``m``)."""
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n must be greater or equal to 0, got {n if n < 0 else m}")
    return np.eye(n, m, dtype=_float_or(dtype))


@op(f"arange(Scalar start, Scalar? end=None, Scalar step=1, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def arange(start, end=None, step=1, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """Values from ``start`` up to (not including) ``end`` by ``step``; integer args give int64."""
    start, end, step, d, n = _arange_plan(start, end, step, dtype)
    if d.kind in "iub":
        return (math.trunc(start) + math.trunc(step) * np.arange(n, dtype=np.int64)).astype(d)
    return _arange_floating(start, step, n, d)


def _arange_plan(start, end, step, dtype):
    """Checks, dtype and length of an arange, from its arguments alone (shared with the meta rule)."""
    if end is None:
        start, end = 0, start
    if any(isinstance(v, complex) for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    if dtype is not None and dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dt.title(dtype)}'")
    if not (step > 0 or step < 0):  # nan too
        raise RuntimeError("arange: step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange: upper bound and lower bound inconsistent with step sign (start={start}, end={end}, step={step})"
        )
    if dtype is None:
        is_float = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
        dtype = _dt.get_default_dtype() if is_float else _dt.int64
    d = dtype.np
    if d == np.int64:  # int64 truncates the bounds and step first (a fractional step can become 0)
        if not all(-(2.0 ** 63) <= v < 2.0 ** 63 for v in (start, end, step)):
            raise RuntimeError("arange: value cannot be converted to type int64_t without overflow")
        xs, xe, xp = math.trunc(start), math.trunc(end), math.trunc(step)
        if xp == 0:  # PyTorch raises ValueError for a fractional step that truncates to 0
            raise ValueError("arange: step must be nonzero")
        num = xe - xs + xp - ((xp > 0) - (xp < 0))
        n = abs(num) // abs(xp) * (1 if (num >= 0) == (xp > 0) else -1)
    elif d == np.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    else:
        size = (float(end) - float(start)) / float(step)
        if size > 2.0 ** 63 - 1:
            raise RuntimeError("arange: invalid size, possible overflow?")
        n = math.ceil(size)
    return start, end, step, d, max(n, 0)


_VEC = {"float64": (np.float64, 4), "float32": (np.float64, 8), "float16": (np.float32, 16)}  # AVX2 vector widths


def _arange_floating(start, step, n: int, d: np.dtype) -> np.ndarray:
    """PyTorch's CPU arange: pairs of vectors start at ``start + step * i`` rounded to the dtype and continue
    by ``base + k * step``; the remainder is ``start + step * i``. All fused, in the accumulate type."""
    acc, width = _VEC[d.name]
    acc = np.dtype(acc)
    out = fma(step, np.arange(n).astype(acc), start, acc).astype(d)
    k = np.arange(width).astype(acc)
    for lo, hi in _chunks(n):
        nvec = ((hi - lo) // (2 * width)) * 2 * width
        if nvec:
            bases = fma(step, np.arange(lo, lo + nvec, width).astype(acc), start, acc).astype(d).astype(acc)
            out[lo:lo + nvec] = fma(k[None, :], step, bases[:, None], acc).astype(d).reshape(-1)
    return out


def _chunks(n: int) -> list:
    """How PyTorch's ``parallel_for`` splits ``range(n)`` over its threads (one chunk up to the grain size)."""
    threads = min(get_num_threads(), -(-n // _GRAIN)) if n else 1
    size = -(-n // threads) if n else 0
    return [(t * size, min(n, (t + 1) * size)) for t in range(threads) if t * size < n]


_GRAIN = 32768  # beyond this PyTorch splits the range across threads


_C_TYPE = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
           "float16": "c10::Half"}


def _scalar_to(value, d: np.dtype):
    """``Scalar::to<T>()``: truncation for integers, rounding for floats, with PyTorch's overflow check."""
    if d.kind in "iu":
        info = np.iinfo(d)
        if not info.min <= value <= info.max:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPE[d.name]} without overflow")
        return d.type(math.trunc(value))
    if d == np.float16 and math.isfinite(value) and abs(value) > 65504:
        raise RuntimeError("value cannot be converted to type c10::Half without overflow")
    return d.type(value)


def _two_sided(start, end, step, steps: int, acc: np.dtype) -> np.ndarray:
    """PyTorch's symmetric fill: ``start + step * i`` for the first half, ``end - step * (steps - 1 - i)``
    for the second (each a fused multiply-add in ``acc``)."""
    half = steps // 2
    idx = np.arange(steps, dtype=np.float64)
    out = np.empty(steps, dtype=acc)
    out[:half] = fma(step, idx[:half].astype(acc), start, acc)
    out[half:] = fma(-step, (steps - 1 - idx[half:]).astype(acc), end, acc)
    return out


@op(f"linspace(Scalar start, Scalar end, int steps, *, {_OPTS}) -> Tensor", kind=FACTORY, method=False)
def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive, rounded exactly as PyTorch rounds them."""
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    d = np.dtype(_spaced_dtype("linspace", start, end, dtype).np)
    if d.kind == "c":
        return _complex_linspace(start, end, steps, d)
    if d == np.bool_:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    s, e = _scalar_to(start, d), _scalar_to(end, d)
    if steps <= 1:
        return np.full(steps, s, dtype=d)
    if d == np.float16:  # c10::Half arithmetic: every operation rounds to half
        step = np.float16(np.float16(e - s) / np.float16(steps - 1))
        idx = np.arange(steps).astype(np.float16)
        half = steps // 2
        low = s + step * idx[:half]
        high = e - step * (np.float16(steps - 1) - idx[half:]).astype(np.float16)
        return np.concatenate([low, high]).astype(np.float16)
    if d.kind == "f":
        step = d.type(d.type(e - s) / d.type(steps - 1))
        return _two_sided(s, e, step, steps, d)
    step = (float(e) - float(s)) / (steps - 1)
    vals = _two_sided(float(s), float(e), step, steps, np.dtype(np.float64))
    return np.trunc(vals).astype(d)


@op(f"logspace(Scalar start, Scalar end, int steps, float base=10.0, *, {_OPTS}) -> Tensor", kind=FACTORY,
    method=False)
def logspace(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``, with the exponents computed in double as PyTorch does."""
    if steps < 0:
        raise RuntimeError("logspace: number of steps must be non-negative")
    d = np.dtype(_spaced_dtype("logspace", start, end, dtype).np)
    if d.kind == "c":  # base ** (complex exponents), in double precision
        with np.errstate(over="ignore", invalid="ignore"):
            return np.power(complex(base), _complex_linspace(start, end, steps, np.dtype(np.complex128))).astype(d)
    if d == np.bool_:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    if steps <= 1:
        vals = [math.pow(base, float(start))] * steps
    else:
        s, e = _scalar_to(start, d), _scalar_to(end, d)
        step = float(d.type(e - s) if d.kind == "f" else int(e) - int(s)) / (steps - 1)
        half = steps // 2  # computed unfused: logspace is not in PyTorch's FMA-compiled kernels
        exps = [float(s) + step * i if i < half else float(e) - step * (steps - i - 1) for i in range(steps)]
        vals = [_pow(base, x) for x in exps]
    out = np.array(vals, dtype=np.float64)
    if d.kind in "iu":
        with np.errstate(invalid="ignore"):
            return np.trunc(out).astype(d)
    with np.errstate(over="ignore"):
        return out.astype(d)


def _pow(base: float, x: float) -> float:
    """The C library's ``pow`` (which numpy's vectorized power does not always match)."""
    try:
        return math.pow(base, x)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


# ---------------------------------------------------------------------------------------------
# Samples for the registry-generated tests
# ---------------------------------------------------------------------------------------------
def _size_samples(rng):
    yield ((2, 3),), {}
    yield ((0, 4),), {}
    yield ((),), {}
    yield (3, 2), {"dtype": _dt.int32}
    yield ((2,),), {"dtype": _dt.float64, "requires_grad": True}
    yield ((4,),), {"dtype": _dt.bool}


@empty.sample_inputs
def _(rng):
    # Only empty results: the contents of uninitialized memory cannot be compared.
    yield ((0, 4),), {}
    yield ((3, 0),), {"dtype": _dt.int32}


zeros.sample_inputs(_size_samples)
ones.sample_inputs(_size_samples)


@full.sample_inputs
def _(rng):
    yield ((2, 3), 1.5), {}
    yield ((2, 3), 7), {}
    yield ((3,), True), {}
    yield ((0, 2), 2.0), {}
    yield ((2,), 3), {"dtype": _dt.float64}
    yield ((), -1.25), {}


def _like_samples(rng):
    yield (rng.standard_normal((2, 3)),), {}
    yield (rng.standard_normal((3, 2)).T,), {}
    yield (np.arange(6, dtype=np.int64).reshape(2, 3),), {"dtype": _dt.float32}
    yield (np.zeros((0, 3)),), {}
    yield (rng.standard_normal(()),), {}


@empty_like.sample_inputs
def _(rng):
    yield (np.zeros((0, 3)),), {}
    yield (np.zeros((2, 0), dtype=np.int64),), {"dtype": _dt.float64}


zeros_like.sample_inputs(_like_samples)
ones_like.sample_inputs(_like_samples)


@full_like.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), 4.5), {}
    yield (np.arange(4, dtype=np.int32), 7), {}
    yield (np.arange(4, dtype=np.int64), 2), {"dtype": _dt.float64}


def _new_samples(rng):
    yield (rng.standard_normal((2, 3)), (3, 2)), {}
    yield (np.arange(4, dtype=np.int32), (2,)), {}
    yield (rng.standard_normal(3), (0, 2)), {"dtype": _dt.float64}
    yield (rng.standard_normal(3), ()), {}


new_zeros.sample_inputs(_new_samples)
new_ones.sample_inputs(_new_samples)


@new_empty.sample_inputs
def _(rng):
    yield (rng.standard_normal(3), (0, 2)), {}
    yield (np.arange(3), (2, 0)), {"dtype": _dt.float64}


@new_full.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), (2, 2), 4.5), {}
    yield (np.arange(4, dtype=np.int32), (3,), 7), {}
    yield (np.arange(4, dtype=np.int64), (1, 2), 2), {"dtype": _dt.float64}


@eye.sample_inputs
def _(rng):
    yield (3,), {}
    yield (2, 4), {}
    yield (0,), {}
    yield (3,), {"dtype": _dt.int64}
    yield (2, 2), {"dtype": _dt.bool}


@arange.sample_inputs
def _(rng):
    yield (5,), {}
    yield (1, 10), {}
    yield (0, 1, 0.1), {}
    yield (-1.5, 1.5, 0.1), {}
    yield (10, 0, -3), {}
    yield (0.0, 3.3, 0.7), {"dtype": _dt.float64}
    yield (2.5,), {}
    yield (0, 40, 0.5), {}
    yield (1, 2.5, 0.5), {"dtype": _dt.int32}


@linspace.sample_inputs
def _(rng):
    yield (0, 1, 5), {}
    yield (-2.5, 7.3, 17), {}
    yield (0, 10, 4), {"dtype": _dt.float64}
    yield (3, 100, 33), {"dtype": _dt.int64}
    yield (1, 0, 11), {}
    yield (0, 1, 1), {}
    yield (0, 1, 0), {}


@logspace.sample_inputs
def _(rng):
    yield (0, 2, 5), {}
    yield (-2.5, 7.3, 17), {"dtype": _dt.float64}
    yield (0.1, 0.9, 7, 2.0), {}
    yield (0, 3, 4), {"dtype": _dt.int64}


# ---------------------------------------------------------------------------------------------
# Meta rules
# ---------------------------------------------------------------------------------------------
def _opts_meta(size, dtype, device, default=None, name=""):
    return TensorMeta(_check_size(name, size), dtype or default or _dt.get_default_dtype(), device or CPU)


def _sized_meta(name):
    def meta(size, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
        return _opts_meta(size, dtype, device, name=name)

    return meta


for _o in (empty, zeros, ones):
    _o.meta_rule(_sized_meta(_o.name))


@full.meta_rule
def _(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    return _opts_meta(size, dtype, device, _dt.scalar_default_dtype(fill_value), "full")


@empty_like.meta_rule
def _(self, *args):
    dtype, device = args[-6], args[-4]
    return TensorMeta(self.shape, dtype or self.dtype, device or self.device)


@new_zeros.meta_rule
def _(self, size, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    return TensorMeta(_check_size("new_zeros", size), dtype or self.dtype, device or self.device)


new_ones.meta_rule(new_zeros.meta)
new_empty.meta_rule(new_zeros.meta)


@new_full.meta_rule
def _(self, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    return TensorMeta(_check_size("new_full", size), dtype or self.dtype, device or self.device)


zeros_like.meta_rule(empty_like.meta)
ones_like.meta_rule(empty_like.meta)
full_like.meta_rule(empty_like.meta)


def _onnx_like(g, self, fill_value, dtype):
    """ONNX for a ``*_like`` factory: the fill value spread over the input's run-time shape (so a model
    exported with dynamic axes makes its masks and zeros at the size it is run at)."""
    dtype = dtype or g.dtype(self)
    if g.is_value(fill_value):
        return g.op("Expand", g.op("Cast", fill_value, to=dtype), g.op("Shape", self))
    return g.op("ConstantOfShape", g.op("Shape", self), value=np.full(1, fill_value, dtype.np))


zeros_like.symbolic(lambda g, self, dtype=None, *options: _onnx_like(g, self, 0, dtype))
ones_like.symbolic(lambda g, self, dtype=None, *options: _onnx_like(g, self, 1, dtype))
full_like.symbolic(lambda g, self, fill_value, dtype=None, *options: _onnx_like(g, self, fill_value, dtype))


@zeros.symbolic
def _(g, size, dtype=None, *options):
    # ``size`` is a constant list in a trace, an int64 tensor where a scripted model computes it
    shape = size if g.is_value(size) else g.constant(list(size), _dt.int64)
    return g.op("ConstantOfShape", shape, value=np.zeros(1, _float_or(dtype)))


def _onnx_new(fill):
    """ONNX for ``self.new_zeros(size)`` and its kin: ``ConstantOfShape`` in ``self``'s dtype unless given
    (``new_empty`` gives zeros)."""
    def lower(g, self, size, *rest):
        fill_value = fill
        if fill is None:  # new_full(self, size, fill_value, dtype, ...)
            fill_value, rest = rest[0], rest[1:]
        dtype = rest[0] if rest else None
        shape = size if g.is_value(size) else g.constant(list(size), _dt.int64)
        return g.op("ConstantOfShape", shape, value=np.full(1, fill_value, (dtype or g.dtype(self)).np))

    return lower


new_zeros.symbolic(_onnx_new(0))
new_empty.symbolic(_onnx_new(0))
new_ones.symbolic(_onnx_new(1))
new_full.symbolic(_onnx_new(None))


@eye.meta_rule
def _(n, m=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n must be greater or equal to 0, got {n if n < 0 else m}")
    return _opts_meta((n, n if m is None else m), dtype, device)


@arange.meta_rule
def _(start, end=None, step=1, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    _, _, _, d, n = _arange_plan(start, end, step, dtype)
    return TensorMeta((n,), _dt.from_numpy_dtype(d), device or CPU)


@linspace.meta_rule
def _(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    return _opts_meta((steps,), _spaced_dtype("linspace", start, end, dtype), device)


@logspace.meta_rule
def _(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    if steps < 0:
        raise RuntimeError("logspace: number of steps must be non-negative")
    return _opts_meta((steps,), _spaced_dtype("logspace", start, end, dtype), device)
