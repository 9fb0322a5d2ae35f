"""Dropout ops: ``dropout``, ``feature_dropout``, ``alpha_dropout``, ``feature_alpha_dropout`` and their in-place forms.

Each is one registry op (so traces and the IR show ``aten::dropout(%x, %p, %train)``
as PyTorch's do, in eval mode too) composed of registered ops exactly as ATen's CPU
``_dropout_impl`` composes them: ``empty(shape).bernoulli_(1 - p)`` (shape
``(N, C, 1, ...)`` for feature dropout), divided by ``1 - p``, times the input.
Drawing the same way from the generator gives PyTorch's masks for the same seed,
and autograd records the parts (``MulBackward0``, as PyTorch's CPU dropout does),
so double backward works.
"""

from __future__ import annotations

import math

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from . import api
from .registry import INPLACE, RANDOM, op

_SELU_ALPHA_PRIME = 1.7580993408473766


def _noise(input, p: float, feature: bool):
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    return api.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def _dropout_impl(input, p: float, train: bool, inplace: bool, feature: bool = False, alpha: bool = False):
    """ATen's ``_dropout_impl``: the input itself when not training, zeros for p=1, else a scaled random mask."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = api.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    noise = _noise(input, p, feature)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME * _SELU_ALPHA_PRIME * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_SELU_ALPHA_PRIME * a).add_(_SELU_ALPHA_PRIME * a * p)
        noise.mul_(a)
        return (input.mul_(noise) if inplace else input * noise).add_(b)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def _same(input, p, train):
    return TensorMeta(tuple(input.shape), input.dtype, input.device)


def _samples(feature: bool):
    def samples(rng):
        u = rng.uniform
        yield (u(-1, 1, (4, 3, 5)), 0.3, True), {}
        yield (u(-1, 1, (2, 3, 2, 2)), 0.5, False), {}
        yield (u(-1, 1, (3, 4)), 0.0, True), {}
        yield (u(-1, 1, (3, 4)), 1.0, True), {}
        if not feature:
            yield (u(-1, 1, (6,)), 0.2, True), {}

    return samples


_DOCS = {
    "dropout": "Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` when ``train``.",
    "feature_dropout": "Zero whole channels (dim 1) with probability ``p`` and scale the rest by ``1 / (1 - p)``.",
    "alpha_dropout": "Dropout that keeps SELU's zero mean and unit variance.",
    "feature_alpha_dropout": "Alpha dropout of whole channels (dim 1).",
}


def _define(name: str, feature: bool, alpha: bool, name_rule: str | None = None):
    def functional(input, p, train):
        return _dropout_impl(input, p, train, False, feature, alpha)

    def inplace(self, p, train):
        return _dropout_impl(self, p, train, True, feature, alpha)

    functional.__name__, inplace.__name__ = name, name + "_"
    functional.__doc__ = _DOCS[name]
    inplace.__doc__ = f"In-place version of :func:`{name}`."
    # not training, the op returns its input itself (the JIT's remove_dropout pass reads this identity)
    d = op(f"{name}(Tensor input, float p, bool train) -> Tensor", kind=RANDOM, name_rule=name_rule,
           out=False,
           method=False, composite=True, identities=(("input", "train", False, None),))(functional)
    d.meta_rule(_same)
    d.sample_inputs(_samples(feature))
    v = op(f"{name}_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", kind=INPLACE, name_rule=name_rule,
           method=False, composite=True, identities=(("self", "train", False, None),))(inplace)
    v.meta_rule(_same)
    return d, v


dropout, dropout_ = _define("dropout", False, False, _names.KEEP)  # the one PyTorch names
feature_dropout, feature_dropout_ = _define("feature_dropout", True, False)
alpha_dropout, alpha_dropout_ = _define("alpha_dropout", False, True)
feature_alpha_dropout, feature_alpha_dropout_ = _define("feature_alpha_dropout", True, True)


@op("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", kind=RANDOM, out=False, method=False,
    composite=True, name_rule=_names.KEEP)
def native_dropout(input, p, train):
    """Dropout that also returns its boolean keep-mask, as ATen's CPU ``native_dropout``: with ``train`` true or
    None, ``input * mask / (1 - p)`` for a mask drawn with ``bernoulli_(1 - p)``; else a copy and an all-true mask."""
    if input.numel() == 0:
        return input, api.empty_like(input, dtype=_dt.bool)
    if train is None or train:
        p1m = 1.0 - p
        scale = 0.0 if p1m == 0 else 1.0 / p1m
        mask = api.empty_like(input).bernoulli_(p1m)
        return input.mul(mask).mul_(scale), mask.to(_dt.bool)
    return input.clone(), api.ones_like(input, dtype=_dt.bool)


@native_dropout.meta_rule
def _(input, p, train):
    return (TensorMeta(tuple(input.shape), input.dtype, input.device),
            TensorMeta(tuple(input.shape), _dt.bool, input.device))


@native_dropout.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (4, 3)), 0.3, True), {}
    yield (rng.uniform(-1, 1, (2, 3)), 0.5, False), {}
    yield (rng.uniform(-1, 1, (5,)), 0.2, None), {}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
@dropout.symbolic
def _(g, input, p, train):
    if not train:
        return input  # evaluation: the identity
    if g.is_value(train):
        raise g.unsupported("dropout whose training flag is computed at run time")
    if p >= 1:  # ONNX's ratio must be below 1
        return g.op("Mul", input, g.constant(0, g.dtype(input)))
    return g.op("Dropout", input, g.constant(float(p), _dt.float32), g.constant(True), outputs=2)[0]


@feature_dropout.symbolic
def _(g, input, p, train):
    if train:
        raise g.unsupported("channel dropout in training mode (ONNX's Dropout drops single elements)")
    return input
