"""Eigen-decomposition of general square matrices: ``linalg_eig`` and ``linalg_eigvals`` (complex results).

A real matrix may have complex eigenvalues, so both ops return the complex dtype of their input's
precision (float32 -> complex64, float64 -> complex128), as PyTorch does. The kernels are LAPACK's
``geev`` (via numpy): each eigenvector has unit 2-norm and its largest component real, the
normalization PyTorch's CPU results carry too. The order of the eigenvalues is LAPACK's.

Eigenvectors are fixed only up to a phase ``e^{i phi}`` each, so a loss that depends on that phase has no
derivative: the backward checks that ``imag(diag(V^H gV))`` vanishes and raises otherwise, as PyTorch does.
The derivative is the standard one, with ``E_ij = L_j - L_i``::

    gA = V^{-H} (diag(gL) + offdiag(V^H gV - V^H V diag(re(diag(V^H gV)))) / conj(E)) V^H

and the real part of it for a real input. It is written in the conjugate-Wirtinger convention (the
gradient PyTorch reports for complex inputs), with registered ops, so it differentiates again.
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from ..return_types import structseq
from . import api
from ._linalg_checks import _dtype
from .factorization import check_phase
from .registry import LINALG, OUT_CAST, op


def _complex_of(name: str, a):
    """The complex result dtype of eig of ``a``'s dtype; integers and bool have none (PyTorch's wording)."""
    d = _dtype(a)
    if d.is_complex:
        return d
    if not d.is_floating_point:
        raise RuntimeError(f"Unknown Complex ScalarType for {d.title}")
    if d.itemsize < 4:
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{d.title}'")
    return d.to_complex()


def _eig_check(name: str, a):
    if len(a.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {a.shape[-2]} by {a.shape[-1]} matrices"
        )
    out = _complex_of(name, a)
    return a.shape[:-1], a.shape, out


def _geev(a: np.ndarray, vectors: bool):
    """numpy's geev on a batch, as complex arrays of the input's precision (empty batches included)."""
    ctype = np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128
    n = a.shape[-1]
    if a.size == 0:
        return np.zeros(a.shape[:-1], ctype), np.zeros(a.shape, ctype)
    if vectors:
        w, v = np.linalg.eig(a)
        return w.astype(ctype, copy=False), v.astype(ctype, copy=False)
    flat = a.reshape((-1, n, n))
    finite = np.isfinite(flat).all(axis=(-2, -1))
    w = np.full(flat.shape[:-1], np.nan + 1j * np.nan, ctype)
    if finite.any():
        w[finite] = np.linalg.eigvals(flat[finite])
    return w.reshape(a.shape[:-1]), None


@op("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)", kind=LINALG, autocast="fp32",
    namespace="linalg", function="eig", method=False, out=OUT_CAST)
def linalg_eig(self):
    """Eigenvalues and eigenvectors (unit norm, largest component real) of general square matrices.

    >>> L, V = toolkit.linalg.eig(toolkit.tensor([[0.0, -1.0], [1.0, 0.0]]))  # L = [i, -i]
    """
    _eig_check("linalg.eig", self)
    if not np.isfinite(self).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    return _geev(self, True)


linalg_eig.return_type = structseq("linalg_eig", ("eigenvalues", "eigenvectors"))


@linalg_eig.meta_rule
def _(self):
    values, vectors, out = _eig_check("linalg.eig", self)
    return TensorMeta(tuple(values), out, self.device), TensorMeta(tuple(vectors), out, self.device)


def _adjoint(x):
    return x.conj().mT


def eig_backward(gL, gV, L, V, real_input: bool):
    """The gradient of ``A`` from those of ``L`` and ``V`` (either may be None), with the gauge check."""
    n = L.shape[-1]
    eye = api.eye(n, dtype=L.dtype)
    Vh = _adjoint(V)
    if gV is None:
        inner = eye * gL.unsqueeze(-2)
    else:
        VhgV = Vh.matmul(gV)
        check_phase("linalg_eig_backward", VhgV)
        re_diag = api.real(VhgV.diagonal(0, -2, -1))
        proj = VhgV - Vh.matmul(V * re_diag.unsqueeze(-2))
        Lc = L.conj()
        E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye
        inner = proj / E * (1 - eye)
        if gL is not None:
            inner = inner + eye * gL.unsqueeze(-2)
    gA = api.linalg_solve(Vh, inner.matmul(Vh))
    return api.real(gA) if real_input else gA


@linalg_eig.wirtinger_grad
def _(grad, self_dtype, result):
    gL, gV = grad
    L, V = result
    return eig_backward(gL, gV, L, V, not self_dtype.is_complex)


def _general_samples(rng):
    r = rng.standard_normal
    yield (r((3, 3)),), {}
    yield (r((2, 2, 2)) + 1j * r((2, 2, 2)),), {}
    yield (np.array([[1.0, 2.0], [-2.0, 1.0]]),), {}


def _eig_samples(rng):
    """Complex inputs: every output of ``eig`` is differentiated only through losses that ignore the
    eigenvectors' phases (a raw-output gradcheck is ill-defined, in PyTorch too), so the generic samples
    check values and metadata, and the phase-invariant gradient checks live with the eig tests."""
    r = rng.standard_normal
    yield (r((3, 3)) + 1j * r((3, 3)),), {}
    yield ((r((2, 2, 2)) + 1j * r((2, 2, 2))).astype(np.complex64),), {}
    yield (np.array([[1.0, 2.0], [-2.0, 1.0]], np.complex128),), {}


linalg_eig.sample_inputs(_eig_samples)


@op("linalg_eigvals(Tensor self) -> Tensor", kind=LINALG, autocast="fp32", namespace="linalg", function="eigvals",
    method=False, out=OUT_CAST, grad_fn="LinalgEigBackward0")
def linalg_eigvals(self):
    """Eigenvalues of general square matrices (complex); a batch element with infs or NaNs gives NaNs."""
    _eig_check("linalg.eigvals", self)
    return _geev(self, False)[0]


@linalg_eigvals.meta_rule
def _(self):
    values, _, out = _eig_check("linalg.eigvals", self)
    return TensorMeta(tuple(values), out, self.device)


@linalg_eigvals.wirtinger_grad
def _(grad, self):
    L, V = api.linalg_eig(self)
    return eig_backward(grad, None, L, V, not self.is_complex())


linalg_eigvals.sample_inputs(_general_samples)
