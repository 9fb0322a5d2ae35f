"""Shared test helpers: conversions between toolkit, PyTorch (the oracle) and numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

torch.set_default_dtype(torch.float32)

TORCH_DTYPES = {
    toolkit.bool: torch.bool, toolkit.uint8: torch.uint8, toolkit.int8: torch.int8, toolkit.int16: torch.int16,
    toolkit.int32: torch.int32, toolkit.int64: torch.int64, toolkit.float16: torch.float16,
    toolkit.float32: torch.float32, toolkit.float64: torch.float64,
}


def to_torch(x, requires_grad: bool | None = None):
    """A toolkit tensor (or nested container of them) as PyTorch tensors with the same data."""
    if isinstance(x, toolkit.Tensor):
        t = torch.from_numpy(np.array(x.detach().numpy(), copy=True))
        if requires_grad if requires_grad is not None else x.requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(e, requires_grad) for e in x)
    if isinstance(x, dict):
        return {k: to_torch(v, requires_grad) for k, v in x.items()}
    if isinstance(x, toolkit.dtype):
        return TORCH_DTYPES[x]
    return x


def to_numpy(x):
    if isinstance(x, toolkit.Tensor):
        return x.detach().numpy()
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def assert_close(actual, expected, rtol: float | None = None, atol: float | None = None, check_dtype: bool = True):
    """Compare a toolkit result with a PyTorch or numpy one: values, shape and dtype."""
    if isinstance(expected, (tuple, list)) and not isinstance(actual, toolkit.Tensor):
        assert len(actual) == len(expected), f"length {len(actual)} != {len(expected)}"
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol, atol, check_dtype)
        return
    a = to_numpy(actual)
    e = to_numpy(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if check_dtype:
        assert a.dtype == e.dtype, f"dtype {a.dtype} != expected {e.dtype}"
    if a.dtype.kind == "f" or e.dtype.kind == "f":
        tol = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1.3e-6, np.dtype(np.float64): 1e-7}
        r = rtol if rtol is not None else tol.get(a.dtype, 1e-7) * 10
        at = atol if atol is not None else r
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=r, atol=at, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, e)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
