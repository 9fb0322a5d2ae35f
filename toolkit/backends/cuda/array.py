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

The copies, casts and fills every kernel family uses (map kernels over the
identity formula) and numpy's protocols (``np.copyto``, ``np.add(..., out=)``)
live here too: ``copy``, ``astype`` and the protocol methods run those kernels,
and the kernels make ``CudaArray`` objects, so neither stands without the other.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.shape import contiguous_strides
from . import runtime
from .codegen import run_map, typed_scalar


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
        return copy_strided(self)

    def astype(self, dtype, copy: bool = True) -> CudaArray:
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
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
        return array_function(func, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return array_ufunc(ufunc, method, inputs, kwargs)

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


# ---------------------------------------------------------------------------------------------
# Copies, casts and fills: map kernels over the identity formula


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


# ---------------------------------------------------------------------------------------------
# numpy's protocols: the few numpy functions and ufuncs the core applies to tensor data, answered on the
# device. ``np.copyto(dst, src)`` (in-place ops) and ``np.add(g, grad, out=g)`` (gradient accumulation) run as
# device kernels; any other numpy function raises TypeError: data never silently travels to the host.


def broadcast_to(a: CudaArray, shape, subok: bool = False) -> CudaArray:
    """``np.broadcast_to`` on the device: a view with zero strides where ``a`` is broadcast."""
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
    np.broadcast_to: broadcast_to,
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
