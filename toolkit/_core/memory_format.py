"""Memory formats (``toolkit.channels_last``...): how a 4-D or 5-D tensor's elements are ordered in memory.

``channels_last`` keeps the logical NCHW shape and values but lays memory out
as NHWC (strides ``(H*W*C, 1, W*C, C)``), as PyTorch does; ``channels_last_3d``
is the same for NCDHW. A ``memory_format`` is also the string PyTorch's schemas
spell it by (``"channels_last"``), so ops that take ``str? memory_format`` accept
either::

    x = toolkit.rand(2, 3, 4, 5).contiguous(memory_format=toolkit.channels_last)
    x.stride()  # (60, 1, 15, 3)
"""

from __future__ import annotations


class memory_format(str):
    """One of PyTorch's memory formats; compares equal to its name."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"toolkit.{str.__str__(self)}"

    __str__ = __repr__

    def __reduce__(self):
        return (as_memory_format, (str.__str__(self),))


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

FORMATS = {str.__str__(f): f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}

# The physical order of the dims (outermost first) of each format that fixes one, by rank.
_ORDERS = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def as_memory_format(value) -> memory_format | None:
    """A ``memory_format`` from itself, its name, or None (None stays None)."""
    if value is None:
        return None
    f = FORMATS.get(str.__str__(value)) if isinstance(value, str) else None
    if f is None:
        raise TypeError(f"memory_format must be a toolkit.memory_format, not {type(value).__name__} {value!r}")
    return f


def dim_order(fmt: memory_format, ndim: int, op: str = "contiguous") -> tuple:
    """The dims outermost first under ``fmt`` (``contiguous_format``: ``0..ndim-1``); checks the rank."""
    if fmt in _ORDERS:
        rank, order = _ORDERS[fmt]
        if ndim != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {str.__str__(fmt)} format")
        return order
    return tuple(range(ndim))


def strides_for(shape: tuple, fmt: memory_format) -> tuple:
    """The dense strides (in elements) of ``shape`` laid out as ``fmt``."""
    strides = [0] * len(shape)
    step = 1
    for d in reversed(dim_order(fmt, len(shape))):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def is_contiguous_as(shape: tuple, strides: tuple, fmt: memory_format | None) -> bool:
    """PyTorch's ``is_contiguous(memory_format=fmt)`` from sizes and strides in elements: size-1 dims may have
    any stride, and an empty tensor is (plain) contiguous."""
    fmt = as_memory_format(fmt) or contiguous_format
    if fmt is preserve_format:
        fmt = contiguous_format  # PyTorch answers for the plain format
    if fmt in _ORDERS and len(shape) != _ORDERS[fmt][0]:
        return False
    if fmt is contiguous_format and any(s == 0 for s in shape):
        return True
    expected = 1
    for d in reversed(dim_order(fmt, len(shape))):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggest_memory_format(shape: tuple, strides: tuple) -> memory_format:
    """The format a tensor's strides suggest (PyTorch's ``suggest_memory_format``): channels-last when its
    strides are channels-last and not also plain contiguous."""
    for fmt in (channels_last, channels_last_3d):
        if len(shape) == _ORDERS[fmt][0] and is_contiguous_as(shape, strides, fmt) \
                and not is_contiguous_as(shape, strides, contiguous_format):
            return fmt
    return contiguous_format


def laid_out(t, fmt):
    """``t`` itself when its memory is already laid out as ``fmt`` (or ``fmt`` is ``preserve_format``), else a
    copy that is: NHWC strides for ``channels_last``, with the same values. The copy is a permute, a plain
    contiguous clone and the inverse permute, so it is differentiable like any composition of ops."""
    fmt = as_memory_format(fmt) or contiguous_format
    if fmt is preserve_format:
        return t
    shape = tuple(t.shape)
    order = dim_order(fmt, len(shape))
    if is_contiguous_as(shape, tuple(t.stride()), fmt):
        return t
    inverse = tuple(sorted(range(len(order)), key=order.__getitem__))
    return t.permute(order).clone(memory_format=contiguous_format).permute(inverse)


def is_non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    """Whether the elements fill a block of memory exactly once in some dim order (strides in elements)."""
    if any(s == 0 for s in shape):
        return True
    expected = 1
    for stride, size in sorted((st, s) for s, st in zip(shape, strides) if s != 1):
        if stride != expected:
            return False
        expected *= size
    return True
