"""Joining ops that lay tensors out in two dims: block_diag, column_stack, row_stack.

Like ``cat`` they copy into a new buffer and promote their inputs' dtypes;
each input's gradient is its block of the output's gradient.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import SHAPE, op
from .shape import cat_backward, cat_shape, promoted_dtype, stack_plan


def _dtypes(tensors) -> list:
    return [_dt.from_numpy_dtype(t.dtype) if isinstance(t, np.ndarray) else t.dtype for t in tensors]


# ---------------------------------------------------------------------------------------------
# block_diag
# ---------------------------------------------------------------------------------------------
def block_shapes(shapes) -> list:
    """Each input as a 2-D block: a 0-d tensor is ``(1, 1)``, a 1-D ``(n,)`` is ``(1, n)``."""
    blocks = []
    for i, s in enumerate(shapes):
        if len(s) > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {len(s)} dimensions")
        blocks.append(tuple(s) if len(s) == 2 else (1, 1) if not s else (1, s[0]))
    return blocks


@op("block_diag(Tensor[] tensors) -> Tensor", kind=SHAPE, out=False, method=False)
def block_diag(tensors):
    """The inputs as the diagonal blocks of one matrix, zeros elsewhere; dtypes promote.

    >>> toolkit.block_diag(toolkit.ones(1, 2), toolkit.tensor(5.)).shape
    toolkit.Size([2, 3])
    """
    blocks = block_shapes([t.shape for t in tensors])
    dtype = promoted_dtype(_dtypes(tensors)).np if len(tensors) else _dt.get_default_dtype().np
    out = np.zeros((sum(b[0] for b in blocks), sum(b[1] for b in blocks)) if blocks else (1, 0), dtype)
    r = c = 0
    for t, (h, w) in zip(tensors, blocks):
        out[r:r + h, c:c + w] = np.reshape(t, (h, w))
        r, c = r + h, c + w
    return out


@block_diag.meta_rule
def _(tensors):
    blocks = block_shapes([tuple(t.shape) for t in tensors])
    shape = (sum(b[0] for b in blocks), sum(b[1] for b in blocks))
    return TensorMeta(shape, promoted_dtype([t.dtype for t in tensors]), tensors[0].device)


@block_diag.grad
def _(grad, tensors_shape):
    out, r, c = [], 0, 0
    for s, (h, w) in zip(tensors_shape, block_shapes(tensors_shape)):
        out.append(grad.narrow(0, r, h).narrow(1, c, w).reshape(s))
        r, c = r + h, c + w
    return out


@block_diag.sample_inputs
def _(rng):
    # separate tensors, as torch.block_diag takes them
    yield (rng.standard_normal((2, 2)), rng.standard_normal((1, 3))), {}
    yield (rng.standard_normal(()), rng.standard_normal(3), rng.standard_normal((2, 2)).T), {}
    yield (np.arange(4).reshape(2, 2), rng.standard_normal((2, 1))), {}
    yield (rng.standard_normal((0, 2)), rng.standard_normal((2, 0))), {}


# ---------------------------------------------------------------------------------------------
# column_stack, row_stack
# ---------------------------------------------------------------------------------------------
def column_shapes(shapes) -> list:
    """``column_stack``'s inputs as columns: 0-d and 1-D tensors become ``(n, 1)``."""
    if not shapes:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return [tuple(s) if len(s) > 1 else (int(np.prod(s)), 1) for s in shapes]


@op("column_stack(Tensor[] tensors) -> Tensor", kind=SHAPE, out="cast", method=False, composite=True)
def column_stack(tensors):
    """Join along dim 1, after turning 0-d and 1-D inputs into columns ``(n, 1)`` (``reshape`` and ``cat``)."""
    cols = column_shapes([tuple(t.shape) for t in tensors])
    cat_shape(cols, 1, "column_stack")
    return api.cat([t.reshape(s) for t, s in zip(tensors, cols)], 1)


@column_stack.meta_rule
def _(tensors):
    shape, _, _ = cat_shape(column_shapes([tuple(t.shape) for t in tensors]), 1, "column_stack")
    return TensorMeta(shape, promoted_dtype([t.dtype for t in tensors]), tensors[0].device)


@column_stack.grad
def _(grad, tensors_shape):
    cols = column_shapes(tensors_shape)
    return [g.reshape(s) for g, s in zip(cat_backward(grad, cols, 1, "column_stack"), tensors_shape)]


@column_stack.sample_inputs
def _(rng):
    yield ([rng.standard_normal(3), rng.standard_normal((3, 2))],), {}
    yield ([rng.standard_normal(()), rng.standard_normal(1), rng.standard_normal((1, 2))],), {}
    yield ([np.arange(3), rng.standard_normal(3)],), {}


def _row_plan(shapes) -> tuple:
    if not shapes:
        raise RuntimeError("row_stack expects a non-empty TensorList")
    return stack_plan("vstack", shapes)


@op("row_stack(Tensor[] tensors) -> Tensor", kind=SHAPE, out="cast", method=False, composite=True)
def row_stack(tensors):
    """Alias of :func:`vstack`: join along dim 0 after making every input at least 2-D (``reshape`` and ``cat``)."""
    rows, dim = _row_plan([tuple(t.shape) for t in tensors])
    cat_shape(rows, dim, "row_stack")
    return api.cat([t.reshape(s) for t, s in zip(tensors, rows)], dim)


@row_stack.meta_rule
def _(tensors):
    rows, dim = _row_plan([tuple(t.shape) for t in tensors])
    shape, _, _ = cat_shape(rows, dim, "row_stack")
    return TensorMeta(shape, promoted_dtype([t.dtype for t in tensors]), tensors[0].device)


@row_stack.grad
def _(grad, tensors_shape):
    rows, dim = _row_plan(tensors_shape)
    return [g.reshape(s) for g, s in zip(cat_backward(grad, rows, dim, "row_stack"), tensors_shape)]


@row_stack.sample_inputs
def _(rng):
    a = rng.standard_normal((2, 3))
    yield ([a, rng.standard_normal((1, 3)), rng.standard_normal(3)],), {}
    yield ([rng.standard_normal(()), rng.standard_normal(())],), {}
    yield ([a.T, np.arange(6).reshape(2, 3).T],), {}
