"""The Kumaraswamy distribution: a Beta-like law on [0, 1] whose CDF has a closed form, so it reparametrizes
as ``(1 - (1 - U) ** (1 / b)) ** (1 / a)`` for uniform ``U``."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.transformed_distribution import TransformedDistribution
from toolkit.distributions.transforms import AffineTransform, PowerTransform
from toolkit.distributions.uniform import Uniform
from toolkit.distributions.utils import broadcast_all, euler_constant
from toolkit.tensor import Tensor

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """The ``n``-th raw moment: ``b * B(1 + n / a, b)``, through log-gammas."""
    arg1 = 1 + n / a
    log_value = toolkit.lgamma(arg1) + toolkit.lgamma(b) - toolkit.lgamma(arg1 + b)
    return b * toolkit.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution with ``concentration1`` (a) and ``concentration0`` (b).

    >>> Kumaraswamy(1.0, 1.0).sample().shape
    toolkit.Size([])
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(toolkit.full_like(self.concentration0, 0), toolkit.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(Size(batch_shape))
        new.concentration0 = self.concentration0.expand(Size(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        # The density is unimodal only when both concentrations are at least 1; NaN elsewhere.
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return toolkit.where(undefined, float("nan"), log_mode).exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - toolkit.pow(self.mean, 2)

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = toolkit.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - toolkit.log(self.concentration1) - toolkit.log(self.concentration0)
