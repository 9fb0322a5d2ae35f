"""``toolkit.types``: the type aliases of ``torch.types``, for annotations in code written for PyTorch.

toolkit's sizes are plain Python numbers (there are no symbolic ``SymInt``s), so the ``*LikeType`` aliases are the
plain types and ``py_sym_types`` is empty::

    from toolkit.types import Device, Number
    def to(x, device: Device = None, scale: Number = 1): ...
"""

from __future__ import annotations

import os
from builtins import bool as _bool  # noqa: F401  (the builtins under names toolkit's dtypes cannot shadow)
from builtins import bytes as _bytes  # noqa: F401
from builtins import complex as _complex  # noqa: F401
from builtins import float as _float  # noqa: F401
from builtins import int as _int  # noqa: F401
from builtins import str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, Any, TypeAlias

from ._core.device import device as _device
from ._core.dtypes import dtype as _dtype
from ._core.layout_kinds import layout as _layout  # noqa: F401
from ._core.shape import Size
from .tensor import Tensor

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]
_dispatchkey: TypeAlias = str

IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
py_sym_types: tuple = ()  # no symbolic numbers: isinstance(x, py_sym_types) is always False
PySymType: TypeAlias = Any

Number: TypeAlias = int | float | bool
_Number = (int, float, bool)  # for isinstance(x, _Number)

FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]

# A device-like value: a device, its string ("cuda:1"), an index, or None for the default device.
Device: TypeAlias = _device | str | int | None


class Storage:
    """What a storage offers (``torch.types.Storage``): for annotations, not a base class of toolkit's storages."""

    device: _device
    dtype: _dtype

    def element_size(self) -> int:
        raise NotImplementedError

    def is_shared(self) -> bool:
        raise NotImplementedError

    def share_memory_(self) -> Storage:
        raise NotImplementedError

    def nbytes(self) -> int:
        raise NotImplementedError

    def cpu(self) -> Storage:
        raise NotImplementedError

    def data_ptr(self) -> int:
        raise NotImplementedError
