"""``CudaArray``: a strided view of a device buffer, the ``_data`` of every tensor on ``cuda``.

A CUDA tensor holds a ``CudaArray`` where a CPU tensor holds a numpy array. It
has the metadata the dispatcher and ``Tensor`` read from numpy arrays
(``shape``, ``strides`` in bytes, ``dtype``, ``ndim``, ``size``, ``base``,
``astype``, ``copy``, ``reshape``, ``item``), so the CPU hot path needs no
device checks. The memory is a 1-d numba device array of the dtype (from the
caching allocator) plus an element offset and strides: views (transpose,
slices, expand) are new ``CudaArray`` objects over the same buffer, and the
root array (``base is None``) gives its buffer back to the allocator when it
dies. Nothing here copies to the host unless asked (``get``, ``item``):
numpy functions that would (``np.asarray``) raise instead.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.shape import contiguous_strides
from . import runtime


class _Flags:
    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c_contiguous: bool):
        self.c_contiguous = c_contiguous
        self.writeable = True

    def __getitem__(self, key):
        return {"C_CONTIGUOUS": self.c_contiguous, "WRITEABLE": True}[key]




class CudaArray:
    """A strided array in device memory (see the module docstring)."""

    __slots__ = ("buf", "offset", "shape", "strides", "dtype", "base", "__weakref__")
    _is_device_array = True
    __array_priority__ = 2000

    def __init__(self, buf, offset: int, shape: tuple, strides: tuple, dtype, base=None):
        self.buf = buf
        self.offset = offset
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.dtype = np.dtype(dtype)
        self.base = base

    # ------------------------------------------------------------------ creation
    @classmethod
    def empty(cls, shape: tuple, dtype) -> CudaArray:
        dtype = np.dtype(dtype)
        shape = tuple(int(s) for s in shape)
        n = math.prod(shape)
        return cls(runtime.ALLOCATOR.alloc(n, dtype), 0, shape, contiguous_strides(shape, dtype.itemsize), dtype)

    @classmethod
    def from_host(cls, a: np.ndarray) -> CudaArray:
        """Upload a host array (copied once, contiguous)."""
        a = a if a.flags.c_contiguous else np.array(a, order="C")  # (ascontiguousarray makes 0-d 1-d)
        out = cls.empty(a.shape, a.dtype)
        if a.size:
            out.buf[: a.size].copy_to_device(a.reshape(-1))
        return out

    def __del__(self):
        if self.base is None and self.buf is not None:
            runtime.ALLOCATOR.release(self.buf)

    # ------------------------------------------------------------------ metadata
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def estrides(self) -> tuple:
        """Strides in elements (what kernels index the buffer with)."""
        isz = self.dtype.itemsize
        return tuple(s // isz for s in self.strides)

    @property
    def flags(self) -> _Flags:
        return _Flags(self.is_c_contiguous())

    def is_c_contiguous(self) -> bool:
        if self.size == 0:
            return True
        return all(st == c or n == 1 for n, st, c in zip(self.shape, self.strides,
                                                          contiguous_strides(self.shape, self.itemsize)))

    def root(self) -> CudaArray:
        return self if self.base is None else self.base

    def view_of(self, shape: tuple, strides: tuple, offset: int) -> CudaArray:
        """A view sharing this array's buffer (``strides`` in bytes, ``offset`` in elements)."""
        return CudaArray(self.buf, offset, shape, strides, self.dtype, self.root())

    @property
    def __cuda_array_interface__(self) -> dict:
        """Zero-copy export (CuPy, PyTorch, numba): the device pointer, shape, strides and typestr."""
        ptr = self.device_ptr() if self.size else 0  # (under the simulator: a stand-in address)
        return {"shape": self.shape, "strides": None if self.is_c_contiguous() else self.strides,
                "typestr": self.dtype.str, "data": (ptr, False), "version": 3}

    def device_ptr(self) -> int:
        iface = getattr(self.buf, "__cuda_array_interface__", None)
        base = iface["data"][0] if iface else id(self.buf)
        return base + self.offset * self.itemsize

    def flat_device(self):
        """A contiguous 1-d numba device array of this array's elements (a view when already contiguous).

        The numba array keeps the ``CudaArray`` it views alive: were that a
        temporary (a contiguous copy made here or by the caller), its buffer
        would go back to the allocator at once and could be handed out, and
        written, before the kernel it was passed to reads it.
        """
        a = self if self.is_c_contiguous() else self.copy()
        flat = a.buf[a.offset: a.offset + a.size]
        flat.owner = a
        return flat

    def device_view(self):
        """This array as a numba device array of its shape (contiguous: a view, else a copy)."""
        flat = self.flat_device()
        return flat.reshape(self.shape) if self.ndim != 1 else flat

    # ------------------------------------------------------------------ numpy-like methods
    def get(self) -> np.ndarray:
        """Copy to the host (a new contiguous numpy array)."""
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        return self.flat_device().copy_to_host().reshape(self.shape)

    copy_to_host = get

    def copy(self, order: str = "C") -> CudaArray:
        from .kernels_basic import copy_strided  # cycle: kernels_basic imports array at load

        return copy_strided(self)

    def astype(self, dtype, copy: bool = True) -> CudaArray:
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        from .kernels_basic import copy_strided  # cycle: kernels_basic imports array at load

        return copy_strided(self, dtype)

    def reshape(self, *shape) -> CudaArray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = _infer(tuple(int(s) for s in shape), self.size)
        src = self if self.is_c_contiguous() else self.copy()
        return src.view_of(shape, contiguous_strides(shape, self.itemsize), src.offset)

    def transpose(self, *axes) -> CudaArray:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        return self.view_of(tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes), self.offset)

    @property
    def T(self) -> CudaArray:
        return self.transpose()

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.get().reshape(()).item()

    def tolist(self):
        return self.get().tolist()

    def __bool__(self) -> bool:
        return bool(self.item())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
            "first."
        )

    def __array_function__(self, func, types, args, kwargs):
        """The numpy functions the core calls on tensor data, done on the device (others raise TypeError)."""
        from . import numpy_protocol  # cycle: numpy_protocol imports array at load

        return numpy_protocol.array_function(func, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from . import numpy_protocol  # cycle: numpy_protocol imports array at load

        return numpy_protocol.array_ufunc(ufunc, method, inputs, kwargs)

    def __repr__(self) -> str:
        return f"CudaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, offset={self.offset})"


def _infer(shape: tuple, n: int) -> tuple:
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape = tuple((n // known if known else 0) if s == -1 else s for s in shape)
    if math.prod(shape) != n:
        raise ValueError(f"cannot reshape array of size {n} into shape {shape}")
    return shape


def is_device_array(a) -> bool:
    return type(a) is CudaArray
