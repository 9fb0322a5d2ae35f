"""Memory overlap of strided arrays, as PyTorch judges it before an op writes into a tensor.

PyTorch refuses a write whose destination has several elements at one
memory location (an expanded tensor: a stride 0 over a size above 1), and one
whose input partially overlaps the destination (``x[1:].copy_(x[:-1])``):
the result would depend on the order the elements are visited in. Inputs that
are the destination itself, element for element, are fine (``x.add_(x)``),
and layouts that are not dense and non-overlapping are "too hard" to judge
and let through, as in PyTorch.

Example::

    overlap_status(x[1:], x[:-1])   # PARTIAL
    overlap_status(x, x.view(-1))    # FULL
"""

from __future__ import annotations

import numpy as np

NO, FULL, PARTIAL, TOO_HARD = "no", "full", "partial", "too_hard"

INTERNAL_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation."
)
PARTIAL_OVERLAP_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation."
)


def has_internal_overlap(a) -> bool:
    """True when some stride is 0 over a size above 1 (PyTorch's ``MemOverlap::Yes``); never without elements
    (numpy may give an empty array zero strides)."""
    if a.size == 0:
        return False
    for n, s in zip(a.shape, a.strides):
        if s == 0 and n > 1:
            return True
    return False


def address(a) -> int | None:
    """The address of ``a``'s first element (numpy or CUDA array interface), or None."""
    iface = getattr(a, "__array_interface__", None) or getattr(a, "__cuda_array_interface__", None)
    return None if iface is None else iface["data"][0]


def is_non_overlapping_and_dense(a) -> bool:
    """Some order of the dims makes ``a`` contiguous (size-1 dims aside): PyTorch's rule of the same name."""
    need = a.itemsize
    for stride, n in sorted((s, n) for n, s in zip(a.shape, a.strides) if n > 1):
        if stride != need:
            return False
        need *= n
    return True


def overlap_status(out, inp) -> str:
    """How input ``inp`` overlaps ``out`` (arrays known to share one buffer): NO, FULL, PARTIAL or TOO_HARD."""
    if out.size == 0 or inp.size == 0:
        return NO
    if not (is_non_overlapping_and_dense(out) and is_non_overlapping_and_dense(inp)):
        return TOO_HARD
    a, b = address(out), address(inp)
    if a is None or b is None:
        return TOO_HARD
    a_end, b_end = a + out.size * out.itemsize, b + inp.size * inp.itemsize
    if a == b and a_end == b_end:
        same = [s // out.itemsize for s in out.strides] == [s // inp.itemsize for s in inp.strides]
        return FULL if same else PARTIAL
    if a < b_end and b < a_end:
        return PARTIAL
    return NO


def writable_alias(a: np.ndarray, root: np.ndarray) -> np.ndarray | None:
    """A writable array over ``a``'s memory (an expanded tensor's, which numpy marks read-only), or None.

    ``root`` is the array owning the buffer (the tensor's storage); None when
    that buffer is read-only too or ``a`` does not lie inside it.
    """
    if type(a) is not np.ndarray or type(root) is not np.ndarray or not root.flags.writeable:
        return None
    try:
        offset = address(a) - address(root)
        return np.ndarray(a.shape, a.dtype, buffer=root, offset=offset, strides=a.strides)
    except (TypeError, ValueError):
        return None
