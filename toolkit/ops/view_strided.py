"""Views that reinterpret a tensor's strides: unfold (sliding windows) and diagonal.

Each result is one strided view of the input's memory (unfold's windows may
overlap). The backward ops that scatter a part's gradient back into the
input's shape (``unfold_backward``, ``diagonal_backward``) are registered ops
too, with their own derivatives, so double backward works; PyTorch has them as
``torch.ops.aten.*``. ``view_parts`` imports this module, so these ops register
right after split/chunk/unbind/narrow.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .registry import SHAPE, VIEW, op
from .view_parts import _along


def strided_view(a: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A view of ``a``'s memory with the given shape and byte strides (PyTorch's ``as_strided``, from ``a``).

    Built on the array that owns the memory when there is one, so the result's ``base`` is that owner
    and the dispatcher recognizes it as sharing the input's storage without searching for overlap.
    """
    root = a.base if a.base is not None else a
    if isinstance(root, np.ndarray) and (root.flags.c_contiguous or root.flags.f_contiguous) and a.size:
        offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        try:
            return np.ndarray(shape, a.dtype, buffer=root, offset=offset, strides=strides)
        except (TypeError, ValueError):
            pass
    return as_strided(a, shape, strides)


# ---------------------------------------------------------------------------------------------
# unfold and its backward
# ---------------------------------------------------------------------------------------------
def unfold_shape(shape: tuple, dimension: int, size: int, step: int) -> tuple:
    """(wrapped dim, output shape): windows of ``size`` every ``step`` along ``dimension``, window last."""
    n = len(shape)
    d = wrap_dim(dimension, n, "unfold")
    dim_size = shape[d] if n else 1
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if size > dim_size:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {dim_size} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if n == 0:
        return d, (size,)
    return d, tuple(shape[:d]) + ((dim_size - size) // step + 1,) + tuple(shape[d + 1 :]) + (size,)


@op("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", kind=VIEW, function=False)
def unfold(self, dimension, size, step):
    """Sliding windows of ``size`` every ``step`` along ``dimension``, as one strided view (windows may overlap)."""
    d, shape = unfold_shape(self.shape, dimension, size, step)
    if self.ndim == 0:
        return strided_view(self, shape, (self.itemsize,))
    st = self.strides
    return strided_view(self, shape, st[:d] + (st[d] * step,) + st[d + 1 :] + (st[d],))


@unfold.meta_rule
def _(self, dimension, size, step):
    return TensorMeta(unfold_shape(tuple(self.shape), dimension, size, step)[1], self.dtype, self.device)


@unfold.grad
def _(grad, self_shape, dimension, size, step):
    return api.unfold_backward(grad, self_shape, dimension, size, step)


@unfold.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 7))
    yield (x, 1, 3, 1), {}
    yield (x, 1, 2, 2), {}
    yield (x, -1, 2, 4), {}
    yield (x.T, 0, 3, 2), {}
    yield (x, 0, 3, 1), {}
    yield (x, 1, 0, 2), {}
    yield (x,), {"dimension": 1, "size": 7, "step": 1}
    yield (rng.standard_normal(()), 0, 1, 1), {}
    yield (rng.standard_normal((0, 4)), 1, 2, 1), {}


@op("unfold_backward(Tensor grad_in, int[] input_sizes, int dim, int size, int step) -> Tensor", kind=SHAPE,
    method=False, namespace="ops.aten")
def unfold_backward(grad_in, input_sizes, dim, size, step):
    """The adjoint of ``unfold``: sums each window's gradient back into the positions it was taken from."""
    shape = tuple(input_sizes)
    _check_unfold_grad(grad_in.shape, shape, dim, size, step)
    if not shape:
        return unfold_backward.kernels["cpu"](grad_in.reshape(1, size), (1,), 0, size, step).reshape(())
    d = wrap_dim(dim, len(shape), "unfold_backward")
    out = np.zeros(shape, grad_in.dtype)
    windows = grad_in.shape[d]
    for k in range(size):
        out[_along(d, slice(k, k + step * (windows - 1) + 1, step))] += grad_in[..., k]
    return out


def _check_unfold_grad(grad_shape: tuple, shape: tuple, dim: int, size: int, step: int) -> None:
    want = unfold_shape(shape, dim, size, step)[1]
    if tuple(grad_shape) != want:
        raise RuntimeError(
            f"unfold_backward: grad_in has shape {list(grad_shape)} but unfolding an input of size {list(shape)} "
            f"gives {list(want)}"
        )


@unfold_backward.meta_rule
def _(grad_in, input_sizes, dim, size, step):
    _check_unfold_grad(tuple(grad_in.shape), tuple(input_sizes), dim, size, step)
    return TensorMeta(tuple(input_sizes), grad_in.dtype, grad_in.device)


@unfold_backward.grad
def _(grad, dim, size, step):
    return grad.unfold(dim, size, step)


@unfold_backward.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 5, 3)), [3, 7], 1, 3, 1), {}
    yield (rng.standard_normal((3, 2, 2)), [3, 7], -1, 2, 3), {}
    yield (rng.standard_normal((2, 3, 2)), [7, 3], 0, 2, 3), {}
    yield (rng.standard_normal((1,)), [], 0, 1, 1), {}


# ---------------------------------------------------------------------------------------------
# diagonal and its backward
# ---------------------------------------------------------------------------------------------
def diagonal_geometry(shape: tuple, offset: int, dim1: int, dim2: int, name: str = "diagonal") -> tuple:
    """(dim1, dim2, length, output shape) of the diagonal of ``shape`` over ``dim1`` and ``dim2``."""
    n = len(shape)
    d1, d2 = wrap_dim(dim1, n, name), wrap_dim(dim2, n, name)
    if d1 == d2:
        raise RuntimeError(f"{name}: diagonal dimensions cannot be identical {dim1}, {dim2}")
    a, b = shape[d1], shape[d2]
    length = max(min(a, b - offset), 0) if offset >= 0 else max(min(a + offset, b), 0)
    rest = tuple(shape[i] for i in range(n) if i not in (d1, d2))
    return d1, d2, length, rest + (length,)


def diag_view(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A writable strided view of ``a``'s diagonal (numpy's own ``diagonal`` is read-only)."""
    d1, d2, length, shape = diagonal_geometry(a.shape, offset, dim1, dim2)
    st = a.strides
    strides = tuple(st[i] for i in range(a.ndim) if i not in (d1, d2)) + (st[d1] + st[d2],)
    if length:
        a = a[_along(d2, slice(offset, None))] if offset >= 0 else a[_along(d1, slice(-offset, None))]
    return strided_view(a, shape, strides)


@op("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", kind=VIEW)
def diagonal(self, offset=0, dim1=0, dim2=1):
    """The diagonal over ``dim1`` and ``dim2`` (a view), appended as the last dim; ``offset`` > 0 is above it."""
    return diag_view(self, offset, dim1, dim2)


@diagonal.meta_rule
def _(self, offset=0, dim1=0, dim2=1):
    return TensorMeta(diagonal_geometry(tuple(self.shape), offset, dim1, dim2)[3], self.dtype, self.device)


@diagonal.grad
def _(grad, self_shape, offset, dim1, dim2):
    return api.diagonal_backward(grad, self_shape, offset, dim1, dim2)


@diagonal.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x,), {}
    yield (x, 1), {}
    yield (x, -2), {}
    yield (x.T, 0, 1, 0), {}
    yield (x, 5), {}
    y = rng.standard_normal((2, 3, 4))
    yield (y, 1, 2, 0), {}
    yield (y,), {"offset": -1, "dim1": -1, "dim2": 1}
    yield (rng.standard_normal((0, 3)),), {}


@op("diagonal_backward(Tensor grad_output, int[] input_sizes, int offset, int dim1, int dim2) -> Tensor",
    kind=SHAPE, method=False, namespace="ops.aten")
def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    """The adjoint of ``diagonal``: zeros of the input's shape with ``grad_output`` on that diagonal."""
    _check_diagonal_grad(tuple(grad_output.shape), tuple(input_sizes), offset, dim1, dim2)
    out = np.zeros(tuple(input_sizes), grad_output.dtype)
    diag_view(out, offset, dim1, dim2)[...] = grad_output
    return out


def _check_diagonal_grad(grad_shape: tuple, shape: tuple, offset: int, dim1: int, dim2: int) -> None:
    want = diagonal_geometry(shape, offset, dim1, dim2, "diagonal_backward")[3]
    if grad_shape != want:
        raise RuntimeError(
            f"diagonal_backward: grad_output has shape {list(grad_shape)} but the diagonal of an input of "
            f"size {list(shape)} has shape {list(want)}"
        )


@diagonal_backward.meta_rule
def _(grad_output, input_sizes, offset, dim1, dim2):
    _check_diagonal_grad(tuple(grad_output.shape), tuple(input_sizes), offset, dim1, dim2)
    return TensorMeta(tuple(input_sizes), grad_output.dtype, grad_output.device)


@diagonal_backward.grad
def _(grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


@diagonal_backward.sample_inputs
def _(rng):
    yield (rng.standard_normal(3), [3, 4], 0, 0, 1), {}
    yield (rng.standard_normal(2), [3, 4], 2, 0, 1), {}
    yield (rng.standard_normal((3, 1)), [2, 3, 4], 1, 2, 0), {}
    yield (rng.standard_normal((0,)), [3, 4], 5, 0, 1), {}
