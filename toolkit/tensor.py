"""The Tensor: an array, the storage it shares with its views, and autograd metadata.

Tensors are thin on purpose: data lives in a numpy array (a strided view of
the storage's buffer), and every operation is an op from the registry, made a
method or operator when the class is created (``registry_methods``, which
reaches the dispatcher above through ``toolkit.ops.runtime``). The class is
slotted so that creating one on the hot path costs a few attribute stores.
"""

from __future__ import annotations

import numpy as np

from . import ops as _ops  # noqa: F401  (every op family registers before the class below is made)
from ._core import dtypes as _dt
from ._core import layout_kinds as _layout_kinds
from ._core.device import CPU, as_device
from ._core.from_data import to_array
from ._core.memory_format import is_contiguous_as
from ._core.names import dim_of
from ._core.shape import Size, wrap_dim
from ._core.state import STATE
from ._core.storage import Storage
from ._tensor_legacy import TensorLegacy
from ._tensor_methods import TensorConversions, TensorMemory
from ._tensor_names import TensorNames
from .indexing import TensorIndexing
from .ops.runtime import registry_methods
from .printing import tensor_repr

_from_np = _dt.FROM_NUMPY
# Called as hook(tensor, "number" | "bool") when a tensor becomes a Python value (the tracer warns).
CONVERSION_HOOKS: list = []


def _dim_index(dim) -> int:
    """``size``'s ``dim`` given as something other than an int: a 0-dim integer tensor or a numpy integer counts
    (PyTorch reads them through ``__index__``); a bool, a float or any other tensor is PyTorch's TypeError."""
    if isinstance(dim, Tensor):
        if dim._data.ndim == 0 and dim._data.dtype.kind in "iu":
            return int(dim._data)
    elif isinstance(dim, np.integer):
        return int(dim)
    kind = "Tensor" if isinstance(dim, Tensor) else f"{type(dim).__module__}.{type(dim).__name__}".removeprefix(
        "builtins.")
    raise TypeError(f"size(): argument 'dim' (position 1) must be int, not {kind}")


@registry_methods
class Tensor(TensorConversions, TensorMemory, TensorIndexing, TensorLegacy, TensorNames):
    """A multi-dimensional array with autograd, shaped like ``torch.Tensor``."""

    __slots__ = (
        "_data",
        "_storage",
        "_requires_grad",
        "grad_fn",
        "_grad",
        "_base",
        "_view_chain",
        "_output_nr",
        "_extra",
        "__weakref__",
    )
    __array_priority__ = 1000  # numpy defers to our reflected operators

    def __init__(self, data=None, *args, **kwargs):
        """``Tensor(2, 3)`` allocates; ``Tensor([1, 2])`` copies data as the default dtype (the legacy constructor)."""
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
        if data is None:
            arr = np.empty((0,), dtype=_dt.get_default_dtype().np)
        elif isinstance(data, int) and not isinstance(data, bool):
            arr = np.zeros(tuple(int(s) for s in (data, *args)), dtype=_dt.get_default_dtype().np)
        else:
            arr = to_array(data, _dt.get_default_dtype())
        t = wrap(np.ascontiguousarray(arr), None, as_device(device))
        for slot in Tensor.__slots__:
            if slot != "__weakref__":
                setattr(self, slot, getattr(t, slot))

    # ----------------------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        if type(dim) is not int:
            named = isinstance(dim, str) and self._extra and self._extra.get("names")
            dim = dim_of(named, self.ndim, dim) if named else _dim_index(dim)
        return self._data.shape[wrap_dim(dim, self._data.ndim, "size")]

    @property
    def dtype(self) -> _dt.dtype:
        return _from_np[self._data.dtype]

    @property
    def device(self):
        return self._storage.device

    @property
    def is_cuda(self) -> bool:
        return self._storage.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._storage.device.type == "cpu"

    # Backends toolkit has none of (and tensor kinds it has no form of): never true.
    is_ipu = is_maia = is_meta = is_mps = is_mtia = is_nested = is_quantized = is_vulkan = is_xla = is_xpu = property(
        lambda self: False, doc="Always False: toolkit's tensors live on the CPU or a CUDA device.")
    is_sparse = is_sparse_csr = False  # a strided tensor (toolkit.sparse's SparseTensor says True)
    _sparse_key = None  # the dispatch key of a sparse layout ("sparse_cpu"...): None for a strided tensor

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.size * self._data.itemsize

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def stride(self, dim: int | None = None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        if dim is None:
            return st
        return st[wrap_dim(dim, self._data.ndim, "stride")]

    def storage_offset(self) -> int:
        base = self._storage.base
        if not isinstance(base, np.ndarray) or self._data.size == 0:
            return 0
        start = base.__array_interface__["data"][0]
        return (self._data.__array_interface__["data"][0] - start) // self._data.itemsize

    def data_ptr(self) -> int:
        a = self._data
        if getattr(a, "_is_device_array", False):  # a CUDA tensor: the device pointer
            return a.device_ptr()
        return a.__array_interface__["data"][0]

    @property
    def __cuda_array_interface__(self) -> dict:
        """Zero-copy export of a CUDA tensor's memory (CuPy, numba, PyTorch), as PyTorch's tensors give it;
        a CPU tensor has none (AttributeError, so ``hasattr`` says False)."""
        a = self._data
        if not getattr(a, "_is_device_array", False):
            raise AttributeError(
                f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} If CUDA data is "
                "required use tensor.cuda() to copy tensor to device memory.")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                               "aren't required, use var.detach() to get Variable that doesn't require gradient.")
        return a.__cuda_array_interface__

    def untyped_storage(self) -> Storage:
        return self._storage

    def is_contiguous(self, memory_format=None) -> bool:
        a = self._data
        if memory_format is not None and memory_format != "contiguous_format":
            return is_contiguous_as(a.shape, self.stride(), memory_format)
        if a.size == 0:
            return True  # as in PyTorch; numpy gives empty arrays arbitrary strides
        if type(a) is np.ndarray and a.flags.c_contiguous:
            return True  # numpy's flag passes over the strides of size-1 dims, as PyTorch's check does
        expected = a.itemsize
        for size, stride in zip(reversed(a.shape), reversed(a.strides)):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_neg(self) -> bool:
        return False  # toolkit has no lazy negation bit: a negated tensor is computed

    def is_conj(self) -> bool:
        """Whether the conjugation bit is set (``conj()`` of a complex tensor; ``resolve_conj()`` clears it)."""
        return self._extra is not None and self._extra.get("conj", False)

    def is_distributed(self) -> bool:
        return False

    def is_same_size(self, other) -> bool:
        if not isinstance(other, Tensor):
            raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return self._data.shape == other._data.shape

    def is_nonzero(self) -> bool:
        """The truth of a one-element tensor (``bool(t)`` without the tracer's warning)."""
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if self._data.size == 0 else 'more than one value'} is "
                "ambiguous")
        return bool(self._data.reshape(()))

    @property
    def layout(self) -> _layout_kinds.layout:
        return _layout_kinds.strided

    @property
    def _version(self) -> int:
        return self._storage.version

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients, got {self.dtype}"
            )
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: {tuple(value.shape)} vs {tuple(self.shape)}")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: {value.dtype} vs {self.dtype}")
        self._grad = value

    @property
    def data(self) -> Tensor:
        """The same data, detached from autograd (shares storage)."""
        t = wrap(self._data, self._storage)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        self._storage = value._storage

    @property
    def retains_grad(self) -> bool:
        return bool(self._extra and self._extra.get("retains_grad"))

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def name(self):
        return self._extra.get("name") if self._extra else None

    def _extras(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra

    # ------------------------------------------------------------------------ conversions
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a numpy array sharing memory (no copy), as ``torch.Tensor.numpy``."""
        if self._storage.device.type != "cpu":
            raise TypeError(
                f"can't convert {self._storage.device.type}:{self._storage.device.index or 0} device type tensor to "
                "numpy. Use Tensor.cpu() to copy the tensor to host memory first."
            )
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.is_conj():
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj()."
                               "numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self._values()
        if type(a) is not np.ndarray:
            a = a.__array__()  # a device array refuses: no implicit copies to the host
        return a if dtype is None else a.astype(dtype)

    def item(self):
        if CONVERSION_HOOKS:
            for h in CONVERSION_HOOKS:
                h(self, "number")
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._values().reshape(()).item()

    def tolist(self):
        return self._values().tolist()

    def _values(self) -> np.ndarray:
        """The values as an array: the data itself, or its conjugate for a lazily conjugated tensor."""
        return np.conjugate(self._data) if self.is_conj() else self._data

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if CONVERSION_HOOKS:
            for h in CONVERSION_HOOKS:
                h(self, "bool")
        return self.is_nonzero()

    __nonzero__ = __bool__  # Python 2's name, which PyTorch keeps

    def __contains__(self, element) -> bool:
        """``element in t``: whether any element equals ``element`` (a number or a broadcastable tensor)."""
        if isinstance(element, (Tensor, int, float, bool, complex, np.number, np.bool_)):
            return bool((element == self).any().item())
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    def __reversed__(self) -> Tensor:
        """The tensor flipped along dim 0 (a 0-d tensor is its own reverse)."""
        return self if self._data.ndim == 0 else self.flip(0)

    def __float__(self) -> float:
        return float(_dt.real_scalar(self.item(), np.dtype(np.float64)))

    def __int__(self) -> int:
        return int(_dt.real_scalar(self.item(), np.dtype(np.int64)))

    __long__ = __int__  # Python 2's name, which PyTorch keeps

    def __index__(self) -> int:
        if self._data.size != 1 or self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    __hash__ = object.__hash__

    def __repr__(self, *, tensor_contents=None) -> str:
        return tensor_repr(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Jupyter's rich display, drawn by toolkit.notebook (imported only when a notebook asks)."""
        from .notebook.reprs import mimebundle  # optional: notebook views, loaded on demand

        return mimebundle(self, include, exclude)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        # Pickling (DataLoader workers, multiprocessing) keeps data, dtype and requires_grad.
        return (_rebuild, (np.ascontiguousarray(self._data), self._requires_grad, str(self._storage.device)))

    def __setstate__(self, state) -> None:
        """Restore a leaf from PyTorch's legacy pickled states: ``(storage, offset, size, stride)`` of a tensor,
        ``(data, requires_grad, _, _, _)``-shaped ones of a Variable, or ``(requires_grad, _, hooks)``."""
        if not self.is_leaf:
            raise RuntimeError("__setstate__ can be only called on leaf Tensors")
        if len(state) == 4:
            self.set_(*state)
            return
        if len(state) == 5:
            self.data = state[0]
            state = (state[3], state[4], state[2])
        self.requires_grad = state[0]

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """numpy hands back a ufunc's result on a tensor through this: a tensor sharing its memory (bools as
        uint8, as PyTorch converts them)."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return wrap(array)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment."
            )
        t = wrap(self._data.copy(), None, self._storage.device)
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    # ------------------------------------------------------------------------ autograd API
    # toolkit.autograd sits above the Tensor: it plugs these in when imported (STATE.autograd).
    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
        """Accumulate the gradient of this tensor into the leaves' ``.grad`` (``toolkit.autograd.backward``)."""
        STATE.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a replacement."""
        return STATE.autograd.register_hook(self, hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        STATE.autograd.retain_grad(self)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after this leaf's ``.grad`` has been accumulated."""
        return STATE.autograd.register_post_accumulate_grad_hook(self, hook)

    def detach(self) -> Tensor:
        """A new tensor sharing storage and version counter, cut from the graph (not a view for autograd)."""
        t = wrap(self._data, self._storage)
        if self._extra:
            if self.is_conj():
                t._extras()["conj"] = True
            if "names" in self._extra:
                t._extras()["names"] = self._extra["names"]
        return t

    def detach_(self) -> Tensor:
        if self._view_chain is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self.grad_fn = None
        self._requires_grad = False
        return self


def _rebuild(data, requires_grad, device):
    t = wrap(np.array(data), None, as_device(device))
    t._requires_grad = requires_grad
    return t


_new = object.__new__


def wrap(arr: np.ndarray, storage: Storage | None = None, device=CPU) -> Tensor:
    """A new Tensor over ``arr`` itself, without copying it or going through the dispatcher.

    With ``storage`` the tensor is a view sharing that storage (and its version
    counter); without, it gets the storage of ``arr``'s base array, or a new one
    over ``arr``, on ``device``. The tensor starts with no autograd history.
    This is how kernels' results, saved values and loaded data become tensors.
    """
    t = _new(Tensor)
    t._data = arr
    if storage is None:
        base = arr.base
        storage = Storage(base if base is not None and (isinstance(base, np.ndarray) or getattr(
            base, "_is_device_array", False)) else arr, device)
    t._storage = storage
    t._requires_grad = False
    t.grad_fn = None
    t._grad = None
    t._base = None
    t._view_chain = None
    t._output_nr = 0
    t._extra = None
    return t


