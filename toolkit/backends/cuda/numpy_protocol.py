"""The few numpy functions and ufuncs the core applies to tensor data, answered on the device.

``CudaArray`` implements numpy's ``__array_function__``/``__array_ufunc__``
protocols so that ``np.copyto(dst, src)`` (in-place ops) and
``np.add(g, grad, out=g)`` (gradient accumulation) run as device kernels.
Any other numpy function raises TypeError: data never silently travels to
the host.
"""

from __future__ import annotations

import numpy as np

from .array import CudaArray
from .codegen import run_map, typed_scalar
from .kernels_basic import copy_into


def _broadcast_to(a: CudaArray, shape, subok=False) -> CudaArray:
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
    lead = len(shape) - a.ndim
    if lead < 0 or any(s not in (1, t) for s, t in zip(a.shape, shape[lead:])):
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: "
                         f"{a.shape} and requested shape {shape}")
    strides = (0,) * lead + tuple(0 if s != t else st for s, t, st in zip(a.shape, shape[lead:], a.strides))
    return a.view_of(shape, strides, a.offset)


def _copyto(dst, src, casting="same_kind", where=True):
    copy_into(dst, src if isinstance(src, CudaArray) else src)


def _shares_memory(a, b, max_work=None) -> bool:
    return isinstance(a, CudaArray) and isinstance(b, CudaArray) and a.root().buf is b.root().buf


_FUNCTIONS = {
    np.broadcast_to: _broadcast_to,
    np.copyto: _copyto,
    np.shares_memory: _shares_memory,
    np.may_share_memory: _shares_memory,
}


def array_function(func, args, kwargs):
    impl = _FUNCTIONS.get(func)
    if impl is None:
        raise TypeError(f"numpy.{func.__name__} is not available for CUDA arrays (no implicit copies to the host); "
                        "use Tensor.cpu() first")
    return impl(*args, **kwargs)


_UFUNCS = {"add": "a + b", "subtract": "a - b", "multiply": "a * b", "true_divide": "a / b",
           "maximum": "a if (a != a or a > b) else b", "minimum": "a if (a != a or a < b) else b"}


def array_ufunc(ufunc, method, inputs, kwargs):
    expr = _UFUNCS.get(ufunc.__name__)
    out = kwargs.pop("out", None)
    if method != "__call__" or expr is None or kwargs or len(inputs) != 2:
        raise TypeError(f"numpy.{ufunc.__name__} is not available for CUDA arrays (no implicit copies to the host)")
    a, b = inputs
    dtype = np.result_type(*[x.dtype if isinstance(x, CudaArray) else x for x in inputs])
    if out is not None:
        out = out[0] if isinstance(out, tuple) else out
    else:
        shape = np.broadcast_shapes(*[x.shape for x in inputs if isinstance(x, CudaArray)])
        out = CudaArray.empty(shape, dtype)
    arrays, params = {}, {}
    for name, x in (("a", a), ("b", b)):
        if isinstance(x, CudaArray):
            arrays[name] = x
        else:
            params[name] = typed_scalar(x, dtype)
    return run_map(expr, out, arrays, params)
