"""Memory layout from sizes and strides alone: channels-last contiguity and the dim order.

``Tensor.dim_order()`` answers with these; they follow PyTorch's rules
(``is_channels_last_contiguous``, ``compute_elementwise_output_logical_to_physical_perm``),
so size-1 and zero-stride dims are ordered as PyTorch orders them::

    dim_order((4, 3), (1, 4), contiguous=False)  # ([1, 0], False)
"""

from __future__ import annotations


def is_channels_last(shape: tuple, strides: tuple) -> bool:
    """PyTorch's channels-last contiguity (4-D: N, H, W, C innermost last; 5-D: N, D, H, W, C)."""
    if len(shape) not in (4, 5):
        return False
    expected = 1
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def dim_order(shape: tuple, strides: tuple, contiguous: bool) -> tuple[list, bool]:
    """PyTorch's logical-to-physical permutation of one tensor (``compute_elementwise_output_logical_to_physical_perm``)
    and whether the order is ambiguous."""
    ndim = len(shape)
    if ndim < 2:
        return list(range(ndim)), False
    channels_last = is_channels_last(shape, strides)
    if contiguous and not channels_last:
        return list(range(ndim)), False
    if channels_last and not contiguous:
        return [0, *range(2, ndim), 1], False

    def ge(a, b):
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def should_swap(a, b):
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        if ge(sb, sa):
            return -1
        return 1 if ge(sa, sb) else 0

    perm = list(reversed(range(ndim)))  # sorted back to front, then reversed
    for i in range(1, ndim):
        dim1 = i
        for dim0 in reversed(range(i)):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    ambiguous = any(should_swap(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1))
    return list(reversed(perm)), ambiguous
