"""torch.linalg on complex64/complex128 inputs: values, dtypes and gradients against PyTorch.

One table row per op: how to call it (written once for both libraries, ``m`` is ``toolkit`` or ``torch``),
the inputs it takes and whether it is differentiable. Ops whose outputs are fixed only up to a phase
(``svd``, ``eigh``) return phase-invariant quantities (``U diag(S) Vh``, ``|V|^2``), so the comparison and
the gradient are well defined.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.autograd import gradcheck

from ..conftest import assert_close

torch = pytest.importorskip("torch")


def _complex(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _general(rng, shape):
    """Well-conditioned square matrices (a shifted diagonal keeps them far from singular)."""
    return _complex(rng, shape) + 3 * np.eye(shape[-1])


def _hpd(rng, shape):
    a = _complex(rng, shape)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def _hermitian(rng, shape):
    a = _complex(rng, shape)
    return a + np.conj(np.swapaxes(a, -1, -2))


def _upper(rng, shape):
    return np.triu(_general(rng, shape))


def _modulus2(z):
    """``|z|^2`` written as ``(z * conj(z)).real``, a phase-invariant real function of complex entries."""
    return (z * z.conj()).real


def _svd_parts(m, A):
    U, S, Vh = m.linalg.svd(A, full_matrices=False)
    return (U * S.unsqueeze(-2).to(U.dtype)) @ Vh, S, _modulus2(U), _modulus2(Vh)


def _eigh_parts(m, A, UPLO="L"):
    L, V = m.linalg.eigh(A, UPLO=UPLO)
    return L, _modulus2(V), (V * L.unsqueeze(-2).to(V.dtype)) @ V.mT.conj()


# name: (call, input makers with shapes, gradient compared with torch's: True, False, or "hermitian" where only
# the Hermitian part is fixed by the Hermitian input, and torch's composite leaves a different non-Hermitian part)
CASES = {
    "det": (lambda m, A: m.linalg.det(A), [(_general, (2, 3, 3))], True),
    "slogdet": (lambda m, A: tuple(m.linalg.slogdet(A)), [(_general, (2, 3, 3))], True),
    "logdet": (lambda m, A: m.logdet(A), [(_general, (3, 3))], True),
    "inv": (lambda m, A: m.linalg.inv(A), [(_general, (2, 3, 3))], True),
    "inv_ex": (lambda m, A: m.linalg.inv_ex(A)[0], [(_general, (3, 3))], True),
    "solve": (lambda m, A, B: m.linalg.solve(A, B), [(_general, (2, 3, 3)), (_complex, (2, 3, 2))], True),
    "solve_left_false": (lambda m, A, B: m.linalg.solve(A, B, left=False), [(_general, (3, 3)), (_complex, (2, 3))],
                         True),
    "lstsq": (lambda m, A, B: m.linalg.lstsq(A, B).solution, [(_complex, (4, 3)), (_complex, (4, 2))], True),
    "cholesky": (lambda m, A: m.linalg.cholesky(A), [(_hpd, (2, 3, 3))], True),
    "cholesky_upper": (lambda m, A: m.linalg.cholesky(A, upper=True), [(_hpd, (3, 3))], True),
    "cholesky_ex": (lambda m, A: m.linalg.cholesky_ex(A)[0], [(_hpd, (3, 3))], False),
    "qr": (lambda m, A: tuple(m.linalg.qr(A)), [(_complex, (2, 4, 3))], True),
    "qr_wide": (lambda m, A: tuple(m.linalg.qr(A)), [(_complex, (2, 4))], True),
    "qr_complete": (lambda m, A: tuple(m.linalg.qr(A, mode="complete")), [(_complex, (3, 3))], True),
    "svd": (_svd_parts, [(_complex, (2, 4, 3))], True),
    "svd_wide": (_svd_parts, [(_complex, (2, 4))], True),
    "svdvals": (lambda m, A: m.linalg.svdvals(A), [(_complex, (2, 3, 4))], True),
    "eigh": (_eigh_parts, [(_hermitian, (2, 3, 3))], True),
    "eigh_upper": (lambda m, A: _eigh_parts(m, A, "U"), [(_hermitian, (3, 3))], True),
    "eigvalsh": (lambda m, A: m.linalg.eigvalsh(A), [(_hermitian, (2, 3, 3))], True),
    "pinv": (lambda m, A: m.linalg.pinv(A), [(_complex, (2, 4, 3))], True),
    "pinv_wide": (lambda m, A: m.linalg.pinv(A), [(_complex, (2, 3))], True),
    "pinv_hermitian": (lambda m, A: m.linalg.pinv(A, hermitian=True), [(_hpd, (3, 3))], "hermitian"),
    "matrix_norm_fro": (lambda m, A: m.linalg.matrix_norm(A), [(_complex, (2, 3, 4))], True),
    "matrix_norm_nuc": (lambda m, A: m.linalg.matrix_norm(A, "nuc"), [(_complex, (2, 3, 4))], True),
    "matrix_norm_2": (lambda m, A: m.linalg.matrix_norm(A, 2), [(_complex, (3, 4))], True),
    "matrix_norm_-2": (lambda m, A: m.linalg.matrix_norm(A, -2), [(_complex, (3, 3))], True),
    "matrix_norm_1": (lambda m, A: m.linalg.matrix_norm(A, 1), [(_complex, (2, 3, 4))], True),
    "matrix_norm_inf": (lambda m, A: m.linalg.matrix_norm(A, float("inf"), keepdim=True), [(_complex, (3, 4))],
                        True),
    "norm": (lambda m, A: m.linalg.norm(A), [(_complex, (3, 4))], True),
    "norm_ord": (lambda m, A: m.linalg.norm(A, "nuc"), [(_complex, (3, 4))], True),
    "vector_norm": (lambda m, A: m.linalg.vector_norm(A, 3, dim=-1), [(_complex, (2, 4))], True),
    "matrix_exp": (lambda m, A: m.linalg.matrix_exp(A * 0.3), [(_complex, (2, 3, 3))], True),
    "matrix_power": (lambda m, A: m.linalg.matrix_power(A, 3), [(_complex, (2, 3, 3))], True),
    "matrix_power_neg": (lambda m, A: m.linalg.matrix_power(A, -2), [(_general, (3, 3))], True),
    "lu": (lambda m, A: tuple(m.linalg.lu(A)), [(_complex, (2, 3, 3))], True),
    "lu_factor": (lambda m, A: tuple(m.linalg.lu_factor(A)), [(_complex, (2, 3, 3))], False),
    "lu_solve": (lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B), [(_general, (3, 3)), (_complex, (3, 2))],
                 True),
    "lu_solve_adjoint": (lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B, adjoint=True),
                         [(_general, (3, 3)), (_complex, (3, 2))], True),
    "solve_triangular": (lambda m, A, B: m.linalg.solve_triangular(A, B, upper=True),
                         [(_upper, (2, 3, 3)), (_complex, (2, 3, 2))], True),
    "householder_product": (lambda m, A, tau: m.linalg.householder_product(A, tau),
                            [(_complex, (2, 4, 3)), (_complex, (2, 2))], True),
    "cross": (lambda m, a, b: m.linalg.cross(a, b), [(_complex, (2, 3)), (_complex, (2, 3))], True),
    "vecdot": (lambda m, a, b: m.linalg.vecdot(a, b), [(_complex, (2, 4)), (_complex, (2, 4))], True),
    "multi_dot": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
                  [(_complex, (2, 3)), (_complex, (3, 4)), (_complex, (4,))], True),
    "tensorinv": (lambda m, A: m.linalg.tensorinv(A.reshape(2, 3, 6), ind=2), [(_general, (6, 6))], True),
    "tensorsolve": (lambda m, A, B: m.linalg.tensorsolve(A.reshape(2, 3, 6), B), [(_general, (6, 6)), (_complex, (2, 3))],
                    True),
    "cond": (lambda m, A: m.linalg.cond(A), [(_general, (2, 3, 3))], True),
    "cond_1": (lambda m, A: m.linalg.cond(A, 1), [(_general, (3, 3))], False),
    "cond_fro": (lambda m, A: m.linalg.cond(A, "fro"), [(_general, (3, 3))], False),
    "matrix_rank": (lambda m, A: m.linalg.matrix_rank(A), [(_complex, (2, 3, 4))], False),
    "matrix_rank_hermitian": (lambda m, A: m.linalg.matrix_rank(A, hermitian=True), [(_hpd, (3, 3))], False),
}

DTYPES = {"complex64": (np.complex64, toolkit.complex64), "complex128": (np.complex128, toolkit.complex128)}


def _inputs(name, dtype, requires_grad=False):
    rng = np.random.default_rng(sum(map(ord, name)))
    arrays = [make(rng, shape).astype(DTYPES[dtype][0]) for make, shape in CASES[name][1]]
    ours = [toolkit.tensor(a, requires_grad=requires_grad) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    return ours, theirs


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(name, dtype):
    call = CASES[name][0]
    ours, theirs = _inputs(name, dtype)
    got, want = _as_tuple(call(toolkit, *ours)), _as_tuple(call(torch, *theirs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], (g.dtype, w.dtype)
        # factorizations and inverses of n x n matrices: errors grow with the number of terms, as the rule says
        assert_close(g, w.resolve_conj(), accum=36)


def _loss(outputs, weights):
    """A real loss of every output, the same for both libraries: sum(w * |o|^2) or sum(w * o) for real o."""
    total = 0
    for o, w in zip(outputs, weights):
        total = total + ((_modulus2(o) if o.is_complex() else o) * w).sum()
    return total


def _weights(lib, outputs):
    rng = np.random.default_rng(7)
    return [lib.tensor(rng.uniform(0.5, 1.5, tuple(o.shape))) for o in outputs]


DIFFERENTIABLE = sorted(n for n, case in CASES.items() if case[2])


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_match_torch(name):
    call = CASES[name][0]
    ours, theirs = _inputs(name, "complex128", requires_grad=True)
    got, want = _as_tuple(call(toolkit, *ours)), _as_tuple(call(torch, *theirs))
    _loss(got, _weights(toolkit, got)).backward()
    _loss(want, _weights(torch, want)).backward()
    for a, b in zip(ours, theirs):
        assert a.grad is not None and a.grad.dtype is toolkit.complex128
        g, w = a.grad, b.grad.resolve_conj()
        if CASES[name][2] == "hermitian":
            g, w = (g + g.conj().mT) / 2, (w + w.mH) / 2
        assert_close(g, w, accum=36)


# (cond with ord 1 and 'fro' only here: torch's own backward of them fails on complex input)
GRADCHECKED = ["cond_1", "cond_fro", "det", "slogdet", "inv", "solve", "cholesky", "qr", "qr_wide", "svd", "svdvals", "eigh", "eigvalsh",
               "pinv", "matrix_norm_fro", "matrix_norm_nuc", "vector_norm", "matrix_exp", "lu", "lu_solve",
               "solve_triangular", "householder_product", "vecdot", "lstsq", "cond"]


@pytest.mark.parametrize("name", GRADCHECKED)
def test_gradcheck(name):
    call = CASES[name][0]
    ours, _ = _inputs(name, "complex128", requires_grad=True)
    outputs = _as_tuple(call(toolkit, *[x.detach() for x in ours]))
    weights = _weights(toolkit, outputs)
    assert gradcheck(lambda *xs: _loss(_as_tuple(call(toolkit, *xs)), weights), tuple(ours))


def test_real_result_dtypes():
    z = toolkit.tensor(_complex(np.random.default_rng(0), (3, 3)).astype(np.complex64))
    assert toolkit.linalg.svdvals(z).dtype is toolkit.float32
    assert toolkit.linalg.slogdet(z).logabsdet.dtype is toolkit.float32
    assert toolkit.linalg.slogdet(z).sign.dtype is toolkit.complex64
    assert toolkit.linalg.matrix_norm(z, "nuc").dtype is toolkit.float32
    assert toolkit.linalg.cond(z).dtype is toolkit.float32
    assert toolkit.linalg.eigvalsh(z).dtype is toolkit.float32


@pytest.mark.parametrize("lib", ["toolkit", "torch"])
def test_phase_dependent_losses_raise(lib):
    m = toolkit if lib == "toolkit" else torch
    rng = np.random.default_rng(3)
    a = m.tensor(_hermitian(rng, (3, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"linalg_eigh_backward: The eigenvectors in the complex case"):
        m.linalg.eigh(a)[1].real.sum().backward()
    b = m.tensor(_complex(rng, (3, 2)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"svd_backward: The singular vectors in the complex case"):
        m.linalg.svd(b, full_matrices=False)[0].imag.sum().backward()


def test_old_svd_returns_v_not_vh():
    a = _complex(np.random.default_rng(4), (3, 2))
    U, S, V = toolkit.svd(toolkit.tensor(a))
    assert_close((U * S.to(U.dtype)) @ V.conj().mT, torch.tensor(a), accum=4)


# (call, inputs as numpy arrays): errors both libraries raise with the same type and message
ERRORS = {
    "matrix_norm_real_dtype_for_complex": (lambda m, a: m.linalg.matrix_norm(a, dtype=m.float64),
                                           np.ones((2, 2), np.complex128)),
    "matrix_norm_complex_dtype_for_real": (lambda m, a: m.linalg.matrix_norm(a, dtype=m.complex64),
                                           np.ones((2, 2), np.float32)),
    "norm_real_dtype_for_complex": (lambda m, a: m.linalg.norm(a, dtype=m.float32), np.ones((2, 2), np.complex64)),
    "vecdot_mixed_dtypes": (lambda m, a: m.linalg.vecdot(a, a.real), np.ones((2, 3), np.complex128)),
    "vecdot_integers": (lambda m, a: m.linalg.vecdot(a, a), np.ones(3, np.int64)),
    "solve_mixed_dtypes": (lambda m, a: m.linalg.solve(a, a.real), np.eye(2, dtype=np.complex128)),
    "cholesky_not_positive_definite": (lambda m, a: m.linalg.cholesky(a), np.array([[1, 2j], [-2j, 1]])),
    "eigh_bad_uplo": (lambda m, a: m.linalg.eigh(a, UPLO="X"), np.eye(2, dtype=np.complex64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    call, a = ERRORS[name]
    with pytest.raises(Exception) as want:
        call(torch, torch.tensor(a))
    with pytest.raises(Exception) as got:
        call(toolkit, toolkit.tensor(a))
    # the same builtin base and class name (torch's ``_LinAlgError`` is our ``LinAlgError``, both RuntimeErrors)
    base = next(c for c in type(want.value).__mro__ if c.__module__ == "builtins")
    assert isinstance(got.value, base) and type(got.value).__name__ == type(want.value).__name__.lstrip("_")
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("name", ["cholesky_ex", "cholesky_solve", "cholesky_inverse"])
def test_cholesky_family_on_complex_matches_torch(name, upper):
    """Values and gradients of the Cholesky solvers on a complex Hermitian positive-definite matrix (the factor's
    triangle only: the others are not read)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    spd = a @ a.conj().T + 3 * np.eye(3)
    factor = np.linalg.cholesky(spd)
    factor = factor.conj().T.copy() if upper else factor
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    results = []
    for lib in (toolkit, torch):
        m = lib.tensor(spd if name == "cholesky_ex" else factor, requires_grad=True)
        rhs = lib.tensor(b, requires_grad=True)
        if name == "cholesky_ex":
            y = lib.linalg.cholesky_ex(m, upper=upper).L
        elif name == "cholesky_solve":
            y = lib.cholesky_solve(rhs, m, upper)
        else:
            y = lib.cholesky_inverse(m, upper)
        (y.real.sum() + 2 * y.imag.sum()).backward()
        results.append((y, m.grad))
    keep = np.triu if upper else np.tril
    assert_close(results[0][0], results[1][0], accum=3)
    grad = results[0][1] if name == "cholesky_ex" else toolkit.tensor(keep(results[0][1].numpy()))
    expected = results[1][1] if name == "cholesky_ex" else torch.tensor(keep(results[1][1].numpy()))
    assert_close(grad, expected, accum=9)
