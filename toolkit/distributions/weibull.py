"""The Weibull distribution: ``scale * E ** (1 / concentration)`` for ``E ~ Exponential(1)``."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.exponential import Exponential
from toolkit.distributions.transformed_distribution import TransformedDistribution
from toolkit.distributions.transforms import AffineTransform, PowerTransform
from toolkit.distributions.utils import broadcast_all, euler_constant
from toolkit.tensor import Tensor

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Two-parameter Weibull distribution with ``scale`` and shape ``concentration``.

    >>> Weibull(1.0, 1.5).sample().shape
    toolkit.Size([])
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(toolkit.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(Size(batch_shape))
        new.concentration = self.concentration.expand(Size(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * toolkit.exp(toolkit.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (toolkit.exp(toolkit.lgamma(1 + 2 * self.concentration_reciprocal))
                                    - toolkit.exp(2 * toolkit.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self) -> Tensor:
        return (euler_constant * (1 - self.concentration_reciprocal)
                + toolkit.log(self.scale * self.concentration_reciprocal) + 1)
