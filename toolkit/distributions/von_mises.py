"""The von Mises distribution: the circular analogue of the normal, on angles."""

from __future__ import annotations

import math
from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.utils import broadcast_all, lazy_property
from toolkit.ops import api
from toolkit.tensor import Tensor

__all__ = ["VonMises"]

_ASYMPTOTIC_FROM = 50.0  # above this, I_n(x) would overflow float32; its asymptotic series is exact enough


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log I_order(x)`` for ``x > 0`` and order 0 or 1: the function itself for moderate ``x``, Hankel's
    asymptotic series ``e^x / sqrt(2 pi x) * sum_k (-1)^k a_k(order) / x^k`` for large ``x``."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    small_x = x.clamp(max=_ASYMPTOTIC_FROM)
    direct = toolkit.log(toolkit.i0(small_x) if order == 0 else api.special_i1(small_x))
    large_x = x.clamp(min=_ASYMPTOTIC_FROM)
    mu = 4.0 * order * order
    term = toolkit.ones_like(large_x)
    series = toolkit.ones_like(large_x)
    for k in range(1, 8):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * large_x)
        series = series + term
    asymptotic = large_x - 0.5 * toolkit.log(2 * math.pi * large_x) + toolkit.log(series)
    return toolkit.where(x < _ASYMPTOTIC_FROM, direct, asymptotic)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, x: Tensor) -> Tensor:
    """Best and Fisher's (1979) wrapped-Cauchy envelope rejection sampler; every round draws three
    uniforms per element; an element accepted again in a later round takes the later value."""
    done = toolkit.zeros(x.shape, dtype=toolkit.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = toolkit.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = toolkit.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = toolkit.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Von Mises distribution with mean direction ``loc`` (radians, any real) and ``concentration``.

    >>> VonMises(toolkit.tensor(1.0), toolkit.tensor(1.0)).mode
    tensor(1.)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * toolkit.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    # sampling runs in double: in single precision the rejection loop stalls for tiny concentrations
    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(toolkit.double)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(toolkit.double)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return toolkit.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with toolkit.no_grad():
            shape = self._extended_shape(sample_shape)
            x = toolkit.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    @property
    def mean(self) -> Tensor:
        """The circular mean."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        """The circular variance ``1 - I_1(k) / I_0(k)``."""
        k = self.concentration
        return 1 - (_log_modified_bessel_fn(k, order=1) - _log_modified_bessel_fn(k, order=0)).exp()
