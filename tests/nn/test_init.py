"""toolkit.nn.init against torch.nn.init: same seed, same numbers; gains, fans and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit
from toolkit import nn
from toolkit.nn import init

from ..conftest import assert_close

_SEEDED = [
    ("uniform_", (), {"a": -0.5, "b": 2.0}),
    ("normal_", (), {"mean": 1.0, "std": 0.3}),
    ("xavier_uniform_", (), {"gain": 2.0}),
    ("xavier_normal_", (), {}),
    ("kaiming_uniform_", (), {"a": math.sqrt(5)}),
    ("kaiming_uniform_", (), {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", (), {"a": 0.1}),
    ("trunc_normal_", (), {"std": 0.5}),  # rejection from normal draws (p > 0.3)
    ("trunc_normal_", (), {"mean": 0.0, "std": 1.0, "a": 1.5, "b": 3.0}),  # uniform-proposal branch
]


@pytest.mark.parametrize("name,args,kwargs", _SEEDED)
@pytest.mark.parametrize("shape", [(30, 20), (8, 3, 3, 3)])
def test_random_inits_equal_torch_bit_for_bit(name, args, kwargs, shape):
    toolkit.manual_seed(0)
    a = getattr(init, name)(toolkit.empty(shape), *args, **kwargs)
    torch.manual_seed(0)
    b = getattr(torch.nn.init, name)(torch.empty(shape), *args, **kwargs)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_trunc_normal_bounds_and_generator():
    g = toolkit.Generator().manual_seed(5)
    t = init.trunc_normal_(toolkit.empty(1000), a=-0.1, b=0.2, generator=g)
    assert float(t.min()) >= -0.1 and float(t.max()) <= 0.2


def test_orthogonal_matches_torch():
    for shape in [(6, 4), (3, 8), (4, 2, 3)]:
        toolkit.manual_seed(0)
        a = init.orthogonal_(toolkit.empty(shape), gain=1.5)
        torch.manual_seed(0)
        b = torch.nn.init.orthogonal_(torch.empty(shape), gain=1.5)
        assert_close(a, b, accum=a.numel())  # a QR decomposition of the (rows, cols) matrix
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(toolkit.empty(3))


def test_deterministic_inits_match_torch():
    for name, args in [("constant_", (0.25,)), ("ones_", ()), ("zeros_", ()), ("eye_", ())]:
        a = getattr(init, name)(toolkit.empty(3, 5), *args)
        b = getattr(torch.nn.init, name)(torch.empty(3, 5), *args)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for shape, groups in [((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 2, 1, 3, 3), 1)]:
        a = init.dirac_(toolkit.empty(shape), groups)
        b = torch.nn.init.dirac_(torch.empty(shape), groups)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(toolkit.empty(2, 2, 2))
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(toolkit.empty(2, 2))


def test_inits_do_not_record_autograd():
    p = nn.Parameter(toolkit.empty(4, 3))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_, init.zeros_, init.eye_):
        out = fn(p)
        assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad


def test_gain_and_fans():
    for args in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                 ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu",)]:
        assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    for shape in [(5, 3), (8, 4, 3, 3), (2, 6, 5)]:
        expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
        assert init._calculate_fan_in_and_fan_out(toolkit.empty(shape)) == expected
        assert init.calculate_fan_in_and_fan_out(toolkit.empty(shape)) == expected
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
        init.xavier_uniform_(toolkit.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(toolkit.empty(3, 3), mode="fan_avg")


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="`nn.init.uniform` is now deprecated in favor of `nn.init.uniform_`"):
        init.uniform(toolkit.empty(2))


_WITH_GENERATOR = [
    ("uniform_", {"a": -1.0, "b": 0.5}),
    ("normal_", {"std": 2.0}),
    ("trunc_normal_", {"std": 0.5}),
    ("xavier_uniform_", {}),
    ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_uniform_", {"nonlinearity": "relu"}),
    ("kaiming_normal_", {"mode": "fan_out"}),
    ("orthogonal_", {"gain": 2.0}),
]


@pytest.mark.parametrize("name,kwargs", _WITH_GENERATOR)
def test_generator_argument_matches_torch_and_leaves_global_rng(name, kwargs):
    toolkit.manual_seed(1)
    a = getattr(init, name)(toolkit.empty(6, 5), generator=toolkit.Generator().manual_seed(7), **kwargs)
    after = toolkit.rand(3)
    b = getattr(torch.nn.init, name)(torch.empty(6, 5), generator=torch.Generator().manual_seed(7), **kwargs)
    if name == "orthogonal_":
        assert_close(a, b, accum=30)
    else:
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    toolkit.manual_seed(1)
    assert toolkit.equal(after, toolkit.rand(3))


def test_sparse_matches_torch():
    for shape, sparsity in [((10, 4), 0.3), ((5, 7), 0.0), ((6, 3), 1.0)]:
        toolkit.manual_seed(2)
        a = init.sparse_(toolkit.empty(shape), sparsity, std=0.5)
        torch.manual_seed(2)
        b = torch.nn.init.sparse_(torch.empty(shape), sparsity, std=0.5)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(toolkit.empty(2, 2, 2), 0.5)


def test_warnings_and_more_errors_match_torch():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            fn(toolkit.empty(0, 3))
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\] in nn.init.trunc_normal_"):
        init.trunc_normal_(toolkit.empty(3), mean=10.0, std=1.0, a=-1.0, b=1.0)
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(toolkit.empty(3, 2, 3), groups=2)
    for nonlinearity in ("conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        assert init.calculate_gain(nonlinearity) == torch.nn.init.calculate_gain(nonlinearity)
    assert init.calculate_gain("leaky_relu", 0.3) == torch.nn.init.calculate_gain("leaky_relu", 0.3)
    assert sorted(n for n in dir(torch.nn.init) if not n.startswith("_") and n[0].islower() and n not in
                  ("math", "torch", "warnings")) == sorted(init.__all__)
