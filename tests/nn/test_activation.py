"""Activation layers and functional wrappers against PyTorch: outputs, input gradients, in-place, reprs, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F

from ..conftest import assert_close

MODULES = [
    "ReLU()", "ReLU(inplace=True)", "LeakyReLU(0.2)", "LeakyReLU(negative_slope=0.3, inplace=True)", "ELU()",
    "ELU(alpha=0.5, inplace=True)", "CELU(2.0)", "SELU()", "GELU()", "GELU(approximate='tanh')", "SiLU()",
    "SiLU(inplace=True)", "Mish()", "Tanh()", "Sigmoid()", "Hardtanh()", "Hardtanh(-2.5, 0.5, True)", "ReLU6()",
    "ReLU6(inplace=True)", "Softplus()", "Softplus(beta=2.0, threshold=1.0)", "Hardsigmoid()", "Hardswish()",
    "LogSigmoid()", "Softsign()", "Tanhshrink()", "Threshold(0.1, 20.0)", "Hardshrink()", "Softshrink(0.3)",
    "GLU()", "GLU(dim=0)", "Softmax(dim=1)", "LogSoftmax(dim=0)", "Softmin(dim=-1)", "Softmax2d()",
]


def _input(rng):
    x = rng.uniform(-7, 7, (4, 2, 3, 2)).astype(np.float32)
    x[np.abs(x) < 0.05] = 0.5  # away from the kinks at 0
    return x


@pytest.mark.parametrize("spec", MODULES)
def test_module_matches_torch(spec, rng):
    x = _input(rng)
    m, tm = eval("nn." + spec), eval("torch.nn." + spec)
    assert repr(m) == repr(tm)
    a = toolkit.tensor(x, requires_grad=True)
    ta = torch.tensor(x, requires_grad=True)
    # in-place modules need a non-leaf input, as in PyTorch
    out, tout = m(a * 1.0), tm(ta * 1.0)
    n = 4 if spec.startswith(("Softmax", "LogSoftmax", "Softmin")) else 1  # sums over a dim of at most 4
    assert_close(out, tout, accum=n)
    g = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    assert_close(a.grad, ta.grad, accum=n)


@pytest.mark.parametrize("name,args", [
    ("relu", ()), ("leaky_relu", (0.1,)), ("elu", (1.5,)), ("selu", ()), ("celu", (0.7,)), ("hardtanh", (-0.5, 2.0)),
    ("relu6", ()), ("silu", ()), ("mish", ()), ("hardsigmoid", ()), ("hardswish", ()), ("threshold", (0.2, -1.0)),
])
def test_functional_inplace(name, args, rng):
    x = _input(rng)
    a, ta = toolkit.tensor(x), torch.tensor(x)
    out = getattr(F, name)(a, *args, inplace=True)
    tout = getattr(torch.nn.functional, name)(ta, *args, inplace=True)
    assert out is a
    assert_close(a, ta)
    assert_close(out, tout)


@pytest.mark.parametrize("name", ["relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_"])
def test_functional_underscore_forms(name, rng):
    x = _input(rng)
    a, ta = toolkit.tensor(x), torch.tensor(x)
    getattr(F, name)(a)
    getattr(torch.nn.functional, name)(ta)
    assert_close(a, ta)


def test_inplace_backward_through_non_leaf(rng):
    x = _input(rng)
    a, ta = toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.leaky_relu(a * 2, 0.1, inplace=True).sum().backward()
    torch.nn.functional.leaky_relu(ta * 2, 0.1, inplace=True).sum().backward()
    assert_close(a.grad, ta.grad)


def test_float64_and_dtype_errors():
    x = np.array([-1.5, 0.25, 3.0])
    assert_close(F.elu(toolkit.tensor(x)), torch.nn.functional.elu(torch.tensor(x)))
    assert_close(F.relu6(toolkit.tensor([-3, 2, 9])), torch.nn.functional.relu6(torch.tensor([-3, 2, 9])))
    assert_close(F.hardtanh(toolkit.tensor([-3, 0, 9])), torch.nn.functional.hardtanh(torch.tensor([-3, 0, 9])))
    assert_close(F.softsign(toolkit.tensor([-3, 2])), torch.nn.functional.softsign(torch.tensor([-3, 2])))
    with pytest.raises(NotImplementedError, match="leaky_relu_cpu\" not implemented for 'Long'"):
        F.leaky_relu(toolkit.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="elu_cpu\" not implemented for 'Long'"):
        F.selu(toolkit.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        F.hardtanh(toolkit.tensor([True]))


def test_errors():
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(toolkit.ones(2), 1.0, -1.0)
    with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val \(2\)"):
        nn.Hardtanh(2, 1)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(toolkit.ones(2, 3))
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(toolkit.ones(2, 3))


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_softmax_implicit_dim_warns(ndim, rng):
    x = rng.standard_normal((2, 3, 4, 5)[:ndim]).astype(np.float32)
    for name in ("softmax", "log_softmax", "softmin"):
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been deprecated"):
            out = getattr(F, name)(toolkit.tensor(x))
        with pytest.warns(UserWarning):
            expected = getattr(torch.nn.functional, name)(torch.tensor(x))
        assert_close(out, expected)


def test_softmin_dtype(rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    out = F.softmin(toolkit.tensor(x), 1, dtype=toolkit.float64)
    assert_close(out, torch.nn.functional.softmin(torch.tensor(x), 1, dtype=torch.float64))


def test_rrelu_eval(rng):
    x = _input(rng)
    assert_close(nn.RReLU().eval()(toolkit.tensor(x)), torch.nn.RReLU().eval()(torch.tensor(x)))
    assert repr(nn.RReLU(0.1, 0.3)) == repr(torch.nn.RReLU(0.1, 0.3))


def test_double_backward_through_activations():
    x = toolkit.tensor([-1.3, -0.4, 0.6, 2.2], dtype=toolkit.float64, requires_grad=True)
    for fn in (F.elu, F.selu, F.mish, F.logsigmoid, F.softsign, F.hardswish, lambda t: F.leaky_relu(t, 0.2)):
        assert toolkit.autograd.gradgradcheck(fn, (x,))


FORMULA_OPS = ["leaky_relu", "elu", "selu", "celu", "hardtanh", "relu6", "threshold", "mish", "hardsigmoid",
               "hardswish", "log_sigmoid", "softsign", "tanhshrink", "hardshrink", "softshrink"]


@pytest.mark.parametrize("name", FORMULA_OPS)
def test_scalar_formula_agrees_with_kernel(name):
    """The fusion code generator inlines each op's formula: it must compute what the numpy kernel computes."""
    import math

    from toolkit.ops import registry

    o = registry.get(name)
    extra = {"threshold": {"threshold": 0.3, "value": -2.0}}.get(name, {})
    for v in (-30.0, -4.0, -2.9, -0.7, -0.2, 0.2, 0.45, 0.8, 2.5, 3.5, 7.0, 30.0):
        scalars = {a.name: a.default for a in o.args if a.default is not None}
        scalars.update(extra, self=v)
        expected = o.kernels["cpu"](np.array([v]), **{k: scalars[k] for k in o.arg_names if k != "self"})[0]
        got = eval(o.formula, {"math": math}, scalars)  # noqa: S307 - the registry's own formula
        assert got == pytest.approx(float(expected), rel=1e-12, abs=1e-12), (name, v)
