"""Randomized leaky ReLU: ``rrelu``, ``rrelu_`` and the slope draw ``rrelu_with_noise_functional``.

In training, each non-positive element gets its own slope drawn uniformly from
``[lower, upper]``; positive elements keep slope 1. ``rrelu_with_noise_functional``
draws the slopes exactly as ATen's CPU kernel does (one 53-bit double per
non-positive element, in memory order, from the generator's 64-bit stream), so a
seed gives PyTorch's slopes. ``rrelu`` is composed of registered ops
(``input * noise`` in training, ``leaky_relu`` with the mean slope in eval), so
autograd records ``MulBackward0`` holding the drawn slopes: the gradient uses
them, and double backward works. The tracer and script mode record one
``aten::rrelu`` node, a random op that no pass folds or merges.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from ._generator import get_generator
from .registry import INPLACE, RANDOM, op

_MASK53 = np.uint64((1 << 53) - 1)
_DEFAULTS = "Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False"


def _check_bounds(lower, upper) -> None:
    if float(lower) > float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _check(name: str, dtype: np.dtype, lower, upper) -> None:
    """PyTorch's errors: bounds out of order, then a kernel without an integer version."""
    _check_bounds(lower, upper)
    if np.dtype(dtype).kind != "f":
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dt.title(dtype)}'")


def _slopes(x: np.ndarray, lower: float, upper: float, generator) -> np.ndarray:
    """1 where ``x > 0`` (and for NaN), else a draw from ``uniform_real_distribution<double>(lower, upper)``."""
    flat = np.ascontiguousarray(x).reshape(-1)
    neg = flat <= 0
    words = get_generator(generator).random64(int(np.count_nonzero(neg)))
    # the bounds pass through the kernel's compute type (float for float32) before the double draw, as in ATen
    lo, hi = (float(np.dtype(x.dtype).type(b)) for b in (lower, upper))
    r = (words & _MASK53).astype(np.float64) * (1.0 / (1 << 53)) * (hi - lo) + lo
    noise = np.ones(flat.shape, dtype=x.dtype)
    noise[neg] = r.astype(x.dtype)
    return noise.reshape(x.shape)


@op(f"rrelu_with_noise_functional(Tensor self, Tensor noise, {_DEFAULTS}, Generator? generator=None) "
    "-> (Tensor, Tensor noise_out)", kind=RANDOM, method=False, function=False, differentiable=False)
def rrelu_with_noise_functional(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """``(output, noise_out)``: in training the slopes drawn for ``self`` (``noise_out``) and ``self * noise_out``;
    in eval ``leaky_relu(self, (lower + upper) / 2)`` and ``noise`` unchanged."""
    _check("rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu", self.dtype, lower, upper)
    if noise.dtype != self.dtype:
        raise RuntimeError(f"expected scalar type {_dt.title(self.dtype)} but found "
                           f"{_dt.title(noise.dtype)}")
    if not training:
        slope = (float(lower) + float(upper)) / 2
        return np.where(self > 0, self, self * self.dtype.type(slope)).astype(self.dtype), np.array(noise)
    slopes = _slopes(self, lower, upper, generator)
    return (self * slopes).astype(self.dtype), slopes


@rrelu_with_noise_functional.meta_rule
def _(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    out = TensorMeta(tuple(self.shape), self.dtype, self.device)
    return out, (out if training else TensorMeta(tuple(noise.shape), noise.dtype, noise.device))


def _noise(input, lower, upper, generator):
    """The slopes drawn for ``input``, not recorded by autograd (they are a constant of the backward)."""
    return api.rrelu_with_noise_functional(input.detach(), api.empty_like(input), lower, upper, True,
                                           generator=generator)[1]


@op(f"rrelu(Tensor self, {_DEFAULTS}, Generator? generator=None) -> Tensor", kind=RANDOM, method=False,
    composite=True)
def rrelu(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky ReLU: in training a slope drawn from ``[lower, upper]`` per non-positive element, in eval
    the slope ``(lower + upper) / 2``."""
    if not training:
        _check_bounds(lower, upper)
        return api.leaky_relu(self, (float(lower) + float(upper)) / 2)
    return self * _noise(self, lower, upper, generator)


@op(f"rrelu_(Tensor(a!) self, {_DEFAULTS}, Generator? generator=None) -> Tensor(a!)", kind=INPLACE,
    method=False, composite=True)
def rrelu_(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """In-place version of :func:`rrelu`."""
    if not training:
        _check_bounds(lower, upper)
        return api.leaky_relu_(self, (float(lower) + float(upper)) / 2)
    return self.mul_(_noise(self, lower, upper, generator))


def _same(self, *args, **kwargs):
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


rrelu.meta_rule(_same)
rrelu_.meta_rule(_same)


@rrelu.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (4, 5)).astype(np.float32),), {"training": True}
    yield (u(-2, 2, (3, 4)).astype(np.float32), 0.1, 0.3), {}
    yield (u(-2, 2, (2, 3, 4)).astype(np.float64), 0.2, 0.5, True), {}
    yield (u(-2, 2, (6,)),), {"lower": 0.25, "upper": 0.25, "training": True}


@rrelu_with_noise_functional.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-2, 2, (4, 5)).astype(np.float32), np.zeros((4, 5), np.float32)), {"training": True}
    yield (u(-2, 2, (3, 4)), np.zeros((3, 4)), 0.1, 0.3), {}
