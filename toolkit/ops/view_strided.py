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

from .._core import dtypes as _dt
from .._core import names as _names
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


@op("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", kind=VIEW,
    name_rule=_names.diagonal)
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


# ---------------------------------------------------------------------------------------------
# as_strided, as_strided_scatter, slice_inverse: any geometry over the storage
# ---------------------------------------------------------------------------------------------
def _storage_root(a: np.ndarray) -> tuple:
    """(the array owning ``a``'s memory, ``a``'s offset in it in elements)."""
    root = a.base if isinstance(a.base, np.ndarray) else a
    if a.size == 0 or root is a:
        return root, 0
    return root, (a.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // a.itemsize


def check_geometry(size, stride, storage_offset: int, itemsize: int, storage_size: int) -> None:
    """PyTorch's checks of an ``as_strided`` geometry against a storage of ``storage_size`` elements."""
    size, stride = list(size), list(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {stride}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"as_strided: Trying to create tensor with negative dimension: {size}")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if all(size):
        need = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if need > storage_size:
            raise RuntimeError(
                f"setStorage: sizes {size}, strides {stride}, storage offset {storage_offset}, and itemsize {itemsize} "
                f"requiring a storage size of {need * itemsize} are out of bounds for storage of size "
                f"{storage_size * itemsize}")


def storage_view(a: np.ndarray, size, stride, storage_offset) -> np.ndarray:
    """``a.as_strided(size, stride, storage_offset)``: a view of the memory of the array owning ``a``'s data."""
    root, own_offset = _storage_root(a)
    offset = own_offset if storage_offset is None else storage_offset
    check_geometry(size, stride, offset, a.itemsize, root.size)
    strides = tuple(s * a.itemsize for s in stride)
    if root.flags.c_contiguous or root.flags.f_contiguous:
        try:
            return np.ndarray(tuple(size), a.dtype, buffer=root, offset=offset * a.itemsize, strides=strides)
        except (TypeError, ValueError):
            pass
    start = root.reshape(-1, order="A")[offset:] if root.size else root.reshape(-1)
    return as_strided(start, tuple(size), strides)


def dense_strides(shape: tuple, strides: tuple) -> tuple:
    """Element strides of a dense tensor whose dims are laid out in the order of ``strides`` (``clone``'s layout)."""
    order = sorted(range(len(shape)), key=lambda i: (-strides[i], -i))
    out, step = [0] * len(shape), 1
    for i in reversed(order):
        out[i] = step
        step *= max(shape[i], 1)
    return tuple(out)


def window_elements(shape: tuple, strides: tuple, offset: int, size, stride, storage_offset: int) -> np.ndarray:
    """For each element of the window ``size``/``stride``/``storage_offset`` (in row-major order), the row-major
    index of the element of a tensor of ``shape``/``strides``/``offset`` at the same storage position, or -1."""

    def positions(sh, st, off):
        pos = np.full(tuple(sh), off, np.int64)
        for d, (n, s) in enumerate(zip(sh, st)):
            pos += (np.arange(n, dtype=np.int64) * s).reshape((-1,) + (1,) * (len(sh) - d - 1))
        return pos.reshape(-1)

    mine, window = positions(shape, strides, offset), positions(size, stride, storage_offset)
    order = np.argsort(mine, kind="stable")
    ranked = mine[order]
    at = np.clip(np.searchsorted(ranked, window), 0, max(len(ranked) - 1, 0))
    if not len(ranked):
        return np.full(window.shape, -1, np.int64)
    return np.where(ranked[at] == window, order[at], -1)


def _geometry(t) -> tuple:
    """(shape, element strides, storage offset) of a tensor or an array."""
    if isinstance(t, np.ndarray):
        return t.shape, tuple(s // t.itemsize for s in t.strides), _storage_root(t)[1]
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


@op("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
    kind=VIEW, name_rule=_names.unnamed)
def as_strided_op(self, size, stride, storage_offset=None):
    """A view of ``self``'s storage with any geometry: ``size``, element ``stride`` and ``storage_offset``
    (``self``'s own offset by default). Elements may overlap; the geometry must fit in the storage."""
    return storage_view(self, size, stride, storage_offset)


@as_strided_op.meta_rule
def _(self, size, stride, storage_offset=None):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    return TensorMeta(tuple(size), self.dtype, self.device)


@as_strided_op.grad
def _(grad, self, size, stride, storage_offset):
    shape, strides, offset = _geometry(self)
    start = offset if storage_offset is None else storage_offset
    k = window_elements(shape, strides, offset, size, stride, start)
    hit = np.nonzero(k >= 0)[0]
    flat = grad.reshape(-1)
    picked = api.index_select(flat, 0, grad.new_tensor(hit, dtype=_dt.int64))
    total = grad.new_zeros((int(np.prod(shape)),))
    return api.index_add(total, 0, grad.new_tensor(k[hit], dtype=_dt.int64), picked).reshape(shape)


@as_strided_op.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, (2, 2), (1, 2)), {}
    yield (x, (3, 3), (4, 1), 1), {}
    yield (x, (4, 3), (1, 1)), {}  # overlapping windows
    yield (x.T, (2, 3), (1, 4)), {}
    yield (x, (5,), (2,)), {"storage_offset": 2}
    yield (x, (0, 2), (1, 1)), {}


def _scatter_index(self, size, stride, storage_offset) -> np.ndarray:
    """Row-major indices of ``self``'s elements that ``as_strided_scatter`` overwrites, in the window's order."""
    shape, strides, _ = _geometry(self)
    layout = dense_strides(shape, strides)
    return window_elements(shape, layout, 0, size, stride, 0 if storage_offset is None else storage_offset)


def _check_src(name: str, src_shape, slice_shape) -> None:
    if tuple(src_shape) != tuple(slice_shape):
        raise RuntimeError(f"{name}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src_shape)}, slice size = {list(slice_shape)}")


@op("as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) "
    "-> Tensor", kind=SHAPE, out=False)
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """A copy of ``self`` (laid out as ``clone`` lays it out) with the window ``size``/``stride``/``storage_offset``
    of its storage replaced by ``src``: the functional form of ``self.as_strided(...).copy_(src)``."""
    shape, strides, _ = _geometry(self)
    check_geometry(size, stride, 0 if storage_offset is None else storage_offset, self.itemsize, self.size)
    _check_src("as_strided_scatter", src.shape, size)
    out = np.array(self, copy=True).reshape(-1)
    out[_scatter_index(self, size, stride, storage_offset)] = np.reshape(src, -1)
    return out.reshape(shape)


@as_strided_scatter.meta_rule
def _(self, src, size, stride, storage_offset=None):
    _check_src("as_strided_scatter", src.shape, size)
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


@as_strided_scatter.grad
def _(grad, self, src_shape, size, stride, storage_offset, needs_input_grad):
    k = grad.new_tensor(_scatter_index(self, size, stride, storage_offset), dtype=_dt.int64)
    g_self = g_src = None
    if needs_input_grad[0]:
        g_self = grad.reshape(-1).index_fill(0, k, 0).reshape(tuple(self.shape))
    if needs_input_grad[1]:
        g_src = api.index_select(grad.reshape(-1), 0, k).reshape(src_shape)
    return g_self, g_src


@as_strided_scatter.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, rng.standard_normal((2, 2)), (2, 2), (1, 4)), {}
    yield (x, rng.standard_normal(3), (3,), (5,), 0), {}
    yield (x.T, rng.standard_normal((2, 3)), (2, 3), (1, 4)), {}
    yield (x, rng.standard_normal(4)), {"size": (4,), "stride": (2,), "storage_offset": 3}


@op("slice_inverse(Tensor(a) self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
    "-> Tensor(a)", kind=VIEW, nondiff_args=("src",))
def slice_inverse(self, src, dim=0, start=None, end=None, step=1):
    """The inverse of ``slice``: ``self`` (a slice of ``src``) seen with ``src``'s geometry, as a view of
    ``self``'s storage (``self.as_strided(src.size(), src.stride(), src.storage_offset())``)."""
    return storage_view(self, *_geometry(src))


@slice_inverse.meta_rule
def _(self, src, dim=0, start=None, end=None, step=1):
    return TensorMeta(tuple(src.shape), self.dtype, self.device)


@slice_inverse.grad
def _(grad, dim, start, end, step):
    return api.slice(grad, dim, start, end, step), None


@slice_inverse.sample_inputs
def _(rng):  # the samples' tensors get storages of their own, so only a whole-dim slice fits in self's
    x = rng.standard_normal((3, 4))
    yield (x, x.copy(), 0, 0, None), {}
    yield (x, x.copy()), {"dim": 1, "start": 0, "end": 4, "step": 1}


# ---------------------------------------------------------------------------------------------
# diagonal_scatter
# ---------------------------------------------------------------------------------------------
@op("diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor", kind=SHAPE, out=False)
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy of ``self`` with its diagonal over ``dim1``/``dim2`` replaced by ``src`` (the functional form of
    ``self.diagonal(...).copy_(src)``)."""
    _check_src("diagonal_scatter", src.shape, diagonal_geometry(self.shape, offset, dim1, dim2)[3])
    out = np.array(self, copy=True)
    diag_view(out, offset, dim1, dim2)[...] = src
    return out


@diagonal_scatter.meta_rule
def _(self, src, offset=0, dim1=0, dim2=1):
    _check_src("diagonal_scatter", src.shape, diagonal_geometry(tuple(self.shape), offset, dim1, dim2)[3])
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


@diagonal_scatter.grad
def _(grad, src_shape, offset, dim1, dim2, needs_input_grad):
    g_self = (api.diagonal_scatter(grad, grad.new_zeros(src_shape), offset, dim1, dim2)
              if needs_input_grad[0] else None)
    g_src = grad.diagonal(offset, dim1, dim2) if needs_input_grad[1] else None
    return g_self, g_src


@diagonal_scatter.sample_inputs
def _(rng):
    x = rng.standard_normal((3, 4))
    yield (x, rng.standard_normal(3)), {}
    yield (x, rng.standard_normal(3), 1), {}
    yield (x.T, rng.standard_normal(2), -2), {}
    y = rng.standard_normal((2, 3, 4))
    yield (y, rng.standard_normal((3, 1)), 1, 2, 0), {}
    yield (x, rng.standard_normal(0)), {"offset": 5}
