"""The generalized Pareto distribution, the law of exceedances over a high threshold.

Its concentration ``xi`` interpolates between families: ``xi = 0`` is a shifted Exponential, ``xi > 0`` a
Pareto tail, ``xi = -1`` a Uniform. Every formula has a ``1 / xi`` that is singular at zero, so each one
computes both branches with a safe concentration and picks the exponential limit where ``xi`` is (close to) 0.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.utils import broadcast_all
from toolkit.tensor import Tensor

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution with ``loc``, ``scale`` and ``concentration``.

    >>> GeneralizedPareto(0.1, 2.0, 0.4).sample().shape
    toolkit.Size([])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers_only = all(isinstance(v, Number) for v in (loc, scale, concentration))
        batch_shape = Size() if numbers_only else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def _safe_concentration(self) -> tuple[Tensor, Tensor]:
        """Where the concentration is (close to) zero, and the concentration with those entries set to 1."""
        eq_zero = toolkit.isclose(self.concentration, toolkit.zeros_like(self.concentration))
        return eq_zero, toolkit.where(eq_zero, toolkit.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(toolkit.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + toolkit.ones_like(z)
        nonzero = toolkit.where(y == 0, y, y * toolkit.log1p(safe * z))
        return -self.scale.log() - toolkit.where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log(1 - cdf(value))``, computed without cancellation."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return toolkit.where(eq_zero, -z, -toolkit.log1p(safe * z) / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return toolkit.log1p(-toolkit.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return toolkit.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, safe = self._safe_concentration()
        logu = toolkit.log1p(-value)
        nonzero = self.loc + self.scale / safe * toolkit.expm1(-safe * logu)
        return toolkit.where(eq_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = toolkit.where(valid, self.concentration, 0.5)
        return toolkit.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = toolkit.where(valid, self.concentration, 0.25)
        return toolkit.where(valid, self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Tensor:
        return toolkit.broadcast_to(toolkit.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        lower = self.loc
        upper = toolkit.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
