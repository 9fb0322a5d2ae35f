"""Finite differences and the trapezoidal rule: diff, trapezoid (and its old name trapz), cumulative_trapezoid.

As in PyTorch, each is a composition of registered ops (narrow, sub, sum,
cumsum, cat), so dtypes follow those ops (an integer ``y`` integrates to the
default float dtype) and autograd follows the parts. The derivative rules state
the same gradients for the JIT: a difference sends ``+g`` to its right operand
and ``-g`` to its left one, and the trapezoidal rule weighs each sample by half
the widths beside it.

Example::

    >>> toolkit.trapezoid(toolkit.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .reduction import reverse_cumsum
from .registry import REDUCTION, op


def _zeros_along(t, dim: int, n: int = 1):
    """Zeros shaped like ``t`` but ``n`` long along ``dim``, for padding a gradient."""
    shape = list(t.shape)
    shape[dim] = n
    return api.zeros(shape, dtype=t.dtype)


def _difference_adjoint(g, dim: int):
    """The gradient of ``x[1:] - x[:-1]`` along ``dim``: ``g`` shifted right minus ``g`` shifted left."""
    z = _zeros_along(g, dim)
    return api.cat([z, g], dim) - api.cat([g, z], dim)


# ----------------------------------------------------------------------------- diff
def _check_diff(ndim: int, n: int, prepend, append) -> None:
    if ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for t in (prepend, append):
        if t is not None and len(t.shape) != ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")


def _joined(self, dim: int, prepend, append):
    parts = [t for t in (prepend, self, append) if t is not None]
    return api.cat(parts, dim) if len(parts) > 1 else self


@op("diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor", kind=REDUCTION, out="cast",
    composite=True)
def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``x[i+1] - x[i]``, applied ``n`` times; ``xor`` for bool),
    after joining ``prepend`` before and ``append`` after ``self`` along ``dim``."""
    _check_diff(self.ndim, n, prepend, append)
    d = wrap_dim(dim, self.ndim, "diff")
    result = _joined(self, d, prepend, append)
    if n == 0 or result.shape[d] == 0:
        return result.clone()
    for _ in range(min(n, result.shape[d])):
        length = max(result.shape[d] - 1, 0)
        right, left = result.narrow(d, 1, length), result.narrow(d, 0, length)
        result = right.logical_xor(left) if result.dtype is _dt.bool else right - left
    return result


@diff.meta_rule
def _(self, n=1, dim=-1, prepend=None, append=None):
    _check_diff(len(self.shape), n, prepend, append)
    d = wrap_dim(dim, len(self.shape), "diff")
    shape = list(self.shape)
    tensors = [t for t in (prepend, self, append) if t is not None]
    shape[d] = sum(t.shape[d] for t in tensors)
    shape[d] = max(shape[d] - n, 0)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = _dt.promote_types(dtype, t.dtype)
    return TensorMeta(tuple(shape), dtype, self.device)


@diff.grad
def _(grad, self_shape, n, dim, prepend_shape=None, append_shape=None):
    d = wrap_dim(dim, len(self_shape), "diff")
    total = self_shape[d] + sum(s[d] for s in (prepend_shape, append_shape) if s is not None)
    g = grad
    for _ in range(min(n, total)):
        g = _difference_adjoint(g, d)
    if g.shape[d] < total:  # an order above the length: the result was empty
        g = api.zeros([total if i == d else s for i, s in enumerate(g.shape)], dtype=g.dtype)
    start = 0
    out = []
    for s in (prepend_shape, self_shape, append_shape):
        if s is None:
            out.append(None)
            continue
        out.append(g.narrow(d, start, s[d]))
        start += s[d]
    return out[1], out[0], out[2]


@diff.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, 6),), {}
    yield (rng.uniform(-2, 2, (3, 5)), 2), {}
    yield (rng.uniform(-2, 2, (4, 3)).T, 1, 0), {}
    # tensors positionally: the generated tests pass keyword values through as they are
    yield (rng.uniform(-2, 2, (2, 4)), 1, 1, rng.uniform(-2, 2, (2, 2)), rng.uniform(-2, 2, (2, 1))), {}
    yield (rng.uniform(-2, 2, (3, 2)), 3, 0, None, rng.uniform(-2, 2, (1, 2))), {}
    yield (rng.uniform(-2, 2, 3), 5), {}  # an order above the length: empty
    yield (rng.uniform(-2, 2, 4), 0), {}
    yield (rng.integers(-5, 5, (2, 5)).astype(np.int32), 2), {}
    yield (rng.integers(0, 2, 6).astype(bool), 2), {}
    yield (rng.integers(-5, 5, 4).astype(np.int32), 1, -1, rng.uniform(-2, 2, 2)), {}


# ----------------------------------------------------------------------------- trapezoid, cumulative_trapezoid
def _check_no_bool(name: str, *dtypes) -> None:
    if any(d is _dt.bool for d in dtypes):
        what = "`y`" if len(dtypes) == 1 else "`x` or `y`"
        raise RuntimeError(f"{name}: received a bool input for {what}, but bool is not supported")


def _check_dx(name: str, dx) -> None:
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def _x_along(y, x, dim: int, name: str):
    """``x`` shaped to broadcast against ``y``: a 1-D ``x`` lies along ``dim``; a shorter one gets leading 1s."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        return x.reshape([x.shape[0] if i == dim else 1 for i in range(y.ndim)])
    if x.ndim < y.ndim:
        return x.reshape([1] * (y.ndim - x.ndim) + list(x.shape))
    return x


def _widths(y, x, dim: int, name: str):
    xv = _x_along(y, x, dim, name)
    n = max(xv.shape[dim] - 1, 0)
    return xv.narrow(dim, min(1, xv.shape[dim]), n) - xv.narrow(dim, 0, n)


def _pair_sums(y, dim: int):
    """``y[i] + y[i+1]`` along ``dim``."""
    n = max(y.shape[dim] - 1, 0)
    return y.narrow(dim, 0, n) + y.narrow(dim, min(1, y.shape[dim]), n)


def _pair_adjoint(g, dim: int):
    """The gradient of ``y[i] + y[i+1]``: ``g`` padded by a zero on each side in turn, summed."""
    z = _zeros_along(g, dim)
    return api.cat([g, z], dim) + api.cat([z, g], dim)


def _reduced_zeros(y, dim: int):
    return api.zeros([s for i, s in enumerate(y.shape) if i != dim], dtype=y.dtype)


def _trapezoid_x(y, x, dim, name="trapezoid"):
    d = wrap_dim(dim, y.ndim, name)
    if y.shape[d] == 0:  # no samples: 0, as numpy integrates them
        return _reduced_zeros(y, d)
    _check_no_bool(name, y.dtype, x.dtype)
    return (_pair_sums(y, d) * _widths(y, x, d, name)).sum(d) / 2.0


def _trapezoid_dx(y, dx=1, dim=-1, name="trapezoid"):
    d = wrap_dim(dim, y.ndim, name)
    if y.shape[d] == 0:
        return _reduced_zeros(y, d)
    _check_no_bool(name, y.dtype)
    _check_dx(name, dx)
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * float(dx)


def _float_of(d):
    return d if d.is_floating_point else _dt.get_default_dtype()


def _trapezoid_meta(y, x=None, dim=-1, cumulative=False, name="trapezoid"):
    shape = tuple(y.shape)
    d = wrap_dim(dim, len(shape), name)
    _check_no_bool(name, y.dtype, *(() if x is None else (x.dtype,)))
    dtype = y.dtype if x is None else _dt.promote_types(y.dtype, x.dtype)
    if cumulative:
        out = tuple(max(s - 1, 0) if i == d else s for i, s in enumerate(shape))
    else:
        out = shape[:d] + shape[d + 1:]
        if not shape[d]:
            return TensorMeta(out, y.dtype, y.device)
    if x is not None and len(x.shape) > 1:  # dx broadcasts against the pair sums
        xs = (1,) * (len(shape) - len(x.shape)) + tuple(x.shape)
        full = tuple(b if a == 1 else a for a, b in zip(tuple(s - 1 if i == d else s for i, s in enumerate(shape)),
                                                         tuple(s - 1 if i == d else s for i, s in enumerate(xs))))
        out = full if cumulative else full[:d] + full[d + 1:]
    return TensorMeta(out, _float_of(dtype), y.device)


def _trapezoid_x_backward(grad, y, x, dim, cumulative):
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        return api.zeros(list(y.shape), dtype=grad.dtype), api.zeros(list(x.shape), dtype=grad.dtype)
    dx = _widths(y, x, d, "trapezoid")
    g = (reverse_cumsum(grad, d) if cumulative else grad.unsqueeze(d)) / 2.0
    gy = _pair_adjoint((g * dx).sum_to_size(_pair_sums(y, d).shape), d)
    gdx = (g * _pair_sums(y, d)).sum_to_size(dx.shape)
    gx = _difference_adjoint(gdx, d).reshape(list(x.shape))
    return gy, gx


def _trapezoid_dx_backward(grad, y, dx, dim, cumulative):
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        return api.zeros(list(y.shape), dtype=grad.dtype)
    g = (reverse_cumsum(grad, d) if cumulative else grad.unsqueeze(d)) * (float(dx) / 2.0)
    return _pair_adjoint(g.expand(list(_pair_sums(y, d).shape)), d)


def _trapezoid_samples(with_x: bool, cumulative: bool):
    def make(rng):
        def xs(n):
            return np.cumsum(rng.uniform(0.1, 1.0, n))

        if with_x:
            yield (rng.uniform(-2, 2, 5), xs(5)), {}
            yield (rng.uniform(-2, 2, (3, 4)), xs(3)), {"dim": 0}
            yield (rng.uniform(-2, 2, (4, 3)).T, rng.uniform(-2, 2, (3, 4))), {}  # x as y's shape
            yield (rng.uniform(-2, 2, (2, 3, 4)), rng.uniform(-2, 2, (3, 4))), {"dim": 1}  # x with fewer dims
            yield (rng.uniform(-2, 2, (2, 1)), xs(1)), {"dim": 1}
            yield (rng.integers(-3, 3, 4).astype(np.int32), xs(4)), {}
            if not cumulative:
                yield (rng.uniform(-2, 2, (2, 0)), xs(0)), {}
        else:
            yield (rng.uniform(-2, 2, 5),), {}
            yield (rng.uniform(-2, 2, (3, 4)),), {"dx": 0.5, "dim": 0}
            yield (rng.uniform(-2, 2, (4, 3)).T,), {"dx": 2}
            yield (rng.uniform(-2, 2, (2, 1)),), {"dim": 1}
            yield (rng.integers(-3, 3, (2, 4)),), {}
            yield (rng.uniform(-2, 2, (2, 0)),), {}

    return make


def _define_trapezoid(name: str, dx_type: str, cumulative: bool):
    what = "running integrals" if cumulative else "integral"

    def with_x(y, x, dim=-1):
        if cumulative:
            d = wrap_dim(dim, y.ndim, name)
            _check_no_bool(name, y.dtype, x.dtype)
            return (_pair_sums(y, d) * _widths(y, x, d, name)).cumsum(d) / 2.0
        return _trapezoid_x(y, x, dim, name)

    def with_dx(y, dx=1, dim=-1):
        if cumulative:
            d = wrap_dim(dim, y.ndim, name)
            _check_no_bool(name, y.dtype)
            _check_dx(name, dx)
            return (_pair_sums(y, d) * (float(dx) / 2.0)).cumsum(d)
        return _trapezoid_dx(y, dx, dim, name)

    with_x.__doc__ = f"The trapezoidal rule's {what} of ``y`` along ``dim`` at the sample points ``x``."
    with_dx.__doc__ = f"The trapezoidal rule's {what} of ``y`` along ``dim`` at sample points ``dx`` apart."
    ox = op(f"{name}.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", kind=REDUCTION, out=False, method=False,
            composite=True)(with_x)
    odx = op(f"{name}.dx(Tensor y, *, {dx_type} dx=1, int dim=-1) -> Tensor", kind=REDUCTION, out=False,
             method=False,
             composite=True)(with_dx)
    ox.meta_rule(lambda y, x, dim=-1: _trapezoid_meta(y, x, dim, cumulative, name))
    odx.meta_rule(lambda y, dx=1, dim=-1: _trapezoid_meta(y, None, dim, cumulative, name))
    ox.grad(lambda grad, y, x, dim: _trapezoid_x_backward(grad, y, x, dim, cumulative))
    odx.grad(lambda grad, y, dx, dim: _trapezoid_dx_backward(grad, y, dx, dim, cumulative))
    ox.sample_inputs(_trapezoid_samples(True, cumulative))
    odx.sample_inputs(_trapezoid_samples(False, cumulative))
    return ox, odx


trapezoid_x, trapezoid_dx = _define_trapezoid("trapezoid", "Scalar", False)
trapz_x, trapz_dx = _define_trapezoid("trapz", "float", False)
cumulative_trapezoid_x, cumulative_trapezoid_dx = _define_trapezoid("cumulative_trapezoid", "Scalar", True)
