"""The compiled reductions (``toolkit.ops._reduce_numba``) against PyTorch: sum, mean, var/std, norms, max/min,
amax/amin and argmax/argmin on inputs large enough to take them (and on both threads), over odd shapes,
strided and transposed views, every dim and dim pair, keepdim, NaN/inf, ties, empty dims and every dtype."""

# ruff: noqa: B023 - each lambda runs at once, inside the loop iteration that made it

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.backends.cpu import split as _split
from toolkit.ops.reduction import FAST_MIN

from ..conftest import assert_close, to_torch

SHAPES = [(FAST_MIN + 3,), (257, 301), (3, 129, 257), (1, 40000, 1)]
DTYPES = [toolkit.float32, toolkit.float64]


def _views(rng, shape, dtype):
    """A contiguous tensor of ``shape``, its transpose, and a strided slice (the last two: other layouts)."""
    a = toolkit.tensor(rng.standard_normal(shape) * 3).to(dtype)
    yield a
    if a.ndim > 1:
        yield a.transpose(0, -1)
        yield a[..., ::2]


def _dims(ndim):
    yield None
    yield from range(-ndim, ndim)
    if ndim == 3:
        yield (0, 1)
        yield (1, 2)
        yield (0, 2)


def _reduced(shape, dim):
    if dim is None:
        return int(np.prod(shape))
    return int(np.prod([shape[d] for d in ((dim,) if isinstance(dim, int) else dim)]))


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")  # correction 2 over the size-1 dims of (1, n, 1)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sums_means_and_moments_match_torch(rng, shape, dtype):
    for a in _views(rng, shape, dtype):
        t = to_torch(a)
        for dim in _dims(a.ndim):
            for keepdim in (False, True) if dim == 1 else (dim == -1,):
                kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
                n = _reduced(a.shape, dim)
                msg = f"{tuple(a.shape)} strides {a.stride()} dim={dim} keepdim={keepdim}"
                assert_close(a.sum(**kw), t.sum(**kw), accum=n, msg="sum " + msg)
                assert_close(a.mean(**kw), t.mean(**kw), accum=n, msg="mean " + msg)
                for correction in (0, 1, 2):
                    assert_close(a.var(**kw, correction=correction), t.var(**kw, correction=correction), accum=n,
                                 msg=f"var({correction}) " + msg)
                assert_close(toolkit.std_mean(a, **kw), torch.std_mean(t, **kw), accum=n, msg="std_mean " + msg)
                for p in (1, 2):
                    assert_close(toolkit.linalg.vector_norm(a, p, **kw), torch.linalg.vector_norm(t, p, **kw),
                                 accum=n, msg=f"norm{p} " + msg)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_extremes_match_torch(rng, shape, dtype):
    for a in _views(rng, shape, dtype):
        t = to_torch(a)
        assert_close(a.max(), t.max())
        assert_close(a.min(), t.min())
        assert_close(a.argmax(), t.argmax())
        assert_close(a.argmin(keepdim=True), t.argmin(keepdim=True))
        for dim in range(-a.ndim, a.ndim):
            for keepdim in (False, True) if dim == 0 else (dim == -1,):
                msg = f"{tuple(a.shape)} strides {a.stride()} dim={dim} keepdim={keepdim}"
                assert_close(tuple(a.max(dim, keepdim)), tuple(t.max(dim, keepdim)), msg="max " + msg)
                assert_close(tuple(a.min(dim, keepdim)), tuple(t.min(dim, keepdim)), msg="min " + msg)
                assert_close(a.argmax(dim, keepdim), t.argmax(dim, keepdim), msg="argmax " + msg)
                assert_close(a.amax(dim, keepdim), t.amax(dim, keepdim), msg="amax " + msg)
                assert_close(a.amin((dim,), keepdim), t.amin((dim,), keepdim), msg="amin " + msg)


def _with_specials(rng, shape):
    """float64 values with ties (a small integer range), infinities and NaNs at scattered places."""
    a = rng.integers(-5, 6, shape).astype(np.float64)
    flat = a.reshape(-1)
    flat[rng.integers(0, flat.size, 20)] = np.inf
    flat[rng.integers(0, flat.size, 20)] = -np.inf
    flat[rng.integers(0, flat.size, 7)] = np.nan
    return a


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nan_inf_and_ties_as_torch(rng, dtype):
    data = _with_specials(rng, (300, 400))
    for a in (toolkit.tensor(data).to(dtype), toolkit.tensor(data.T.copy()).to(dtype).t()):
        t = to_torch(a)
        for dim in (None, 0, 1):
            kw = {} if dim is None else {"dim": dim}
            assert_close(a.sum(**kw), t.sum(**kw), accum=400)
            assert_close(a.var(**kw), t.var(**kw), accum=400)
            assert_close(toolkit.linalg.vector_norm(a, **kw), torch.linalg.vector_norm(t, **kw), accum=400)
            assert_close(a.argmax(**kw), t.argmax(**kw))
            assert_close(a.argmin(**kw), t.argmin(**kw))
            assert_close(a.amax(**kw), t.amax(**kw))
        for dim in (0, 1):
            assert_close(tuple(a.max(dim)), tuple(t.max(dim)))
            assert_close(tuple(a.min(dim)), tuple(t.min(dim)))
    # rows without NaN, where only ties decide the index
    tied = toolkit.tensor(rng.integers(0, 3, (200, 300)).astype(np.float64)).to(dtype)
    assert_close(tied.argmax(1), to_torch(tied).argmax(1))
    assert_close(tied.argmin(0), to_torch(tied).argmin(0))


def test_float32_overflow_and_empty_dims_as_torch():
    big = toolkit.full((50000,), 3e37, dtype=toolkit.float32)
    assert_close(big.sum(), to_torch(big).sum())  # inf: the float64 total does not fit float32
    assert_close(toolkit.linalg.vector_norm(big), torch.linalg.vector_norm(to_torch(big)))
    empty = toolkit.zeros((0, 50000))
    t = to_torch(empty)
    assert_close(empty.sum(0), t.sum(0))
    assert_close(empty.sum(1), t.sum(1))
    assert_close(empty.mean(0), t.mean(0))
    assert_close(empty.amax(1), t.amax(1))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        empty.argmax(0)


def test_float32_sum_is_at_least_as_accurate_as_torch(rng):
    data = (rng.standard_normal(3_000_001) + 1000.0).astype(np.float32)
    exact = data.astype(np.float64).sum()
    ours = float(toolkit.tensor(data).sum())
    theirs = float(torch.from_numpy(data).sum())
    assert abs(ours - exact) <= abs(theirs - exact) + abs(exact) * 2 ** -24


@pytest.mark.parametrize("dtype", [toolkit.int64, toolkit.int32, toolkit.bool, toolkit.float16], ids=str)
def test_other_dtypes_keep_torch_accumulation(rng, dtype):
    if dtype is toolkit.bool:
        a = toolkit.tensor(rng.integers(0, 2, (300, 250)).astype(bool))
    elif dtype is toolkit.float16:
        a = toolkit.tensor(rng.standard_normal((300, 250))).to(dtype)
    else:
        a = toolkit.tensor(rng.integers(-(2 ** 40), 2 ** 40, (300, 250))).to(dtype)
    t = to_torch(a)
    for dim in (None, 0, 1):
        kw = {} if dim is None else {"dim": dim}
        assert_close(a.sum(**kw), t.sum(**kw), accum=75000)
        if dtype is not toolkit.bool:
            assert_close(a.amax(**kw), t.amax(**kw))
            assert_close(a.argmax(**kw), t.argmax(**kw))


def test_threads_split_inputs_exactly(rng, monkeypatch):
    """Split over the threads (from PARALLEL_MIN elements), every layout gives the one-thread result bit for bit."""
    a = toolkit.tensor(rng.standard_normal((3, 700, 1100)).astype(np.float32))
    nan = a.clone()
    nan[1, 600, 5], nan[2, 3, 4], nan[0, 0, 1000] = float("nan"), float("nan"), float("nan")
    ops = [lambda: a.sum(), lambda: a.sum(1), lambda: a.sum(-1), lambda: a.transpose(0, 2).sum(0), lambda: a.var(1),
           lambda: toolkit.linalg.vector_norm(a, 2, 2), lambda: a.argmax(), lambda: a.max(1), lambda: a.amin(2),
           lambda: a.argmin(0), lambda: a.amax(), lambda: nan.argmax(), lambda: nan.amin(), lambda: nan.max(-1),
           lambda: nan.argmin(1)]
    monkeypatch.setattr(_split, "free_cores", lambda: 2)  # as on a quiet machine, whatever else runs now
    old = _split.PARALLEL_MIN, _split.BUSY_BACKOFF
    try:
        _split.PARALLEL_MIN = a.numel() + 1
        alone = [f() for f in ops]
        # split every call, even after one whose helper came too late (this machine may be busy)
        _split.PARALLEL_MIN, _split.BUSY_BACKOFF, _split._busy[0] = 1, 0, 0
        split = [f() for f in ops]
    finally:
        _split.PARALLEL_MIN, _split.BUSY_BACKOFF = old
    for s, o in zip(split, alone):
        for si, oi in zip(s if isinstance(s, tuple) else (s,), o if isinstance(o, tuple) else (o,)):
            np.testing.assert_array_equal(si.numpy(), oi.numpy())
    assert_close(split[1], to_torch(a).sum(1), accum=700)
    t = to_torch(nan)
    for s, o in zip(split[-4:], (t.argmax(), t.amin(), tuple(t.max(-1)), t.argmin(1))):
        assert_close(s, o)


def test_gradients_through_the_fast_paths(rng):
    a = toolkit.tensor(rng.standard_normal((200, 300)), requires_grad=True)
    t = to_torch(a, requires_grad=True)
    for f in (lambda m, x: x.sum(1).pow(2).sum(), lambda m, x: x.var(0).sum(), lambda m, x: x.amax(1).sum(),
              lambda m, x: m.linalg.vector_norm(x, 2, 1).sum(), lambda m, x: x.max(0).values.sum()):
        a.grad, t.grad = None, None
        f(toolkit, a).backward()
        f(torch, t).backward()
        assert_close(a.grad, t.grad, accum=300)


# Shapes whose reduced dims form two runs around kept ones (a convolution's bias gradient over (0, 2, 3)), with
# a long inner run and a short one (summed in the other order), and dims whose layout makes them two runs.
TWO_RUNS = [((64, 10, 24, 24), (0, 2, 3)), ((64, 20, 8, 8), (0, 2, 3)), ((9, 7, 5, 130), (0, 3)),
            ((3, 40, 6, 300), (0, 1, 3)), ((300, 4, 50), (0, 2)), ((5, 6, 7, 8, 40), (0, 1, 3, 4))]


@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64, toolkit.int64], ids=str)
@pytest.mark.parametrize("shape, dims", TWO_RUNS, ids=str)
def test_two_runs_of_reduced_dims_match_torch(rng, shape, dims, dtype):
    a = toolkit.tensor(rng.standard_normal(shape) * 3).to(dtype)
    n = _reduced(shape, dims)
    for x in (a, a.transpose(0, -1)):
        t = to_torch(x)
        d = dims if x is a else tuple(sorted(x.ndim - 1 - k if k in (0, x.ndim - 1) else k for k in dims))
        for keepdim in (False, True):
            assert_close(x.sum(d, keepdim=keepdim), t.sum(d, keepdim=keepdim), accum=n, msg=f"sum {shape} {d}")
            if dtype.is_floating_point:
                assert_close(x.mean(d, keepdim=keepdim), t.mean(d, keepdim=keepdim), accum=n, msg=f"mean {d}")
                for p in (1, 2):
                    assert_close(toolkit.linalg.vector_norm(x, p, d, keepdim), torch.linalg.vector_norm(t, p, d, keepdim),
                                 accum=n, msg=f"norm{p} {d}")


def test_two_run_layout_is_found_without_copying():
    from toolkit.ops._reduce_numba import two_run_layout

    a = np.zeros((4, 5, 6, 7), np.float32)
    x, kept = two_run_layout(a, (0, 2, 3))
    assert x.shape == (1, 4, 5, 42, 1) and kept == (1,) and np.shares_memory(x, a)
    assert two_run_layout(a, (0, 1)) is None  # one run: the plain layout serves it
    assert two_run_layout(a, (0, 2)) is not None and two_run_layout(np.zeros((4, 5, 6, 7, 8)), (0, 2, 4)) is None
