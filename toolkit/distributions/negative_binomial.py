"""The negative binomial distribution: failures before ``total_count`` successes (a gamma-Poisson
mixture, which is how it samples)."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.gamma import Gamma
from toolkit.distributions.utils import _count_and_param, binary_logits, binary_probs, lazy_property
from toolkit.nn import functional as F
from toolkit.tensor import Tensor

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Negative binomial: the number of successes of Bernoulli(``probs``) trials before ``total_count``
    failures, so ``mean = total_count * probs / (1 - probs)``.

    >>> NegativeBinomial(4.0, probs=toolkit.tensor(0.5)).mean
    tensor(4.)
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.total_count, self._param, is_probs = _count_and_param(total_count, probs, logits)
        setattr(self, "probs" if is_probs else "logits", self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        return self._expand_params(NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits"))

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.total_count * toolkit.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / toolkit.sigmoid(-self.logits)

    logits = binary_logits
    probs = binary_probs

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=toolkit.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with toolkit.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return toolkit.poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = (-toolkit.lgamma(self.total_count + value) + toolkit.lgamma(1.0 + value)
                             + toolkit.lgamma(self.total_count))
        # total_count + value == 0 only at value 0 of a zero-count distribution: probability 1
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
