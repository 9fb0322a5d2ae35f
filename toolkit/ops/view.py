"""View ops: results share storage with their input (and so see its in-place changes)."""

from __future__ import annotations

import numpy as np

from .._core.shape import infer_size, wrap_dim
from .registry import VIEW, op


@op("view(Tensor(a) self, int[] size) -> Tensor(a)", kind=VIEW)
def view(self, size):
    """Same data, new shape; fails (as in PyTorch) when the strides cannot express it without a copy."""
    shape = infer_size(size, self.size, "view")
    out = self.view()
    try:
        out.shape = shape  # numpy refuses instead of copying, which is exactly view's contract
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return out


@view.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)


@op("reshape(Tensor(a) self, int[] shape) -> Tensor(a)", kind=VIEW)
def reshape(self, shape):
    """A view when the strides allow it, else a copy."""
    return np.reshape(self, infer_size(shape, self.size, "reshape"))


@reshape.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)


@op("transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", kind=VIEW)
def transpose(self, dim0, dim1):
    """Swap two dims (a view)."""
    n = max(self.ndim, 1)
    return np.swapaxes(self, wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose")) if self.ndim else self.view()


@transpose.grad
def _(grad, dim0, dim1):
    return grad.transpose(dim0, dim1)


@op("t(Tensor(a) self) -> Tensor(a)", kind=VIEW)
def t(self):
    """Transpose a matrix; 0-d and 1-d tensors come back as they are."""
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


@t.grad
def _(grad):
    return grad.t()


@op("expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)", kind=VIEW)
def expand(self, size, implicit=False):
    """Broadcast to ``size`` without copying (-1 keeps a dim)."""
    size = tuple(size)
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({self.ndim})"
        )
    lead = len(size) - self.ndim
    target = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}")
            target.append(s)
            continue
        cur = self.shape[i - lead]
        if s == -1:
            target.append(cur)
        elif cur == 1 or cur == s:
            target.append(s)
        else:
            raise RuntimeError(
                f"expand: The expanded size of the tensor ({s}) must match the existing size ({cur}) at non-singleton "
                f"dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {list(self.shape)}"
            )
    out = np.broadcast_to(self, tuple(target))
    return out


@expand.grad
def _(grad, self_shape):
    return grad.sum_to_size(self_shape)


@op("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", kind=VIEW)
def unsqueeze(self, dim):
    """Insert a dim of size 1 at ``dim`` (a view)."""
    return np.expand_dims(self, wrap_dim(dim, self.ndim + 1, "unsqueeze"))


@unsqueeze.grad
def _(grad, dim):
    return grad.squeeze(dim)


@op("squeeze(Tensor(a) self, int[]? dim=None) -> Tensor(a)", kind=VIEW)
def squeeze(self, dim=None):
    """Remove dims of size 1 (all of them, or those in ``dim`` that have size 1)."""
    if dim is None:
        return np.squeeze(self)
    if self.ndim == 0:
        wrap_dim(dim[0], 0, "squeeze")
        return self.view()
    axes = tuple(d for d in (wrap_dim(d, self.ndim, "squeeze") for d in dim) if self.shape[d] == 1)
    return np.squeeze(self, axis=axes) if axes else self.view()


@squeeze.grad
def _(grad, self_shape):
    return grad.reshape(self_shape)
