"""Reductions over dims with ``dim``/``keepdim``/``dtype`` as in PyTorch: sum, mean, prod, logsumexp, all, any.

The helpers here (dim wrapping, reduced meta, restoring reduced dims in a
gradient) are shared by the other reduction families (moments, extrema,
cumulative ops).
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dims
from . import api
from ._meta_rules import reduced_shape
from .grad_fn_rules import by_dim_given
from .registry import REDUCTION, op, refuses_names, takes_dim_names

dtype_title = _dt.title


def axes(dim, ndim: int, name: str):
    """numpy ``axis`` for a PyTorch ``dim`` (None or empty means all dims); validates the dims."""
    if dim is None or dim == ():
        return None
    if not ndim:
        wrap_dims(dim, 0, name)
        return None
    return wrap_dims(dim, ndim, name)


def reduce_meta(self, dim, keepdim, dtype, name: str) -> TensorMeta:
    return TensorMeta(reduced_shape(tuple(self.shape), dim, keepdim, name), dtype, self.device)


def int_to_long(d, dtype=None):
    """The accumulation dtype of sum/prod/cumsum: an explicit ``dtype``, else int64 for integers and bool."""
    if dtype is not None:
        return dtype
    return d if d.is_floating_point or d.is_complex else _dt.int64


def restore_dims(grad, shape, dim, keepdim):
    """Put back the dims a reduction removed, so ``grad`` broadcasts against the input (no copy)."""
    if not keepdim and dim not in (None, ()) and len(shape):
        for d in sorted(wrap_dims(dim, len(shape))):
            grad = grad.unsqueeze(d)
    return grad


def expand_back(grad, shape, dim, keepdim):
    """Broadcast a reduced gradient back to the input's shape."""
    return restore_dims(grad, shape, dim, keepdim).expand(shape)


def reduced_count(shape, dim) -> int:
    n = 1
    for d in (range(len(shape)) if dim in (None, ()) else wrap_dims(dim, max(len(shape), 1))):
        n *= shape[d] if shape else 1
    return n


FAST_MIN = 1 << 15  # elements from which the compiled sums beat numpy's (below, numpy's call costs less)
_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def fast_reducible(a: np.ndarray, ints: bool = False) -> bool:
    """Whether ``a`` takes the compiled reductions of ``_reduce_numba``: large float32/float64 (or int64 with
    ``ints``) arrays; everything else keeps numpy's loops."""
    return a.size >= FAST_MIN and (a.dtype in _FAST_DTYPES or (ints and a.dtype == np.int64))


def _sum_dtype(a: np.ndarray, dtype):
    if dtype is not None:
        return dtype.np
    if a.dtype.kind in "biu":
        return np.int64
    return a.dtype


# ----------------------------------------------------------------------------- sum, mean
@op("sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION,
    full_reduction="sum", grad_fn=by_dim_given("SumBackward0", "SumBackward1"))
def sum(self, dim=None, keepdim=False, dtype=None):
    """Sum over ``dim`` (all dims by default); integers accumulate in int64 as in PyTorch, large float32 inputs
    in float64 (as accurate as PyTorch's cascade sum or more)."""
    ax = axes(dim, self.ndim, "sum")
    if dtype is None and fast_reducible(self, ints=True):
        from ._reduce_numba import sum_terms  # optional: numba, never loaded by import toolkit

        r = sum_terms(self, ax, keepdim)
        if r is not None:
            return r
    return np.add.reduce(self, axis=ax, keepdims=keepdim, dtype=_sum_dtype(self, dtype))


@sum.meta_rule
def _(self, dim=None, keepdim=False, dtype=None):
    return reduce_meta(self, dim, keepdim, int_to_long(self.dtype, dtype), "sum")


@sum.grad
def _(grad, self_shape, dim, keepdim):
    return expand_back(grad, self_shape, dim, keepdim)


def _dim_samples(rng, low=-2.0, high=2.0):
    """Reduction samples: all dims, one dim, negative and multiple dims, keepdim, transposed, 0-d, empty."""
    yield (rng.uniform(low, high, (3, 4)),), {}
    yield (rng.uniform(low, high, (3, 4)), 1), {}
    yield (rng.uniform(low, high, (2, 3, 4)), (0, -1)), {"keepdim": True}
    yield (rng.uniform(low, high, (4, 3)).T, -2), {}
    yield (np.array(rng.uniform(low, high)),), {}
    yield (np.array(rng.uniform(low, high)), 0), {"keepdim": True}
    yield (rng.uniform(low, high, (0, 3)), 0), {}


@sum.sample_inputs
def _(rng):
    yield from _dim_samples(rng)
    yield (rng.integers(-5, 5, (3, 4)).astype(np.int32), 0), {}
    yield (rng.uniform(-1, 1, (2, 3)).astype(np.float32),), {"dim": 1, "dtype": _dt.float64}


@op("sum_to_size(Tensor self, int[] size) -> Tensor", kind=REDUCTION, function=False,
    grad_fn=lambda bound, outputs: "ViewBackward0" if len(bound[1]) < bound[0].dim() else "SumBackward1")
def sum_to_size(self, size):
    """Sum broadcast dims away so the result has ``size`` (the adjoint of ``expand``)."""
    size = tuple(size)
    lead = self.ndim - len(size)
    if lead < 0:
        raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(self.shape)}")
    ax = list(range(lead))
    for i, s in enumerate(size):
        if s == 1 and self.shape[lead + i] != 1:
            ax.append(lead + i)
        elif s != self.shape[lead + i]:
            raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(self.shape)}")
    r = np.sum(self, axis=tuple(ax), keepdims=True) if ax else self
    return r.reshape(size)


@sum_to_size.meta_rule
def _(self, size):
    size, shape = tuple(size), tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(shape)}")
    return TensorMeta(size, self.dtype, self.device)


@sum_to_size.grad
def _(grad, self_shape):
    return grad.expand(self_shape)


@sum_to_size.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (2, 3, 4)), (3, 1)), {}
    yield (rng.uniform(-1, 1, (4, 3)).T, (1, 4)), {}
    yield (rng.uniform(-1, 1, (2, 3)), (2, 3)), {}


def _mean_dtype_error(d) -> RuntimeError:
    return RuntimeError(
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
        f"Got: {dtype_title(d)}"
    )


@op("mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION,
    out="cast", full_reduction="mean", grad_fn=by_dim_given("MeanBackward0", "MeanBackward1"))
def mean(self, dim=None, keepdim=False, dtype=None):
    """Arithmetic mean; like PyTorch it refuses integer inputs unless a float ``dtype`` is given."""
    if dtype is None and self.dtype.kind not in "fc":
        raise _mean_dtype_error(self.dtype)
    out_dtype = dtype.np if dtype is not None else self.dtype
    ax = axes(dim, self.ndim, "mean")
    if out_dtype == self.dtype and fast_reducible(self):
        from ._reduce_numba import sum_terms  # optional: numba, never loaded by import toolkit

        r = sum_terms(self, ax, keepdim, scale=1.0 / reduced_count(self.shape, dim))
        if r is not None:
            return r
    acc = np.float32 if out_dtype == np.float16 else out_dtype
    total = np.sum(self, axis=ax, keepdims=keepdim, dtype=acc)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / np.dtype(acc).type(reduced_count(self.shape, dim))).astype(out_dtype, copy=False)


@mean.meta_rule
def _(self, dim=None, keepdim=False, dtype=None):
    if dtype is None and not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise _mean_dtype_error(self.dtype)
    return reduce_meta(self, dim, keepdim, dtype or self.dtype, "mean")


@mean.grad
def _(grad, self_shape, dim, keepdim):
    return expand_back(grad, self_shape, dim, keepdim) / reduced_count(self_shape, dim)


@mean.sample_inputs
def _(rng):
    yield from _dim_samples(rng)
    yield (rng.integers(-5, 5, (3, 4)),), {"dtype": _dt.float64}


# ----------------------------------------------------------------------------- prod
@op("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION, out=False, autocast="fp32")
def prod(self, dtype=None):
    """Product of all elements; integers and bool multiply in int64 as in PyTorch."""
    return np.prod(self, dtype=_sum_dtype(self, dtype))


@op("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION, autocast="fp32",
    grad_fn="ProdBackward1")
def prod_dim(self, dim, keepdim=False, dtype=None):
    """Product along one dim."""
    return np.prod(self, axis=axes(dim, self.ndim, "prod"), keepdims=keepdim, dtype=_sum_dtype(self, dtype))


@prod.meta_rule
def _(self, dtype=None):
    return reduce_meta(self, None, False, int_to_long(self.dtype, dtype), "prod")


@prod_dim.meta_rule
def _(self, dim, keepdim=False, dtype=None):
    return reduce_meta(self, dim, keepdim, int_to_long(self.dtype, dtype), "prod")


def _prod_backward(grad, self, result, dim, keepdim):
    """``grad * prod / x``; where ``x`` has zeros, the product of the other elements instead."""
    if self.ndim == 0:
        return grad
    if dim is None:
        return _prod_backward(grad, self.reshape(-1), result, 0, False).reshape(self.shape)
    g = restore_dims(grad, self.shape, dim, keepdim)
    r = restore_dims(result, self.shape, dim, keepdim)
    zero = self == 0
    if not zero.any():
        return g * r / self
    ones_at_zeros = self + zero  # zeros replaced by one: safe to divide by, and the product of the nonzeros
    others_at_zero = ones_at_zeros.prod(dim, keepdim=True) * (zero.sum(dim, keepdim=True) == 1)
    return g * (r / ones_at_zeros + zero * others_at_zero)


@prod.grad
def _(grad, self, result):
    return _prod_backward(grad, self, result, None, False)


@prod_dim.grad
def _(grad, self, result, dim, keepdim):
    return _prod_backward(grad, self, result, dim, keepdim)


@prod.sample_inputs
def _(rng):
    yield (rng.uniform(0.5, 1.5, (3, 4)),), {}
    yield (rng.uniform(0.5, 1.5, (4, 3)).T,), {}
    yield (np.array(1.7),), {}
    yield (rng.uniform(-2, 2, (0, 3)),), {}
    yield (rng.integers(-3, 3, (5,)).astype(np.int32),), {}
    yield (rng.uniform(0.5, 1.5, (2, 3)).astype(np.float32),), {"dtype": _dt.float64}


@prod_dim.sample_inputs
def _(rng):
    yield (rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1, 1], (3, 4)), 1), {}
    yield (rng.uniform(0.5, 1.5, (4, 3)).T, -2), {"keepdim": True}
    yield (np.array(1.3), 0), {}
    yield (rng.uniform(-2, 2, (0, 3)), 0), {}
    yield (rng.integers(-3, 3, (3, 2)).astype(np.uint8), 0), {}
    yield (rng.uniform(0.5, 1.5, (2, 3)).astype(np.float32), 0), {"dtype": _dt.float64}


# ----------------------------------------------------------------------------- logsumexp
@op("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", kind=REDUCTION, out="cast")
def logsumexp(self, dim, keepdim=False):
    """``log(sum(exp(x)))`` computed stably (the max is subtracted first); integers give float."""
    ax = axes(dim, self.ndim, "logsumexp")
    x = self if self.dtype.kind in "fc" else self.astype(_dt.get_default_dtype().np)
    if x.size == 0:
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(x), axis=ax, keepdims=keepdim))
    m = np.max(x.real, axis=ax, keepdims=True)  # complex: shifting by the largest real part keeps exp finite
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        s = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
    return s if keepdim else s.reshape(reduced_shape(x.shape, dim, False, "logsumexp"))


@logsumexp.meta_rule
def _(self, dim, keepdim=False):
    d = self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else _dt.get_default_dtype()
    return reduce_meta(self, dim, keepdim, d, "logsumexp")


@logsumexp.grad
def _(grad, self, result, dim, keepdim):
    g = restore_dims(grad, self.shape, dim, keepdim)
    return g * (self - restore_dims(result, self.shape, dim, keepdim)).exp()


@logsumexp.sample_inputs
def _(rng):
    yield (rng.uniform(-3, 3, (3, 4)), 1), {}
    yield (rng.uniform(-3, 3, (2, 3, 4)), (0, 2)), {"keepdim": True}
    yield (rng.uniform(-3, 3, (4, 3)).T, -1), {}
    yield (np.array(0.7), 0), {}
    yield (rng.uniform(-3, 3, (0, 2)), 0), {}
    yield (np.array([[500.0, 499.0], [-1.0, 2.0]]), 1), {}
    yield (rng.integers(-3, 3, (2, 3)), 0), {}


# ----------------------------------------------------------------------------- all, any
def _logical_reduce(fn, name):
    def kernel(self, dim=None, keepdim=False):
        if dim == ():
            r = self.astype(bool)  # an empty dim list reduces nothing
        else:
            ax = axes(dim if dim is None or isinstance(dim, tuple) else (dim,), self.ndim, name)
            r = fn(self, axis=ax, keepdims=keepdim)
        return np.asarray(r, dtype=np.uint8 if self.dtype == np.uint8 else np.bool_)

    return kernel


def _logical_meta(name):
    def meta(self, dim=None, keepdim=False):
        d = _dt.uint8 if self.dtype is _dt.uint8 else _dt.bool
        if dim == ():
            return TensorMeta(self.shape, d, self.device)
        return reduce_meta(self, dim, keepdim, d, name)

    return meta


def _logical_samples(rng):
    yield (rng.uniform(-1, 1, (3, 4)) > 0,), {}
    yield (rng.integers(0, 2, (4, 3)).astype(np.uint8).T,), {}
    yield (np.zeros((0, 3)),), {}
    yield (rng.integers(0, 2, (3, 4)).astype(np.float64), 1), {}
    yield (rng.integers(0, 3, (2, 3, 4)).astype(np.int32), -1), {"keepdim": True}
    yield (np.array(1.5), 0), {}
    yield (np.zeros((0, 3)), 0), {}
    yield (np.ones((2, 3)),), {"dim": (0, 1)}
    yield (rng.integers(0, 2, (2, 3)).astype(np.float64),), {"dim": ()}
    yield (rng.integers(0, 2, (2, 3)).astype(np.float64),), {"dim": None, "keepdim": True}


def _logical_samples_for(overload: str):
    """The samples whose arguments bind to one overload (none, an int dim, or a list of dims)."""

    def samples(rng):
        for args, kwargs in _logical_samples(rng):
            with_int = len(args) == 2 and isinstance(args[1], int)
            if (overload == "" and len(args) == 1 and not kwargs) or (overload == "dim" and with_int) or (
                overload == "dims" and kwargs
            ):
                yield args, kwargs

    return samples


def _onnx_logical(name: str):
    """ONNX for ``all``/``any``: the min (all) or the sum (any: 0 over no elements) of the input as 0/1, as
    ONNX's Reduce* take no bool before opset 20, cast back to bool (uint8 for a uint8 input, as PyTorch)."""
    def lower(g, self, dim=None, keepdim=False):
        flags = g.op("Cast", self, to=_dt.bool)
        # A 0-dim tensor's only dim is its one element; an empty dim list reduces nothing (``all.dims``).
        if g.rank(self) != 0 and not (isinstance(dim, (list, tuple)) and not dim):
            flags = g.op("Cast", onnx_reduce(g, "ReduceMin" if name == "all" else "ReduceSum",
                                             g.op("Cast", flags, to=_dt.int64), dim, keepdim), to=_dt.bool)
        return g.op("Cast", flags, to=_dt.uint8) if g.dtype(self) is _dt.uint8 else flags
    return lower


for _name, _fn, _doc in (("all", np.all, "True where every element is nonzero"),
                         ("any", np.any, "True where some element is nonzero")):
    _kernel = _logical_reduce(_fn, _name)
    _meta = _logical_meta(_name)
    for _overload, _args in (("", ""), ("dim", ", int dim, bool keepdim=False"),
                             ("dims", ", int[]? dim=None, bool keepdim=False")):
        _o = op(f"{_name}{'.' if _overload else ''}{_overload}(Tensor self{_args}) -> Tensor", kind=REDUCTION,
                out="any", differentiable=False,
                doc=f"{_doc} (over ``dim``); bool result, uint8 for uint8 input as in PyTorch.")(_kernel)
        _o.meta_rule(_meta)
        _o.sample_inputs(_logical_samples_for(_overload))
        _o.symbolic(_onnx_logical(_name))


# ----------------------------------------------------------------------------- count_nonzero
@op("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor", kind=REDUCTION, out=False, differentiable=False)
def count_nonzero_dims(self, dim):
    """Number of nonzero elements over the dims in ``dim`` (int64)."""
    return np.asarray(np.count_nonzero(self, axis=axes(dim, self.ndim, "count_nonzero")), dtype=np.int64)


@op("count_nonzero(Tensor self, int? dim=None) -> Tensor", kind=REDUCTION, out=False, differentiable=False)
def count_nonzero(self, dim=None):
    """Number of nonzero elements, in all of ``self`` or along ``dim`` (int64)."""
    return count_nonzero_dims.kernels["cpu"](self, None if dim is None else (dim,))


@count_nonzero_dims.meta_rule
def _(self, dim):
    return reduce_meta(self, dim, False, _dt.int64, "count_nonzero")


@count_nonzero.meta_rule
def _(self, dim=None):
    return reduce_meta(self, None if dim is None else (dim,), False, _dt.int64, "count_nonzero")


@count_nonzero_dims.sample_inputs
def _(rng):
    yield (rng.integers(0, 2, (3, 4)).astype(np.float64), (0, 1)), {}
    yield (rng.integers(0, 3, (2, 3, 4)).astype(np.int32), (-1,)), {}


@count_nonzero.sample_inputs
def _(rng):
    yield (rng.integers(0, 2, (3, 4)).astype(np.float64),), {}
    yield (rng.integers(0, 2, (4, 3)).astype(np.float64).T, 1), {}
    yield (np.array(0.0),), {}
    yield (np.zeros((0, 3)), 0), {}


def dim_arange(n: int, d: int, ndim: int):
    """``arange(n)`` shaped to lie along dim ``d`` of an ``ndim``-dim tensor (for one-hot masks)."""
    return api.arange(n).reshape([n if i == d else 1 for i in range(ndim)])


# ----------------------------------------------------------------------------- cumsum, cumprod
def _scan(fn, name):
    def check(dtype):
        if dtype is _dt.bool:
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")

    def kernel(self, dim, dtype=None):
        check(dtype)
        d = wrap_dims(dim, self.ndim, name)[0] if self.ndim else None
        out = _sum_dtype(self, dtype)
        acc = np.float32 if out == np.float16 else out
        if d is None:
            return np.asarray(self, dtype=out)
        return fn(self, axis=d, dtype=acc).astype(out, copy=False)

    def meta(self, dim, dtype=None):
        check(dtype)
        wrap_dims(dim, len(self.shape), name)
        return TensorMeta(self.shape, int_to_long(self.dtype, dtype), self.device)

    return kernel, meta


def reverse_cumsum(g, dim: int):
    """``g.flip(dim).cumsum(dim).flip(dim)``: the sum of each element and those after it along ``dim``."""
    return g.sum(dim, keepdim=True) - g.cumsum(dim) + g


def _scan_samples(rng, low=-2.0, high=2.0):
    yield (rng.uniform(low, high, (3, 4)), 1), {}
    yield (rng.uniform(low, high, (4, 3)).T, 0), {}
    yield (rng.uniform(low, high, (2, 3, 4)), -1), {}
    yield (np.array(rng.uniform(low, high)), 0), {}
    yield (rng.uniform(low, high, (0, 3)), 1), {}
    yield (rng.uniform(low, high, (2, 3)).astype(np.float32),), {"dim": 0, "dtype": _dt.float64}
    yield (rng.integers(-3, 4, (3, 3)).astype(np.int32), 0), {}


_cumsum_kernel, _cumsum_meta = _scan(np.cumsum, "cumsum")
_cumprod_kernel, _cumprod_meta = _scan(np.cumprod, "cumprod")


@op("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION, inplace=True)
def cumsum(self, dim, dtype=None):
    """Running sum along ``dim``; integers and bool accumulate in int64 unless ``dtype`` is given."""
    return _cumsum_kernel(self, dim, dtype)


@op("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", kind=REDUCTION, inplace=True)
def cumprod(self, dim, dtype=None):
    """Running product along ``dim``; integers and bool accumulate in int64 unless ``dtype`` is given."""
    return _cumprod_kernel(self, dim, dtype)


cumsum.meta_rule(_cumsum_meta)
cumprod.meta_rule(_cumprod_meta)


@cumsum.grad
def _(grad, dim):
    return reverse_cumsum(grad, dim) if grad.ndim else grad


@cumprod.grad
def _(grad, self, result, dim):
    if self.ndim == 0:
        return grad
    zero = self == 0
    if not zero.any():
        return reverse_cumsum(grad * result, dim) / self
    # At the first zero of a slice the gradient is the running product with that zero taken out;
    # after it every gradient is zero, and before it the nonzero formula holds.
    first = zero * (zero.cumsum(dim) == 1)
    without_first = (self + first).cumprod(dim)
    at_first = reverse_cumsum(grad * without_first, dim)
    before = reverse_cumsum(grad * result, dim) / (self + zero)
    return first * at_first + (self != 0) * before


@cumsum.sample_inputs
def _(rng):
    yield from _scan_samples(rng)


@cumprod.sample_inputs
def _(rng):
    yield from _scan_samples(rng, 0.5, 1.5)
    yield (rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1, 1], (3, 4)), -1), {}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def onnx_reduce(g, op_type: str, x, dim, keepdim: bool):
    """An ONNX ``Reduce*`` over ``dim`` (an int, a list, or None/[] for every dim): ReduceSum takes its axes
    as an input from opset 13, the other reductions from opset 18, attributes before."""
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return g.op(op_type, x, keepdims=int(keepdim))
    if g.rank(x) == 0:  # PyTorch reduces a 0-dim tensor over dim 0 or -1: itself
        return x
    axes = [dim] if isinstance(dim, int) else dim
    if op_type == "ReduceSum" or g.opset >= 18:
        return g.op(op_type, x, axes if g.is_value(axes) else g.constant(list(axes), _dt.int64),
                    keepdims=int(keepdim))
    if g.is_value(axes):
        raise g.unsupported(f"{op_type} over dims computed at run time before opset 18")
    return g.op(op_type, x, axes=list(axes), keepdims=int(keepdim))


def _onnx_accumulating(g, x, dtype):
    """What PyTorch sums and multiplies in: ``dtype`` if given, int64 for integer and bool inputs."""
    if dtype is None and g.dtype(x) is not None and not g.dtype(x).is_floating_point \
            and not g.dtype(x).is_complex:
        dtype = _dt.int64
    return x if dtype is None or g.dtype(x) is dtype else g.op("Cast", x, to=dtype)


@sum.symbolic
def _(g, self, dim=None, keepdim=False, dtype=None):
    return onnx_reduce(g, "ReduceSum", _onnx_accumulating(g, self, dtype), dim, keepdim)


@mean.symbolic
def _(g, self, dim=None, keepdim=False, dtype=None):
    if 0 in (g.shape(self) or ()):
        raise g.unsupported("the mean of an empty tensor (ONNX gives 0, PyTorch nan)")
    if dtype is not None:
        self = g.op("Cast", self, to=dtype)
    return onnx_reduce(g, "ReduceMean", self, dim, keepdim)


@prod.symbolic
def _(g, self, dtype=None):
    return onnx_reduce(g, "ReduceProd", _onnx_accumulating(g, self, dtype), None, False)


@prod_dim.symbolic
def _(g, self, dim, keepdim=False, dtype=None):
    return onnx_reduce(g, "ReduceProd", _onnx_accumulating(g, self, dtype), dim, keepdim)


@cumsum.symbolic
def _(g, self, dim, dtype=None):
    x = _onnx_accumulating(g, self, dtype)
    if g.rank(self) == 0:  # the running sum of one element
        return g.op("Identity", x)
    return g.op("CumSum", x, g.constant(dim, _dt.int64))

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("all.dim", "all.dims", "any.dim", "any.dims", "count_nonzero", "cumprod_", "cumsum_"))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("sum", "mean", "prod", "logsumexp", "cumsum", "cumprod"))
