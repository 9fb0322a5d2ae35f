"""Variance and standard deviation with PyTorch's overloads (``unbiased``, ``correction``), and ``torch.norm``."""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core.shape import wrap_dim
from .norms import (
    _matrix_check,
    _matrix_norm,
    _vector_check,
    _vector_norm,
    matrix_norm_grad,
    vector_norm_grad,
)
from .reduction import axes, fast_reducible, reduce_meta, reduced_count, restore_dims
from .registry import REDUCTION, get, op, refuses_names, takes_dim_names


# ----------------------------------------------------------------------------- var, std, var_mean, std_mean
def _check_float(a_dtype_kind_is_float: bool, name: str) -> None:
    if not a_dtype_kind_is_float:
        what = "std and var" if name in ("var", "std") else name
        raise RuntimeError(f"{what} only support floating point and complex dtypes")


def _var_and_mean(self: np.ndarray, dim, correction, keepdim: bool, name: str):
    """Variance (divided by ``N - correction``, floored at 0 as PyTorch does) and mean, in ``self``'s dtype."""
    _check_float(self.dtype.kind in "fc", name)
    ax = axes(dim, self.ndim, name)
    x = self.astype(np.float32) if self.dtype == np.float16 else self
    n = reduced_count(self.shape, dim)
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=2)
    if self.dtype.kind == "c":
        return _complex_var_and_mean(self, ax, n, correction, keepdim)
    if fast_reducible(self):
        from ._reduce_numba import squared_deviations  # optional: numba, never loaded by import toolkit

        r = squared_deviations(self, ax, keepdim)
        if r is not None:
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                return (r[0] / max(0.0, n - correction)).astype(self.dtype), r[1].astype(self.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.sum(x, axis=ax, keepdims=True) / x.dtype.type(n)
        dev = x - m
        var = np.sum(dev * dev, axis=ax, keepdims=keepdim) / x.dtype.type(max(0.0, n - correction))
    if not keepdim:
        m = m.reshape(var.shape)
    return var.astype(self.dtype, copy=False), m.astype(self.dtype, copy=False)


def _complex_var_and_mean(self: np.ndarray, ax, n: int, correction, keepdim: bool):
    """A complex tensor's variance is the mean squared modulus of its deviations: real, in the real dtype."""
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.sum(self, axis=ax, keepdims=True) / self.dtype.type(n)
        dev = self - m
        var = np.sum(dev.real * dev.real + dev.imag * dev.imag, axis=ax, keepdims=keepdim) / max(0.0, n - correction)
    if not keepdim:
        m = m.reshape(var.shape)
    return var.astype(self.real.dtype, copy=False), m.astype(self.dtype, copy=False)


def _var_backward(grad, self, dim, correction, keepdim):
    n = reduced_count(self.shape, dim)
    g = restore_dims(grad, self.shape, dim, keepdim)
    centered = self - self.mean(dim, keepdim=True)
    return g * centered * (2.0 / max(0.0, n - correction)) if n - correction > 0 else g * centered / 0.0


def _std_backward(grad, self, result, dim, correction, keepdim):
    zero = result == 0
    return _var_backward(grad / (2 * (result + zero)) * (result != 0), self, dim, correction, keepdim)


def _mean_backward(grad, self_shape, dim, keepdim):
    return restore_dims(grad, self_shape, dim, keepdim).expand(self_shape) / reduced_count(self_shape, dim)


# (overload, its parameters, their normalization to (dim, correction, keepdim), the derivative's signature);
# the CUDA backend registers its var/std kernels from the same table
MOMENT_OVERLOADS = (
    ("", "bool unbiased=True", lambda unbiased=True: (None, 1 if unbiased else 0, False),
     lambda d: lambda grad, self, result, unbiased: d(grad, self, result, unbiased)),
    ("dim", "int[1]? dim, bool unbiased=True, bool keepdim=False",
     lambda dim, unbiased=True, keepdim=False: (dim, 1 if unbiased else 0, keepdim),
     lambda d: lambda grad, self, result, dim, unbiased, keepdim: d(grad, self, result, dim, unbiased, keepdim)),
    ("correction", "int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False",
     lambda dim=None, correction=None, keepdim=False: (dim, 1 if correction is None else correction, keepdim),
     lambda d: lambda grad, self, result, dim, correction, keepdim: d(grad, self, result, dim, correction, keepdim)),
)

_SAMPLES = {
    "": lambda rng: [
        ((rng.uniform(-2, 2, (3, 4)),), {}),
        ((rng.uniform(-2, 2, (4, 3)).T, False), {}),
        ((np.array(0.5), False), {}),
        ((rng.uniform(-2, 2, (0, 3)),), {}),
    ],
    "dim": lambda rng: [
        ((rng.uniform(-2, 2, (3, 4)), 1), {}),
        ((rng.uniform(-2, 2, (2, 3, 4)), (0, -1), False, True), {}),
        ((rng.uniform(-2, 2, (4, 3)).T, -2), {"unbiased": False}),
        ((rng.uniform(-2, 2, (3, 2)), None), {}),
    ],
    "correction": lambda rng: [
        ((rng.uniform(-2, 2, (3, 4)),), {"dim": 1, "correction": 0}),
        ((rng.uniform(-2, 2, (2, 3, 4)),), {"correction": 2, "keepdim": True}),
        ((rng.uniform(-2, 2, (4, 3)).T,), {"dim": (0,), "correction": 0.5}),
        ((np.array(0.3),), {"dim": 0, "correction": 0}),
        ((rng.uniform(-2, 2, (0, 3)),), {"dim": 1, "correction": 1}),
    ],
}


def _make(name: str, overload: str, params: str, normalize, signature, doc: str) -> None:
    """Register ``name.overload``: the kernel, meta rule, derivative and samples share one implementation."""
    with_mean = name.endswith("_mean")
    is_std = name.startswith("std")
    returns = "(Tensor, Tensor)" if with_mean else "Tensor"
    schema = f"{name}{'.' if overload else ''}{overload}(Tensor self, {params}) -> {returns}"

    def kernel(self, *args):
        dim, correction, keepdim = normalize(*args)
        var, mean = _var_and_mean(self, dim, correction, keepdim, name)
        out = np.sqrt(var) if is_std else var
        return (out, mean) if with_mean else out

    o = op(schema, kind=REDUCTION, out=not with_mean and "cast", method=not with_mean, doc=doc)(kernel)  # torch.Tensor has no var_mean

    @o.meta_rule
    def _(self, *args):
        dim, _, keepdim = normalize(*args)
        _check_float(self.dtype.is_floating_point or self.dtype.is_complex, name)
        m = reduce_meta(self, dim, keepdim, self.dtype.to_real(), name)
        return (m, reduce_meta(self, dim, keepdim, self.dtype, name)) if with_mean else m

    def derivative(grad, self, result, *args):
        dim, correction, keepdim = normalize(*args)
        g, out = (grad[0], result[0]) if with_mean else (grad, result)
        gi = _std_backward(g, self, out, dim, correction, keepdim) if is_std else _var_backward(
            g, self, dim, correction, keepdim)
        return gi + _mean_backward(grad[1], self.shape, dim, keepdim) if with_mean else gi

    o.wirtinger_grad(signature(derivative))  # 2 (z - mean) / (N - correction) per unit of variance: real or complex
    o.sample_inputs(_SAMPLES[overload])


for _name, _doc in (
    ("var", "Variance over ``dim``, divided by ``N - correction`` (``unbiased`` means correction 1)."),
    ("std", "Standard deviation over ``dim``: the square root of :func:`var`."),
    ("var_mean", "Variance and mean in one pass, as a tuple ``(var, mean)``."),
    ("std_mean", "Standard deviation and mean in one pass, as a tuple ``(std, mean)``."),
):
    for _overload, _params, _normalize, _signature in MOMENT_OVERLOADS:
        _make(_name, _overload, _params, _normalize, _signature, _doc)


# ----------------------------------------------------------------------------- norm
def p_norm_plan(p, dim, ndim: int):
    """What ``torch.norm`` computes: ('vector', ord, dim), or ('matrix', ord, dims) for 'nuc' and bad 'fro' dims."""
    if p is None:
        return "vector", 2, dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return "vector", 2, dim
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        return "matrix", p, tuple(range(ndim)) if dim is None else dim
    return "vector", p, dim


def _matrix_dims(self, dims):
    return tuple(wrap_dim(d, self.ndim) for d in dims)


@op("norm(Tensor self, Any? p='fro', int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kind=REDUCTION, out="exact",  # PyTorch runs linalg.vector_norm, or sums the singular values for 'nuc'
    grad_fn=lambda bound, outputs: "SumBackward1" if bound[1] == "nuc" else "LinalgVectorNormBackward0")
def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """The p-norm over ``dim`` (all dims by default), as ``torch.norm``: p a number, inf, 'fro' or 'nuc'.

    A number or 'fro' gives ``linalg.vector_norm``; 'nuc' gives ``linalg.matrix_norm`` over two dims.
    """
    kind, order, d = p_norm_plan(p, dim, self.ndim)
    if kind == "vector":
        _vector_check(self, order, d, keepdim, dtype)
        return _vector_norm(self, order, d, keepdim, dtype)
    _, dims = _matrix_check(self, order, d, keepdim, dtype)
    return _matrix_norm(self, order, dims, keepdim, dtype)


@norm.meta_rule
def _(self, p="fro", dim=None, keepdim=False, dtype=None):
    kind, order, d = p_norm_plan(p, dim, len(self.shape))
    if kind == "vector":
        return _vector_check(self, order, d, keepdim, dtype)
    return _matrix_check(self, order, d, keepdim, dtype)[0]


@norm.wirtinger_grad  # vector_norm_grad gives the complex gradient as is
def _(grad, self, result, p, dim, keepdim):
    kind, order, d = p_norm_plan(p, dim, self.ndim)
    if kind == "vector":
        return vector_norm_grad(grad, self, order, d, keepdim, result)
    return matrix_norm_grad(grad, self, order, _matrix_dims(self, d), keepdim, result)


@norm.sample_inputs
def _(rng):
    x = rng.uniform(0.2, 2, (3, 4)) * rng.choice([-1, 1], (3, 4))
    yield (x,), {}
    yield (x, 1), {}
    yield (x, 2, 1), {}
    yield (x,), {"p": "fro", "dim": (0, 1), "keepdim": True}
    yield (rng.uniform(0.2, 2, (4, 3)).T,), {"p": 3, "dim": -1}
    yield (x,), {"p": 1.5, "dim": 0, "keepdim": True}
    yield (x,), {"p": 0.5, "dim": 1}
    yield (x,), {"p": float("inf"), "dim": 1}
    yield (x,), {"p": -float("inf")}
    yield (x,), {"p": 0, "dim": 0}
    yield (np.array(-1.5),), {}
    yield (rng.uniform(-1, 1, (0, 3)),), {"dim": 0}
    yield (rng.uniform(-1, 1, (2, 3)).astype(np.float32),), {"dtype": _dt.float64}
    yield (rng.uniform(-1, 1, (2, 3, 2)),), {"p": "nuc", "dim": (0, 2)}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_moment(sqrt: bool):
    """var/std: the mean of squared deviations, divided by ``n - correction`` (n read at run time)."""
    from .reduction import onnx_reduce  # the reductions' helper, defined before this module

    def lower(g, self, dim, correction, keepdim):
        if g.rank(self) == 0 or 0 in (g.shape(self) or ()):
            raise g.unsupported("the variance of a 0-dim or empty tensor")
        mean = onnx_reduce(g, "ReduceMean", self, dim, True)
        diff = g.op("Sub", self, mean)
        total = onnx_reduce(g, "ReduceSum", g.op("Mul", diff, diff), dim, keepdim)
        dtype = g.dtype(self)
        n = g.op("Div", g.op("Cast", g.op("Size", self), to=dtype), g.op("Cast", g.op("Size", mean), to=dtype))
        out = g.op("Div", total, g.op("Sub", n, g.constant(float(correction), dtype)))
        return g.op("Sqrt", out) if sqrt else out

    # The overloads' arguments in schema order: (self, unbiased), (self, dim, unbiased, keepdim) and
    # (self, dim, correction, keepdim) with correction None for 1.
    return (lambda g, self, unbiased=True: lower(g, self, None, int(unbiased), False),
            lambda g, self, dim, unbiased=True, keepdim=False: lower(g, self, dim, int(unbiased), keepdim),
            lambda g, self, dim=None, correction=None, keepdim=False: lower(
                g, self, dim, 1 if correction is None else correction, keepdim))


for _name, _sqrt in (("var", False), ("std", True)):
    for _overload, _lower in zip(("", "dim", "correction"), _onnx_moment(_sqrt)):
        get(_name, _overload).symbolic(_lower)

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("norm",))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("var", "std", "var_mean", "std_mean"))
