"""Neural-network ops that are not plain elementwise: softmax and log_softmax (more come with toolkit.nn).

Both subtract the max along ``dim`` before exponentiating, so large inputs
do not overflow; their derivatives are written with registered ops, so
double backward works.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.names import KEEP
from .._core.shape import wrap_dim
from .reduction import dtype_title
from .registry import NN, op, takes_dim_names


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


def _compiled(x: np.ndarray, d: int | None) -> bool:
    """Whether the compiled kernels take this call: float32/float64, not 0-d, not empty (numpy's form keeps
    float16, computed in float32 as PyTorch does, and the trivial shapes)."""
    return d is not None and x.size > 0 and x.dtype in _COMPILED_DTYPES


_COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _shifted(x: np.ndarray, d: int | None):
    """``x - max(x, d)`` computed in at least float32; the output dtype is ``x``'s."""
    acc = x.astype(np.float32) if x.dtype == np.float16 else x
    if d is None or acc.size == 0:
        return acc - acc if d is None else acc
    with np.errstate(invalid="ignore"):
        return acc - np.max(acc, axis=d, keepdims=True)


@op("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", kind=NN, name_rule=KEEP, out="exact")
def softmax(self, dim, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, stable for large inputs; ``dtype`` casts the input first."""
    x, d = _softmax_input(self, dim, dtype, "softmax")
    if _compiled(x, d):
        from ._softmax_numba import softmax_along  # optional: numba, never loaded by import toolkit

        return softmax_along(x, d, log=False)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(_shifted(x, d))
        out = e / (np.sum(e, axis=d, keepdims=True) if d is not None else e)
    return out.astype(x.dtype, copy=False)


@op("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", kind=NN, name_rule=KEEP, out="exact")
def log_softmax(self, dim, dtype=None):
    """``x - logsumexp(x, dim)``, stable for large inputs; ``dtype`` casts the input first."""
    x, d = _softmax_input(self, dim, dtype, "log_softmax")
    if _compiled(x, d):
        from ._softmax_numba import softmax_along  # optional: numba, never loaded by import toolkit

        return softmax_along(x, d, log=True)
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
    if result.device.type == "cpu":
        return _softmax_backward_data(grad, result, dim, result.dtype)
    if result.ndim == 0:  # devices without that op's kernel: the same formula from elementwise ops
        return grad * 0
    return result * (grad - (grad * result).sum(dim, keepdim=True))


@log_softmax.grad
def _(grad, result, dim):
    if result.device.type == "cpu":
        return _log_softmax_backward_data(grad, result, dim, result.dtype)
    if result.ndim == 0:
        return grad * 0
    return grad - result.exp() * grad.sum(dim, keepdim=True)


def _backward_input(grad_output: np.ndarray, output: np.ndarray, dim: int, name: str):
    """PyTorch's checks of ``_softmax_backward_data``/``_log_softmax_backward_data`` (on metadata only, so the
    meta rule shares them); returns the wrapped dim, None for a 0-d input."""
    if tuple(grad_output.shape) != tuple(output.shape):
        raise RuntimeError(
            f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but "
            f"{list(grad_output.shape)} does not equal {list(output.shape)} (while checking arguments for {name})")
    ndim = len(grad_output.shape)
    d = wrap_dim(dim, max(ndim, 1), name)
    gdt, odt = _dt_of(grad_output), _dt_of(output)
    if gdt != odt:
        raise RuntimeError(f"expected scalar type {dtype_title(gdt)} but found {dtype_title(odt)}")
    if not gdt.is_floating_point:
        kernel = f"{name}_lastdim_kernel_impl" if ndim <= 1 or d == ndim - 1 else f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtype_title(gdt)}'")
    return d if ndim else None


def _dt_of(a):
    return _dt.from_numpy_dtype(a.dtype) if isinstance(a, np.ndarray) else a.dtype


def _backward(grad_output: np.ndarray, output: np.ndarray, dim: int, log: bool) -> np.ndarray:
    name = "log_softmax_backward" if log else "softmax_backward"
    d = _backward_input(grad_output, output, dim, name)
    if _compiled(grad_output, d):
        from ._softmax_numba import softmax_backward_along  # optional: numba, never loaded by import toolkit

        return softmax_backward_along(grad_output, output, d, log)
    acc = np.float32 if grad_output.dtype == np.float16 else grad_output.dtype
    g, y = grad_output.astype(acc, copy=False), output.astype(acc, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        out = g - np.exp(y) * np.sum(g, axis=d, keepdims=True) if log else y * (
            g - np.sum(g * y, axis=d, keepdims=True))
    return np.asarray(out).astype(grad_output.dtype, copy=False)


def _backward_meta(name: str):
    def meta(grad_output, output, dim, input_dtype):
        _backward_input(grad_output, output, dim, name)
        return TensorMeta(tuple(grad_output.shape), grad_output.dtype, grad_output.device)

    return meta


@op("_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    kind=NN, method=False)
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """softmax's gradient from its output: ``output * (grad_output - (grad_output * output).sum(dim))``, one
    compiled pass per row over a last dim; an op of its own so that double backward has a rule for it."""
    return _backward(grad_output, output, dim, log=False)


@op("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    kind=NN, out=True, method=False)
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    """log_softmax's gradient from its output: ``grad_output - output.exp() * grad_output.sum(dim)``, one
    compiled pass per row over a last dim; an op of its own so that double backward has a rule for it."""
    return _backward(grad_output, output, dim, log=True)


_softmax_backward_data.meta_rule(_backward_meta("softmax_backward"))
_log_softmax_backward_data.meta_rule(_backward_meta("log_softmax_backward"))


@_softmax_backward_data.grad
def _(grad, grad_output, output, dim, input_dtype, needs_input_grad):
    gg = _softmax_backward_data(grad, output, dim, input_dtype) if needs_input_grad[0] else None
    go = None
    if needs_input_grad[1]:  # PyTorch's softmax_double_backward
        go = (grad_output * grad - (output * grad_output).sum(dim, keepdim=True) * grad
              - grad_output * (output * grad).sum(dim, keepdim=True))
    return gg, go


@_log_softmax_backward_data.grad
def _(grad, grad_output, output, dim, needs_input_grad):
    e = output.exp()
    gg = grad - (grad * e).sum(dim, keepdim=True) if needs_input_grad[0] else None
    go = -grad_output.sum(dim, keepdim=True) * e * grad if needs_input_grad[1] else None
    return gg, go


def _backward_samples(log: bool):
    def samples(rng):
        def out(shape, d, dtype=np.float64):
            x = rng.uniform(-3, 3, shape)
            lse = np.log(np.sum(np.exp(x), axis=d, keepdims=True)) if x.ndim else x
            return np.asarray(x - lse if log else np.exp(x - lse), dtype)

        for shape, d in (((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -2), ((2, 3, 4), -1), ((), 0), ((0, 3), 1)):
            yield (rng.uniform(-2, 2, shape), out(shape, d), d, _dt.float64), {}
        yield (rng.uniform(-2, 2, (4, 3)).T, out((4, 3), 0).T, -1, _dt.float64), {}
        yield (rng.uniform(-2, 2, (2, 5)).astype(np.float32), out((2, 5), 1, np.float32), 1, _dt.float32), {}

    return samples


_softmax_backward_data.sample_inputs(_backward_samples(log=False))
_log_softmax_backward_data.sample_inputs(_backward_samples(log=True))


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


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_softmax(op_type):
    def lower(g, self, dim, dtype=None):
        if dtype is not None:
            self = g.op("Cast", self, to=dtype)
        if g.rank(self) == 0:  # ONNX's softmax needs a dim: over one element
            one = g.constant([1])
            return g.op("Reshape", g.op(op_type, g.op("Reshape", self, one), axis=0), g.constant([], _dt.int64))
        return g.op(op_type, self, axis=dim)
    return lower


softmax.symbolic(_onnx_softmax("Softmax"))
log_softmax.symbolic(_onnx_softmax("LogSoftmax"))

# PyTorch's Dimname overloads: a named tensor's dims may be given by name here.
takes_dim_names(("softmax", "log_softmax"))
