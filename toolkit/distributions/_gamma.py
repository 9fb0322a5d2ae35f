"""Standard gamma and Dirichlet sampling with reparametrized (implicit) gradients.

The gamma family (Gamma, Chi2, Beta, Dirichlet, StudentT, FisherSnedecor, NegativeBinomial, LKJCholesky,
Wishart) draws from the standard gamma distribution. Draws follow PyTorch's CPU sampler element by element
(Marsaglia and Tsang's squeeze method over the generator's 53-bit uniforms and its cached Box-Muller normals,
with the same float constants), so a seed gives the same numbers as ``torch._standard_gamma`` and
``torch._sample_dirichlet``.

Gradients are implicit: for ``x ~ Gamma(alpha, 1)`` with CDF ``P(alpha, x)`` held fixed,
``dx/dalpha = -(dP/dalpha) / p(x)``, where ``dP/dalpha`` is summed from the power series
``P(a, x) = sum_n exp((a + n) log x - x - lgamma(a + n + 1))`` in float64.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

import toolkit
from toolkit.autograd import Function
from toolkit.ops._distributions import _normal_scalar, uniform01_f64
from toolkit.tensor import Tensor

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))  # the sampler's 1/3, computed in single precision
_SQUEEZE_F = float(np.float32(0.0331))


def _draw_one(gen: Any, alpha: float, single: bool) -> float:
    """One standard gamma draw; ``single`` does the steps PyTorch does in float for float32 tensors."""
    f32 = np.float32
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        exponent = float(f32(1.0) / f32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1.0 - float(uniform01_f64(gen, 1)[0]), exponent)
        alpha = float(f32(alpha) + f32(1.0)) if single else alpha + 1.0
    d = float(f32(alpha) - f32(_THIRD_F)) if single else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = float(_normal_scalar(gen, 1, 0.0, 1.0)[0])
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - float(uniform01_f64(gen, 1)[0])
        xx = x * x
        if u < 1.0 - _SQUEEZE_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _draw(alpha: np.ndarray, single: bool) -> np.ndarray:
    gen = toolkit.default_generator
    flat = alpha.reshape(-1)
    out = np.empty(flat.shape, dtype=np.float64)
    for i, a in enumerate(flat.tolist()):
        out[i] = _draw_one(gen, a, single)
    return out.reshape(alpha.shape)


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """``dx/dalpha`` of a standard gamma draw ``x`` with its CDF held fixed (float64 inside)."""
    a = alpha.detach().double()
    xv = x.detach().double().clamp(min=1e-300)
    n_terms = int(math.ceil(float(xv.max()) + 12 * math.sqrt(float(xv.max())) + 40)) if xv.numel() else 1
    n = toolkit.arange(n_terms, dtype=toolkit.float64).view((-1,) + (1,) * a.dim())
    log_x = xv.log()
    an1 = a + n + 1
    log_terms = (a + n) * log_x - xv - toolkit.lgamma(an1)
    dp_da = (toolkit.exp(log_terms) * (log_x - toolkit.digamma(an1))).sum(0)
    log_pdf = (a - 1) * log_x - xv - toolkit.lgamma(a)
    return (-dp_da * toolkit.exp(-log_pdf)).to(alpha.dtype)


class _StandardGamma(Function):
    """``x ~ Gamma(alpha, 1)`` elementwise, differentiable in ``alpha``."""

    @staticmethod
    def forward(ctx: Any, alpha: Tensor) -> Tensor:
        a = alpha.detach().numpy()
        single = a.dtype != np.float64
        out = _draw(a, single).astype(a.dtype)
        out = np.maximum(out, np.finfo(a.dtype).tiny)
        x = toolkit.from_numpy(out)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        alpha, x = ctx.saved_tensors
        return grad * standard_gamma_grad(alpha, x)


def standard_gamma(alpha: Tensor) -> Tensor:
    """Standard gamma draws of shape ``alpha.shape``, reparametrized."""
    return _StandardGamma.apply(alpha)


def _dirichlet_draw(a: np.ndarray) -> np.ndarray:
    """Gamma draws in double (as PyTorch draws them for a Dirichlet), normalized, kept inside ``[tiny, 1)``
    in ``a``'s dtype."""
    gamma = np.maximum(_draw(a.astype(np.float64), single=False), np.finfo(np.float64).tiny)
    ratio = (gamma / gamma.sum(-1, keepdims=True)).astype(a.dtype)
    below_one = np.nextafter(a.dtype.type(1), a.dtype.type(0))
    return np.minimum(below_one, np.maximum(np.finfo(a.dtype).tiny, ratio))


@functools.cache
def _quadrature() -> tuple[np.ndarray, np.ndarray]:
    """64-point Gauss-Legendre nodes and weights on [0, 1] in ``u = v**4`` (which smooths the log singularity
    at ``u = 0``); made on first use, as numpy.polynomial costs import time."""
    nodes, weights = np.polynomial.legendre.leggauss(64)
    v = (nodes + 1) / 2
    return v**4, 4 * v**3 * weights / 2


def _digamma(v: np.ndarray) -> np.ndarray:
    return toolkit.digamma(toolkit.from_numpy(np.ascontiguousarray(v))).numpy()


def dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """PyTorch's ``_dirichlet_grad``: for ``x ~ Beta(alpha, beta)``, ``beta = total - alpha``, the implicit
    derivative ``dx/dalpha`` with ``beta`` and the CDF held fixed, divided by ``1 - x`` (the Dirichlet
    backward multiplies that factor back in). Float64 inside.

    ``dx/dalpha = -d_a I_x(a, b) / p(x)`` with ``d_a I_x = int_0^x p(t) (log t - digamma(a) + digamma(a + b)) dt``;
    substituting ``t = x u**(1/a)`` turns its ratio to the density at ``x`` into ``(x / a) (1 - x)**(1 - b)``
    times a smooth integral over ``u`` in [0, 1]. Points above 1/2 use the mirror ``I_x(a, b) =
    1 - I_{1-x}(b, a)``, which keeps ``t`` away from 1 (the log then falls on ``1 - t``).
    """
    xv = x.detach().double().numpy()
    a = alpha.detach().double().numpy()
    b = total.detach().double().numpy() - a
    xv, a, b = np.broadcast_arrays(xv, a, b)
    mirror = (xv > 0.5)[..., None]
    x1 = np.where(mirror, 1 - xv[..., None], xv[..., None])
    a1 = np.where(mirror, b[..., None], a[..., None])
    b1 = np.where(mirror, a[..., None], b[..., None])
    shift = _digamma(a[..., None] + b[..., None]) - _digamma(a[..., None])
    u, du = _quadrature()
    t = x1 * u ** (1 / a1)
    log_term = np.where(mirror, np.log1p(-t), np.log(t))  # log of the original t
    integrand = np.exp((b1 - 1) * np.log1p(-t)) * (log_term + shift)
    ratio = (x1 / a1)[..., 0] * np.exp((1 - b1[..., 0]) * np.log1p(-x1[..., 0])) * (integrand @ du)
    grad = np.where(mirror[..., 0], ratio, -ratio) / (1 - xv)
    return toolkit.from_numpy(grad).to(alpha.dtype)


class _Dirichlet(Function):
    """``x ~ Dirichlet(alpha)`` over the last dim, differentiable in ``alpha``: each coordinate moves along
    the implicit gradient of its Beta marginal, the others share the compensation that keeps the sum 1."""

    @staticmethod
    def forward(ctx: Any, alpha: Tensor) -> Tensor:
        x = toolkit.from_numpy(_dirichlet_draw(alpha.detach().numpy()))
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        alpha, x = ctx.saved_tensors
        total = alpha.sum(-1, keepdim=True).expand_as(alpha)
        return dirichlet_grad(x, alpha, total) * (grad - (x * grad).sum(-1, keepdim=True))


def sample_dirichlet(alpha: Tensor) -> Tensor:
    """Dirichlet draws over the last dim of ``alpha``, reparametrized."""
    return _Dirichlet.apply(alpha)
