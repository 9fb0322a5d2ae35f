"""``Parameter``: a tensor that a Module registers as learnable; ``Buffer``: one it registers as state;
``UninitializedParameter``/``UninitializedBuffer``: the placeholders of lazy modules until their first call."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .._core.names import names_of, set_names
from ..ops import api as _api
from ..tensor import Tensor, wrap

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _empty() -> Tensor:
    return wrap(np.empty((0,), dtype=np.float32))


class Parameter(Tensor):
    """A Tensor subclass that ``Module.__setattr__`` registers as a parameter.

    It shares storage with the tensor it is made from (as ``data.detach()``) and
    requires grad by default, even under ``no_grad``. Ops on a Parameter return
    plain Tensors.

    Example::

        >>> p = Parameter(toolkit.zeros(3))
        >>> p.requires_grad
        True
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = _empty()
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        p = object.__new__(cls)
        p._data = data._data
        p._storage = data._storage
        p._requires_grad = False
        p.grad_fn = None
        p._grad = None
        p._base = None
        p._view_chain = None
        p._output_nr = 0
        p._extra = None
        set_names(p, names_of(data))  # PyTorch's Parameter keeps the data's names
        if requires_grad:
            if data._data.dtype.kind != "f":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            p._requires_grad = True
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__; Tensor.__init__ is the legacy constructor

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        if self.__dict__:
            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, protocol), type(self), self.requires_grad, dict(self.__dict__)))


def _rebuild_parameter(reduced, cls, requires_grad: bool, state: dict):
    fn, args = reduced
    data = fn(*args)
    data._requires_grad = False
    p = cls(data, requires_grad)
    p.__dict__.update(state)
    return p


class _BufferMeta(type):
    # ``isinstance(t, Buffer)`` is true for tensors made by ``Buffer(...)``, which are plain Tensors.
    def __instancecheck__(cls, instance) -> bool:
        if isinstance(instance, Tensor) and instance._extra is not None and instance._extra.get("_is_buffer"):
            return True
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """A tensor that ``Module.__setattr__`` registers as a buffer (``persistent`` decides state_dict membership).

    ``Buffer(t)`` returns a plain Tensor sharing ``t``'s storage, marked so that
    ``isinstance(b, Buffer)`` holds, as ``torch.nn.Buffer`` does.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        if data is None:
            data = _empty()
        t = data.detach().requires_grad_(data.requires_grad)
        extra = t._extras()
        extra["_is_buffer"] = True
        extra["persistent"] = persistent
        return t


def _placeholder_data() -> Tensor:
    return wrap(np.empty((0,), dtype=np.float32))


class UninitializedTensorMixin:
    """``materialize(shape)`` gives the placeholder storage of ``shape`` and turns it into ``cls_to_become``.

    The device and dtype asked for at construction wait in the tensor's ``_extra`` dict (no new slots, so
    the class can change in place)."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def _remember_factory(self, device, dtype) -> None:
        self._extras()["_lazy_factory"] = (device, dtype)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Allocate uninitialized storage of ``shape`` (with the device/dtype given at construction by default)."""
        saved_device, saved_dtype = self._extras().pop("_lazy_factory", (None, None))
        device = saved_device if device is None else device
        dtype = saved_dtype if dtype is None else dtype
        if isinstance(shape, int):
            shape = (shape,)
        self.data = _api.empty(tuple(shape), device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter with no data yet; ``materialize`` turns it into a Parameter."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None) -> UninitializedParameter:
        p = Parameter.__new__(cls, _placeholder_data(), requires_grad)
        p._remember_factory(device, dtype)
        return p

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            device, dtype = self._extras().get("_lazy_factory", (None, None))
            memo[id(self)] = type(self)(self.requires_grad, device, dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer with no data yet; ``materialize`` turns it into a plain Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None) -> UninitializedBuffer:
        source = _placeholder_data()
        t = object.__new__(cls)
        for slot in Tensor.__slots__:
            if slot != "__weakref__":
                setattr(t, slot, getattr(source, slot))
        t._requires_grad = requires_grad
        t._remember_factory(device, dtype)
        return t

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is a placeholder still waiting for its shape."""
    return isinstance(param, UninitializedTensorMixin)
