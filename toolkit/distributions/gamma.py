"""The gamma distribution with shape ``concentration`` and inverse scale ``rate``."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.exp_family import ExponentialFamily
from toolkit.distributions.utils import _batch_shape_of, broadcast_all
from toolkit.tensor import Tensor

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma distribution ``p(x) = rate**c x**(c - 1) exp(-rate x) / Gamma(c)``.

    >>> Gamma(2.0, 4.0).mean
    tensor(0.5000)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch_shape_of(self.concentration, concentration, rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = toolkit._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=toolkit.finfo(value.dtype).tiny)  # never exactly 0
        return value

    def log_prob(self, value: Any) -> Tensor:
        value = toolkit.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (toolkit.xlogy(self.concentration, self.rate) + toolkit.xlogy(self.concentration - 1, value)
                - self.rate * value - toolkit.lgamma(self.concentration))

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - toolkit.log(self.rate) + toolkit.lgamma(c) + (1.0 - c) * toolkit.digamma(c)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return toolkit.lgamma(x + 1) + (x + 1) * toolkit.log(-y.reciprocal())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return toolkit.igamma(self.concentration, self.rate * value)
