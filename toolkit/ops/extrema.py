"""Extremes: max and min (full, along a dim with indices, and elementwise), amax/amin, argmax/argmin, aminmax.

Ties: ``max(dim)``/``argmax`` return the first occurrence, as PyTorch and
numpy do; the full ``max()`` and ``amax`` spread the gradient evenly over
tied elements, as PyTorch does. NaN counts as the extreme.
"""

from __future__ import annotations

import numpy as np

from .. import return_types
from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from .complex_refusal import no_complex_kernel, refuse_complex
from .reduction import axes, dim_arange, fast_reducible, reduce_meta, restore_dims
from .registry import ELEMENTWISE, REDUCTION, get, op, refuses_names, takes_dim_names
from .selection import maximum, minimum


def _no_identity(name: str) -> RuntimeError:
    return RuntimeError(
        f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
        "Specify the reduction dim with the 'dim' argument."
    )


def check_nonempty_dims(shape, dims, name: str, error=IndexError) -> None:
    """Reductions without an identity (max, median, ...) refuse to reduce a dim of size 0."""
    for d in dims:
        if len(shape) and shape[d] == 0:
            raise error(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _arg_extreme(a: np.ndarray, d: int, largest: bool) -> np.ndarray:
    """Index of the first max (min) along ``d``; a NaN wins, as in PyTorch."""
    return (np.argmax if largest else np.argmin)(a, axis=d)


def _fast_extreme(a: np.ndarray, dim, keepdim: bool, largest: bool, indices: bool, values: bool = True):
    """The values and/or indices from ``_reduce_numba.extreme`` for large float arrays, split over the threads;
    None (the numpy path) otherwise. A single array when ``indices`` is false, else (values, indices)."""
    if not fast_reducible(a):
        return None
    from ._reduce_numba import extreme  # optional: numba, never loaded by import toolkit

    r = extreme(a, dim, keepdim, largest, indices, values)
    return r if r is None or indices else r[0]


def evenly_distribute(grad, self, value, dim=None, keepdim=False, nan_selects: bool = False):
    """The gradient of a value-selecting reduction, shared equally among the elements equal to the value.

    With ``nan_selects`` a NaN value counts as equal to the NaN elements (PyTorch's evenly_distribute_backward,
    which the full max, min, median and nanmedian use; amax and amin share a NaN result's gradient with nothing).
    """
    value = restore_dims(value, self.shape, dim, keepdim)
    mask = self == value
    if nan_selects:
        mask = mask | (self.isnan() & value.isnan())
    count = mask.sum(dim, keepdim=True) if dim not in (None, ()) else mask.sum()
    return restore_dims(grad, self.shape, dim, keepdim) * mask / count


def select_backward(grad, indices, dim: int, self_shape, keepdim: bool):
    """The gradient of a reduction that picked ``indices`` along ``dim``: ``grad`` at those positions, else 0."""
    if not self_shape:
        return grad
    d = wrap_dim(dim, len(self_shape))
    if not keepdim:
        grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
    return grad * (dim_arange(self_shape[d], d, len(self_shape)) == indices)


# ----------------------------------------------------------------------------- max, min
def _make_extreme(name: str, largest: bool) -> None:
    np_fn = np.max if largest else np.min

    def full(self):
        if self.size == 0:
            raise _no_identity(name)
        r = _fast_extreme(self, None, False, largest, False)
        return np_fn(self) if r is None else r

    def along(self, dim, keepdim=False):
        d = wrap_dim(dim, max(self.ndim, 1), name)
        if self.ndim == 0:
            return self.copy(), np.zeros((), np.int64)
        check_nonempty_dims(self.shape, (d,), name)
        r = _fast_extreme(self, d, keepdim, largest, True)
        if r is not None:
            return r
        idx = np.expand_dims(_arg_extreme(self, d, largest), d)
        values = np.take_along_axis(self, idx, axis=d)
        if not keepdim:
            values, idx = np.squeeze(values, d), np.squeeze(idx, d)
        return values, idx.astype(np.int64, copy=False)

    word = "largest" if largest else "smallest"
    o_full = op(f"{name}(Tensor self) -> Tensor", kind=REDUCTION, out="cast", grad_fn=f"{name.title()}Backward1",
                doc=f"The {word} element (NaN if any element is NaN).")(full)
    pointwise = maximum if largest else minimum  # max.other is the same op under PyTorch's other name
    o_other = op(f"{name}.other(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula=pointwise.formula,
                 grad_fn=pointwise,
                 doc=f"Elementwise {pointwise.name} of two tensors, with broadcasting; NaN propagates."
                 )(pointwise.kernels["cpu"])
    o_other.scalar_tensors = False  # ``x.max(1)`` is the dim overload, never a comparison with 1
    o_dim = op(f"{name}.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
               kind=REDUCTION, doc=f"The {word} values along ``dim`` and their indices (the first on ties).")(along)
    o_dim.return_type = getattr(return_types, name)

    @o_full.meta_rule
    def _(self):
        if 0 in tuple(self.shape):
            raise _no_identity(name)
        return TensorMeta((), self.dtype, self.device)

    @o_dim.meta_rule
    def _(self, dim, keepdim=False):
        shape = tuple(self.shape)
        d = wrap_dim(dim, max(len(shape), 1), name)
        check_nonempty_dims(shape, (d,), name)
        return reduce_meta(self, dim, keepdim, self.dtype, name), reduce_meta(self, dim, keepdim, _dt.int64, name)

    @o_full.grad
    def _(grad, self, result):
        return evenly_distribute(grad, self, result, nan_selects=True)

    o_other.grad(pointwise.derivative)

    @o_dim.grad
    def _(grad, self_shape, result, dim, keepdim):
        return select_backward(grad[0], result[1], dim, self_shape, keepdim)

    @o_full.sample_inputs
    def _(rng):
        yield (rng.permutation(12).reshape(3, 4) / 4.0 - 1.0,), {}
        yield (rng.permutation(12).reshape(4, 3).T / 3.0,), {}
        yield (np.array(0.25),), {}
        yield (rng.integers(-5, 5, (4,)).astype(np.int32),), {}

    @o_other.sample_inputs
    def _(rng):
        yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))), {}
        yield (rng.uniform(-2, 2, (2, 3, 4)), rng.uniform(-2, 2, (4,))), {}
        yield (rng.uniform(-2, 2, (4, 3)).T, np.array(0.5)), {}
        yield (rng.integers(-3, 3, (3,)).astype(np.int32), rng.uniform(-2, 2, (3,))), {}

    @o_dim.sample_inputs
    def _(rng):
        yield (rng.permutation(12).reshape(3, 4) / 4.0, 1), {}
        yield (rng.permutation(24).reshape(2, 3, 4) / 8.0, -3), {"keepdim": True}
        yield (rng.permutation(12).reshape(4, 3).T / 4.0, 0), {}
        yield (np.array(1.5), 0), {}
        yield (np.array(1.5), -1), {"keepdim": True}
        yield (np.zeros((0, 3)), 1), {}
        yield (rng.integers(-3, 3, (3, 4)).astype(np.int16), 1), {}


_make_extreme("max", True)
_make_extreme("min", False)


# ----------------------------------------------------------------------------- amax, amin, aminmax
def _amax_kernel(name, np_fn):
    def kernel(self, dim=(), keepdim=False):
        ax = axes(dim, self.ndim, name)
        if self.size == 0:
            if ax is None:
                raise _no_identity(name)
            check_nonempty_dims(self.shape, ax, name)
        if ax is None or len(ax) == 1:
            r = _fast_extreme(self, ax and ax[0], keepdim, name == "amax", False)
            if r is not None:
                return r
        return np_fn(self, axis=ax, keepdims=keepdim)

    return kernel


def _amax_meta(name):
    def meta(self, dim=(), keepdim=False):
        m = reduce_meta(self, dim, keepdim, self.dtype, name)
        shape = tuple(self.shape)
        if 0 in shape:
            if dim in (None, ()):
                raise _no_identity(name)
            check_nonempty_dims(shape, axes(dim, len(shape), name) or (), name)
        return m

    return meta


def _amax_samples(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0,), {}
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 1), {}
    yield (rng.permutation(24).reshape(2, 3, 4) / 8.0, (0, -1)), {"keepdim": True}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0, -2), {}
    yield (np.array(0.7),), {}
    yield (np.zeros((0, 3)), 1), {}
    yield (rng.integers(-3, 3, (3, 4)).astype(np.int32), 0), {}


for _name, _fn in (("amax", np.max), ("amin", np.min)):
    _o = op(f"{_name}(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", kind=REDUCTION,
            doc=f"The {'largest' if _name == 'amax' else 'smallest'} values over the dims in ``dim`` (all dims "
                "when empty); ties share the gradient evenly.")(_amax_kernel(_name, _fn))
    _o.meta_rule(_amax_meta(_name))
    _o.grad(lambda grad, self, result, dim, keepdim: evenly_distribute(grad, self, result, dim, keepdim))
    _o.sample_inputs(_amax_samples)


@op("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)", kind=REDUCTION)
def aminmax(self, dim=None, keepdim=False):
    """The smallest and largest values, of all of ``self`` or along ``dim``."""
    if self.size == 0 and (dim is None or (self.ndim and self.shape[wrap_dim(dim, self.ndim, "aminmax")] == 0)):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    ax = None if dim is None else axes((dim,), self.ndim, "aminmax")
    lo, hi = np.min(self, axis=ax, keepdims=keepdim), np.max(self, axis=ax, keepdims=keepdim)
    if dim is None and keepdim:
        lo, hi = lo.reshape((1,) * self.ndim), hi.reshape((1,) * self.ndim)
    return lo, hi


aminmax.return_type = return_types.aminmax


@aminmax.meta_rule
def _(self, dim=None, keepdim=False):
    shape = tuple(self.shape)
    if dim is None:
        out = (1,) * len(shape) if keepdim else ()
        m = TensorMeta(out, self.dtype, self.device)
    else:
        m = reduce_meta(self, (dim,), keepdim, self.dtype, "aminmax")
    if 0 in shape and (dim is None or (shape and shape[wrap_dim(dim, len(shape))] == 0)):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    return m, TensorMeta(m.shape, m.dtype, m.device)


@aminmax.grad
def _(grad, self, result, dim, keepdim):
    dims = None if dim is None else (dim,)
    if dim is None and keepdim:
        return evenly_distribute(grad[0].reshape(()), self, result[0].reshape(())) + evenly_distribute(
            grad[1].reshape(()), self, result[1].reshape(()))
    return evenly_distribute(grad[0], self, result[0], dims, keepdim) + evenly_distribute(
        grad[1], self, result[1], dims, keepdim)


@aminmax.sample_inputs
def _(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0,), {}
    yield (rng.permutation(12).reshape(3, 4) / 4.0,), {"dim": 1}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0,), {"dim": -2, "keepdim": True}
    yield (rng.permutation(6).reshape(2, 3) / 4.0,), {"keepdim": True}
    yield (np.array(0.3),), {"dim": 0}
    yield (np.zeros((0, 3)),), {"dim": 1}
    yield (rng.integers(-3, 3, (3, 4)).astype(np.int32),), {"dim": 0}


# ----------------------------------------------------------------------------- argmax, argmin
def _check_not_bool(dtype, name: str) -> None:
    if dtype in (np.bool_, _dt.bool):
        raise RuntimeError(f"{name}(): does not support bool input")


def _arg_kernel(name: str, largest: bool):
    def kernel(self, dim=None, keepdim=False):
        _check_not_bool(self.dtype, name)
        if dim is None:
            if self.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            fast = _fast_extreme(self, None, keepdim, largest, True, False)
            if fast is not None:
                return fast[1]
            r = np.asarray(_arg_extreme(self.reshape(-1), 0, largest), dtype=np.int64)
            return r.reshape((1,) * self.ndim) if keepdim else r
        d = wrap_dim(dim, max(self.ndim, 1), name)
        if self.ndim == 0:
            return np.zeros((), np.int64)
        check_nonempty_dims(self.shape, (d,), name)
        fast = _fast_extreme(self, d, keepdim, largest, True, False)
        if fast is not None:
            return fast[1]
        r = _arg_extreme(self, d, largest).astype(np.int64, copy=False)
        return np.expand_dims(r, d) if keepdim else r

    return kernel


def _arg_meta(name: str):
    def meta(self, dim=None, keepdim=False):
        _check_not_bool(self.dtype, name)
        shape = tuple(self.shape)
        if dim is None:
            if 0 in shape:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return TensorMeta((1,) * len(shape) if keepdim else (), _dt.int64, self.device)
        d = wrap_dim(dim, max(len(shape), 1), name)
        check_nonempty_dims(shape, (d,), name)
        return reduce_meta(self, (dim,), keepdim, _dt.int64, name)

    return meta


def _arg_samples(rng):
    yield (rng.permutation(12).reshape(3, 4) / 4.0,), {}
    yield (rng.permutation(12).reshape(3, 4) / 4.0, 1), {}
    yield (rng.permutation(12).reshape(4, 3).T / 4.0,), {"dim": -2, "keepdim": True}
    yield (rng.permutation(6).reshape(2, 3) / 4.0,), {"keepdim": True}
    yield (np.array([[1, 3, 3], [2, 2, 0]]), 1), {}  # ties: the first index
    yield (np.array(0.3), 0), {}
    yield (np.zeros((0, 3)), 1), {}
    yield (rng.integers(-3, 3, (3, 4)).astype(np.int32), 0), {}


for _name, _largest in (("argmax", True), ("argmin", False)):
    _o = op(f"{_name}(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", kind=REDUCTION,
            differentiable=False,
            doc=f"Index of the {'largest' if _largest else 'smallest'} element (the first on ties), of the "
                "flattened tensor or along ``dim`` (int64).")(_arg_kernel(_name, _largest))
    _o.meta_rule(_arg_meta(_name))
    _o.sample_inputs(_arg_samples)


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("aminmax",), no_complex_kernel("aminmax_cpu"))
refuse_complex(("amax",), no_complex_kernel("max_values_cpu"))
refuse_complex(("amin",), no_complex_kernel("min_values_cpu"))
refuse_complex(("argmax", "argmin"), "{name}(): does not support complex input", RuntimeError)
refuse_complex(("max", "min"), no_complex_kernel("{name}_all"), only=("",))
refuse_complex(("max", "min"), "{name}(): does not support complex input", RuntimeError, only=("dim", "names_dim"))


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_extremum(reduce_op, arg_op):
    from .reduction import onnx_reduce  # the reductions' helper, defined before this module

    def lower_all(g, self):
        return onnx_reduce(g, reduce_op, self, None, False)

    def lower_dims(g, self, dim=(), keepdim=False):
        return onnx_reduce(g, reduce_op, self, dim, keepdim)

    def lower_dim(g, self, dim, keepdim=False):
        if g.rank(self) == 0:
            return self, g.constant(0)
        values = onnx_reduce(g, reduce_op, self, dim, keepdim)
        return values, g.op(arg_op, self, axis=dim, keepdims=int(keepdim))

    def lower_arg(g, self, dim=None, keepdim=False):
        if g.rank(self) == 0:
            return g.constant(0)
        if dim is not None:
            return g.op(arg_op, self, axis=dim, keepdims=int(keepdim))
        out = g.op(arg_op, g.op("Reshape", self, g.constant([-1])), axis=0, keepdims=0)
        return g.op("Reshape", out, g.constant([1] * g.rank(self))) if keepdim and g.rank(self) else out

    return lower_all, lower_dims, lower_dim, lower_arg


def _onnx_pairwise(op_type):
    def lower(g, self, other):
        from .selection import onnx_extremum  # clamp's helper, in the module imported before this one
        return onnx_extremum(g, op_type, self, other)
    return lower


for _name, _reduce_op, _arg_op, _pairwise in (("max", "ReduceMax", "ArgMax", "Max"),
                                              ("min", "ReduceMin", "ArgMin", "Min")):
    _lower_all, _lower_dims, _lower_dim, _lower_arg = _onnx_extremum(_reduce_op, _arg_op)
    get(_name).symbolic(_lower_all)
    get(_name, "dim").symbolic(_lower_dim)
    get("a" + _name).symbolic(_lower_dims)
    get("arg" + _name).symbolic(_lower_arg)
    get(_name, "other").symbolic(_onnx_pairwise(_pairwise))

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("amax", "amin", "aminmax", "argmax", "argmin", "maximum", "minimum"))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("max", "min"))
