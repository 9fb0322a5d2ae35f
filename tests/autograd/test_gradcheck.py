"""gradcheck / gradgradcheck: PyTorch's signature, results, warnings and failure messages."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import toolkit
from toolkit.autograd import GradcheckError, gradcheck, gradgradcheck


def dbl(a, requires_grad=True):
    return toolkit.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def test_signatures_follow_torch():
    for ours, theirs in ((gradcheck, torch.autograd.gradcheck), (gradgradcheck, torch.autograd.gradgradcheck)):
        p_ours = inspect.signature(ours).parameters
        p_theirs = inspect.signature(theirs).parameters
        for name, p in p_theirs.items():
            assert name in p_ours, name
            assert p_ours[name].kind == p.kind, name
            if p.default is not inspect.Parameter.empty and name != "masked":
                assert p_ours[name].default == p.default, name


@pytest.mark.parametrize("fast_mode", [False, True])
def test_passes_for_correct_gradients(fast_mode):
    x = dbl([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])
    w = dbl([[0.5], [1.5], [-2.0]])
    assert gradcheck(lambda a, b: (a.mm(b).tanh() * a.sum()).exp(), (x, w), fast_mode=fast_mode)
    assert gradgradcheck(lambda a, b: a.mm(b).tanh(), (x, w), fast_mode=fast_mode)
    assert gradcheck(toolkit.tanh, dbl([0.1, 0.2]))  # a single tensor is accepted as inputs


def test_non_tensor_and_non_grad_inputs_are_skipped():
    x = dbl([1.0, 2.0])
    c = dbl([3.0, 4.0], requires_grad=False)
    assert gradcheck(lambda a, k, b: a * b * k, (x, 2.5, c))


def test_multiple_outputs():
    x = dbl([0.5, -1.0, 2.0])
    assert gradcheck(lambda a: (a.exp(), a * a, 3), (x,))


class WrongGrad(toolkit.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, g):
        return g * 3.0


def test_failure_raises_with_jacobians_like_torch():
    x = dbl([1.0, 2.0])
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongGrad.apply, (x,))
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "analytical:" in msg
    assert "2.0000" in msg and "3." in msg  # the numerical 2*x and the wrong analytical 3
    assert isinstance(info.value, RuntimeError)
    assert gradcheck(WrongGrad.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(WrongGrad.apply, (x,), fast_mode=True)


def test_tolerances_are_used():
    class Slightly(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2.01

    x = dbl([1.0])
    assert not gradcheck(Slightly.apply, (x,), raise_exception=False)
    assert gradcheck(Slightly.apply, (x,), atol=1e-1)
    assert gradcheck(Slightly.apply, (x,), rtol=1e-2)


def test_non_double_warns_and_no_grad_input_errors():
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision floating point"):
        gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (dbl([1.0], requires_grad=False),))


def test_non_reentrant_backward_is_reported():
    calls = []

    class Drift(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (2 + 1e-9 * len(calls))

    x = dbl([1.0, 2.0])
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Drift.apply, (x,))
    assert gradcheck(Drift.apply, (x,), nondet_tol=1e-6)


def test_undefined_grad_check():
    class NoneUnsafe(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = dbl([1.0, 2.0])
    with pytest.raises(GradcheckError, match="Expected backward function to handle undefined output grads"):
        gradcheck(NoneUnsafe.apply, (x,))
    assert gradcheck(NoneUnsafe.apply, (x,), check_undefined_grad=False)


def test_gradgradcheck_detects_wrong_second_derivative():
    class BadSecond(toolkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() * x.detach()  # correct value, wrong (absent) second derivative

    x = dbl([0.5, 1.5])
    assert gradcheck(BadSecond.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(BadSecond.apply, (x,))


def test_noncontiguous_inputs():
    x = toolkit.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=toolkit.float64).t().requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda a: (a * a).sum(0), (x,))


def test_costs_one_call_per_perturbation_for_registry_tests():
    """Cheap enough to run on every registry op: one evaluation for the outputs, then central differences,
    two evaluations per input element and no more (counted, not timed)."""
    x = dbl(np.linspace(-1, 1, 24).reshape(4, 6))
    w = dbl(np.linspace(0.5, 1.5, 24).reshape(6, 4))
    calls = []

    def f(a, b):
        calls.append(1)
        return a.mm(b).tanh()

    assert gradcheck(f, (x, w))
    assert len(calls) == 1 + 2 * (x.numel() + w.numel())
