"""The multivariate normal with a low-rank-plus-diagonal covariance ``W W^T + diag(D)``: log densities and
samples cost O(n m^2) instead of O(n^3), through the Woodbury identity and the capacitance matrix
``I + W^T D^{-1} W``."""

from __future__ import annotations

import math
from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv
from toolkit.distributions.utils import _standard_normal, lazy_property
from toolkit.tensor import Tensor

__all__ = ["LowRankMultivariateNormal"]


def _eye_like(k: Tensor) -> Tensor:
    return toolkit.eye(k.shape[-1], dtype=k.dtype, device=k.device)


def _batch_capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """The Cholesky factor of ``I + W^T D^{-1} W``."""
    k = toolkit.matmul(w.mT / d.unsqueeze(-2), w)
    return toolkit.linalg.cholesky(k + _eye_like(k))


def _batch_lowrank_logdet(w: Tensor, d: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``log det(W W^T + D) = log det(capacitance) + log det(D)`` (matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)


def _batch_lowrank_mahalanobis(w: Tensor, d: Tensor, x: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``x^T (W W^T + D)^{-1} x`` by the Woodbury identity."""
    wt_dinv_x = _batch_mv(w.mT / d.unsqueeze(-2), x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``.

    >>> LowRankMultivariateNormal(toolkit.zeros(3), toolkit.ones(3, 1), toolkit.ones(3)).variance
    tensor([2., 2., 2.])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = toolkit.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        return self._expand_params(
            LowRankMultivariateNormal, batch_shape, _instance, ("loc", "cov_diag", "cov_factor"),
            copy=("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril"))

    def _shape(self, *extra: int) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape) + extra

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (w.pow(2).sum(-1) + d).expand(self._shape())

    @lazy_property
    def scale_tril(self) -> Tensor:
        # D^{1/2} chol(I + D^{-1/2} W W^T D^{-1/2}) is a lower factor of the covariance
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / d_sqrt
        k = toolkit.matmul(dinvsqrt_w, dinvsqrt_w.mT)
        return (d_sqrt * toolkit.linalg.cholesky(k + _eye_like(k))).expand(self._shape(self._event_shape[0]))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (toolkit.matmul(w, w.mT) + toolkit.diag_embed(d)).expand(self._shape(self._event_shape[0]))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # Woodbury: D^{-1} - D^{-1} W capacitance^{-1} W^T D^{-1}
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        a = toolkit.linalg.solve_triangular(self._capacitance_tril, w.mT / d.unsqueeze(-2), upper=False)
        precision = toolkit.diag_embed(d.reciprocal()) - a.mT @ a
        return precision.expand(self._shape(self._event_shape[0]))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = _standard_normal(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        w, d, cap = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        m = _batch_lowrank_mahalanobis(w, d, value - self.loc, cap)
        log_det = _batch_lowrank_logdet(w, d, cap)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self) -> Tensor:
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
