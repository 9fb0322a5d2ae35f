"""The Dirichlet distribution over the probability simplex."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.autograd import Function
from toolkit.distributions import constraints
from toolkit.distributions.exp_family import ExponentialFamily
from toolkit.nn import functional as F
from toolkit.tensor import Tensor

__all__ = ["Dirichlet"]


class _Dirichlet(Function):
    """``x ~ Dirichlet(alpha)`` over the last dim, differentiable in ``alpha``: each coordinate moves along the
    implicit gradient of its Beta marginal (``_dirichlet_grad``), the others share the compensation that keeps
    the sum 1."""

    @staticmethod
    def forward(ctx: Any, alpha: Tensor) -> Tensor:
        x = toolkit._sample_dirichlet(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        x, alpha = ctx.saved_tensors
        total = alpha.sum(-1, True).expand_as(alpha)
        return toolkit._dirichlet_grad(x, alpha, total) * (grad - (x * grad).sum(-1, True))


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution with concentration vector ``concentration`` (the last dim is the event).

    >>> Dirichlet(toolkit.tensor([1.0, 3.0])).mean
    tensor([0.2500, 0.7500])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (toolkit.xlogy(c - 1.0, value).sum(-1) + toolkit.lgamma(c.sum(-1))
                - toolkit.lgamma(c).sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # all concentrations below 1: the density peaks at a vertex (the largest concentration's)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = F.one_hot(mode[mask].argmax(dim=-1), cm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        total = c.sum(-1, True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.size(-1)
        total = c.sum(-1)
        return (toolkit.lgamma(c).sum(-1) - toolkit.lgamma(total) - (k - total) * toolkit.digamma(total)
                - ((c - 1.0) * toolkit.digamma(c)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - toolkit.lgamma(x.sum(-1))
