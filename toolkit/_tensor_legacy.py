"""The Tensor's legacy and subclassing methods: ``new``, ``as_subclass``, and the removed ``eig``/``lstsq``/
``solve``/``symeig``, which raise PyTorch's messages naming their ``linalg`` replacements.

``x.new(2, 3)`` (uninitialized, ``x``'s dtype and device), ``x.new(data)`` and ``x.new(other)`` are how
pre-1.0 code made "a tensor like x"; ``new_empty``/``new_tensor`` are the modern names::

    h = x.new(batch, hidden).zero_()
"""

from __future__ import annotations

import numpy as np

from ._core import dtypes as _dt
from ._core.device import as_device
from ._core.shape import Size
from ._core.storage import Storage, TypedStorage
from ._core.tensor_base import TensorBase

# PyTorch's C++ names of the dtypes, as its TensorOptions mismatch message prints them.

_NEW_SIGNATURES = ("\n * (*, toolkit.device device = None)\n * (toolkit.Storage storage)\n * (Tensor other)\n"
                   " * (tuple of ints size, *, toolkit.device device = None)\n"
                   " * (object data, *, toolkit.device device = None)\n")


def _options(dtype: _dt.dtype, device: str) -> str:
    return (f"TensorOptions(dtype={_dt.cpp_name(dtype)}, device={device}, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _label(value) -> str:
    return "Tensor" if isinstance(value, TensorBase) else type(value).__name__


class TensorLegacy(TensorBase):
    """``new`` and ``as_subclass``; mixed into ``Tensor``."""

    __slots__ = ()

    def new(self, *args, **kwargs):
        """A tensor of ``self``'s dtype and device: ``new(*sizes)`` uninitialized, ``new(data)`` copied,
        ``new(other)`` sharing ``other``'s memory, ``new(storage)`` over a storage, ``new()`` empty."""
        if kwargs.keys() - {"device"}:
            got = ", ".join([_label(a) for a in args] + [f"{k}={_label(v)}" for k, v in kwargs.items()])
            raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:"
                            f"{_NEW_SIGNATURES}")
        device = self.device
        if kwargs.get("device") is not None:
            asked = as_device(kwargs["device"])
            if asked.type != device.type:
                raise RuntimeError(f"legacy constructor expects device type: {device.type} but device type: "
                                   f"{asked.type} was passed")
            device = asked
        if not args:
            return self.new_empty((0,), device=device)
        first = args[0]
        if len(args) == 1 and isinstance(first, TensorBase):
            if first.dtype is not self.dtype or first.device != self.device:
                raise TypeError(f"expected {_options(self.dtype, self.device.type)} (got "
                                f"{_options(first.dtype, first.device.type)})")
            return first.view_as(first)
        if len(args) == 1 and isinstance(first, (Storage, TypedStorage)):
            return self.new_empty((0,)).set_(first)
        if isinstance(first, TensorBase):
            got = ", ".join(_label(a) for a in args)
            raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:"
                            f"{_NEW_SIGNATURES}")
        if isinstance(first, Size) or (isinstance(first, int) and not isinstance(first, bool)):
            sizes = tuple(first) if isinstance(first, Size) else args
            for pos, s in enumerate(sizes, 1):
                if not isinstance(s, int) or isinstance(s, bool):
                    raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                                    f"\"type must be tuple of ints,but got {type(s).__name__}\"")
            if any(s < 0 for s in sizes):
                negative = next(s for s in sizes if s < 0)
                raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: {list(sizes)}")
            return self.new_empty(sizes, device=device)
        if len(args) == 1 and isinstance(first, (list, tuple, np.ndarray)):
            return self.new_tensor(first, device=device)
        raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")

    def as_subclass(self, cls: type):
        """``self`` as an instance of the Tensor subclass ``cls``, sharing its data (and, if it requires grad,
        joined to its graph by an alias)."""
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not issubclass(cls, TensorBase):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        source = self.view_as(self) if self.requires_grad else self
        result = object.__new__(cls)
        for slot in dict.fromkeys(s for k in type(self).__mro__ for s in getattr(k, "__slots__", ())):
            if slot != "__weakref__":
                setattr(result, slot, getattr(source, slot))
        return result

    def eig(self, eigenvectors: bool = False):
        raise RuntimeError(
            "This function was deprecated since version 1.9 and is now removed. `toolkit.linalg.eig` returns complex "
            "tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\n"
            "L, _ = toolkit.eig(A) should be replaced with:\nL_complex = toolkit.linalg.eigvals(A)\n\nand\n\n"
            "L, V = toolkit.eig(A, eigenvectors=True) should be replaced with:\n"
            "L_complex, V_complex = toolkit.linalg.eig(A)")

    def lstsq(self, other):
        raise RuntimeError(
            "This function was deprecated since version 1.9 and is now removed. `toolkit.lstsq` is deprecated in "
            "favor of `toolkit.linalg.lstsq`.\n`toolkit.linalg.lstsq` has reversed arguments and does not return the "
            "QR decomposition in the returned tuple (although it returns other information about the problem).\n\n"
            "To get the QR decomposition consider using `toolkit.linalg.qr`.\n\nThe returned solution in "
            "`toolkit.lstsq` stored the residuals of the solution in the last m - n columns of the returned value "
            "whenever m > n. In toolkit.linalg.lstsq, the residuals are in the field 'residuals' of the returned "
            "named tuple.\n\nThe unpacking of the solution, as in\nX, _ = toolkit.lstsq(B, A).solution[:A.size(1)]\n"
            "should be replaced with:\nX = toolkit.linalg.lstsq(A, B).solution")

    def solve(self, other):
        raise RuntimeError(
            "This function was deprecated since version 1.9 and is now removed. `toolkit.solve` is deprecated in "
            "favor of `toolkit.linalg.solve`. `toolkit.linalg.solve` has its arguments reversed and does not return "
            "the LU factorization.\n\nTo get the LU factorization see `toolkit.lu`, which can be used with "
            "`toolkit.lu_solve` or `toolkit.lu_unpack`.\nX = toolkit.solve(B, A).solution should be replaced "
            "with:\nX = toolkit.linalg.solve(A, B)")

    def symeig(self, eigenvectors: bool = False):
        raise RuntimeError(
            "This function was deprecated since version 1.9 and is now removed. The default behavior has changed "
            "from using the upper triangular portion of the matrix by default to using the lower triangular "
            "portion.\n\nL, _ = toolkit.symeig(A, upper=upper) should be replaced with:\n"
            "L = toolkit.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
            "L, V = toolkit.symeig(A, eigenvectors=True) should be replaced with:\n"
            "L, V = toolkit.linalg.eigh(A, UPLO='U' if upper else 'L')")
