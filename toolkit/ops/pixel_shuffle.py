"""Channel rearrangements: pixel_shuffle, pixel_unshuffle, channel_shuffle and native_channel_shuffle.

Each is a reshape, a fixed transpose and a reshape back, composed of those ops so it runs on every device;
each one's derivative is its inverse rearrangement (pixel_unshuffle undoes pixel_shuffle; channel_shuffle by
``C // groups`` undoes channel_shuffle by ``groups``).
"""

from __future__ import annotations

from .._core.meta import TensorMeta
from . import api
from .registry import SHAPE, op


def _shuffle_shape(shape, factor: int) -> tuple:
    shape = tuple(shape)
    if len(shape) < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{len(shape)} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {factor}")
    c, h, w = shape[-3:]
    if c % (factor * factor):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {factor * factor}")
    return shape[:-3] + (c // (factor * factor), h * factor, w * factor)


def _unshuffle_shape(shape, factor: int) -> tuple:
    shape = tuple(shape)
    if len(shape) < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{len(shape)} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {factor}")
    c, h, w = shape[-3:]
    if h % factor:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                           f"{h} is not divisible by {factor}")
    if w % factor:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                           f"{w} is not divisible by {factor}")
    return shape[:-3] + (c * factor * factor, h // factor, w // factor)


@op("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", kind=SHAPE, out=False, method=False, composite=True)
def pixel_shuffle(self, upscale_factor):
    """(*, C*r*r, H, W) to (*, C, H*r, W*r): each channel group of r*r becomes an r x r block of pixels."""
    out = _shuffle_shape(self.shape, upscale_factor)
    r = upscale_factor
    lead = self.shape[:-3]
    c, h, w = out[-3], self.shape[-2], self.shape[-1]
    x = self.reshape(tuple(lead) + (c, r, r, h, w))
    n = len(lead)
    return x.permute(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)).reshape(out)


@op("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", kind=SHAPE, out=False, method=False, composite=True)
def pixel_unshuffle(self, downscale_factor):
    """(*, C, H*r, W*r) to (*, C*r*r, H, W): the inverse of ``pixel_shuffle``."""
    out = _unshuffle_shape(self.shape, downscale_factor)
    r = downscale_factor
    lead = self.shape[:-3]
    c, h, w = self.shape[-3], out[-2], out[-1]
    x = self.reshape(tuple(lead) + (c, h, r, w, r))
    n = len(lead)
    return x.permute(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)).reshape(out)


@pixel_shuffle.meta_rule
def _(self, upscale_factor):
    return TensorMeta(_shuffle_shape(self.shape, upscale_factor), self.dtype, self.device)


@pixel_unshuffle.meta_rule
def _(self, downscale_factor):
    return TensorMeta(_unshuffle_shape(self.shape, downscale_factor), self.dtype, self.device)


@pixel_shuffle.grad
def _(grad, upscale_factor):
    return api.pixel_unshuffle(grad, upscale_factor)


@pixel_unshuffle.grad
def _(grad, downscale_factor):
    return api.pixel_shuffle(grad, downscale_factor)


@pixel_shuffle.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 8, 2, 3)), 2), {}
    yield (u(-1, 1, (9, 2, 2)), 3), {}
    yield (u(-1, 1, (1, 2, 4, 2, 3)), 2), {}
    yield (u(-1, 1, (2, 3, 2)), 1), {}
    yield (rng.integers(-5, 5, (1, 4, 2, 2)), 2), {}


@pixel_unshuffle.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 6)), 2), {}
    yield (u(-1, 1, (1, 6, 3)), 3), {}
    yield (u(-1, 1, (1, 2, 1, 4, 2)), 2), {}


# ---------------------------------------------------------------------------------------------
# channel_shuffle
# ---------------------------------------------------------------------------------------------
def _channel_shuffle_check(shape, groups: int) -> tuple:
    shape = tuple(shape)
    if len(shape) <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{len(shape)} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {shape[1]} channels and {groups} "
                           "groups.")
    return shape


def _channel_shuffle(self, groups):
    shape = _channel_shuffle_check(self.shape, groups)
    n, c = shape[:2]
    return self.reshape((n, groups, c // groups) + shape[2:]).transpose(1, 2).reshape(shape)


@op("channel_shuffle(Tensor self, SymInt groups) -> Tensor", kind=SHAPE, out=False, method=False, composite=True)
def channel_shuffle(self, groups):
    """(N, g*k, *) to (N, k*g, *): channel ``i*k + j`` moves to ``j*g + i``, mixing ``groups`` channel groups."""
    return _channel_shuffle(self, groups)


@op("native_channel_shuffle(Tensor self, SymInt groups) -> Tensor", kind=SHAPE, out=False, method=False, composite=True)
def native_channel_shuffle(self, groups):
    """``channel_shuffle`` under aten's native name (one kernel for both)."""
    return _channel_shuffle(self, groups)


for _o in (channel_shuffle, native_channel_shuffle):
    _o.meta_rule(lambda self, groups: TensorMeta(_channel_shuffle_check(self.shape, groups), self.dtype,
                                                 self.device))


@channel_shuffle.grad
def _(grad, groups):
    return api.channel_shuffle(grad, grad.shape[1] // groups)


@native_channel_shuffle.grad
def _(grad, groups):
    return api.native_channel_shuffle(grad, grad.shape[1] // groups)


def _cs_samples(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 6, 2)), 2), {}
    yield (u(-1, 1, (1, 6, 2, 3)), 3), {}
    yield (u(-1, 1, (2, 4, 1, 2, 2)), 4), {}


channel_shuffle.sample_inputs(_cs_samples)
native_channel_shuffle.sample_inputs(_cs_samples)
