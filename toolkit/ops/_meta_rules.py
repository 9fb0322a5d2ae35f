"""Meta rules shared by whole kinds of ops (elementwise broadcasting and promotion, reductions).

A meta rule reads only shapes, dtypes and devices, so eager error messages
and the JIT's type propagation come from the same code.
"""

from __future__ import annotations

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none, fmt_shape, wrap_dims
from . import registry as R


def _is_tensorlike(v) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, (int, float, bool))


def elementwise_meta(op, *bound):
    """Broadcast the tensor inputs and promote dtypes by the op's policy."""
    shapes, dims, zeros, scalars, device = [], [], [], [], None
    for i in op.tensor_args:
        v = bound[i]
        if _is_tensorlike(v):
            shapes.append(tuple(v.shape))
            device = device or v.device
    for i in op.promote_args:
        v = bound[i]
        if v is None:
            continue
        if _is_tensorlike(v):
            (zeros if len(v.shape) == 0 else dims).append(v.dtype)
        else:
            scalars.append(v)
    acc: tuple = ()
    for s in shapes:
        acc = broadcast_shapes_or_none(acc, s)
        if acc is None:
            raise RuntimeError(f"{op.name}: shapes {' and '.join(fmt_shape(s) for s in shapes)} cannot be broadcast")
    if op.check_dtypes is not None:
        op.check_dtypes(dims + zeros + [_dt.scalar_default_dtype(v) for v in scalars])
    common = _dt.result_type_from(dims, zeros, scalars)
    p = op.promotion_of(bound)
    if p in (R.PROMOTE_INT_TO_FLOAT, R.PROMOTE_INT_TO_FLOAT_REAL) and not (common.is_floating_point
                                                                            or common.is_complex):
        common = _dt.get_default_dtype()
    if p in (R.PROMOTE_COMPLEX_TO_FLOAT, R.PROMOTE_INT_TO_FLOAT_REAL):
        common = common.to_real()
    elif p in (R.PROMOTE_BOOL_OUT, R.PROMOTE_ALWAYS_BOOL):
        common = _dt.bool
    return TensorMeta(acc, common, device)


def reduced_shape(shape: tuple, dim, keepdim: bool, op: str) -> tuple:
    dims = wrap_dims(dim if dim not in ((), None) else None, len(shape), op)
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)
