"""Type promotion of elementwise ops: the compute and result dtypes, cached per dtype signature.

PyTorch's rules (dimensioned tensors over zero-dim tensors over Python numbers, by category), and the
arrays a kernel receives, cast to the compute dtype.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from ..ops import registry as R
from ..ops.registry import OpDef
from ..tensor import Tensor
from .conj import conj_input, is_conj

ELEMENTWISE_KINDS = (R.ELEMENTWISE, R.COMPARISON)


promotion_cache: dict = {}


_dt.default_dtype_listeners.append(promotion_cache.clear)  # Python floats promote to the default dtype


def promotion(op: OpDef, bound: list):
    """Compute dtype and result dtype of an elementwise op (cached on the input dtype signature)."""
    key = [op.promotion_tag if op.mode_arg is None else op.promotion_key(bound)]
    for i in op.promote_args:
        v = bound[i]
        if isinstance(v, Tensor):
            a = v._data
            key.append(a.dtype)
            key.append(a.ndim == 0)
        elif v is not None:
            key.append(type(v))
    key = tuple(key)
    r = promotion_cache.get(key)
    if r is None:
        r = promotion_cache[key] = compute_promotion(op, bound)
    return r


def compute_promotion(op: OpDef, bound: list):
    dims, zeros, scalars = [], [], []
    for i in op.promote_args:
        v = bound[i]
        if isinstance(v, Tensor):
            (zeros if v._data.ndim == 0 else dims).append(v.dtype)
        elif v is not None:
            scalars.append(v)
    return promotion_for(op, dims, zeros, scalars, op.promotion_of(bound))


def promotion_for(op: OpDef, dims: list, zeros: list, scalars: list, policy: str | None = None):
    """(compute dtype, result dtype) of an elementwise op from its tensors' dtypes (dimensioned and 0-dim)
    and its Python scalars: dispatch's rule, which compiled plans apply ahead of time. ``policy`` overrides
    the op's promotion policy (``OpDef.promotion_of`` gives a call's)."""
    if op.check_dtypes is not None:
        op.check_dtypes(dims + zeros + [_dt.scalar_default_dtype(v) for v in scalars])
    common = _dt.result_type_from(dims, zeros, scalars)
    p = op.promotion if policy is None else policy
    if p == R.PROMOTE_INT_TO_FLOAT or p == R.PROMOTE_INT_TO_FLOAT_REAL:
        if not (common.is_floating_point or common.is_complex):
            common = _dt.get_default_dtype()
        return common, (common.to_real() if p == R.PROMOTE_INT_TO_FLOAT_REAL else common)
    if p == R.PROMOTE_COMPLEX_TO_FLOAT:
        return common, common.to_real()
    if p == R.PROMOTE_BOOL_OUT:
        return common, _dt.bool
    if p == R.PROMOTE_ALWAYS_BOOL:
        return _dt.bool, _dt.bool
    return common, common


def promoted_arrays(op: OpDef, bound: list, compute):
    """Replace tensors by their arrays (cast to the compute dtype for elementwise ops)."""
    arrays = list(bound)
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, Tensor):
            a = v._data if v._extra is None or not is_conj(v) else conj_input(op, v)
            if compute is not None and a.dtype != compute.np and i in op.promote_args:
                a = a.astype(compute.np)
            arrays[i] = a
        elif isinstance(v, list):
            arrays[i] = [None if e is None else e._data if e._extra is None or not is_conj(e) else conj_input(op, e)
                         for e in v]
        elif compute is not None and v is not None and i in op.promote_args:
            arrays[i] = scalar_as(v, compute)
    return arrays


def scalar_as(v, d):
    if d is _dt.bool:
        return bool(v)
    if d.is_complex:
        return complex(v)
    if d.is_floating_point:
        return float(v)
    if isinstance(v, float):
        return v
    iv = int(v)
    info = np.iinfo(d.np)
    if info.min <= iv <= info.max:
        return iv
    return np.array(iv).astype(d.np)[()]  # wraps around as PyTorch's integer arithmetic does
