"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: randomized low-rank SVD (Halko et al., 2009).

PyTorch writes them in Python (``torch/_lowrank.py``); here they are the same compositions of registered
ops: a Gaussian sketch ``A R`` drawn with ``randn`` from the default generator (so after equal seeds the
sketch, and the results, equal PyTorch's), ``niter`` rounds of subspace iteration with QR, then the SVD of
the small projected matrix. Gradients flow through ``matmul``, ``linalg.qr`` and ``linalg.svd``.
"""

from __future__ import annotations

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import RANDOM, op


def _floating(A):
    return A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else _dt.float32


def _adjoint(x):
    """The conjugate transpose of the last two dims."""
    return x.mT.conj() if x.dtype.is_complex else x.mT


def _approximate_basis(A, q: int, niter, M):
    """Q with orthonormal columns such that ``Q Q^H (A - M)`` approximates ``A - M`` (Algorithm 4.4)."""
    niter = 2 if niter is None else niter
    R = api.randn((A.shape[-1], q), dtype=_floating(A))
    X = A.matmul(R)
    if M is not None:
        X = X - M.matmul(R)
    Q = api.linalg_qr(X)[0]
    for _ in range(niter):
        X = _adjoint(A).matmul(Q)
        if M is not None:
            X = X - _adjoint(M).matmul(Q)
        Q = api.linalg_qr(X)[0]
        X = A.matmul(Q)
        if M is not None:
            X = X - M.matmul(Q)
        Q = api.linalg_qr(X)[0]
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:
        A = _adjoint(A)
        if M is not None:
            M = _adjoint(M)
    Q = _approximate_basis(A, q, niter, M)
    B = _adjoint(Q).matmul(A)
    if M is not None:
        B = B - _adjoint(Q).matmul(M)
    U, S, Vh = api.linalg_svd(B, full_matrices=False)
    V = _adjoint(Vh)
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


@op("svd_lowrank(Tensor A, int? q=6, int? niter=2, Tensor? M=None) -> (Tensor U, Tensor S, Tensor V)",
    kind=RANDOM, out=False, method=False, composite=True, differentiable=False)
def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate SVD ``A ~ U diag(S) V^H`` of rank ``q`` (of ``A - M`` when ``M`` is given), by a
    random sketch and ``niter`` subspace iterations. Random: seed for repeatable results. Differentiable
    through its parts (``differentiable=False`` only keeps numerical gradient checks, which redraw the
    sketch, away from it).

    >>> U, S, V = toolkit.svd_lowrank(toolkit.randn(100, 30), q=5)
    """
    return _svd_lowrank(A, q, niter, M)


@op("pca_lowrank(Tensor A, int? q=None, bool center=True, int niter=2) -> (Tensor U, Tensor S, Tensor V)",
    kind=RANDOM, out=False, method=False, composite=True, differentiable=False)
def pca_lowrank(A, q=None, center=True, niter=2):
    """``svd_lowrank`` of the column-centered ``A`` (``center``): ``V``'s columns are the principal
    directions and ``S**2 / (m - 1)`` the variances along them. ``q`` defaults to ``min(6, m, n)``."""
    m, n = A.shape[-2:]
    q = _check_pca(m, n, q, niter)
    if not center:
        return _svd_lowrank(A, q, niter, None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter, None)


def _check_pca(m: int, n: int, q, niter) -> int:
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    return q


def _meta(A, q):
    m, n = A.shape[-2:]
    batch = tuple(A.shape[:-2])
    dtype = _floating(A)
    k = min(q, m, n) if m >= n else min(q, n, m)
    return (TensorMeta(batch + (m, k), dtype, A.device), TensorMeta(batch + (k,), dtype, A.device),
            TensorMeta(batch + (n, k), dtype, A.device))


@svd_lowrank.meta_rule
def _(A, q=6, niter=2, M=None):
    return _meta(A, 6 if q is None else q)


@pca_lowrank.meta_rule
def _(A, q=None, center=True, niter=2):
    m, n = A.shape[-2:]
    return _meta(A, _check_pca(m, n, q, niter))


@svd_lowrank.sample_inputs
def _(rng):
    yield (rng.standard_normal((8, 5)),), {"q": 3}
    yield (rng.standard_normal((4, 9)), 4, 1), {}
    yield (rng.standard_normal((2, 6, 5)), 2, 2, rng.standard_normal((1, 5))), {}


@pca_lowrank.sample_inputs
def _(rng):
    yield (rng.standard_normal((10, 4)),), {}
    yield (rng.standard_normal((5, 7)), 3, False), {}
