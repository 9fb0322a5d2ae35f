"""The logistic-normal distribution: a Normal vector stick-broken onto the simplex."""

from __future__ import annotations

from typing import Any

from toolkit.distributions import constraints
from toolkit.distributions.normal import Normal
from toolkit.distributions.transformed_distribution import TransformedDistribution
from toolkit.distributions.transforms import StickBreakingTransform
from toolkit.tensor import Tensor

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(X)`` for ``X ~ Normal(loc, scale)``: a point of the ``K+1``-simplex from a
    ``K``-vector of normals (``loc``'s last dimension is the event).

    >>> LogisticNormal(toolkit.zeros(3), toolkit.ones(3)).sample().shape
    toolkit.Size([4])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
