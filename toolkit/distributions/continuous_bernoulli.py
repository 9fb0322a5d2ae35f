"""The continuous Bernoulli distribution on [0, 1]: density proportional to ``p**x (1 - p)**(1 - x)``.

Its normalizing constant ``2 atanh(1 - 2p) / (1 - 2p)`` and its moments lose all precision near
``p = 1/2``; inside ``lims`` they are replaced by Taylor expansions around 1/2.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.exp_family import ExponentialFamily
from toolkit.distributions.utils import (
    _check_probs_or_logits,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from toolkit.nn import functional as F
from toolkit.tensor import Tensor

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Continuous Bernoulli distribution parametrized by ``probs`` or ``logits``.

    >>> ContinuousBernoulli(probs=toolkit.tensor(0.5)).mean
    tensor(0.5000)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        _check_probs_or_logits(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        return self._expand_params(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"), copy=("_lims",))

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self) -> Tensor:
        return toolkit.max(toolkit.le(self.probs, self._lims[0]), toolkit.gt(self.probs, self._lims[1]))

    def _cut_probs(self) -> Tensor:
        """``probs`` outside the unstable region, a harmless stand-in inside it (whose results are discarded,
        but whose gradients must stay finite)."""
        return toolkit.where(self._outside_unstable_region(), self.probs,
                             self._lims[0] * toolkit.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """The log normalizing constant as a function of ``probs``."""
        cut = self._cut_probs()
        below = toolkit.where(toolkit.le(cut, 0.5), cut, toolkit.zeros_like(cut))
        above = toolkit.where(toolkit.ge(cut, 0.5), cut, toolkit.ones_like(cut))
        log_norm = toolkit.log(toolkit.abs(toolkit.log1p(-cut) - toolkit.log(cut))) - toolkit.where(
            toolkit.le(cut, 0.5), toolkit.log1p(-2.0 * below), toolkit.log(2.0 * above - 1.0))
        x = toolkit.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return toolkit.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (toolkit.log1p(-cut) - toolkit.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * toolkit.pow(x, 2)) * x
        return toolkit.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return toolkit.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        var = (cut * (cut - 1.0) / toolkit.pow(1.0 - 2.0 * cut, 2)
               + 1.0 / toolkit.pow(toolkit.log1p(-cut) - toolkit.log(cut), 2))
        x = toolkit.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return toolkit.where(self._outside_unstable_region(), var, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = toolkit.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with toolkit.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(toolkit.rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (toolkit.pow(cut, value) * toolkit.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = toolkit.where(self._outside_unstable_region(), cdfs, value)
        return toolkit.where(toolkit.le(value, 0.0), toolkit.zeros_like(value),
                             toolkit.where(toolkit.ge(value, 1.0), toolkit.ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inverted = ((toolkit.log1p(-cut + value * (2.0 * cut - 1.0)) - toolkit.log1p(-cut))
                    / (toolkit.log(cut) - toolkit.log1p(-cut)))
        return toolkit.where(self._outside_unstable_region(), inverted, value)

    def entropy(self) -> Tensor:
        log_probs0 = toolkit.log1p(-self.probs)
        log_probs1 = toolkit.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        """The log normalizing constant as a function of the natural parameter (the logits)."""
        outside = toolkit.max(toolkit.le(x, self._lims[0] - 0.5), toolkit.gt(x, self._lims[1] - 0.5))
        cut = toolkit.where(outside, x, (self._lims[0] - 0.5) * toolkit.ones_like(x))
        log_norm = toolkit.log(toolkit.abs(toolkit.expm1(cut))) - toolkit.log(toolkit.abs(cut))
        taylor = 0.5 * x + toolkit.pow(x, 2) / 24.0 - toolkit.pow(x, 4) / 2880.0
        return toolkit.where(outside, log_norm, taylor)
