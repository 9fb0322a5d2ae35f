"""Functional pooling with PyTorch's Python signatures (``stride=None``, ``return_indices=``, ``None`` sizes).

The registry ops take ``stride=[]`` for "same as kernel_size" and always one
return; these wrappers accept PyTorch's spellings and pick the op. The
compositions PyTorch writes in Python (``lp_pool*``, ``max_unpool*``'s output
size, fractional pooling's random samples) are written here the same way.
"""

from __future__ import annotations

from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]


def _stride(stride):
    return () if stride is None else stride


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """2-d max pooling; ``return_indices=True`` also returns PyTorch's flat per-plane indices."""
    if return_indices:
        return _api.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)
    return _api.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """2-d max pooling returning (values, indices)."""
    return _api.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """1-d max pooling returning (values, indices)."""
    return _api.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-d max pooling; ``return_indices=True`` also returns the indices."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _api.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """2-d average pooling; ``stride=None`` means ``kernel_size``."""
    return _api.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad,
                           divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average pooling to ``output_size``; a ``None`` entry keeps that input dimension."""
    if isinstance(output_size, int):
        return _api.adaptive_avg_pool2d(input, [output_size, output_size])
    size: list[int] = []
    for i, s in enumerate(output_size):
        size.append(input.size(i - len(output_size)) if s is None else s)
    return _api.adaptive_avg_pool2d(input, size)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """3-d max pooling returning (values, flat indices within each (D, H, W) volume)."""
    return _api.max_pool3d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """3-d max pooling; ``return_indices=True`` also returns the flat indices."""
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _api.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """1-d average pooling; ``stride=None`` means ``kernel_size``."""
    return _api.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """3-d average pooling; ``stride=None`` means ``kernel_size``."""
    return _api.avg_pool3d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad,
                           divisor_override)


# ---------------------------------------------------------------------------------------------
# Adaptive pooling
# ---------------------------------------------------------------------------------------------
def _list_with_default(output_size, shape):
    """PyTorch's ``_list_with_default``: ``None`` entries of ``output_size`` keep the input's size there."""
    if isinstance(output_size, int):
        return output_size
    if len(shape) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    offset = len(shape) - len(output_size)
    sizes: list[int] = []
    for i, v in enumerate(output_size):
        sizes.append(shape[offset + i] if v is None else v)
    return sizes


def _sizes(output_size, n: int) -> list[int]:
    return [output_size] * n if isinstance(output_size, int) else [s for s in output_size]


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average pooling of a (N, C, L) or (C, L) input to ``output_size`` positions."""
    return _api.adaptive_avg_pool1d(input, _sizes(output_size, 1))


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average pooling to ``output_size``; a ``None`` entry keeps that input dimension."""
    return _api.adaptive_avg_pool3d(input, _sizes(_list_with_default(output_size, input.shape), 3))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """1-d adaptive max pooling returning (values, indices)."""
    return _api.adaptive_max_pool1d(input, _sizes(output_size, 1))


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """2-d adaptive max pooling returning (values, flat indices within each plane)."""
    return _api.adaptive_max_pool2d(input, _sizes(_list_with_default(output_size, input.shape), 2))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """3-d adaptive max pooling returning (values, flat indices within each volume)."""
    return _api.adaptive_max_pool3d(input, _sizes(_list_with_default(output_size, input.shape), 3))


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """1-d adaptive max pooling; ``return_indices=True`` also returns the indices."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """2-d adaptive max pooling; ``return_indices=True`` also returns the indices."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """3-d adaptive max pooling; ``return_indices=True`` also returns the indices."""
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


# ---------------------------------------------------------------------------------------------
# Power-average pooling: compositions, as PyTorch writes them
# ---------------------------------------------------------------------------------------------
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, max_pool, avg_pool):
    ks = _sizes(kernel_size, nd)
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    count = 1
    for k in ks:
        count *= k
    return (_api.sign(out) * _api.relu(_api.abs(out))).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    """1-d power-average pooling: ``(sum of x**p over each window) ** (1/p)``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, max_pool1d, avg_pool1d)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """2-d power-average pooling: ``(sum of x**p over each window) ** (1/p)``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, max_pool2d, avg_pool2d)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """3-d power-average pooling: ``(sum of x**p over each window) ** (1/p)``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, max_pool3d, avg_pool3d)


# ---------------------------------------------------------------------------------------------
# Max unpooling
# ---------------------------------------------------------------------------------------------
def _unpool_output_size(input, kernel_size, stride, padding, output_size) -> list:
    """PyTorch's default unpooled size ``(in - 1) * stride + kernel - 2 * padding``, or a checked ``output_size``."""
    nd = len(kernel_size)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        output_size = list(output_size)
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return ret


def _unpool_args(kernel_size, stride, padding, nd):
    kernel_size = _sizes(kernel_size, nd)
    return kernel_size, (kernel_size if stride is None else _sizes(stride, nd)), _sizes(padding, nd)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of ``max_pool1d``: each value back at its index, zeros elsewhere."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, k, s, p, output_size) + [1]
    return _api.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of ``max_pool2d``: each value back at its flat index, zeros elsewhere."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    return _api.max_unpool2d(input, indices, _unpool_output_size(input, k, s, p, output_size))


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of ``max_pool3d``: each value back at its flat index, zeros elsewhere."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 3)
    return _api.max_unpool3d(input, indices, _unpool_output_size(input, k, s, p, output_size), s, p)


# ---------------------------------------------------------------------------------------------
# Fractional max pooling
# ---------------------------------------------------------------------------------------------
def _fractional(input, kernel_size, output_size, output_ratio, random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:  # a bare number has no len() here, as in PyTorch
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        output_size = [int(input.shape[-nd + d] * ratio[d]) for d in range(nd)]
    if random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.shape[0]
        random_samples = _api.rand(n_batch, input.shape[-nd - 1], nd, dtype=input.dtype, device=input.device)
    fn = _api.fractional_max_pool2d if nd == 2 else _api.fractional_max_pool3d
    return fn(input, _sizes(kernel_size, nd), _sizes(output_size, nd), random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    """2-d fractional max pooling returning (values, flat indices); see ``fractional_max_pool2d``."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    """3-d fractional max pooling returning (values, flat indices); see ``fractional_max_pool3d``."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """2-d fractional max pooling: pseudo-random windows shrinking H and W by ``output_ratio`` (or to
    ``output_size``); ``_random_samples`` (N, C, 2) fixes the windows."""
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """3-d fractional max pooling: pseudo-random windows shrinking D, H and W by ``output_ratio`` (or to
    ``output_size``); ``_random_samples`` (N, C, 3) fixes the windows."""
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
