"""The Tensor's conversions, convenience constructors and memory methods: methods that are not single ops.

Conversions land on registry ops (``_to_copy``, ``clone``, factories), so the
tracer and autograd see the ops, not these helpers. Memory methods
(``storage()``, ``set_``, ``resize_``, ``pin_memory``, ``apply_``...) change
what a tensor views rather than compute, as in PyTorch, where autograd does
not record them either. ``Tensor`` inherits them from ``TensorConversions``
and ``TensorMemory`` (toolkit/tensor.py).
"""

from __future__ import annotations

import operator as _operator
import warnings

import numpy as np

from . import _dlpack_export
from . import cuda as _cuda
from ._core import dtypes as _dt
from ._core.device import as_device
from ._core.device import device as _device_cls
from ._core.from_data import to_array
from ._core.layout import dim_order
from ._core.legacy_names import legacy_type, legacy_type_name
from ._core.memory_format import laid_out
from ._core.names import repr_names
from ._core.state import LOCAL
from ._core.storage import Storage, TypedStorage, legacy_storage_class
from ._core.tensor_base import TensorBase
from .ops import api
from .ops import runtime as _runtime
from .ops import sparse_coo as _sparse


def _parse_to(args, kwargs):
    """Sort ``to``'s flexible arguments into (device, dtype, non_blocking, copy)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, TensorBase):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype) or a in (float, int, bool):
            dtype = _dt.as_dtype(a)
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            device = a
        elif isinstance(a, bool):
            non_blocking = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got {type(a).__name__}")
    return (as_device(device) if device is not None else None), (_dt.as_dtype(dtype) if dtype is not None else None), non_blocking, copy




def copy_of_data(data, dtype, device, requires_grad: bool):
    """A new tensor holding a copy of ``data`` as ``dtype`` on ``device`` (None: the CPU), for ``toolkit.tensor``
    and ``Tensor.new_tensor``."""
    arr = to_array(data, dtype)
    t = _runtime.wrap(np.ascontiguousarray(arr) if arr.ndim else arr)
    if device is not None:
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _caster(dtype, name: str):
    def cast(self, memory_format=None):
        return self.to(dtype)

    cast.__name__ = name
    cast.__qualname__ = f"Tensor.{name}"
    cast.__doc__ = f"``self.to({dtype})``"
    return cast


def _refused(message: str, error: type = RuntimeError):
    """A sparse-only method on a strided tensor: PyTorch's error for it."""
    def method(self, *args, **kwargs):
        raise error(message)

    return method


class TensorConversions(TensorBase):
    """Conversions (``to``, ``type``, ``float``...), ``new_*`` constructors, ``T``/``mT``, DLPack export."""

    __slots__ = ()

    def to_sparse(self, *args, **kwargs):
        """The sparse COO tensor of this strided one's nonzero entries (``toolkit.sparse``)."""
        return _sparse.CONVERSIONS["to_sparse"](self, *args, **kwargs)

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None):
        """The sparse CSR matrix of this strided 2-D one's nonzero entries (``toolkit.sparse``)."""
        return _sparse.CONVERSIONS["to_sparse_csr"](self, dense_dim)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """A strided tensor is its own dense form (converted to ``dtype`` when given)."""
        return self if dtype is None else self.to(dtype)

    # The sparse-only queries on a strided tensor: its sparse and dense dims, or PyTorch's refusal.
    def sparse_dim(self) -> int:
        return 0

    def dense_dim(self) -> int:
        return self.dim()

    coalesce = _refused("coalesce expected sparse coordinate tensor layout but got Strided")
    is_coalesced = _refused("is_coalesced expected sparse coordinate tensor layout but got Strided")
    indices = _refused("indices expected sparse coordinate tensor layout but got Strided")
    values = _refused("values expected sparse tensor layout but got Strided")
    smm = _refused("tensor.sspaddmm(...) can only be called on sparse tensors")
    _nnz = _refused("Could not run 'aten::_nnz' with arguments from the 'CPU' backend.", NotImplementedError)
    _indices = _refused("Could not run 'aten::_indices' with arguments from the 'CPU' backend.", NotImplementedError)
    _values = _refused("Could not run 'aten::_values' with arguments from the 'CPU' backend.", NotImplementedError)

    def to(self, *args, **kwargs):
        """Return ``self`` when nothing changes, else a copy with the new device and/or dtype (differentiable)."""
        device, dtype, non_blocking, copy = _parse_to(args, dict(kwargs))
        fmt = kwargs.get("memory_format")
        same_dev = device is None or device == self.device or (device.type == self.device.type and device.index is None)
        same_dt = dtype is None or dtype is self.dtype
        if same_dev and same_dt and not copy:
            return self if fmt is None else laid_out(self, fmt)
        out = api._to_copy(self, dtype=dtype, device=None if same_dev else device, non_blocking=non_blocking)
        return out if fmt is None else laid_out(out, fmt)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """With no argument, the type string (``'torch.FloatTensor'``); with a dtype, type or string, a conversion."""
        if dtype is None:
            return legacy_type_name(self).replace("toolkit.", "torch.")
        legacy = legacy_type(dtype)
        if legacy is not None:
            d, dev = legacy
            return self.to(dev, d) if dev != self.device.type else self.to(d)
        if isinstance(dtype, str):
            raise ValueError(f"invalid type: '{dtype}'")
        return self.to(dtype=dtype)

    def contiguous(self, memory_format=None):
        if memory_format is not None and memory_format != "contiguous_format":
            if memory_format == "preserve_format" and not self.is_contiguous():
                raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
            return laid_out(self, memory_format)
        return self if self.is_contiguous() else api.clone(self)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None):
        d = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
        return self.to(d, non_blocking=non_blocking)

    float = _caster(_dt.float32, "float")
    double = _caster(_dt.float64, "double")
    half = _caster(_dt.float16, "half")
    cfloat = _caster(_dt.complex64, "cfloat")
    cdouble = _caster(_dt.complex128, "cdouble")
    long = _caster(_dt.int64, "long")
    int = _caster(_dt.int32, "int")
    short = _caster(_dt.int16, "short")
    char = _caster(_dt.int8, "char")
    byte = _caster(_dt.uint8, "byte")
    bool = _caster(_dt.bool, "bool")

    def new_tensor(self, data, dtype=None, device=None, requires_grad: bool = False):
        """A copy of ``data`` with this tensor's dtype and device unless given."""
        return copy_of_data(data, _dt.as_dtype(dtype) if dtype is not None else self.dtype, device or self.device,
                            requires_grad)

    def is_inference(self) -> bool:
        return bool(self._extra and self._extra.get("inference"))

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    @property
    def T(self):
        if self.ndim <= 2:
            return api.t(self) if self.ndim == 2 else self
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        if self.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    # the adjoints are conjugated transposes: lazy conjugate views for complex, plain transposes for real
    @property
    def H(self):
        if self.ndim == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
            return self.conj()
        if self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
                               + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""))
        return self.transpose(0, 1).conj()

    @property
    def mH(self):
        return self._matrix_adjoint("tensor.mH", "Tensor.mH")

    def adjoint(self):
        """The conjugate transpose of the last two dims (a view; lazily conjugated for complex dtypes)."""
        return self._matrix_adjoint("tensor.adjoint()", "adjoint()")

    def _matrix_adjoint(self, name: str, deprecated_name: str):
        if self.ndim == 0:
            warnings.warn(f"{deprecated_name} is deprecated on 0-D tensors. Consider using x.conj().", UserWarning,
                          stacklevel=3)
            return self.conj()
        if self.ndim < 2:
            raise RuntimeError(f"{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1).conj()

    def isreal(self):
        """True where the imaginary part is zero (everywhere, for real dtypes)."""
        if self.is_complex():
            return api.eq(api.imag(self), 0)
        return api.ones_like(self, dtype=_dt.bool)

    @property
    def real(self):
        """The real part, a view (``self`` itself viewed for real dtypes); assigning writes into it."""
        return api.real(self)

    @real.setter
    def real(self, value) -> None:
        api.real(self).copy_(value)

    @property
    def imag(self):
        """The imaginary part, a view; real tensors have none (an error, as in PyTorch)."""
        return api.imag(self)

    @imag.setter
    def imag(self, value) -> None:
        api.imag(self).copy_(value)

    def resolve_neg(self):
        """``self``: toolkit never holds a lazily negated view, so there is nothing to resolve."""
        return self

    @property
    def volatile(self) -> bool:
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    def bfloat16(self, memory_format=None):
        raise TypeError("Tensor.bfloat16(): toolkit has no bfloat16 dtype (its CPU tensors are numpy arrays, and numpy "
                        "has none); use half() for 16-bit floats or float()")

    def xpu(self, device=None, non_blocking: bool = False, memory_format=None):
        raise AssertionError("Torch not compiled with XPU enabled: toolkit has no xpu device (its devices are cpu "
                             "and cuda)")

    def mtia(self, device=None, non_blocking: bool = False, memory_format=None):
        raise AssertionError("Torch not compiled with MTIA enabled: toolkit has no mtia device (its devices are cpu "
                             "and cuda)")

    def ipu(self, device=None, non_blocking: bool = False, memory_format=None):
        raise RuntimeError("PyTorch is not linked with support for ipu devices: toolkit has no ipu device (its "
                           "devices are cpu and cuda)")

    def where(self, condition, other):
        """``self.where(condition, other)`` is ``where(condition, self, other)``."""
        return api.where(condition, self, other)

    def polygamma(self, n: int):
        """``self.polygamma(n)`` is ``polygamma(n, self)`` (the op's schema puts ``n`` first)."""
        return api.polygamma(n, self)

    __dlpack__ = _dlpack_export.dlpack
    __dlpack_device__ = _dlpack_export.dlpack_device


# ---------------------------------------------------------------------------------------------
# Storage, memory and element-wise Python callables
# ---------------------------------------------------------------------------------------------
_warned_typed_storage = False


def _warn_typed_storage() -> None:
    global _warned_typed_storage
    if not _warned_typed_storage:  # PyTorch warns the first time only
        _warned_typed_storage = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
            "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
            "directly, use tensor.untyped_storage() instead of tensor.storage()", UserWarning, stacklevel=3)


def _sizes(args, what: str) -> tuple:
    """``resize_(2, 3)``, ``resize_((2, 3))`` and ``resize_(Size)`` all name the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    sizes = tuple(_operator.index(n) for n in args)
    for n in sizes:
        if n < 0:
            raise RuntimeError(f"{what}: Trying to create tensor with negative dimension {n}: {list(sizes)}")
    return sizes


def _python_value(dtype: _dt.dtype):
    """How a callable's result becomes an element of ``dtype`` (``apply_``, ``map_``): as PyTorch converts it."""
    def convert(v):
        if not isinstance(v, (int, float, np.number, np.bool_)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
        return bool(v) if dtype is _dt.bool else (float(v) if dtype.is_floating_point else int(v))

    return convert


class TensorMemory(TensorBase):
    """Storage and memory: ``storage()``, ``set_``, ``resize_``, pinning, ``dim_order``, ``apply_``/``map_``."""

    __slots__ = ()

    # ------------------------------------------------------------------ storages
    def storage(self) -> TypedStorage:
        """The legacy typed storage (deprecated in PyTorch: prefer ``untyped_storage()``); shares memory."""
        _warn_typed_storage()
        return TypedStorage(self._storage, self.dtype)

    def storage_type(self) -> type:
        """The legacy storage class of this tensor's dtype (``FloatStorage`` for float32)."""
        _warn_typed_storage()
        return legacy_storage_class(self.dtype)

    def is_shared(self) -> bool:
        """Whether the storage is in shared memory (a memory map); CUDA memory always is, as in PyTorch."""
        return self.device.type == "cuda" or self._storage.is_shared()

    def share_memory_(self) -> TensorMemory:
        """Moves the storage into shared memory (no-op if already shared, or on CUDA); returns self.

        The buffer is replaced in place, so every view of the storage sees the shared memory, and a tensor
        sent to another process through ``toolkit.multiprocessing`` is then the same memory there.
        """
        if self.device.type == "cpu":
            self._storage.share_memory_()
        return self

    def const_data_ptr(self) -> int:
        return self.data_ptr()

    def is_set_to(self, tensor) -> bool:
        """Whether both tensors view the same storage with the same offset, sizes and strides."""
        if not isinstance(tensor, TensorBase):
            raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
        same_storage = self._storage is tensor._storage or self._storage.base is tensor._storage.base
        return (same_storage and self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
                and self.stride() == tensor.stride())

    def _check_settable(self, op: str) -> None:
        if self._requires_grad and LOCAL.grad_enabled:
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            raise RuntimeError(f"{op}: toolkit cannot record {op} on a tensor with autograd history; detach() it first")

    def _rebind(self, data: np.ndarray, storage: Storage) -> None:
        self._data = data
        self._storage = storage
        self._base = None
        self._view_chain = None

    def set_(self, source=None, storage_offset: int | None = None, size=None, stride=None):
        """Make this tensor view ``source`` (a tensor, or a storage with ``storage_offset``, ``size``, ``stride``);
        with no source, an empty tensor with a new storage."""
        self._check_settable("set_")
        dtype = self.dtype
        if source is None:
            empty = np.empty((0,), dtype.np)
            self._rebind(empty, Storage(empty, self.device))
            return self
        if isinstance(source, TensorBase):
            if source.dtype is not dtype:
                raise RuntimeError(f"Could not set tensor of type {source.dtype.name} to a tensor of type {dtype.name}")
            storage = source._storage
            if storage_offset is None:
                self._rebind(source._data, storage)
                return self
        elif isinstance(source, TypedStorage):
            if source.dtype is not dtype:
                raise RuntimeError(f"Expected a Storage of type {dtype.name} or an UntypedStorage, but got type "
                                   f"{source.dtype.name} for argument 1 'storage'")
            storage = source.untyped()
        elif isinstance(source, Storage):
            storage = source
        else:
            raise TypeError(f"set_(): source must be a Tensor or a Storage, not {type(source).__name__}")
        flat = storage.typed(dtype)
        if storage_offset is None:
            self._rebind(flat, storage)
            return self
        shape = _sizes((size,), "set_") if size is not None else (flat.size - storage_offset,)
        if stride is None or len(stride) == 0:
            stride = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        if len(stride) != len(shape):
            raise RuntimeError(f"set_: mismatch in length of strides and shape: {len(stride)} strides for shape "
                               f"{list(shape)}")
        offset = _operator.index(storage_offset)
        needed = offset + (1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0)
        if offset < 0 or needed > flat.size:
            raise RuntimeError(
                f"set_: a view of size {list(shape)}, stride {list(stride)} and storage offset {offset} needs "
                f"{needed} elements, but the storage holds {flat.size} of {dtype}")
        data = np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * dtype.itemsize for s in stride])
        self._rebind(data, storage)
        return self

    def resize_(self, *sizes, memory_format=None):
        """Give this tensor the shape ``sizes``, keeping its elements in the flattened order from its storage
        offset: elements beyond the storage start as zeros in a new, larger storage. Contiguous unless the
        shape is unchanged, as in PyTorch."""
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        shape = _sizes(sizes, "resize_")
        if shape == tuple(self.shape):
            return self
        if self._extra and "names" in self._extra:  # PyTorch resizes named tensors only to their own shape
            raise RuntimeError(f"Cannot resize named tensor with resize_ or resize_as_ (tried to resize Tensor"
                               f"{repr_names(self.names)} with size {list(self.shape)} to {list(shape)}). This may "
                               "be caused by passing a named tensor as an `out=` argument; please ensure that the "
                               "sizes are the same.")
        if self.device.type != "cpu":
            raise RuntimeError(f"resize_: toolkit resizes CPU tensors only, not tensors on {self.device}")
        dtype, offset = self.dtype, self.storage_offset()
        n = int(np.prod(shape, dtype=np.int64))
        flat = self._storage.typed(dtype)
        storage = self._storage
        if offset + n > flat.size:
            grown = np.zeros(offset + n, dtype.np)
            grown[:flat.size] = flat
            flat, storage = grown, Storage(grown, self.device)
        self._data = flat[offset:offset + n].reshape(shape)
        self._storage = storage
        return self

    def resize_as_(self, the_template, memory_format=None):
        """``resize_`` to the shape of ``the_template``."""
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        return self.resize_(tuple(the_template.shape))

    def resize(self, *sizes):
        """Deprecated out-of-place ``resize``: a reshaped copy with the same number of elements (differentiable)."""
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        shape = _sizes(sizes, "resize")
        n = int(np.prod(shape, dtype=np.int64))
        if n != self.numel():
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but the given tensor has a "
                f"size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). autograd's resize can only "
                "change the shape of a given tensor, while preserving the number of elements. ")
        return api.clone(self, memory_format="contiguous_format").view(shape)

    def resize_as(self, tensor):
        """Deprecated out-of-place ``resize_as``: ``resize`` to ``tensor``'s shape."""
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.resize(tuple(tensor.shape))

    # ------------------------------------------------------------------ pinned memory, streams
    def is_pinned(self, device=None) -> bool:
        """Whether the tensor is in page-locked host memory (only ``pin_memory`` makes such tensors)."""
        return self.device.type == "cpu" and self._storage.is_pinned()

    def pin_memory(self, device=None):
        """A copy in page-locked host memory, for faster copies to a GPU; needs a GPU, as in PyTorch."""
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        if not _cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if self.is_pinned():
            return self
        from numba import cuda  # optional: numba's CUDA runtime, loaded only with a GPU

        pinned = cuda.pinned_array(tuple(self.shape), self.dtype.np)
        pinned[...] = self._data
        return _runtime.wrap(pinned)

    def record_stream(self, stream) -> None:
        """Mark this CUDA tensor's memory as used by ``stream``: toolkit frees device memory only when no tensor
        references it, so there is nothing to record; CPU tensors have no streams (an error, as in PyTorch)."""
        if stream is None:
            raise RuntimeError("record_stream(): unknown parameter type NoneType; expected a Stream")
        if self.device.type != "cuda":
            raise NotImplementedError(
                f"Could not run 'aten::record_stream' with arguments from the '{self.device.type.upper()}' backend: "
                "streams belong to CUDA tensors")

    # ------------------------------------------------------------------ layout
    def dim_order(self, *, ambiguity_check=False) -> tuple:
        """The dims from outermost to innermost in memory (``(0, 2, 1)`` for a transposed last pair)."""
        if not isinstance(ambiguity_check, (bool, list)):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
        shape, strides = tuple(self.shape), self.stride()
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        check = ambiguity_check if isinstance(ambiguity_check, bool) else True
        several = any(a == b for a, b in zip(strides, strides[1:])) or any(n == 1 for n in shape)
        if check and several and sum(bool(self.is_contiguous(memory_format=f)) for f in formats) != 1:
            raise RuntimeError(
                "The tensor does not have unique dim order, or cannot map to exact one of the given memory formats.")
        perm, ambiguous = dim_order(shape, strides, self.is_contiguous())
        if ambiguity_check and ambiguous:
            raise RuntimeError("The tensor does not have unique dim order.")
        return tuple(perm)

    # ------------------------------------------------------------------ Python callables per element
    def _check_callable_target(self, op: str) -> None:
        if self.device.type != "cpu":
            raise TypeError(f"{op} is only implemented on CPU tensors")
        if self._requires_grad:
            raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")

    def _operand(self, other, op: str, name: str) -> np.ndarray:
        if not isinstance(other, TensorBase):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(other).__name__}")
        if other.dtype is not self.dtype:
            raise TypeError(f"{op}: expected {self.type()} for '{name}' (got {other.type()})")
        return other.expand(tuple(self.shape))._data

    def _map_elements(self, fn, operands: list) -> TensorBase:
        convert = _python_value(self.dtype)
        it = np.nditer([self._data, *operands], flags=["refs_ok", "zerosize_ok"],
                       op_flags=[["readwrite"]] + [["readonly"]] * len(operands))
        with it:
            for elems in it:
                if not operands:  # one operand: nditer yields the element itself
                    elems = (elems,)
                elems[0][...] = convert(fn(*(e.item() for e in elems)))
        self._storage.version += 1
        return self

    def apply_(self, callable):
        """Replace each element ``x`` with ``callable(x)`` (a Python function: slow; CPU only)."""
        self._check_callable_target("apply_")
        return self._map_elements(callable, [])

    def map_(self, tensor, callable):
        """Replace each element ``x`` with ``callable(x, y)``, ``y`` from ``tensor`` broadcast to this shape."""
        self._check_callable_target("map_")
        return self._map_elements(callable, [self._operand(tensor, "map_", "other")])

    def map2_(self, x, y, callable):
        """Replace each element ``a`` with ``callable(a, b, c)``, ``b`` and ``c`` from ``x`` and ``y``."""
        self._check_callable_target("map2_")
        return self._map_elements(callable, [self._operand(x, "map2_", "x"), self._operand(y, "map2_", "y")])

    def module_load(self, other, assign: bool = False):
        """How ``load_state_dict`` turns the state dict's ``other`` into this parameter's new value."""
        return other.detach() if assign else self.copy_(other).detach()
