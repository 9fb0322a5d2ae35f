"""LAPACK's Householder QR: ``geqrf`` (the factorization in LAPACK's packed layout) and ``ormqr``
(multiplying by its Q without forming it).

``geqrf`` leaves R on and above the diagonal and, below it, the vectors ``v_i`` of the reflectors
``H_i = I - tau_i v_i v_i^T`` (their leading 1 implicit), with the scales in ``tau``: exactly the layout
``linalg.householder_product`` and ``ormqr`` read. Each reflector is LAPACK's ``dlarfg``: ``beta =
-sign(alpha) * ||(alpha, x)||``, ``tau = (beta - alpha) / beta``, ``v = x / (alpha - beta)``, and
``tau = 0`` when ``x`` is already zero. PyTorch gives ``geqrf`` no derivative; ``ormqr`` is a
composition of registered ops, so it differentiates in every argument.
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from ..return_types import structseq
from . import api
from ._linalg_checks import _dtype, scalar_name
from .householder import householder_product_vjp
from .registry import LINALG, op


def _geqrf_check(self):
    if len(self.shape) < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not _dtype(self).is_floating_point:
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{scalar_name(self)}'")


def _geqrf_matrix(a: np.ndarray, tau: np.ndarray) -> None:
    """Factor one matrix in place (unblocked ``dgeqr2``)."""
    m, n = a.shape
    for j in range(min(m, n)):
        alpha = a[j, j]
        x = a[j + 1:, j]
        xnorm = np.linalg.norm(x) if x.size else 0.0
        if xnorm == 0:
            tau[j] = 0
            continue
        beta = -np.copysign(np.hypot(alpha, xnorm), alpha)
        tau[j] = (beta - alpha) / beta
        x *= 1 / (alpha - beta)
        a[j, j] = beta
        if j + 1 < n:
            v = np.concatenate(([1], x)).astype(a.dtype)
            rest = a[j:, j + 1:]
            rest -= tau[j] * np.outer(v, v @ rest)


@op("geqrf(Tensor self) -> (Tensor a, Tensor tau)", kind=LINALG, out="cast", autocast="fp32", differentiable=False)
def geqrf(self):
    """Householder QR in LAPACK's packed layout: ``(a, tau)`` with R on and above ``a``'s diagonal and the
    reflectors below it; ``linalg.householder_product(a, tau)`` is Q.

    >>> a, tau = toolkit.geqrf(toolkit.randn(4, 3))
    """
    _geqrf_check(self)
    m, n = self.shape[-2:]
    a = np.array(self, dtype=self.dtype, copy=True)
    tau = np.zeros(self.shape[:-2] + (min(m, n),), dtype=self.dtype)
    flat_a, flat_tau = a.reshape(-1, m, n), tau.reshape(-1, min(m, n))
    for b in range(flat_a.shape[0]):
        _geqrf_matrix(flat_a[b], flat_tau[b])
    return flat_a.reshape(self.shape), flat_tau.reshape(tau.shape)


geqrf.return_type = structseq("geqrf", ("a", "tau"))


@geqrf.meta_rule
def _(self):
    _geqrf_check(self)
    m, n = self.shape[-2:]
    return (TensorMeta(tuple(self.shape), _dtype(self), self.device),
            TensorMeta(tuple(self.shape[:-2]) + (min(m, n),), _dtype(self), self.device))


def _ormqr_check(self, tau, other, left):
    name = "torch.ormqr"
    if len(self.shape) < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if len(other.shape) < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    left_dim = -2 if left else -1
    if other.shape[left_dim] != self.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{left_dim}] must be equal to input.shape[-2]")
    if tau.shape[-1] != min(other.shape[left_dim], self.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{left_dim}], input.shape[-1])")
    if len(self.shape) - len(tau.shape) != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal "
                           f"to {len(tau.shape)} and input.ndim is equal to {len(self.shape)}")
    if len(self.shape) != len(other.shape):
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {len(other.shape)} and input.ndim is equal to {len(self.shape)}")
    for t, label in ((tau, "tau"), (other, "other")):
        if _dtype(t) is not _dtype(self):
            raise RuntimeError(f"{name}: Expected input and {label} to have the same dtype, but input has dtype "
                               f"{scalar_name(self)} and {label} has dtype {scalar_name(t)}")
    if not _dtype(self).is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {scalar_name(self)}")


@op("ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
    kind=LINALG, autocast="fp32", composite=True)
def ormqr(self, input2, input3, left=True, transpose=False):
    """``input3`` multiplied by the Q of ``geqrf``'s output ``(self, input2)``, without forming Q: ``Q C``
    (``left``), ``C Q`` (not ``left``), with ``Q^T`` when ``transpose``.

    >>> a, tau = toolkit.geqrf(A)
    >>> toolkit.ormqr(a, tau, C)  # equals toolkit.linalg.householder_product(a, tau) @ C for square A
    """
    _ormqr_check(self, input2, input3, left)
    m, k = self.shape[-2], input2.shape[-1]
    eye = api.eye(m, k, dtype=self.dtype)
    V = self.narrow(-1, 0, k).tril(-1) + eye
    # Q = H_1 ... H_k: Q C applies H_k first, Q^T C applies H_1 first; C Q applies H_1 first.
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    out = input3
    for i in order:
        v = V.select(-1, i).unsqueeze(-1)  # (..., m, 1)
        t = input2.select(-1, i).unsqueeze(-1).unsqueeze(-1)
        if left:
            out = out - t * v.matmul(v.mT.matmul(out))
        else:
            out = out - t * out.matmul(v).matmul(v.mT)
    return out


@ormqr.grad
def _(grad, self, input2, input3, left, transpose, needs_input_grad):
    """Through the full m x m Q (the reflectors padded with identity ones, ``tau = 0``): ``ormqr`` is linear
    in ``input3``, and Q's gradient goes to the reflectors by ``householder_product``'s rule."""
    m, k = self.shape[-2], input2.shape[-1]
    g_other = ormqr(self, input2, grad, left, not transpose) if needs_input_grad[2] else None
    g_self = g_tau = None
    if needs_input_grad[0] or needs_input_grad[1]:
        g_op = grad.matmul(input3.mT) if left else input3.mT.matmul(grad)  # gradient of op(Q)
        g_q = g_op.mT if transpose else g_op
        batch = tuple(self.shape[:-2])
        a_pad = api.cat([self.narrow(-1, 0, k), api.zeros(batch + (m, m - k), dtype=self.dtype)], -1)
        tau_pad = api.cat([input2, api.zeros(batch + (m - k,), dtype=input2.dtype)], -1)
        ga, gt = householder_product_vjp(g_q, a_pad, tau_pad, (True, True))
        if needs_input_grad[0]:
            n = self.shape[-1]
            g_self = api.cat([ga.narrow(-1, 0, k), api.zeros(batch + (m, n - k), dtype=self.dtype)], -1)
        if needs_input_grad[1]:
            g_tau = gt.narrow(-1, 0, k)
    return g_self, g_tau, g_other


@ormqr.meta_rule
def _(self, input2, input3, left=True, transpose=False):
    _ormqr_check(self, input2, input3, left)
    return TensorMeta(tuple(input3.shape), _dtype(input3), input3.device)


@geqrf.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((4, 3)),), {}
    yield (r((3, 4)),), {}
    yield (r((2, 3, 3)).astype(np.float32),), {}
    yield (np.zeros((3, 2)),), {}


@ormqr.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((4, 3)), r(3), r((4, 2))), {}
    yield (r((4, 3)), r(3), r((2, 4))), {"left": False}
    yield (r((4, 3)), r(3), r((4, 5))), {"transpose": True}
    yield (r((3, 4)), r(3), r((3, 2))), {}
    yield (r((2, 3, 3)), r((2, 3)), r((2, 2, 3))), {"left": False, "transpose": True}
