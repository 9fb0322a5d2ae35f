"""``ExponentialFamily``: distributions whose density is ``h(x) exp(<t(x), theta> - F(theta))``.

Knowing the natural parameters ``theta`` and the log normalizer ``F`` gives the entropy (and the KL divergence
between two members of one family) from autograd alone, as a Bregman divergence of ``F``.
"""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.distributions.distribution import Distribution
from toolkit.tensor import Tensor

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions: subclasses give ``_natural_params``,
    ``_log_normalizer`` and ``_mean_carrier_measure`` (``E[log h(x)]``)."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """``F(theta) - <theta, grad F(theta)> - E[log h(x)]``, with ``grad F`` from autograd."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = toolkit.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for param, grad in zip(params, grads):
            result = result - (param * grad).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
