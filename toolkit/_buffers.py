"""Tensors over memory toolkit did not allocate: ``frombuffer`` (any Python buffer) and ``from_file`` (a mapped file).

Both share memory, as PyTorch's do: a write through the tensor shows in the ``bytearray`` or the file (``from_file``
with ``shared=True``), and a change to the buffer shows in the tensor::

    b = bytearray(8)
    t = toolkit.frombuffer(b, dtype=toolkit.int32)
    b[0] = 7                                    # t == tensor([7, 0])
"""

from __future__ import annotations

import errno
import os

import numpy as np

from ._core import dtypes as _dt
from ._switches import warn_once
from .tensor import Tensor, wrap

__all__ = ["from_file", "frombuffer"]


def frombuffer(buffer, *args, dtype: _dt.dtype | None = None, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over ``buffer``'s bytes from ``offset``: ``count`` elements (``-1``: all that fit), no copy."""
    if args:
        raise TypeError(f"frombuffer() takes from 2 to 1 positional arguments but {1 + len(args)} were given")
    if dtype is None:
        raise TypeError('frombuffer() missing 1 required positional arguments: "dtype"')
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.c_contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    length, size = view.nbytes, dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warn_once("The given buffer is not writable, and toolkit does not support non-writable tensors. This means "
                  "the tensor is read-only: in-place ops on it fail. You may want to copy the buffer to protect its "
                  "data or make it writable before converting it to a tensor. This type of warning will be "
                  "suppressed for the rest of this program.")
    arr = np.frombuffer(view.cast("B"), dtype=dtype.np, count=count, offset=offset)
    return wrap(arr).requires_grad_(requires_grad)


def from_file(filename, shared: bool | None = None, size: int = 0, *, dtype: _dt.dtype | None = None, layout=None,
              device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 1-D tensor of ``size`` elements mapped from ``filename``.

    With ``shared=True`` the mapping is the file itself (made, or grown, to fit): writes reach the file and other
    processes mapping it. Otherwise it is a private copy-on-write mapping of an existing file.
    """
    if not isinstance(filename, str):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not {type(filename).__name__}")
    d = dtype if dtype is not None else _dt.get_default_dtype()
    nbytes = size * d.itemsize
    if nbytes < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot allocate memory "
                           f"({errno.ENOMEM})")
    if shared:
        with open(filename, "ab") as f:  # creates the file; appending never truncates it
            if os.fstat(f.fileno()).st_size < nbytes:
                f.truncate(nbytes)
    elif not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or directory "
                           f"({errno.ENOENT})")
    else:
        actual = os.path.getsize(filename)
        if actual < nbytes:
            raise RuntimeError(f"file <{filename}> size <{actual}> is smaller than the required mapping size "
                               f"<{nbytes}>")
    if nbytes == 0:
        arr = np.empty((0,), dtype=d.np)
    else:
        arr = np.memmap(filename, dtype=d.np, mode="r+" if shared else "c", shape=(size,)).view(np.ndarray)
    t = wrap(arr)
    if device is not None:
        t = t.to(device)
    return t.requires_grad_(requires_grad)
