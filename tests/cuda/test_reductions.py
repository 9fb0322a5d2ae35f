"""CUDA reductions beyond the registry samples: dims/keepdim mixes, strided views, integer and bool inputs, errors.

Every case runs the same function on CPU and CUDA tensors and requires equal
results (or the same exception type); the CPU kernels are the reference.
Rows longer than a block and more rows than blocks exercise the scan's
carried totals and the grid-stride loops under the simulator's small launches.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import toolkit

from ..conftest import assert_close
from .helpers import host, needs_cuda, sample_accum

pytestmark = needs_cuda
RNG = np.random.default_rng(7)
X34 = RNG.uniform(-2, 2, (3, 4))
X234 = RNG.uniform(-2, 2, (2, 3, 4))
I234 = RNG.integers(-3, 4, (2, 3, 4)).astype(np.int32)
B34 = RNG.uniform(-1, 1, (3, 4)) > 0


def _run(fn, arrays, device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*[toolkit.tensor(a, device=device) for a in arrays])


def _compare(expected, got, accum):
    if isinstance(expected, (tuple, list)):
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            _compare(e, g, accum)
    elif isinstance(expected, np.ndarray):
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
        assert_close(got, expected, accum=accum)
    else:
        assert type(got) is type(expected) and got == expected


def same(fn, *arrays):
    """``fn`` of tensors made from ``arrays`` gives the same result (or error type) on CUDA as on the CPU."""
    try:
        expected = _run(fn, arrays, "cpu")
    except Exception as e:
        with pytest.raises(type(e)):
            _run(fn, arrays, "cuda")
        return
    got = _run(fn, arrays, "cuda")
    for t in got if isinstance(got, (tuple, list)) else (got,):
        assert not isinstance(t, toolkit.Tensor) or t.is_cuda
    _compare(host(expected), host(got), sample_accum(arrays))  # a reduction sums at most all its input


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("case", [
    lambda f, x: f(x, 1, keepdim=True),
    lambda f, x: f(x.permute(2, 0, 1), dim=(0, 2)),
    lambda f, x: f(x[:, ::2, 1:], dim=(-1, 0), keepdim=True),
    lambda f, x: f(x, dim=()),
    lambda f, x: f(x.to(toolkit.uint8), -1),
    lambda f, x: f(x.to(toolkit.bool)),
    lambda f, x: f(x[:, :0], 2),
], ids=["keepdim", "permuted", "sliced", "no-dims", "uint8", "bool", "empty"])
def test_all_any(name, case):
    same(lambda x: case(getattr(toolkit, name), x), I234)


def test_all_any_see_nan_as_true():
    same(lambda x: (x.all(), x.any(1)), np.array([[np.nan, 0.0], [np.nan, np.nan]]))


@pytest.mark.parametrize("case", [
    lambda x: x.prod(),
    lambda x: x.t().prod(0, keepdim=True),
    lambda x: x[:, ::2].prod(-1, dtype=toolkit.float32),
    lambda x: x.to(toolkit.int8).prod(1),
    lambda x: (x > 0).prod(0),
    lambda x: x.prod(2),
], ids=["all", "transposed", "sliced-dtype", "int8", "bool", "bad-dim"])
def test_prod(case):
    same(case, np.array([[1.5, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0], [2.0, 2.0, -0.5, 1.0]]))


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("case", [
    lambda f, x: f(x, (0, 2), keepdim=True),
    lambda f, x: f(x.permute(1, 2, 0), 1, unbiased=False),
    lambda f, x: f(x[:, ::2], dim=(-1,), correction=2.5),
    lambda f, x: f(x.float(), dim=None, correction=0),
    lambda f, x: f(x[:1], 0),
    lambda f, x: f(x.long(), 0),
    lambda f, x: f(x, 3),
], ids=["dims-keepdim", "permuted", "sliced-correction", "float32", "one-element", "int-error", "bad-dim"])
def test_moments(name, case):
    same(lambda x: case(getattr(toolkit, name), x), X234)


def test_var_warns_when_degrees_of_freedom_are_not_positive():
    x = toolkit.ones(2, 1, device="cuda")
    with pytest.warns(UserWarning, match="degrees of freedom"):
        v = x.var(1)
    assert np.isnan(v.cpu().numpy()).all()


@pytest.mark.parametrize("case", [
    lambda x: toolkit.logsumexp(x.permute(2, 0, 1), (0, 2), keepdim=True),
    lambda x: toolkit.logsumexp(x.float()[:, ::2], -1),
    lambda x: toolkit.logsumexp(x.int(), 1),
    lambda x: toolkit.logsumexp(x, 5),
], ids=["permuted", "float32-sliced", "int", "bad-dim"])
def test_logsumexp(case):
    same(case, X234)


def test_logsumexp_infinities_and_nan():
    a = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 2.0], [800.0, 799.0]])
    same(lambda x: toolkit.logsumexp(x, 1), a)


@pytest.mark.parametrize("case", [
    lambda x: toolkit.count_nonzero(x, (0, 2)),
    lambda x: toolkit.count_nonzero(x.permute(2, 1, 0), 0),
    lambda x: toolkit.count_nonzero(x > 0, []),
    lambda x: toolkit.count_nonzero(x, 4),
], ids=["dims", "permuted", "bool-all", "bad-dim"])
def test_count_nonzero(case):
    same(case, I234)


# A row of 40 spans three chunks of the simulator's 16-thread blocks; 5 rows make 2 blocks loop over rows.
SCAN_ROWS = RNG.uniform(0.8, 1.2, (5, 40)) * RNG.choice([-1, 1], (5, 40))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("case", [
    lambda f, x: f(x, 1),
    lambda f, x: f(x.t(), 0),
    lambda f, x: f(x[:2].reshape(2, 4, 10)[:, ::2, :3], 1),
    lambda f, x: f(x[:, :7].float(), -1, dtype=toolkit.float64),
    lambda f, x: f((x[:3, :8] * 3).int(), 1),
    lambda f, x: f(x[:2, :6] > 0, 0),
    lambda f, x: f(x, 0, dtype=toolkit.bool),
    lambda f, x: f(x, 2),
], ids=["chunks", "transposed", "middle-dim", "dtype", "int", "bool", "bool-dtype-error", "bad-dim"])
def test_scans(name, case):
    same(lambda x: case(getattr(toolkit, name), x), SCAN_ROWS)


@pytest.mark.parametrize("case", [
    lambda x: toolkit.aminmax(x),
    lambda x: toolkit.aminmax(x.permute(2, 0, 1), dim=0, keepdim=True),
    lambda x: toolkit.aminmax(x.int(), dim=-1),
    lambda x: toolkit.aminmax(x > 0, dim=1),
    lambda x: toolkit.aminmax(x, keepdim=True),
    lambda x: toolkit.aminmax(x[:, :0], dim=1),
], ids=["all", "permuted", "int", "bool", "keepdim", "empty-error"])
def test_aminmax(case):
    same(case, X234)


def test_aminmax_nan_wins():
    same(lambda x: toolkit.aminmax(x, dim=1), np.array([[1.0, np.nan, -1.0], [2.0, 0.0, 3.0]]))


@pytest.mark.parametrize("case", [
    lambda a, b: toolkit.allclose(a.t(), (a + 1e-9).t()),
    lambda a, b: toolkit.allclose(a, a[0] + 0 * a, atol=5.0),
    lambda a, b: toolkit.allclose(a.int(), b.int(), atol=4),
    lambda a, b: toolkit.allclose(a, a.float()),
    lambda a, b: toolkit.allclose(a, b[:2]),
    lambda a, b: toolkit.allclose(a, a, rtol=-1.0),
    lambda a, b: toolkit.equal(a.t(), a.t().contiguous()),
    lambda a, b: toolkit.equal(a, a[:2]),
    lambda a, b: toolkit.equal(a.int(), a.int().double()),
    lambda a, b: toolkit.equal(a, b),
], ids=["close-transposed", "broadcast", "ints", "dtype-error", "shape-error", "rtol-error",
        "equal-views", "equal-shapes", "equal-dtypes", "not-equal"])
def test_allclose_equal(case):
    same(case, X34 * 3, X34 * 3 + 2)


@pytest.mark.parametrize("case", [
    lambda x: toolkit.linalg.vector_norm(x.permute(2, 0, 1), 3, dim=(0, 2), keepdim=True),
    lambda x: toolkit.linalg.vector_norm(x[:, ::2].float(), 2, dim=-1, dtype=toolkit.float64),
    lambda x: toolkit.linalg.vector_norm(x, -1.5),
    lambda x: toolkit.linalg.vector_norm(x, math.inf, dim=1),
    lambda x: toolkit.linalg.vector_norm(x.int()),
    lambda x: toolkit.linalg.vector_norm(x[:, :0], -math.inf, dim=1),
    lambda x: toolkit.linalg.matrix_norm(x, 2),
    lambda x: toolkit.linalg.matrix_norm(x.transpose(1, 2), -2, keepdim=True),
    lambda x: toolkit.linalg.matrix_norm(x, "nuc", dim=(0, 2)),
    lambda x: toolkit.linalg.matrix_norm(x.float(), -math.inf, dim=(2, 1)),
    lambda x: toolkit.linalg.matrix_norm(x, 3),
    lambda x: toolkit.linalg.matrix_norm(x, "fro", dim=(1, 1)),
    lambda x: toolkit.linalg.norm(x, 1, dim=(2, 0)),
    lambda x: toolkit.linalg.norm(x[0], "nuc"),
    lambda x: toolkit.linalg.norm(x, 2),
    lambda x: toolkit.norm(x, p="nuc", dim=(1, 2), keepdim=True),
    lambda x: toolkit.norm(x.permute(1, 0, 2), p=0, dim=0),
    lambda x: toolkit.norm(x, p="fro", dim=(0, 1, 2)),
], ids=["vector-3", "vector-dtype", "vector-neg", "vector-inf", "vector-int-error", "vector-empty-error",
        "matrix-2", "matrix-neg2", "matrix-nuc", "matrix-neginf", "matrix-bad-ord", "matrix-same-dims",
        "norm-matrix-1", "norm-nuc", "norm-3d-ord-error", "torch-norm-nuc", "torch-norm-0", "torch-norm-fro-3dims"])
def test_norms(case):
    same(case, X234)


def test_singular_value_norms_of_rank_deficient_and_wide_matrices():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])  # rank 1: the smallest singular value is 0
    same(lambda x: (toolkit.linalg.matrix_norm(x, -2), toolkit.linalg.matrix_norm(x.t(), "nuc")), a)
    same(lambda x: toolkit.linalg.matrix_norm(x, 2), np.zeros((2, 0, 3)))


def test_sum_and_prod_rows_starting_with_infinity():
    same(lambda x: (x.sum(1), x.prod(1), x.float().sum(0)), np.array([[np.inf, 1.0], [-np.inf, 2.0], [1.0, np.inf]]))
