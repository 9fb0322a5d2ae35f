"""The multinomial distribution: counts per category over ``total_count`` categorical draws."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.binomial import Binomial
from toolkit.distributions.categorical import Categorical
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.utils import broadcast_all
from toolkit.tensor import Tensor

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Multinomial distribution; ``total_count`` is one int shared by the batch (``sample`` needs it),
    though ``log_prob`` accepts any counts.

    >>> Multinomial(4, probs=toolkit.tensor([1.0, 1.0])).mean
    tensor([2., 2.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    total_count: int

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> Any:
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
        # the draws' dim goes last, then each draw adds one to its category's count
        order = list(range(1, samples.dim())) + [0]
        samples = samples.permute(*order)
        counts = toolkit.zeros(self._extended_shape(sample_shape), dtype=samples.dtype, device=samples.device)
        counts.scatter_add_(-1, samples, toolkit.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        n = toolkit.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - toolkit.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = toolkit.exp(self._binomial.log_prob(support))
        weights = toolkit.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = toolkit.lgamma(value.sum(-1) + 1)
        log_factorial_xs = toolkit.lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -float("inf"))] = 0  # 0 draws of an impossible category: factor 1
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
