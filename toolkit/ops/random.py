"""Random ops: rand, randn, randint, randperm, normal, bernoulli, multinomial, poisson, binomial and the
``*_like`` forms.

Every op draws from a ``Generator`` (the ``generator=`` argument, else
``toolkit.default_generator``) with PyTorch's CPU algorithms, so after
``toolkit.manual_seed(s)`` they return exactly what PyTorch returns after
``torch.manual_seed(s)``. The in-place fills (``uniform_``, ``normal_``...)
live in ``random_inplace``.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.device import CPU
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from . import _distributions as D
from . import api
from ._generator import get_generator
from .random_inplace import (  # registers the in-place fills
    bernoulli_float_,
    bernoulli_tensor_,
    check_floating,
    empty_like,
    exponential_,
    in_memory_order,
    normal_,
    not_implemented,
    random_from_,
    sample_normal,
    sample_random,
    sample_uniform,
    shaped_like,
    uniform_,
)
from .registry import RANDOM, op

_OPTS = ("ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
         "bool requires_grad=False")
_GEN_OPTS = "Generator? generator=None, " + _OPTS
_LIKE_OPTS = _GEN_OPTS + ", str? memory_format=None"


def _size(name: str, size) -> tuple:
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(size)


def _float_dtype(dtype):
    return (dtype or _dt.get_default_dtype()).np


def _sized_meta(default):
    def meta(*args):
        *lead, size, _gen, dtype, _layout, device, _pin, _rg = args
        return TensorMeta(_size("", size), dtype or default(), device or CPU)

    return meta


def _like_meta(self, *args):
    dtype, device = args[-6], args[-4]
    return TensorMeta(self.shape, dtype or self.dtype, device or self.device)


# ---------------------------------------------------------------------------------------------
# rand, randn, randint, randperm
# ---------------------------------------------------------------------------------------------
@op(f"rand(int[] size, *, {_GEN_OPTS}) -> Tensor", kind=RANDOM, method=False)
def rand(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """Uniform samples from [0, 1); equal to ``torch.rand`` after the same seed (float16/32/64)."""
    size = _size("rand", size)
    return sample_uniform(size, _float_dtype(dtype), 0.0, 1.0, generator).reshape(size)


@op(f"randn(int[] size, *, {_GEN_OPTS}) -> Tensor", kind=RANDOM, method=False)
def randn(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """Standard normal samples; equal to ``torch.randn`` after the same seed (float32/64; float16 only below
    16 elements)."""
    size = _size("randn", size)
    return sample_normal(size, _float_dtype(dtype), 0.0, 1.0, generator).reshape(size)


@op(f"randint(int high, int[] size, *, {_GEN_OPTS}) -> Tensor", kind=RANDOM, method=False)
def randint(high, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
            requires_grad=False):
    """Integers drawn uniformly from [0, high); equal to ``torch.randint`` after the same seed."""
    return randint_low.kernels["cpu"](0, high, size, generator, dtype)


@op(f"randint.low(int low, int high, int[] size, *, {_GEN_OPTS}) -> Tensor", kind=RANDOM, method=False)
def randint_low(low, high, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                requires_grad=False):
    """Integers drawn uniformly from [low, high); equal to ``torch.randint`` after the same seed."""
    size = _size("randint", size)
    return sample_random(size, (dtype or _dt.int64).np, low, high, generator).reshape(size)


@op(f"randperm(int n, *, {_GEN_OPTS}) -> Tensor", kind=RANDOM, method=False)
def randperm(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """A random permutation of 0..n-1; equal to ``torch.randperm`` after the same seed."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return D.randperm(get_generator(generator), n, (dtype or _dt.int64).np)


rand.meta_rule(_sized_meta(_dt.get_default_dtype))
randn.meta_rule(_sized_meta(_dt.get_default_dtype))
randint.meta_rule(_sized_meta(lambda: _dt.int64))
randint_low.meta_rule(_sized_meta(lambda: _dt.int64))


@randperm.meta_rule
def _(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return TensorMeta((n,), dtype or _dt.int64, device or CPU)


# ---------------------------------------------------------------------------------------------
# *_like
# ---------------------------------------------------------------------------------------------
@op(f"rand_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=RANDOM, name_rule=_names.KEEP, method=False,
    differentiable=False)
def rand_like(self, generator=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False,
              memory_format=None):
    """``rand`` with ``self``'s shape, dtype and memory layout."""
    out = empty_like(self, dtype.np if dtype is not None else None)
    return uniform_.kernels["cpu"](out, 0.0, 1.0, generator)


@op(f"randn_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", kind=RANDOM, name_rule=_names.KEEP, method=False,
    differentiable=False)
def randn_like(self, generator=None, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False,
               memory_format=None):
    """``randn`` with ``self``'s shape, dtype and memory layout."""
    out = empty_like(self, dtype.np if dtype is not None else None)
    return normal_.kernels["cpu"](out, 0.0, 1.0, generator)


@op(f"randint_like(Tensor self, int high, *, {_LIKE_OPTS}) -> Tensor", kind=RANDOM, method=False,
    differentiable=False)
def randint_like(self, high, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                 requires_grad=False, memory_format=None):
    """``randint(0, high)`` with ``self``'s shape, dtype and memory layout."""
    out = empty_like(self, dtype.np if dtype is not None else None)
    return random_from_.kernels["cpu"](out, 0, high, generator)


@op(f"randint_like.low_dtype(Tensor self, int low, int high, *, {_LIKE_OPTS}) -> Tensor", kind=RANDOM,
    method=False, differentiable=False)
def randint_like_low(self, low, high, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                     requires_grad=False, memory_format=None):
    """``randint(low, high)`` with ``self``'s shape, dtype and memory layout."""
    out = empty_like(self, dtype.np if dtype is not None else None)
    return random_from_.kernels["cpu"](out, low, high, generator)


for _o in (rand_like, randn_like, randint_like, randint_like_low):
    _o.meta_rule(_like_meta)


# ---------------------------------------------------------------------------------------------
# normal (four overloads), bernoulli, multinomial
# ---------------------------------------------------------------------------------------------
# ``normal`` with tensor arguments has a zero derivative in PyTorch (the samples are not
# reparameterized); it is recorded so outputs join the graph, and marked not differentiable so
# numerical gradient checks skip it.
def _normal_zero_grads(grad, needs_input_grad):
    return tuple(api.zeros_like(grad) if n else None for n in needs_input_grad)


@op("normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor", kind=RANDOM,
    out="cast",
    method=False, differentiable=False)
def normal_tt(mean, std, generator=None):
    """Samples with per-element ``mean`` and ``std`` (broadcast): ``randn * std + mean`` as PyTorch computes it."""
    _check_std_tensor(std)
    shape = broadcast_shapes(mean.shape, std.shape)
    z = sample_normal(shape, mean.dtype, 0.0, 1.0, generator).reshape(shape)
    return ((z * std).astype(mean.dtype) + mean).astype(mean.dtype)


@op("normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor", kind=RANDOM,
    out="cast",
    method=False, differentiable=False)
def normal_tf(mean, std=1.0, generator=None):
    """Samples with per-element ``mean`` and a common ``std``: ``normal_(0, std) + mean``."""
    z = sample_normal(mean.shape, mean.dtype, 0.0, std, generator).reshape(mean.shape)
    return (z + mean).astype(mean.dtype)


@op("normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor", kind=RANDOM,
    out="cast",
    method=False, differentiable=False)
def normal_ft(mean, std, generator=None):
    """Samples with a common ``mean`` and per-element ``std``: ``randn * std + mean``."""
    _check_std_tensor(std)
    z = sample_normal(std.shape, std.dtype, 0.0, 1.0, generator).reshape(std.shape)
    return ((z * std).astype(std.dtype) + std.dtype.type(mean)).astype(std.dtype)


@op(f"normal.float_float(float mean, float std, int[] size, *, {_GEN_OPTS}) -> Tensor", kind=RANDOM,
    method=False, default_device=False)  # torch.normal stays off set_default_device's list
def normal_ff(mean, std, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
              requires_grad=False):
    """Samples of one normal distribution, in the given size."""
    size = _size("normal", size)
    return sample_normal(size, _float_dtype(dtype), mean, std, generator).reshape(size)


def _check_std_tensor(std) -> None:
    if std.size and not (std >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")


for _o in (normal_tt, normal_tf, normal_ft):
    _o.grad(_normal_zero_grads)


@normal_tt.meta_rule
def _(mean, std, generator=None):
    return TensorMeta(broadcast_shapes(tuple(mean.shape), tuple(std.shape)), mean.dtype, mean.device)


@normal_tf.meta_rule
def _(mean, std=1.0, generator=None):
    return TensorMeta(mean.shape, mean.dtype, mean.device)


@normal_ft.meta_rule
def _(mean, std, generator=None):
    return TensorMeta(std.shape, std.dtype, std.device)


normal_ff.meta_rule(_sized_meta(_dt.get_default_dtype))


@op("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", kind=RANDOM, name_rule=_names.KEEP,
    out="any", differentiable=False)
def bernoulli(self, generator=None):
    """1 with probability ``self`` (elementwise), else 0, in ``self``'s dtype."""
    check_floating("bernoulli_tensor_cpu_p_", self.dtype)
    return bernoulli_tensor_.kernels["cpu"](np.empty(self.shape, self.dtype), self, generator)


@op("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor", kind=RANDOM,
    differentiable=False)
def bernoulli_p(self, p, generator=None):
    """1 with probability ``p``, else 0, shaped like ``self``."""
    return bernoulli_float_.kernels["cpu"](np.empty(self.shape, self.dtype), p, generator)


for _o in (bernoulli, bernoulli_p):
    _o.grad(_normal_zero_grads)
    _o.meta_rule(lambda self, *a, **k: TensorMeta(self.shape, self.dtype, self.device))


@op("multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor",
    kind=RANDOM, out="exact")
def multinomial(self, num_samples, replacement=False, generator=None):
    """Indices drawn from the categorical distributions in the rows of ``self``; equal to PyTorch's
    for the same seed (with replacement: inverse-CDF search; without, or one sample: exponential race)."""
    _multinomial_checks(self, num_samples, replacement)
    gen = get_generator(generator)
    if replacement and num_samples > 1:
        if not ((self >= 0).all()):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(self).all():
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if not (self.reshape(-1, self.shape[-1]).sum(-1) > 0).all():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return D.multinomial_with_replacement(gen, self, num_samples)
    if not (self.max() < np.inf and self.min() >= 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (self.reshape(-1, self.shape[-1]).sum(-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    q = exponential_.kernels["cpu"](empty_like(self), 1.0, gen)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (self / q).astype(self.dtype)
    if num_samples == 1:
        return np.argmax(q, axis=-1, keepdims=True).astype(np.int64)
    order = np.argsort(-q, axis=-1, kind="stable")
    return np.ascontiguousarray(order[..., :num_samples]).astype(np.int64)


def _multinomial_checks(self, num_samples, replacement) -> None:
    if not 1 <= self.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if self.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_dt.title(self.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > self.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if self.shape[-1] > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")


@multinomial.meta_rule
def _(self, num_samples, replacement=False, generator=None):
    _multinomial_checks(_MetaArray(self), num_samples, replacement)
    return TensorMeta(tuple(self.shape[:-1]) + (num_samples,), _dt.int64, self.device)


class _MetaArray:
    """Shape and numpy dtype of a tensor-like, for the checks shared by kernel and meta rule."""

    def __init__(self, t):
        self.shape = tuple(t.shape)
        self.ndim = len(self.shape)
        self.dtype = t.dtype.np if isinstance(t.dtype, _dt.dtype) else np.dtype(t.dtype)


@op("poisson(Tensor self, Generator? generator=None) -> Tensor", kind=RANDOM, method=False,
    differentiable=False)
def poisson(self, generator=None):
    """One Poisson sample per rate in ``self``, in ``self``'s dtype; equal to PyTorch's for the same seed, for
    any strides (ATen's ``sample_poisson``: products of uniforms below rate 10, Hörmann's rejection above)."""
    if self.dtype.kind != "f":
        raise not_implemented("poisson_cpu", self.dtype)
    if self.size and not (self >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # ATen fills a fresh contiguous output, so draws follow the logical (C) order whatever self's strides
    counts = D.poisson(get_generator(generator), np.ascontiguousarray(self).reshape(-1))
    return counts.reshape(self.shape).astype(self.dtype)


@poisson.grad
def _(grad, self):
    return (api.zeros_like(self),)


@poisson.meta_rule
def _(self, generator=None):
    return TensorMeta(self.shape, self.dtype, self.device)


def _binomial_checks(count_dtype: np.dtype, prob_dtype: np.dtype) -> None:
    if count_dtype.kind != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_dt.title(count_dtype)}")
    if prob_dtype != count_dtype:
        raise RuntimeError(f"Found dtype {_dt.title(prob_dtype)} but expected {_dt.title(count_dtype)}")
    if count_dtype not in (np.float32, np.float64):
        raise not_implemented("binomial_cpu", count_dtype)


@op("binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor", kind=RANDOM, out=False, method=False,
    differentiable=False)
def binomial(count, prob, generator=None):
    """Successes in ``count`` Bernoulli(``prob``) trials, per element (broadcast); equal to PyTorch's for
    the same seed in float64 (ATen's ``sample_binomial``: geometric inversion for means below 10, BTRS
    rejection above)."""
    _binomial_checks(count.dtype, prob.dtype)
    shape = broadcast_shapes(count.shape, prob.shape)
    cb, pb = np.broadcast_to(count, shape), np.broadcast_to(prob, shape)
    like = cb if cb.ndim <= 1 or cb.flags.c_contiguous else np.empty(shape)
    draws = D.binomial(get_generator(generator), in_memory_order(like, cb), in_memory_order(like, pb))
    return shaped_like(like, draws).astype(count.dtype)


binomial.grad(_normal_zero_grads)


@binomial.meta_rule
def _(count, prob, generator=None):
    _binomial_checks(_MetaArray(count).dtype, _MetaArray(prob).dtype)
    return TensorMeta(broadcast_shapes(tuple(count.shape), tuple(prob.shape)), count.dtype, count.device)


# ---------------------------------------------------------------------------------------------
# Samples for the registry-generated tests (which check shapes and dtypes; values are compared
# with PyTorch under equal seeds in tests/ops/test_random.py).
# ---------------------------------------------------------------------------------------------
@rand.sample_inputs
def _(rng):
    yield ((2, 3),), {}
    yield ((0, 4),), {}
    yield ((), ), {}
    yield ((17,),), {"dtype": _dt.float64}
    yield (2, 5), {"dtype": _dt.float16}


@randn.sample_inputs
def _(rng):
    yield ((2, 3),), {}
    yield ((20,),), {"dtype": _dt.float64}
    yield (4, 5), {"requires_grad": True}
    yield ((0,),), {}


@randint.sample_inputs
def _(rng):
    yield (10, (3, 4)), {}
    yield (3, (5,)), {"dtype": _dt.int32}


@randint_low.sample_inputs
def _(rng):
    yield (-5, 5, (3, 4)), {}
    yield (0, 2 ** 40, (6,)), {}
    yield (1, 7, (2, 2)), {"dtype": _dt.float32}


@randperm.sample_inputs
def _(rng):
    yield (10,), {}
    yield (0,), {}
    yield (100,), {"dtype": _dt.int32}


def _like_samples(rng):
    yield (rng.standard_normal((3, 4)),), {}
    yield (rng.standard_normal((4, 3)).T,), {"dtype": _dt.float64}
    yield (rng.standard_normal(()),), {}


rand_like.sample_inputs(_like_samples)
randn_like.sample_inputs(_like_samples)


@randint_like.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)), 10), {}
    yield (np.zeros((2, 5), dtype=np.int64), 3), {}


@randint_like_low.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)), -4, 10), {}


@normal_tt.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)), rng.random((3, 4)) + 0.5), {}
    yield (rng.standard_normal((2, 1, 3)), rng.random((4, 1)) + 0.5), {}


@normal_tf.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)), 2.0), {}
    yield (rng.standard_normal(20),), {}


@normal_ft.sample_inputs
def _(rng):
    yield (0.5, rng.random((3, 4)) + 0.5), {}


@normal_ff.sample_inputs
def _(rng):
    yield (1.0, 2.0, (3, 4)), {}
    yield (0.0, 1.0, (20,)), {"dtype": _dt.float64}


@bernoulli.sample_inputs
def _(rng):
    yield (rng.random((3, 4)),), {}
    yield (rng.random((4, 3)).T.astype(np.float32),), {}
    yield (rng.random(()),), {}


@bernoulli_p.sample_inputs
def _(rng):
    yield (rng.random((3, 4)), 0.3), {}
    yield (np.zeros((5,), dtype=np.int64), 0.5), {}


@multinomial.sample_inputs
def _(rng):
    yield (rng.random(6) + 0.1, 3), {}
    yield (rng.random((3, 5)) + 0.1, 4), {"replacement": True}
    yield (rng.random((2, 5)) + 0.1, 1), {}
    yield (rng.random(4).astype(np.float32) + 0.1, 4, False), {}


@poisson.sample_inputs
def _(rng):
    yield (rng.random((3, 4)) * 20,), {}
    yield (rng.random((4, 3)).T.astype(np.float32) * 5,), {}
    yield (np.zeros((0, 2)),), {}


@binomial.sample_inputs
def _(rng):
    yield (np.floor(rng.random((3, 4)) * 50), rng.random((3, 4))), {}
    yield (np.full((2, 1), 30.0, dtype=np.float32), rng.random((1, 3)).astype(np.float32)), {}
