"""``Parameter``: a tensor that a Module registers as learnable; ``Buffer``: one it registers as state."""

from __future__ import annotations

import copy

import numpy as np

from ..tensor import Tensor, wrap

__all__ = ["Parameter", "Buffer", "is_lazy"]


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


def is_lazy(param) -> bool:
    """Lazy (uninitialized) parameters are not supported, so nothing is lazy."""
    return False
