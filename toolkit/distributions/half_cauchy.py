"""The half-Cauchy distribution: ``|X|`` for ``X ~ Cauchy(0, scale)``."""

from __future__ import annotations

import math
from typing import Any

import toolkit
from toolkit.distributions import constraints
from toolkit.distributions.cauchy import Cauchy
from toolkit.distributions.folded import _FoldedAtZero
from toolkit.distributions.transforms import AbsTransform
from toolkit.tensor import Tensor

__all__ = ["HalfCauchy"]


class HalfCauchy(_FoldedAtZero):
    """Half-Cauchy distribution with scale ``scale``; heavy-tailed, so its mean and variance are infinite.

    >>> HalfCauchy(1.0).sample().shape
    toolkit.Size([])
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return toolkit.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
