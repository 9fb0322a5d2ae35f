"""The half-normal distribution: ``|X|`` for ``X ~ Normal(0, scale)``."""

from __future__ import annotations

import math
from typing import Any

from toolkit.distributions import constraints
from toolkit.distributions.folded import _FoldedAtZero
from toolkit.distributions.normal import Normal
from toolkit.distributions.transforms import AbsTransform
from toolkit.tensor import Tensor

__all__ = ["HalfNormal"]


class HalfNormal(_FoldedAtZero):
    """Half-normal distribution with scale ``scale``.

    >>> HalfNormal(1.0).sample().shape
    toolkit.Size([])
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)
