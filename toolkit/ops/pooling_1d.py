"""avg_pool1d: 1-d average pooling, computed as 2-d average pooling with a height of one (as PyTorch does).

Example::

    y = toolkit.avg_pool1d(x, 3, stride=2)            # x: (N, C, L) or (C, L)
"""

from __future__ import annotations

from .._core.meta import TensorMeta
from . import api
from .pooling import avg_pool2d as _avg_pool2d
from .registry import NN, op


def _check(shape, kernel_size, stride, padding) -> None:
    if len(shape) not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {len(shape)}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    for name, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
        if len(v) != 1 and (v or name != "stride"):
            raise RuntimeError(f"avg_pool1d() argument '{name}' should contain one int (got {len(v)})")


def as_2d(kernel_size, stride, padding) -> tuple:
    """A 1-d average pooling's arguments as the (1, k) 2-d pooling that computes it."""
    st = tuple(stride) if stride else tuple(kernel_size)
    return (1, kernel_size[0]), (1, st[0]), (0, padding[0])


@op("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, "
    "bool count_include_pad=True) -> Tensor", kind=NN, method=False, composite=True)
def avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    """1-d average pooling over a (N, C, L) or (C, L) input: ``avg_pool2d`` of a height-one view."""
    _check(tuple(self.shape), kernel_size, stride, padding)
    k, s, p = as_2d(kernel_size, stride, padding)
    return api.avg_pool2d(self.unsqueeze(-2), k, s, p, ceil_mode, count_include_pad).squeeze(-2)


@avg_pool1d.meta_rule
def _(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    _check(tuple(self.shape), kernel_size, stride, padding)
    k, s, p = as_2d(kernel_size, stride, padding)
    m = _avg_pool2d.meta(TensorMeta(tuple(self.shape[:-1]) + (1, self.shape[-1]), self.dtype, self.device), k, s, p,
                         ceil_mode, count_include_pad)
    return TensorMeta(tuple(self.shape[:-1]) + (m.shape[-1],), self.dtype, self.device)


@avg_pool1d.grad
def _(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad):
    k, s, p = as_2d(kernel_size, stride, padding)
    return api.avg_pool2d_backward(grad.unsqueeze(-2), self.unsqueeze(-2), k, s, p, ceil_mode, count_include_pad,
                                   None).squeeze(-2)


@avg_pool1d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 6)), [2]), {}
    yield (u(-1, 1, (3, 7)), [3]), {"stride": [2], "padding": [1], "ceil_mode": True}
    yield (u(-1, 1, (1, 2, 7)), [3], [2], [1]), {"count_include_pad": False}
    yield (rng.integers(-9, 9, (1, 2, 7)), [2]), {}
