"""Products of Householder reflectors: linalg.householder_product and its older name orgqr.

``A`` holds the reflectors' vectors below its diagonal (as ``geqrf`` leaves them, the leading 1 implicit)
and ``tau`` their scales: the result is the first ``n`` columns of ``H_1 ... H_k`` with
``H_i = I - tau_i v_i v_i^H``. The derivative differentiates that product factor by factor, with
registered ops, in the conjugate-Wirtinger convention (a reflector is not complex-analytic in ``v``).
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from . import api
from ._linalg_checks import _dtype, scalar_name
from .decomposition import adjoint, check_float
from .registry import LINALG, op

_NAME = "torch.linalg.householder_product"


def _householder_check(A, tau):
    if len(A.shape) < 2:
        raise RuntimeError(f"{_NAME}: input must have at least 2 dimensions.")
    if len(tau.shape) < 1:
        raise RuntimeError(f"{_NAME}: tau must have at least 1 dimension.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{_NAME}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{_NAME}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if len(A.shape) - len(tau.shape) != 1:
        raise RuntimeError(f"{_NAME}: Expected tau to have one dimension less than input, but got tau.ndim equal "
                           f"to {len(tau.shape)} and input.ndim is equal to {len(A.shape)}")
    if tuple(A.shape[:-2]) != tuple(tau.shape[:-1]):
        raise RuntimeError(f"{_NAME}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if _dtype(A) is not _dtype(tau):
        raise RuntimeError(f"{_NAME}: tau dtype {scalar_name(tau)} does not match input dtype {scalar_name(A)}")
    check_float(_NAME, A)
    return TensorMeta(tuple(A.shape), _dtype(A), A.device)


def _product(A, tau):
    _householder_check(A, tau)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    q = np.broadcast_to(np.eye(m, n, dtype=A.dtype), A.shape).copy()
    for i in range(k - 1, -1, -1):
        v = np.zeros(A.shape[:-2] + (m,), A.dtype)
        v[..., i] = 1
        v[..., i + 1:] = A[..., i + 1:, i]
        w = np.einsum("...m,...mn->...n", np.conj(v), q)
        q -= tau[..., i, None, None] * v[..., :, None] * w[..., None, :]
    return q


def _reflector(v, t, eye):
    return eye - t.unsqueeze(-1).unsqueeze(-1) * (v.unsqueeze(-1) * v.conj().unsqueeze(-2))


def householder_product_vjp(grad, A, tau, needs_input_grad):
    """The gradients of ``householder_product(A, tau)`` for ``grad`` of the product, with registered ops
    (so they differentiate again); ``None`` where ``needs_input_grad`` is false."""
    return _householder_grad(grad, A, tau, needs_input_grad)


def _householder_grad(grad, A, tau, needs_input_grad):
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    eye = api.eye(m, dtype=A.dtype)
    V = A.tril(-1) + api.eye(m, n, dtype=A.dtype)
    vs = [V.select(-1, i) for i in range(k)]
    hs = [_reflector(vs[i], tau.select(-1, i), eye) for i in range(k)]
    rights = [None] * k  # H_{i+1} ... H_{k-1} E
    acc = api.eye(m, n, dtype=A.dtype)
    for i in range(k - 1, -1, -1):
        rights[i] = acc
        acc = hs[i].matmul(acc)
    left = None
    g_cols, g_tau = [], []
    for i in range(k):
        gh = grad.matmul(adjoint(rights[i]))
        if left is not None:
            gh = adjoint(left).matmul(gh)
        v = vs[i].unsqueeze(-1)
        t = tau.select(-1, i).unsqueeze(-1)
        g_tau.append(-(adjoint(v).matmul(gh).matmul(v)).squeeze(-1).squeeze(-1))
        gv = -(t.conj() * gh.matmul(v).squeeze(-1) + t * adjoint(gh).matmul(v).squeeze(-1))
        mask = (api.arange(m) > i).to(A.dtype)
        g_cols.append(gv * mask)
        left = hs[i] if left is None else left.matmul(hs[i])
    zero = api.zeros(tuple(A.shape[:-1]), dtype=A.dtype)
    g_cols += [zero] * (n - k)
    gA = api.stack(g_cols, -1) if needs_input_grad[0] else None
    gt = api.stack(g_tau, -1) if needs_input_grad[1] else None
    return gA, gt


@op("linalg_householder_product(Tensor input, Tensor tau) -> Tensor", kind=LINALG, out="cast", autocast="fp32", namespace="linalg",
    function="householder_product", method=False)
def linalg_householder_product(input, tau):
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` from below
    ``input``'s diagonal (the Q of a QR factorization given ``geqrf``'s output)."""
    return _product(input, tau)


@op("orgqr(Tensor self, Tensor input2) -> Tensor", kind=LINALG, out="cast", autocast="fp32",
    grad_fn="LinalgHouseholderProductBackward0")
def orgqr(self, input2):
    """``linalg.householder_product`` under LAPACK's name."""
    return _product(self, input2)


linalg_householder_product.meta_rule(_householder_check)
orgqr.meta_rule(_householder_check)


@linalg_householder_product.wirtinger_grad
def _(grad, input, tau, needs_input_grad):
    return _householder_grad(grad, input, tau, needs_input_grad)


@orgqr.wirtinger_grad
def _(grad, self, input2, needs_input_grad):
    return _householder_grad(grad, self, input2, needs_input_grad)


def _samples(rng):
    r = rng.standard_normal
    yield (r((3, 2)), r(2)), {}
    yield (r((3, 3)), r(2)), {}
    yield (r((2, 4, 2)), r((2, 1))), {}


linalg_householder_product.sample_inputs(_samples)
orgqr.sample_inputs(_samples)
