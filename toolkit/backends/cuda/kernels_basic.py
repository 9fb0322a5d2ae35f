"""Copies, casts and fills on the device: map kernels over the identity formula."""

from __future__ import annotations

import numpy as np

from .array import CudaArray
from .codegen import run_map, typed_scalar


def _cast_expr(src: np.dtype, dst: np.dtype) -> str:
    if dst == np.bool_:
        return "self != 0"
    return "self"


def copy_strided(a: CudaArray, dtype=None) -> CudaArray:
    """A new contiguous array with ``a``'s elements, cast to ``dtype`` (default: ``a``'s)."""
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    out = CudaArray.empty(a.shape, dtype)
    return run_map(_cast_expr(a.dtype, dtype), out, {"self": a}, {})


def contiguous(a: CudaArray, dtype=None) -> CudaArray:
    """``a`` itself when already contiguous and of ``dtype`` (default: ``a``'s), else a contiguous copy cast to it."""
    if a.is_c_contiguous() and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return copy_strided(a, dtype)


def copy_into(dst: CudaArray, src) -> CudaArray:
    """``dst[...] = src`` (``src`` a CudaArray broadcastable to ``dst``, or a number), casting to dst's dtype."""
    if isinstance(src, CudaArray):
        if src.ndim > dst.ndim or any(s not in (1, d) for s, d in zip(src.shape[::-1], dst.shape[::-1])):
            raise ValueError(f"could not broadcast input array from shape {src.shape} into shape {dst.shape}")
        return run_map(_cast_expr(src.dtype, dst.dtype), dst, {"self": src}, {})
    return fill(dst, src)


def fill(dst: CudaArray, value) -> CudaArray:
    """Every element of ``dst`` (a view is fine) set to ``value``."""
    return run_map("value", dst, {}, {"value": typed_scalar(value, dst.dtype)})


def full(shape: tuple, value, dtype) -> CudaArray:
    return fill(CudaArray.empty(shape, dtype), value)


def to_device(a) -> CudaArray:
    """A host array (or number) uploaded; a CudaArray is returned as is."""
    if isinstance(a, CudaArray):
        return a
    return CudaArray.from_host(np.asarray(a))
