"""View ops on the device: each op's own CPU kernel decides the view, run on a stand-in host array.

A view op only rearranges metadata. The CPU kernel is called on a numpy
array with the device array's shape, strides and offset over an untouched
host allocation of the same size (virtual memory, never read), and the view
it returns is mapped back onto the device buffer: same offset and strides.
Every view op therefore keeps its CPU checks and error messages on CUDA. When
the CPU kernel has to copy (``reshape`` of a non-contiguous array), the input
is first made contiguous on the device and the kernel runs again.
"""

from __future__ import annotations

import numpy as np

from ...ops import registry as R
from .array import CudaArray


def _stand_in(a: CudaArray):
    host = np.empty(max(a.buf.shape[0], 1), a.dtype)  # a.buf: the root's buffer, as a's dtype (view(dtype))
    view = np.lib.stride_tricks.as_strided(host[a.offset:], a.shape, a.strides) if a.size else np.empty(a.shape, a.dtype)
    return host, view


def _map_back(r, host: np.ndarray, a: CudaArray):
    if isinstance(r, (list, tuple)):
        mapped = [_map_back(x, host, a) for x in r]
        return None if any(m is None for m in mapped) else type(r)(mapped) if isinstance(r, list) else tuple(mapped)
    r = np.asarray(r)
    if r.dtype != a.dtype:
        return _retyped(r, host, a)
    if r.size == 0:
        return a.view_of(r.shape, r.strides, a.offset)
    start = host.__array_interface__["data"][0]
    ptr = r.__array_interface__["data"][0]
    if not np.may_share_memory(r, host):
        return None
    return a.view_of(r.shape, r.strides, (ptr - start) // a.itemsize)


def _retyped(r: np.ndarray, host: np.ndarray, a: CudaArray):
    """A view of another dtype over the same bytes (``real``/``imag`` of complex, ``view_as_real``,
    ``view_as_complex``), or None when the device buffer cannot be seen as that dtype."""
    if r.size and not np.may_share_memory(r, host):
        return None
    byte = a.offset * a.itemsize if not r.size else \
        r.__array_interface__["data"][0] - host.__array_interface__["data"][0]
    if byte % r.itemsize or (a.buf.shape[0] * a.itemsize) % r.itemsize:
        return None
    return CudaArray(a.buf.view(r.dtype), byte // r.itemsize, r.shape, r.strides, r.dtype, a.root())


def make_kernel(op):
    cpu = op.kernels["cpu"]

    def kernel(self, *args):
        for attempt in (self, self.copy() if not self.is_c_contiguous() else None):
            if attempt is None:
                break
            host, view = _stand_in(attempt)
            out = _map_back(cpu(view, *args), host, attempt)
            if out is not None:
                return out
        raise NotImplementedError(f"{op.name}: this view is not implemented for CUDA tensors")

    kernel.__name__ = f"{op.name}_cuda"
    return kernel


def register() -> list:
    done = []
    for op in R.all_ops():
        if op.kind is R.VIEW and "cpu" in op.kernels and "cuda" not in op.kernels and op.tensor_args[:1] == (0,):
            if op.name == "view" and op.overload == "dtype":
                continue
            op.kernel("cuda")(make_kernel(op))
            done.append(op)
    return done
