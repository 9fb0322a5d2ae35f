"""Shape arithmetic: broadcasting, dim wrapping and reshape inference, with PyTorch's errors."""

from __future__ import annotations

import math
import operator
from functools import lru_cache


class Size(tuple):
    """PyTorch's ``torch.Size``: a tuple of ints that prints as ``toolkit.Size([2, 3])``."""

    __slots__ = ()

    def __new__(cls, seq=()):
        return super().__new__(cls, (int(s) for s in seq))

    def __repr__(self) -> str:
        return f"toolkit.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = super().__getitem__(item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def fmt_shape(shape) -> str:
    """Shapes in error messages print as tuples, ``(3, 4)`` and ``(5,)``."""
    return str(tuple(shape))


@lru_cache(maxsize=4096)
def broadcast_shapes_or_none(a: tuple, b: tuple):
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        x = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        y = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def broadcast_shapes(*shapes, op: str = "broadcast_shapes") -> tuple:
    """Broadcast shapes as PyTorch does; the error names the op and both shapes."""
    result: tuple = ()
    for s in shapes:
        s = tuple(s)
        r = broadcast_shapes_or_none(result, s)
        if r is None:
            raise RuntimeError(f"{op}: shapes {' and '.join(fmt_shape(x) for x in shapes)} cannot be broadcast")
        result = r
    return result


def broadcast_shapes_of_sizes(*shapes) -> Size:
    """``toolkit.broadcast_shapes``: the shape ``broadcast_tensors`` gives tensors of these shapes, without making
    any (an int is a 1-D shape), with PyTorch's message naming the first shape that does not fit."""
    given = [tuple(s) if hasattr(s, "__iter__") else (operator.index(s),) for s in shapes]
    result = [1] * max([0] + [len(s) for s in given])
    for i, s in enumerate(given):
        for k in range(1, len(s) + 1):
            x, r = s[-k], result[-k]
            if x == r or x == 1:
                continue
            if r != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {x} at {-k}! Mismatching argument "
                                   f"at index {i} had {s}; but expected shape should be broadcastable to {result}")
            result[-k] = x
    return Size(result)


def contiguous_strides(shape: tuple, itemsize: int = 1) -> tuple:
    """C-contiguous strides of ``shape`` (in bytes when ``itemsize`` is one element's, else in elements)."""
    out = []
    acc = itemsize
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def wrap_dim(dim: int, ndim: int, op: str = "") -> int:
    """Turn a possibly negative dim into an index, raising PyTorch's IndexError when out of range."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    if dim < lo or dim > hi:
        prefix = f"{op}: " if op else ""
        raise IndexError(f"{prefix}Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim else 0


def wrap_dims(dims, ndim: int, op: str = "") -> tuple:
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(wrap_dim(d, ndim, op) for d in dims)
    if len(set(out)) != len(out):
        dup = next(d for i, d in enumerate(out) if d in out[:i])
        prefix = f"{op}: " if op else ""
        raise RuntimeError(f"{prefix}dim {dup} appears multiple times in the list of dims")
    return out


def infer_size(shape, numel: int, op: str = "view") -> tuple:
    """Resolve a single -1 in a requested shape, with PyTorch's error for impossible shapes."""
    shape = tuple(map(int, shape))
    if -1 not in shape and (not shape or min(shape) >= 0) and math.prod(shape) == numel:
        return shape  # nothing to infer or refuse (most calls)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"{op}: invalid shape dimension {s}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: neg[0]] + (numel // known,) + shape[neg[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def as_shape(args) -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(Size)`` as PyTorch does."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    out = []
    for a in args:
        try:
            out.append(a.__index__())
        except AttributeError:
            raise TypeError(f"expected a sequence of integers, got element of type {type(a).__name__}") from None
    return tuple(out)
