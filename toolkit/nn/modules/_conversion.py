"""Changing a whole Module tree in place: train/eval mode, grad flags, ``apply``, and device/dtype conversion.

``ConversionMixin`` gives ``Module`` these methods. Conversions go through ``_apply``, which swaps each
parameter's data (and its grad's) in place, so optimizers holding the parameters keep working after ``to()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ... import float16, float32, float64
from ..._core import dtypes as _dt
from ..._core.device import as_device
from ..._core.storage import move_to_shared_memory
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor

if TYPE_CHECKING:
    from .module import Module


class ConversionMixin:
    """``Module``'s tree-wide state changes: ``train``/``eval``, ``zero_grad``, ``apply``, ``to``/``float``/``cuda``..."""

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            param.data = param_applied
            if param.grad is not None:
                with no_grad():
                    grad_applied = fn(param.grad)
                g = param.grad
                g._data, g._storage = grad_applied._data, grad_applied._storage
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast parameters and buffers in place (dtype applies to floating point tensors only)."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments - got unexpected {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, _dt.dtype):
                dtype = a
            elif isinstance(a, bool):
                continue  # non_blocking
            elif a is not None:
                device = a
        if device is not None:
            device = as_device(device)
        if dtype is not None:
            dtype = _dt.as_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(
                    f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
                )

        def convert(t: Tensor) -> Tensor:
            kw = {} if device is None else {"device": device}
            if dtype is not None and t.is_floating_point():
                kw["dtype"] = dtype
            if memory_format is not None and t.dim() in (4, 5):  # as PyTorch: only 4-D and 5-D tensors
                kw["memory_format"] = memory_format
            return t.to(**kw) if kw else t

        return self._apply(convert)

    def _cast(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._cast(float32)

    def double(self) -> Module:
        return self._cast(float64)

    def half(self) -> Module:
        return self._cast(float16)

    def bfloat16(self) -> Module:
        raise TypeError(f"{type(self).__name__}.bfloat16(): toolkit has no bfloat16 dtype (its CPU tensors are numpy "
                        "arrays, and numpy has none); use half() for 16-bit floats or float()")

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self) -> Module:
        """Moves parameters, buffers and their grads into shared memory, as ``Tensor.share_memory_`` each.

        All storages move together: finding the tensors that view them is one scan however many there are.
        """
        params = list(self.parameters())
        tensors = [*params, *self.buffers(), *(p.grad for p in params if p.grad is not None)]
        move_to_shared_memory(t._storage for t in tensors if t.device.type == "cpu" and not t.is_shared())
        return self
