"""The binomial distribution: successes in ``total_count`` Bernoulli trials."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.utils import _count_and_param, binary_logits, binary_probs
from toolkit.tensor import Tensor

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    """``max(x, 0)`` whose gradient at 0 is 1/2 (the mean of the one-sided gradients)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(total_count: Tensor, what: str) -> int:
    """The one ``total_count`` of the batch; enumerating values needs a common one."""
    count = int(total_count.max())
    if not count == total_count.min():
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return count


class Binomial(Distribution):
    """Binomial distribution with ``total_count`` trials of success probability ``probs`` (or
    ``sigmoid(logits)``); ``total_count`` broadcasts with the probabilities.

    >>> Binomial(10, probs=toolkit.tensor(0.5)).mean
    tensor(5.)
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.total_count, self._param, is_probs = _count_and_param(total_count, probs, logits)
        setattr(self, "probs" if is_probs else "logits", self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        return self._expand_params(Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    logits = binary_logits
    probs = binary_probs

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with toolkit.no_grad():
            return toolkit.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = toolkit.lgamma(n + 1)
        log_factorial_k = toolkit.lgamma(value + 1)
        log_factorial_nmk = toolkit.lgamma(n - value + 1)
        # n * log1p(exp(logits)), written so that it neither overflows nor loses precision
        normalize_term = (n * _clamp_by_zero(self.logits) + n * toolkit.log1p(toolkit.exp(-toolkit.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> Tensor:
        _homogeneous_count(self.total_count, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(toolkit.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        count = _homogeneous_count(self.total_count, "enumerate_support")
        values = toolkit.arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
