"""The compiled softmax/log_softmax kernels (last dim, float32/float64) and their backward ops against PyTorch:
small and large inputs, NaN/inf rows, row lengths that are not a multiple of the vector width,
non-contiguous inputs, the polynomial exponential's whole range, and the backward ops' errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.backends.cpu import split as _split

from ..conftest import assert_close, to_torch

NAMES = ["softmax", "log_softmax"]
DTYPES = [np.float32, np.float64]
BACKWARD = {"softmax": "_softmax_backward_data", "log_softmax": "_log_softmax_backward_data"}


def _special_rows(x: np.ndarray) -> np.ndarray:
    """Rows with a NaN, a +inf, all -inf, some -inf, huge and tiny values."""
    x = x.copy()
    x[0, -1] = np.nan
    x[1, 0] = np.inf
    x[2, :] = -np.inf
    x[3, ::2] = -np.inf
    x[4, :] *= 1e4
    x[5, :] = 0.0
    return x


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", [(7, 13), (9, 1), (3, 4, 8), (1800, 37)], ids=str)
def test_forward_matches_torch(rng, name, dtype, shape):
    x = _special_rows(rng.uniform(-30, 30, (int(np.prod(shape[:-1])), shape[-1])).astype(dtype)).reshape(shape)
    out = getattr(toolkit, name)(toolkit.from_numpy(x), -1)
    expected = getattr(torch, name)(torch.from_numpy(x), -1)
    assert_close(out, expected, accum=shape[-1])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("dim", [0, 1])
def test_other_dims_match_torch(rng, name, dtype, dim):
    x = np.moveaxis(_special_rows(rng.uniform(-30, 30, (35, 9)).astype(dtype)).reshape(5, 7, 9), 2, dim)
    out = getattr(toolkit, name)(toolkit.from_numpy(x), dim)
    assert_close(out, getattr(torch, name)(torch.from_numpy(x), dim), accum=9)
    y = getattr(torch, name)(torch.from_numpy(x), dim).nan_to_num(0.5, 1.0, 0.0).numpy()
    g = rng.uniform(-2, 2, x.shape).astype(dtype)
    op = BACKWARD[name]
    got = getattr(toolkit, op)(toolkit.from_numpy(g), toolkit.from_numpy(y), dim, toolkit.float32)
    assert_close(got, getattr(torch, op)(torch.from_numpy(g), torch.from_numpy(y), dim, torch.float32), accum=9)


@pytest.mark.parametrize("name", NAMES)
def test_non_contiguous_and_cast_inputs(rng, name):
    base = toolkit.tensor(rng.uniform(-5, 5, (20, 30))).to(toolkit.float32)
    for x in (base.t(), base[:, ::3], base[::2]):
        assert_close(getattr(x, name)(-1), getattr(to_torch(x), name)(-1), accum=x.shape[-1])
    out = getattr(base, name)(1, dtype=toolkit.float64)
    assert out.dtype is toolkit.float64
    assert_close(out, getattr(to_torch(base), name)(1, dtype=torch.float64), accum=30)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_empty_last_dim_and_rows(name, dtype):
    for shape in ((3, 0), (0, 5), (2, 0, 4)):
        x = np.zeros(shape, dtype)
        assert_close(getattr(toolkit, name)(toolkit.from_numpy(x), -1), getattr(torch, name)(torch.from_numpy(x), -1))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("rows", [5, 1400])
def test_backward_op_matches_torch(rng, name, dtype, rows):
    if name == "log_softmax":  # outputs across exp's whole range (overflow to inf, underflow to 0)
        y = rng.uniform(-800 if dtype is np.float64 else -120, 3, (rows, 50)).astype(dtype)
    else:
        y = rng.uniform(0, 1, (rows, 50)).astype(dtype)
    y[0, :3] = (np.nan, np.inf, -np.inf)
    g = rng.uniform(-2, 2, (rows, 50)).astype(dtype)
    op = BACKWARD[name]
    tdt = torch.float32 if dtype is np.float32 else torch.float64
    out = getattr(toolkit, op)(toolkit.from_numpy(g), toolkit.from_numpy(y), 1, toolkit.float32)
    assert_close(out, getattr(torch, op)(torch.from_numpy(g), torch.from_numpy(y), 1, tdt), accum=50)


@pytest.mark.parametrize("name", NAMES)
def test_gradients_of_a_large_input_match_torch(rng, name):
    x = rng.standard_normal((700, 100)).astype(np.float32)
    w = rng.standard_normal(x.shape).astype(np.float32)
    xt, xr = toolkit.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    (getattr(xt, name)(1) * toolkit.from_numpy(w)).sum().backward()
    (getattr(xr, name)(1) * torch.from_numpy(w)).sum().backward()
    assert_close(xt.grad, xr.grad, accum=100)
    assert type(xt.grad_fn).__name__ == type(xr.grad_fn).__name__


@pytest.mark.parametrize("name", NAMES)
def test_double_backward_matches_torch(rng, name):
    x = rng.standard_normal((4, 6))
    v = rng.standard_normal((4, 6))
    results = []
    for lib, t in ((toolkit, toolkit.tensor(x, requires_grad=True)), (torch, torch.tensor(x, requires_grad=True))):
        (g,) = lib.autograd.grad((getattr(t, name)(1) * lib.tensor(v)).sum(), t, create_graph=True)
        results.append((g, lib.autograd.grad((g * g).sum(), t)[0]))
    assert_close(results[0], results[1])


@pytest.mark.parametrize("name", NAMES)
def test_backward_op_errors_match_torch(name):
    op = BACKWARD[name]
    kernel = "log_softmax_backward" if name == "log_softmax" else "softmax_backward"
    cases = [
        ((toolkit.ones(2, 2), toolkit.ones(2, 3), 1, toolkit.float32), RuntimeError,
         rf"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but "
         rf"\[2, 2\] does not equal \[2, 3\] \(while checking arguments for {kernel}\)"),
        ((toolkit.ones(2, 3), toolkit.ones(2, 3), 3, toolkit.float32), IndexError,
         r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)"),
        ((toolkit.ones(2, 3, dtype=toolkit.float64), toolkit.ones(2, 3), 1, toolkit.float64), RuntimeError,
         "expected scalar type Double but found Float"),
        ((toolkit.ones(2, 3, dtype=toolkit.int64), toolkit.ones(2, 3, dtype=toolkit.int64), 1, toolkit.int64),
         NotImplementedError, f"\"{kernel}_lastdim_kernel_impl\" not implemented for 'Long'"),
        ((toolkit.ones(2, 3, dtype=toolkit.int64), toolkit.ones(2, 3, dtype=toolkit.int64), 0, toolkit.int64),
         NotImplementedError, f"\"{kernel}_kernel_impl\" not implemented for 'Long'"),
    ]
    for k, (args, error, message) in enumerate(cases):
        with pytest.raises(error, match=message):
            getattr(toolkit, op)(*args)
        if k == 0 and name == "log_softmax":
            continue  # PyTorch's log_softmax backward does not check the sizes (it reads past the smaller one)
        with pytest.raises(error, match=message):
            getattr(torch, op)(*[to_torch(a) if isinstance(a, toolkit.Tensor) else
                                 {toolkit.float32: torch.float32, toolkit.float64: torch.float64,
                                  toolkit.int64: torch.int64}.get(a, a) for a in args])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_split_over_threads_equals_one_thread(rng, name, dim, monkeypatch):
    """Split by rows (or outer index) over the threads, forward and backward give the serial result bit for bit,
    NaN rows included."""
    x = _special_rows(rng.uniform(-30, 30, (130, 70)).astype(np.float32)).reshape(13, 10, 70)
    g = toolkit.from_numpy(rng.uniform(-2, 2, x.shape).astype(np.float32))
    op = BACKWARD[name]

    def run():
        y = getattr(toolkit, name)(toolkit.from_numpy(x), dim)
        return y, getattr(toolkit, op)(g, y, dim, toolkit.float32)

    monkeypatch.setattr(_split, "free_cores", lambda: 2)  # as on a quiet machine, whatever else runs now
    old = _split.PARALLEL_MIN, _split.BUSY_BACKOFF
    try:
        _split.PARALLEL_MIN = 1 << 40
        alone = run()
        # split every call, even after one whose helper came too late (this machine may be busy)
        _split.PARALLEL_MIN, _split.BUSY_BACKOFF, _split._busy[0] = 1, 0, 0
        split = [run() for _ in range(3)]
    finally:
        _split.PARALLEL_MIN, _split.BUSY_BACKOFF = old
    for s in split:
        for si, oi in zip(s, alone):
            np.testing.assert_array_equal(si.numpy(), oi.numpy())
    assert_close(split[0][0], getattr(torch, name)(torch.from_numpy(x), dim), accum=x.shape[dim])
