"""BatchNorm, LayerNorm and GroupNorm against PyTorch: outputs, gradients, running statistics, eval mode, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F

from ..conftest import assert_close

TOL = {"rtol": 1e-4, "atol": 1e-5}


def _copy_params(m, tm, rng):
    """Random (non-default) weights copied into both modules."""
    for (name, p), (tname, tp) in zip(m.named_parameters(), tm.named_parameters()):
        assert name == tname
        v = rng.uniform(0.5, 1.5, tuple(p.shape)).astype(np.float32)
        with toolkit.no_grad():
            p.copy_(toolkit.tensor(v))
        with torch.no_grad():
            tp.copy_(torch.tensor(v))


def _step(m, tm, x, rng):
    a, ta = toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = m(a), tm(ta)
    assert_close(out, tout, **TOL)
    g = rng.standard_normal(x.shape).astype(np.float32)
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    assert_close(a.grad, ta.grad, **TOL)
    for p, tp in zip(m.parameters(), tm.parameters()):
        assert_close(p.grad, tp.grad, **TOL)
        p.grad = None
        tp.grad = None


@pytest.mark.parametrize("cls,shape,kwargs", [
    ("BatchNorm1d", (8, 3), {}),
    ("BatchNorm1d", (4, 3, 5), {"momentum": 0.3}),
    ("BatchNorm1d", (4, 3, 5), {"momentum": None}),
    ("BatchNorm2d", (4, 3, 5, 2), {}),
    ("BatchNorm2d", (4, 3, 5, 2), {"affine": False}),
    ("BatchNorm2d", (4, 3, 2, 2), {"track_running_stats": False}),
    ("BatchNorm2d", (4, 3, 2, 2), {"bias": False, "eps": 1e-3}),
    ("BatchNorm3d", (2, 3, 2, 2, 2), {}),
])
def test_batchnorm_training_and_eval(cls, shape, kwargs, rng):
    m, tm = getattr(nn, cls)(3, **kwargs), getattr(torch.nn, cls)(3, **kwargs)
    assert repr(m) == repr(tm)
    _copy_params(m, tm, rng)
    for _ in range(3):
        _step(m, tm, rng.normal(1.0, 2.0, shape).astype(np.float32), rng)
    for (name, b), (tname, tb) in zip(m.named_buffers(), tm.named_buffers()):
        assert name == tname
        assert_close(b, tb, **TOL)
    m.eval()
    tm.eval()
    _step(m, tm, rng.normal(1.0, 2.0, shape).astype(np.float32), rng)
    assert set(m.state_dict()) == set(tm.state_dict())


def test_batchnorm_buffers_and_reset():
    m = nn.BatchNorm2d(4)
    assert m.num_batches_tracked.dtype == toolkit.int64 and m.num_batches_tracked.item() == 0
    assert_close(m.running_var, torch.ones(4))
    m(toolkit.randn(3, 4, 2, 2))
    assert m.num_batches_tracked.item() == 1
    assert not np.allclose(m.running_mean.numpy(), 0)
    m.reset_running_stats()
    assert m.num_batches_tracked.item() == 0
    assert_close(m.running_mean, torch.zeros(4))


def test_batchnorm_input_dim_errors():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(toolkit.ones(2, 3, 1, 1))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(toolkit.ones(2, 3, 1))
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size "
                                          r"torch.Size\(\[1, 3\]\)"):
        nn.BatchNorm1d(3)(toolkit.ones(1, 3))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(toolkit.ones(2, 3), toolkit.zeros(4), toolkit.ones(3))
    with pytest.raises(ValueError, match="batch_norm eps must be positive during training"):
        F.batch_norm(toolkit.ones(2, 3), None, None, training=True, eps=0.0)


def test_functional_batch_norm_updates_running_stats_in_place(rng):
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    rm, rv = toolkit.zeros(2), toolkit.ones(2)
    trm, trv = torch.zeros(2), torch.ones(2)
    out = F.batch_norm(toolkit.tensor(x), rm, rv, training=True, momentum=0.2)
    tout = torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.2)
    assert_close(out, tout, **TOL)
    assert_close(rm, trm, **TOL)
    assert_close(rv, trv, **TOL)  # unbiased variance, as PyTorch
    assert_close(F.batch_norm(toolkit.tensor(x), rm, rv), torch.nn.functional.batch_norm(torch.tensor(x), trm, trv),
                 **TOL)


def test_batch_norm_float64_double_backward():
    x = toolkit.randn(4, 2, 3, dtype=toolkit.float64, requires_grad=True)
    w = toolkit.rand(2, dtype=toolkit.float64, requires_grad=True)
    b = toolkit.rand(2, dtype=toolkit.float64, requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), (x, w, b))
    rm, rv = toolkit.rand(2, dtype=toolkit.float64), toolkit.rand(2, dtype=toolkit.float64) + 0.5
    assert toolkit.autograd.gradcheck(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, False), (x, w, b))


@pytest.mark.parametrize("shape,normalized,kwargs", [
    ((4, 5), 5, {}),
    ((2, 3, 4), (3, 4), {"eps": 1e-3}),
    ((2, 3, 4), [4], {"elementwise_affine": False}),
    ((2, 3, 4), (4,), {"bias": False}),
])
def test_layernorm(shape, normalized, kwargs, rng):
    m, tm = nn.LayerNorm(normalized, **kwargs), torch.nn.LayerNorm(normalized, **kwargs)
    assert repr(m) == repr(tm)
    _copy_params(m, tm, rng)
    _step(m, tm, rng.normal(0.5, 2.0, shape).astype(np.float32), rng)


def test_layernorm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                           r"but got input of size\[2, 3\]"):
        nn.LayerNorm(4)(toolkit.ones(2, 3))


@pytest.mark.parametrize("groups,channels,shape,kwargs", [
    (2, 4, (3, 4, 5), {}),
    (3, 6, (2, 6, 2, 2), {"eps": 1e-3}),
    (1, 4, (2, 4), {"affine": False}),
    (4, 4, (2, 4, 3), {"bias": False}),
])
def test_groupnorm(groups, channels, shape, kwargs, rng):
    m, tm = nn.GroupNorm(groups, channels, **kwargs), torch.nn.GroupNorm(groups, channels, **kwargs)
    assert repr(m) == repr(tm)
    _copy_params(m, tm, rng)
    _step(m, tm, rng.normal(0.5, 2.0, shape).astype(np.float32), rng)


def test_groupnorm_errors():
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        nn.GroupNorm(2, 5)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        F.group_norm(toolkit.ones(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor but received 1"):
        F.group_norm(toolkit.ones(6), 2)
