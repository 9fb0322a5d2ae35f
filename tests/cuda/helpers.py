"""Shared by the CUDA tests: the skip condition and host/device conversion of samples."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit

needs_cuda = pytest.mark.skipif(
    not toolkit.cuda.is_available(),
    reason="needs a GPU, or the simulator process started by tests/cuda/test_in_simulator.py",
)


def to_device(x, device: str):
    """Sample values (numpy arrays for tensors, nested in lists/tuples) as tensors on ``device``."""
    if isinstance(x, np.ndarray):
        return toolkit.tensor(x, device=device)
    if isinstance(x, list):
        return [to_device(e, device) for e in x]
    if isinstance(x, tuple):
        return tuple(to_device(e, device) for e in x)
    return x


def host(x):
    """Results as host numpy arrays (tensors copied back), nested as given."""
    if isinstance(x, toolkit.Tensor):
        assert x.device.type == ("cuda" if x.is_cuda else "cpu")
        return x.detach().cpu().numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(host(e) for e in x) if not hasattr(x, "_fields") else tuple(host(e) for e in x)
    return x
