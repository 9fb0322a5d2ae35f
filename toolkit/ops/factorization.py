"""Factorizations with several outputs: qr, svd, svdvals, eigh, eigvalsh (batched, LAPACK via numpy).

Eigenvectors and singular vectors are unique only up to sign. The signs come
from the LAPACK numpy links against; PyTorch's (MKL) build may pick the other
sign for some vectors (eigh, and svd of wide matrices), exactly as PyTorch's
own CPU and CUDA results can differ. Products such as ``U @ diag(S) @ Vh``
and every sign-invariant quantity agree.

The derivatives are the standard ones (PyTorch's formulas) written with
registered ops; they assume distinct singular values/eigenvalues and full rank.
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from ..return_types import structseq
from . import api
from ._linalg_checks import _dtype
from .decomposition import _diag, _eye_like, adjoint, check_matrix, hermitian_part
from .registry import LINALG, op


def _meta(shape, like):
    return TensorMeta(tuple(shape), _dtype(like), like.device)


def _real_meta(shape, like):
    """Singular values and Hermitian eigenvalues are real for complex input too."""
    return TensorMeta(tuple(shape), _dtype(like).to_real(), like.device)


def _rect_samples(rng):
    r = rng.standard_normal
    yield (r((3, 2)),), {}
    yield (r((2, 2)) + np.eye(2),), {}
    yield (r((2, 3, 2)),), {}
    yield (r((2, 3)).T,), {}


# ---------------------------------------------------------------------------------------------
# qr
# ---------------------------------------------------------------------------------------------
_QR_MODES = ("reduced", "complete", "r")


def _qr_shapes(name, a, mode):
    check_matrix(name, a)
    if mode not in _QR_MODES:
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    *batch, m, n = a.shape
    batch = tuple(batch)
    k = m if mode == "complete" else min(m, n)
    q = (0,) if mode == "r" else batch + (m, k)
    return q, batch + (k, n)


def _qr(name, a, mode):
    _qr_shapes(name, a, mode)
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r")
    q, r = np.linalg.qr(a, mode=mode)
    return q, r


def _qr_grad_tall(Q, R, gQ, gR):
    """``A = QR`` with ``m >= n``: gA = Q (gR + low R^-H) + (gQ - Q Q^H gQ) R^-H, where ``low`` is the lower
    triangle of the skew-Hermitian ``M = Q^H gQ + R gR^H - (...)^H``, its (imaginary) diagonal halved: R's
    diagonal is real, so only the phase part of the diagonal moves Q."""
    qdq = adjoint(Q).matmul(gQ)
    rdr = R.matmul(adjoint(gR))
    skew = qdq - adjoint(qdq) + rdr - adjoint(rdr)
    low = skew.tril(-1) + skew.diagonal(0, -2, -1).diag_embed() * 0.5 if skew.is_complex() else skew.tril()
    Rh = adjoint(R)
    ga = Q.matmul(gR + api.linalg_solve(Rh, low, left=False))
    return ga + api.linalg_solve(Rh, gQ - Q.matmul(qdq), left=False)


def _qr_grad(grad, result, mode):
    gQ, gR = grad
    Q, R = result
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
            "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
        )
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        return _qr_grad_tall(Q, R, gQ, gR)
    # Wide: A = Q [X | Y] with X = Q U square; Y = Q V shifts the gradient reaching Q.
    U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    gU, gV = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
    gX = _qr_grad_tall(Q, U, gQ + Q.matmul(V).matmul(adjoint(gV)), gU)
    return api.cat([gX, Q.matmul(gV)], -1)


@op("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", kind=LINALG, autocast="fp32", namespace="linalg",
    function="qr", method=False)
def linalg_qr(A, mode="reduced"):
    """QR decomposition ``A = QR`` (Householder, LAPACK's signs); ``mode`` is 'reduced', 'complete' or 'r'."""
    return _qr("linalg.qr", A, mode)


@op("qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", kind=LINALG, autocast="fp32",
    grad_fn="LinalgQrBackward0")
def qr(self, some=True):
    """QR decomposition, reduced when ``some`` (deprecated in PyTorch for ``linalg.qr``)."""
    return _qr("linalg.qr", self, "reduced" if some else "complete")


linalg_qr.return_type = structseq("linalg_qr", ("Q", "R"))
qr.return_type = structseq("qr", ("Q", "R"))


@linalg_qr.meta_rule
def _(A, mode="reduced"):
    return tuple(_meta(s, A) for s in _qr_shapes("linalg.qr", A, mode))


@qr.meta_rule
def _(self, some=True):
    return tuple(_meta(s, self) for s in _qr_shapes("linalg.qr", self, "reduced" if some else "complete"))


@linalg_qr.wirtinger_grad
def _(grad, mode, result):
    return _qr_grad(grad, result, mode)


@qr.wirtinger_grad
def _(grad, some, result):
    return _qr_grad(grad, result, "reduced" if some else "complete")


@linalg_qr.sample_inputs
def _(rng):
    yield from _rect_samples(rng)
    yield (rng.standard_normal((3, 3)),), {"mode": "complete"}
    yield (rng.standard_normal((2, 3)),), {"mode": "complete"}


@qr.sample_inputs
def _(rng):
    yield from _rect_samples(rng)
    yield (rng.standard_normal((2, 3)),), {"some": False}


# ---------------------------------------------------------------------------------------------
# svd
# ---------------------------------------------------------------------------------------------
def _svd_shapes(name, a, full):
    check_matrix(name, a)
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    return batch + ((m, m) if full else (m, k)), batch + (k,), batch + ((n, n) if full else (k, n))


def _svd(a, full):
    if a.size == 0:
        *batch, m, n = a.shape
        k = min(m, n)
        eye = lambda d, c: np.broadcast_to(np.eye(d, c, dtype=a.dtype), tuple(batch) + (d, c)).copy()  # noqa: E731
        return eye(m, m if full else k), np.zeros(tuple(batch) + (k,), a.real.dtype), eye(n if full else k, n)
    return np.linalg.svd(a, full_matrices=full)


def svd_backward(gU, gS, gVh, U, S, Vh):
    """PyTorch's svd_backward for the reduced factors (any of the grads may be None), in the
    conjugate-Wirtinger convention. Singular vectors of a complex matrix are fixed only up to a phase
    each: a loss that depends on it (``imag(diag(U^H gU + V^H gV))`` not zero) raises."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)).matmul(Vh).to(U.dtype)
    k = S.shape[-1]
    S2 = S * S
    eye = _eye_like(S, k)
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
    inner = 0
    uhgu = adjoint(U).matmul(gU) if gU is not None else None
    if gU is not None:
        inner = (uhgu - adjoint(uhgu)) * S.unsqueeze(-2)
    if gVh is not None:
        vhgv = Vh.matmul(adjoint(gVh))
        inner = inner + S.unsqueeze(-1) * (vhgv - adjoint(vhgv))
        if U.is_complex():
            check_phase("svd_backward", vhgv, uhgu)
    gA = inner / E
    if U.is_complex():
        gA = gA * (1 - eye)
        if uhgu is not None:
            gA = gA + _diag(api.imag(uhgu.diagonal(0, -2, -1)) / S) * 1j
    if gS is not None:
        gA = gA + _diag(gS)
    if m > n and gU is not None:
        gA = U.matmul(gA)
        gus = gU / S.unsqueeze(-2)
        gA = (gA + gus - U.matmul(adjoint(U).matmul(gus))).matmul(Vh)
    elif m < n and gVh is not None:
        gA = gA.matmul(Vh)
        sgv = gVh / S.unsqueeze(-1)
        gA = U.matmul(gA + sgv - sgv.matmul(adjoint(Vh)).matmul(Vh))
    else:
        gA = U.matmul(gA).matmul(Vh)
    return gA


def check_phase(name, vhgv, uhgu=None):
    """PyTorch's gauge check: the loss must not depend on the phases of the complex singular/eigenvectors."""
    d = vhgv.diagonal(0, -2, -1)
    if uhgu is not None:
        d = d + uhgu.diagonal(0, -2, -1)
    im = api.imag(d)
    if not bool(api.allclose(im, api.zeros_like(im), rtol=1e-2, atol=1e-2)):
        what = "singular vectors" if name == "svd_backward" else "eigenvectors"
        tail = ("depends on this phase term, making it ill-defined." if name == "svd_backward"
                else "depends on this quantity, so it is ill-defined.")
        raise RuntimeError(f"{name}: The {what} in the complex case are specified up to multiplication by "
                           f"e^{{i phi}}. The specified loss function {tail}")


def _narrow_full(gU, gVh, U, Vh, k):
    """The extra columns of full U/Vh are not unique and carry no gradient: keep the first k."""
    if U.shape[-1] != k:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
    if Vh.shape[-2] != k:
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    return gU, gVh, U, Vh


@op("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)",
    kind=LINALG, autocast="fp32", namespace="linalg", function="svd", method=False)
def linalg_svd(A, full_matrices=True, driver=None):
    """Singular value decomposition ``A = U diag(S) Vh`` with S descending."""
    _svd_shapes("linalg.svd", A, full_matrices)
    return _svd(A, full_matrices)


linalg_svd.return_type = structseq("linalg_svd", ("U", "S", "Vh"))


@linalg_svd.meta_rule
def _(A, full_matrices=True, driver=None):
    u, s, vh = _svd_shapes("linalg.svd", A, full_matrices)
    return _meta(u, A), _real_meta(s, A), _meta(vh, A)


@linalg_svd.wirtinger_grad
def _(grad, result):
    gU, gS, gVh = grad
    U, S, Vh = result
    gU, gVh, U, Vh = _narrow_full(gU, gVh, U, Vh, S.shape[-1])
    return svd_backward(gU, gS, gVh, U, S, Vh)


@linalg_svd.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((3, 3)),), {}
    yield (r((2, 2, 2)),), {}
    yield (r((3, 2)),), {"full_matrices": False}
    yield (r((2, 4, 2)),), {"full_matrices": False}
    yield (r((2, 3)).T,), {"full_matrices": False}


@op("svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)", kind=LINALG, autocast="fp32",
    grad_fn="LinalgSvdBackward0")
def svd(self, some=True, compute_uv=True):
    """``A = U diag(S) V^T`` (V, not Vh); with ``compute_uv=False`` U and V are zero-filled (m, m), (n, n)."""
    _svd_shapes("linalg.svd", self, not some)
    if not compute_uv:
        *batch, m, n = self.shape
        s = np.linalg.svd(self, compute_uv=False) if self.size else np.zeros(tuple(batch) + (min(m, n),), self.real.dtype)
        return np.zeros(tuple(batch) + (m, m), self.dtype), s, np.zeros(tuple(batch) + (n, n), self.dtype)
    u, s, vh = _svd(self, not some)
    return u, s, np.conj(np.swapaxes(vh, -1, -2))


svd.return_type = structseq("svd", ("U", "S", "V"))


@svd.meta_rule
def _(self, some=True, compute_uv=True):
    u, s, vh = _svd_shapes("linalg.svd", self, not (some and compute_uv))
    return _meta(u, self), _real_meta(s, self), _meta(vh[:-2] + vh[-2:][::-1], self)


@svd.wirtinger_grad
def _(grad, self, compute_uv, result):
    gU, gS, gV = grad
    if not compute_uv:
        U, S, Vh = api.linalg_svd(self, full_matrices=False)
        return svd_backward(None, gS, None, U, S, Vh)
    U, S, V = result
    gU, gVh, U, Vh = _narrow_full(gU, adjoint(gV), U, adjoint(V), S.shape[-1])
    return svd_backward(gU, gS, gVh, U, S, Vh)


@svd.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((3, 2)),), {}
    yield (r((2, 3, 2)),), {}
    yield (r((2, 2)),), {"some": False}
    yield (r((3, 2)),), {"compute_uv": False}


@op("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor", kind=LINALG, autocast="fp32", namespace="linalg",
    function="svdvals", method=False, grad_fn="LinalgSvdBackward0")
def linalg_svdvals(A, driver=None):
    """Singular values, descending (no singular vectors are formed)."""
    check_matrix("linalg.svdvals", A)
    if A.size == 0:
        return np.zeros(A.shape[:-2] + (min(A.shape[-2:]),), A.real.dtype)
    return np.linalg.svd(A, compute_uv=False)


@linalg_svdvals.meta_rule
def _(A, driver=None):
    return _real_meta(_svd_shapes("linalg.svdvals", A, False)[1], A)


@linalg_svdvals.wirtinger_grad
def _(grad, A):
    U, S, Vh = api.linalg_svd(A, full_matrices=False)
    return svd_backward(None, grad, None, U, S, Vh)


linalg_svdvals.sample_inputs(_rect_samples)


# ---------------------------------------------------------------------------------------------
# eigh
# ---------------------------------------------------------------------------------------------
def _eigh_check(name, a, UPLO):
    check_matrix(name, a, square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return a.shape[:-1], a.shape


def _sym(a):
    """The Hermitian part: eigh's input, whose derivative is then the Hermitian gradient PyTorch returns."""
    return hermitian_part(a)


@op("linalg_eigh(Tensor self, str UPLO='L') -> (Tensor eigenvalues, Tensor eigenvectors)", kind=LINALG, autocast="fp32",
    namespace="linalg", function="eigh", method=False)
def linalg_eigh(self, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices."""
    _eigh_check("linalg.eigh", self, UPLO)
    w, v = np.linalg.eigh(_sym(self))
    return w, v


linalg_eigh.return_type = structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))


@linalg_eigh.meta_rule
def _(self, UPLO="L"):
    values, vectors = _eigh_check("linalg.eigh", self, UPLO)
    return _real_meta(values, self), _meta(vectors, self)


@linalg_eigh.wirtinger_grad
def _(grad, result):
    gL, gV = grad
    L, V = result
    if gV is None:
        return (V * gL.unsqueeze(-2)).matmul(adjoint(V))
    k = adjoint(V).matmul(gV)
    if V.is_complex():
        check_phase("linalg_eigh_backward", k)
    n = L.shape[-1]
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + _eye_like(L, n)
    inner = (k - adjoint(k)) * 0.5 / E
    if V.is_complex():
        inner = inner * (1 - _eye_like(L, n))
    if gL is not None:
        inner = inner + _diag(gL)
    return V.matmul(inner).matmul(adjoint(V))


def _sym_samples(rng):
    a = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, -1.0]])
    yield (a,), {}
    yield (np.array([[1.0, 0.2], [0.2, 3.0]]),), {"UPLO": "U"}
    yield (np.stack([np.array([[1.0, 0.3], [0.3, 2.0]]), np.array([[2.0, -0.5], [-0.5, 1.0]])]),), {}


linalg_eigh.sample_inputs(_sym_samples)


@op("linalg_eigvalsh(Tensor self, str UPLO='L') -> Tensor", kind=LINALG, autocast="fp32", namespace="linalg",
    function="eigvalsh", method=False, grad_fn="LinalgEighBackward0")
def linalg_eigvalsh(self, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices."""
    _eigh_check("linalg.eigvalsh", self, UPLO)
    return np.linalg.eigvalsh(_sym(self))


@linalg_eigvalsh.meta_rule
def _(self, UPLO="L"):
    return _real_meta(_eigh_check("linalg.eigvalsh", self, UPLO)[0], self)


@linalg_eigvalsh.wirtinger_grad
def _(grad, self, UPLO):
    V = api.linalg_eigh(self, UPLO)[1]
    return (V * grad.unsqueeze(-2)).matmul(adjoint(V))


linalg_eigvalsh.sample_inputs(_sym_samples)
