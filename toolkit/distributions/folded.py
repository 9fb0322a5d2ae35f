"""What HalfNormal and HalfCauchy share: a distribution symmetric about zero, folded onto ``[0, inf)``.

Folding by ``AbsTransform`` doubles the density on the positive half, so log_prob, cdf, icdf and entropy
follow from the base's in closed form (the generic change of variables cannot, as ``|x|`` is not injective).
"""

from __future__ import annotations

import math

import toolkit
from toolkit.distributions.transformed_distribution import TransformedDistribution
from toolkit.tensor import Tensor

__all__: list[str] = []


class _FoldedAtZero(TransformedDistribution):
    """``|X|`` for ``X`` with a zero-centred symmetric base ``self.base_dist`` parametrized by ``scale``."""

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return toolkit.zeros_like(self.scale)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = toolkit.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return toolkit.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
