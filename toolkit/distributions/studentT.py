"""Student's t distribution: a normal whose precision is drawn from a scaled chi-squared."""

from __future__ import annotations

import math
from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.chi2 import Chi2
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.utils import _standard_normal, broadcast_all
from toolkit.tensor import Tensor

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    >>> StudentT(3.0).mean
    tensor(0.)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        m = self.df.clone()
        finite = self.df > 2
        m[finite] = self.scale[finite].pow(2) * self.df[finite] / (self.df[finite] - 2)
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        # X / sqrt(Z / df) with X ~ N(0, 1), Z ~ Chi2(df): the normal draws come first
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * toolkit.rsqrt(z / self.df))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        log_norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                    + toolkit.lgamma(0.5 * df) - toolkit.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * toolkit.log1p(y**2.0 / df) - log_norm

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = toolkit.lgamma(0.5 * df) + math.lgamma(0.5) - toolkit.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (toolkit.digamma(0.5 * (df + 1)) - toolkit.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
