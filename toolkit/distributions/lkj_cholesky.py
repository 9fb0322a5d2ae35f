"""The LKJ distribution over Cholesky factors of correlation matrices (Lewandowski, Kurowicka and Joe,
2009), sampled by the onion method."""

from __future__ import annotations

import math
from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.beta import Beta
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.utils import broadcast_all
from toolkit.tensor import Tensor

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution of ``dim x dim`` lower Cholesky factors ``L`` with density proportional to
    ``det(L L^T)**(concentration - 1)``.

    >>> LKJCholesky(3, 0.5).event_shape
    toolkit.Size([3, 3])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i of the factor is a point whose squared norm (without the diagonal) is Beta(i/2, c + (D-2-i)/2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = toolkit.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = toolkit.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._expand_params(LKJCholesky, batch_shape, _instance, ("concentration",), copy=("dim",))
        new._beta = self._beta.expand(tuple(Size(batch_shape)) + (self.dim,))
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = toolkit.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)  # the first row is (1, 0, ..., 0): no direction to draw
        w = toolkit.sqrt(y) * u_hypersphere
        eps = toolkit.finfo(w.dtype).tiny
        diag = toolkit.clamp(1 - toolkit.sum(w**2, dim=-1), min=eps).sqrt()
        return w + toolkit.diag_embed(diag)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = toolkit.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = toolkit.sum(order * diag.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + toolkit.mvlgamma(alpha - 0.5, dm1) - toolkit.lgamma(alpha) * dm1
        return unnormalized - normalize
