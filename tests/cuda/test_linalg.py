"""Small dense linear algebra on CUDA against PyTorch, the CPU kernels' errors, and sign-invariant factor checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close
from .helpers import UP_TO_SIGN, host, needs_cuda

pytestmark = needs_cuda
RNG = np.random.default_rng(0)
A3 = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)
SPD = A3 @ A3.transpose(0, 2, 1) + np.eye(3)


def _cuda(x):
    return toolkit.tensor(x, device="cuda")


def _close(got, expected):
    """The tolerance rule of tests/conftest.py for factorizations of matrices of up to 5 x 5: n stages of n-term
    dot products (LU, Cholesky, Householder QR) or Jacobi sweeps touch each entry some n * n = 25 times."""
    assert_close(host(got), expected, accum=25)


def test_inverse_det_slogdet_batched_non_contiguous():
    a = _cuda(A3).mT
    t = torch.tensor(A3).mT
    for f, g in ((toolkit.linalg.inv, torch.linalg.inv), (toolkit.inverse, torch.inverse),
                 (toolkit.det, torch.det), (toolkit.linalg.det, torch.linalg.det), (toolkit.logdet, torch.logdet)):
        _close(f(a), g(t))
    for got, exp in zip(toolkit.linalg.slogdet(a), torch.linalg.slogdet(t)):
        _close(got, exp)
    _close(toolkit.linalg.inv(_cuda(A3.astype(np.float32))), torch.linalg.inv(torch.tensor(A3, dtype=torch.float32)))


def test_singular_and_negative_determinants():
    s = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [1.0, 0.0]]])
    _close(toolkit.det(_cuda(s)), torch.det(torch.tensor(s)))
    sign, logabs = toolkit.linalg.slogdet(_cuda(s))
    np.testing.assert_array_equal(host(sign), [0.0, -1.0])
    np.testing.assert_array_equal(host(logabs), [-np.inf, 0.0])
    got = host(toolkit.logdet(_cuda(s)))
    assert got[0] == -np.inf and np.isnan(got[1])
    assert host(toolkit.det(_cuda(np.zeros((2, 0, 0))))).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("call", [toolkit.linalg.inv, toolkit.inverse,
                                  lambda a: toolkit.linalg.solve(a, toolkit.ones(a.shape[:-1], dtype=a.dtype, device=a.device))])
def test_singular_matrix_raises_as_cpu(call):
    s = np.stack([np.eye(3), [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]])
    with pytest.raises(toolkit.linalg.LinAlgError) as cpu:
        call(toolkit.tensor(s))
    with pytest.raises(toolkit.linalg.LinAlgError) as dev:
        call(_cuda(s))
    assert str(dev.value) == str(cpu.value) and "Batch element 1" in str(dev.value)
    with pytest.raises(RuntimeError, match="singular"):
        torch.linalg.inv(torch.tensor(s))


def test_solve_vector_left_false_and_broadcast():
    b = RNG.standard_normal((2, 3))
    _close(toolkit.linalg.solve(_cuda(A3), _cuda(b)), torch.linalg.solve(torch.tensor(A3), torch.tensor(b)))
    bm = RNG.standard_normal((4, 1, 3, 2))
    _close(toolkit.linalg.solve(_cuda(A3), _cuda(bm)), torch.linalg.solve(torch.tensor(A3), torch.tensor(bm)))
    bl = RNG.standard_normal((2, 3))
    _close(toolkit.linalg.solve(_cuda(A3[0]), _cuda(bl), left=False),
           torch.linalg.solve(torch.tensor(A3[0]), torch.tensor(bl), left=False))


def test_cholesky_lower_upper_and_not_positive_definite():
    _close(toolkit.linalg.cholesky(_cuda(SPD)), torch.linalg.cholesky(torch.tensor(SPD)))
    _close(toolkit.cholesky(_cuda(SPD[0]), upper=True), torch.linalg.cholesky(torch.tensor(SPD[0])).mH)
    _close(toolkit.linalg.cholesky(_cuda(SPD.astype(np.float32))),
           torch.linalg.cholesky(torch.tensor(SPD, dtype=torch.float32)))
    bad = SPD.copy()
    bad[1, 2, 2] = -50.0
    for f in (toolkit.linalg.cholesky, toolkit.cholesky):
        with pytest.raises(toolkit.linalg.LinAlgError) as cpu:
            f(toolkit.tensor(bad))
        with pytest.raises(toolkit.linalg.LinAlgError) as dev:
            f(_cuda(bad))
        assert str(dev.value) == str(cpu.value) and "order 3" in str(dev.value)


@pytest.mark.parametrize("call", [
    lambda a: toolkit.linalg.inv(a[..., :2]), lambda a: toolkit.det(a[0, 0]),
    lambda a: toolkit.linalg.inv(a.long()), lambda a: toolkit.linalg.solve(a, a[0, 0, :2]),
    lambda a: toolkit.linalg.cholesky(a.int()), lambda a: toolkit.linalg.qr(a, mode="x"),
    lambda a: toolkit.linalg.eigvalsh(a, UPLO="X"), lambda a: toolkit.linalg.svd(a[0, 0]),
    lambda a: toolkit.linalg.svd(a.long()), lambda a: toolkit.svd(a.int()), lambda a: toolkit.linalg.eigh(a[..., :2]),
    lambda a: toolkit.linalg.eigh(a, UPLO="X"),
])
def test_shape_and_dtype_errors_as_cpu(call):
    with pytest.raises(Exception) as cpu:
        call(toolkit.tensor(A3))
    with pytest.raises(type(cpu.value)) as dev:
        call(_cuda(A3))
    assert str(dev.value) == str(cpu.value)


@pytest.mark.parametrize("shape,mode", [((4, 3), "reduced"), ((4, 3), "complete"), ((2, 4), "reduced"),
                                        ((2, 3, 3), "r"), ((3, 2), "complete")])
def test_qr_matches_lapack_signs(shape, mode):
    a = RNG.standard_normal(shape)
    got = toolkit.linalg.qr(_cuda(a).mT.mT, mode=mode)
    exp = torch.linalg.qr(torch.tensor(a), mode=mode)
    _close(got.R, exp.R)
    _close(got.Q, exp.Q)


def test_eigvalsh_svdvals_unique_parts():
    a = RNG.standard_normal((2, 4, 4))
    sym = a + a.transpose(0, 2, 1)
    _close(toolkit.linalg.eigvalsh(_cuda(sym)), torch.linalg.eigvalsh(torch.tensor(sym)))
    for shape in ((2, 4, 3), (3, 5), (3, 3)):
        x = RNG.standard_normal(shape)
        _close(toolkit.linalg.svdvals(_cuda(x)), torch.linalg.svdvals(torch.tensor(x)))
    x = RNG.standard_normal((3, 3)).astype(np.float32)
    _close(toolkit.linalg.svdvals(_cuda(x)), torch.linalg.svdvals(torch.tensor(x)))


def _factors(name: str, fn, a: np.ndarray, transposed: bool = False, **kwargs):
    """``fn`` on CPU and CUDA tensors of ``a`` (of their transposed views when ``transposed``): the same result
    type (namedtuple fields), then op ``name``'s sign-free rule from test_ops (values equal; factors rebuild
    the input, are orthonormal, and distinct values' vectors are the CPU's up to sign)."""
    prep = (lambda t: t.mT) if transposed else (lambda t: t)
    cpu, got = fn(prep(toolkit.tensor(a)), **kwargs), fn(prep(_cuda(a)), **kwargs)
    assert type(got) is type(cpu) and all(t.is_cuda for t in got)
    UP_TO_SIGN[name]((np.swapaxes(a, -1, -2) if transposed else a,), kwargs, host(cpu), host(got), name)
    return got


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (2, 2, 4), (3, 0), (0, 2, 2)])
@pytest.mark.parametrize("full", [True, False])
def test_linalg_svd_tall_wide_batched_and_empty(shape, full):
    a = RNG.standard_normal(shape)
    got = _factors("linalg_svd", toolkit.linalg.svd, a, full_matrices=full)
    exp = torch.linalg.svd(torch.tensor(a), full_matrices=full)
    for name in ("U", "S", "Vh"):
        assert tuple(getattr(got, name).shape) == tuple(getattr(exp, name).shape), name


def test_svd_rank_deficient_completes_orthonormal_bases():
    u, v = RNG.standard_normal((5, 1)), RNG.standard_normal((1, 3))
    for a in (u @ v, np.zeros((3, 4)), (u @ v).T.copy()):  # one nonzero singular value, then none
        _factors("linalg_svd", toolkit.linalg.svd, a, full_matrices=True)
        _factors("linalg_svd", toolkit.linalg.svd, a, full_matrices=False)


def test_torch_svd_v_some_compute_uv_float32_and_strided():
    a = RNG.standard_normal((2, 4, 3))
    _factors("svd", toolkit.svd, a, some=False)
    got = _factors("svd", toolkit.svd, a, compute_uv=False)
    assert not host(got.U).any() and host(got.V).shape == (2, 3, 3)
    _factors("svd", toolkit.svd, a, transposed=True)  # a strided input
    _factors("linalg_svd", toolkit.linalg.svd, a.astype(np.float32))
    s = toolkit.linalg.svd(_cuda(a), full_matrices=False).S
    _close(s, torch.linalg.svdvals(torch.tensor(a)))


def test_eigh_distinct_repeated_and_upper():
    a = RNG.standard_normal((2, 4, 4))
    _factors("linalg_eigh", toolkit.linalg.eigh, a + a.transpose(0, 2, 1))
    q = np.linalg.qr(RNG.standard_normal((4, 4)))[0]
    repeated = q @ np.diag([1.0, 1.0, 2.0, -3.0]) @ q.T  # a 2-d eigenspace: any rotation of it is right
    _factors("linalg_eigh", toolkit.linalg.eigh, repeated, UPLO="U")
    _factors("linalg_eigh", toolkit.linalg.eigh, (repeated @ repeated).astype(np.float32))
