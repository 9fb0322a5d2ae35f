"""linalg.eig and linalg.eigvals against PyTorch: values, normalization, dtypes, errors and gradients.

Eigenvalues compare as sorted sets; eigenvectors are fixed only up to a phase each, so they compare through
``V diag(L) V^-1 == A``, their unit norms and their moduli ``|V|`` (both libraries use LAPACK's geev, whose
normalization makes each column's largest component real). Gradients compare on phase-invariant losses.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.autograd import gradcheck, gradgradcheck

from ..conftest import assert_close

torch = pytest.importorskip("torch")

# (shape, complex input?) per row; dtypes run over each
SHAPES = [((3, 3), False), ((4, 4), True), ((2, 3, 3), False), ((2, 2, 3, 3), True), ((1, 1), False),
          ((0, 0), False), ((2, 0, 0), True)]
DTYPES = {"float32": np.float32, "float64": np.float64}
OUT = {"float32": toolkit.complex64, "float64": toolkit.complex128}


def _matrix(shape, cplx, dtype, seed=0):
    rng = np.random.default_rng(seed + len(shape))
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
    return a.astype(np.result_type(DTYPES[dtype], np.complex64) if cplx else DTYPES[dtype])


def _sorted(values: np.ndarray) -> np.ndarray:
    v = np.round(values, 4)  # sort by rounded keys so equal values in both libraries order alike
    order = np.lexsort((v.imag, v.real), axis=-1)
    return np.take_along_axis(values, order, axis=-1)


def _ids(rows):
    return [f"{s}{'-complex' if c else ''}" for s, c in rows]


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shape,cplx", SHAPES, ids=_ids(SHAPES))
def test_eig_matches_torch(shape, cplx, dtype):
    a = _matrix(shape, cplx, dtype)
    L, V = toolkit.linalg.eig(toolkit.tensor(a))
    tL, tV = torch.linalg.eig(torch.tensor(a))
    assert L.dtype is OUT[dtype] and V.dtype is OUT[dtype]
    assert tuple(L.shape) == tuple(tL.shape) and tuple(V.shape) == tuple(tV.shape)
    n = shape[-1]
    assert_close(_sorted(L.numpy()), _sorted(tL.numpy()), accum=n * n)
    if n == 0:
        return
    rebuilt = V @ (L.unsqueeze(-1) * toolkit.linalg.inv(V))
    assert_close(rebuilt, torch.tensor(a).to(tV.dtype), accum=n * n * n)
    assert_close(toolkit.linalg.vector_norm(V, dim=-2), torch.ones(tuple(shape[:-2]) + (n,), dtype=tL.real.dtype),
                 accum=n)
    # geev's normalization: the largest component of each column is real
    v = V.numpy()
    big = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)
    assert_close(big.imag, np.zeros_like(big.imag), accum=n)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shape,cplx", SHAPES, ids=_ids(SHAPES))
def test_eigvals_matches_torch(shape, cplx, dtype):
    a = _matrix(shape, cplx, dtype)
    got, want = toolkit.linalg.eigvals(toolkit.tensor(a)), torch.linalg.eigvals(torch.tensor(a))
    assert got.dtype is OUT[dtype] and tuple(got.shape) == tuple(want.shape)
    assert_close(_sorted(got.numpy()), _sorted(want.numpy()), accum=shape[-1] ** 2)


def test_return_type_is_a_named_tuple():
    out = toolkit.linalg.eig(toolkit.eye(2))
    assert type(out).__name__ == "linalg_eig" and out._fields == ("eigenvalues", "eigenvectors")
    L, V = out
    assert L is out.eigenvalues and V is out.eigenvectors
    assert "toolkit.return_types.linalg_eig(" in repr(out)


def test_real_matrix_with_complex_pairs():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    assert_close(_sorted(toolkit.linalg.eigvals(toolkit.tensor(a)).numpy()), np.array([-1j, 1j]))


ERRORS = [
    ("eig", np.ones((2, 3)), RuntimeError, "linalg.eig: A must be batches of square matrices, but they are 2 by 3"),
    ("eigvals", np.ones((2, 3)), RuntimeError, "linalg.eigvals: A must be batches of square matrices"),
    ("eig", np.ones(3), RuntimeError, "linalg.eig: The input tensor A must have at least 2 dimensions."),
    ("eigvals", np.ones(3), RuntimeError, "linalg.eigvals: The input tensor A must have at least 2 dimensions."),
    ("eig", np.array([[1.0, np.nan], [0.0, 1.0]]), RuntimeError,
     "torch.linalg.eig: input tensor should not contain infs or NaNs."),
    ("eig", np.array([[1.0, np.inf], [0.0, 1.0]]), RuntimeError, "should not contain infs or NaNs"),
    ("eig", np.ones((3, 3), np.int64), RuntimeError, "Unknown Complex ScalarType for Long"),
    ("eigvals", np.ones((3, 3), bool), RuntimeError, "Unknown Complex ScalarType for Bool"),
    ("eig", np.ones((3, 3), np.float16), NotImplementedError, "\"linalg_eig_out_cpu\" not implemented for 'Half'"),
]


@pytest.mark.parametrize("lib", ["toolkit", "torch"])
@pytest.mark.parametrize("fn,a,error,message", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_as_torch(lib, fn, a, error, message):
    m = toolkit if lib == "toolkit" else torch
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        getattr(m.linalg, fn)(m.tensor(a))


def test_eigvals_of_a_non_finite_matrix_is_nan():
    out = toolkit.linalg.eigvals(toolkit.tensor([[[1.0, np.inf], [0.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]]]))
    assert np.isnan(out[0].numpy()).all()
    assert_close(_sorted(out[1].numpy()), np.array([2, 3], np.complex64))


def test_meta_rule_gives_complex_dtypes():
    from toolkit.ops import registry

    op = registry.get("linalg_eig")
    meta = op.meta(toolkit.empty(2, 3, 3, dtype=toolkit.float32))
    assert [m.dtype for m in meta] == [toolkit.complex64, toolkit.complex64]
    assert [tuple(m.shape) for m in meta] == [(2, 3), (2, 3, 3)]


# Phase-invariant real losses of (L, V), written once for both libraries.
LOSSES = {
    "eigvals_abs": lambda m, A: m.linalg.eigvals(A).abs().sum(),
    "eigvals_real_imag": lambda m, A: (m.linalg.eigvals(A) ** 2).real.sum() + m.linalg.eigvals(A).imag.sum(),
    "eigenvalues_only": lambda m, A: (m.linalg.eig(A)[0] * (1 + 2j)).real.sum(),
    "vector_moduli": lambda m, A: (lambda L, V: (V * V.conj()).real.sum() + ((V * V.conj()).real ** 2).sum())(
        *m.linalg.eig(A)),
    "projector": lambda m, A: (lambda L, V: ((V * L.unsqueeze(-2)) @ m.linalg.inv(V)).real.sum())(*m.linalg.eig(A)),
    "both": lambda m, A: (lambda L, V: (L * L.conj()).real.sum() + (V.abs() * 1.5).sum())(*m.linalg.eig(A)),
}


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_torch(name, cplx):
    a = _matrix((2, 3, 3), cplx, "float64", seed=5)
    x, t = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    LOSSES[name](toolkit, x).backward()
    LOSSES[name](torch, t).backward()
    assert x.grad.dtype is x.dtype
    assert_close(x.grad, t.grad, accum=27)


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", ["eigvals_abs", "vector_moduli", "projector"])
def test_gradcheck(name, cplx):
    a = _matrix((3, 3), cplx, "float64", seed=9)
    assert gradcheck(lambda A: LOSSES[name](toolkit, A), (toolkit.tensor(a, requires_grad=True),))


def test_gradgradcheck_of_eigvals():
    a = _matrix((3, 3), True, "float64", seed=2)
    assert gradgradcheck(lambda A: toolkit.linalg.eigvals(A), (toolkit.tensor(a, requires_grad=True),))


@pytest.mark.parametrize("lib", ["toolkit", "torch"])
def test_phase_dependent_loss_raises(lib):
    m = toolkit if lib == "toolkit" else torch
    a = m.tensor(_matrix((3, 3), True, "float64", seed=1), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"linalg_eig_backward: The eigenvectors in the complex case are specified "
                                           r"up to multiplication by e\^\{i phi\}"):
        m.linalg.eig(a)[1].real.sum().backward()
