"""Autograd on complex tensors: PyTorch's conjugate Wirtinger gradients, checked against torch and gradcheck."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.autograd import gradcheck, gradgradcheck

from ..conftest import assert_close

torch = pytest.importorskip("torch")

Z = [1 + 2j, -0.5 + 0.3j, 2 - 1j]
W = [0.5 - 1j, 1 + 1j, -2 + 0.5j]
X = [0.7, -1.2, 1.9]

# Real losses of complex tensors, written once for both libraries (``m`` is toolkit or torch).
LOSSES = {
    "mul_abs": lambda m, z, w, x: (z * w).abs().sum(),
    "div_real": lambda m, z, w, x: (z / w).real.sum(),
    "exp_imag": lambda m, z, w, x: z.exp().imag.sum() + (w * x).abs().sum(),
    "conj_mul": lambda m, z, w, x: (z.conj() * w).real.sum(),
    "angle": lambda m, z, w, x: m.angle(z).sum() * 2 + m.angle(w * x).sum(),
    "view_as_real": lambda m, z, w, x: (m.view_as_real(z * w) ** 2).sum(),
    "log_sqrt": lambda m, z, w, x: (z.log() * w.sqrt()).abs().sum(),
    "trig": lambda m, z, w, x: (z.sin() + w.cos() * z.tanh()).abs().sum(),
    "sigmoid_reciprocal": lambda m, z, w, x: (z.sigmoid() * w.reciprocal()).real.sum(),
    "pow": lambda m, z, w, x: (z ** 2 + w.pow(3)).imag.sum(),
    "matmul": lambda m, z, w, x: (m.outer(z, w) @ z).abs().sum(),
    "sum_mean_prod": lambda m, z, w, x: (z.sum() * w.mean() + z.prod()).abs(),
    "vdot": lambda m, z, w, x: m.vdot(z, w).real + m.vdot(w, z).imag,
    "complex_polar": lambda m, z, w, x: (m.complex(x, x * 2) * m.polar(x.abs(), x) * z).abs().sum(),
    "real_tensor_times_complex": lambda m, z, w, x: (x * (1 + 2j) * z).imag.sum(),
    "view_as_complex": lambda m, z, w, x: (m.view_as_complex(m.stack([x, x * x], -1)) * w).abs().sum(),
    "abs_squared": lambda m, z, w, x: (z * z.conj()).real.sum() + (w.abs() ** 2).sum(),
    "sgn": lambda m, z, w, x: (m.sgn(z) * w).real.sum() + (m.sgn(x) * x).sum(),
    "to_complex": lambda m, z, w, x: (x.to(m.complex128) * w).abs().sum(),
}


def _leaves(lib, dtype):
    c = toolkit.complex128 if lib is toolkit and dtype == "double" else toolkit.complex64 if lib is toolkit else (
        torch.complex128 if dtype == "double" else torch.complex64)
    f = {toolkit: {"double": toolkit.float64, "float": toolkit.float32},
         torch: {"double": torch.float64, "float": torch.float32}}[lib][dtype]
    return (lib.tensor(Z, dtype=c, requires_grad=True), lib.tensor(W, dtype=c, requires_grad=True),
            lib.tensor(X, dtype=f, requires_grad=True))


@pytest.mark.parametrize("dtype", ["float", "double"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_backward_matches_torch(name, dtype):
    loss = LOSSES[name]
    ours, theirs = _leaves(toolkit, dtype), _leaves(torch, dtype)
    loss(toolkit, *ours).backward()
    loss(torch, *theirs).backward()
    for a, b in zip(ours, theirs):
        if b.grad is None:
            assert a.grad is None
            continue
        assert a.grad is not None and str(a.grad.dtype).split(".")[-1] == str(b.grad.dtype).split(".")[-1]
        assert_close(a.grad, b.grad.resolve_conj(), accum=len(Z))


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradcheck_on_complex_inputs(name):
    loss = LOSSES[name]
    assert gradcheck(lambda z, w, x: loss(toolkit, z, w, x), _leaves(toolkit, "double"))
    assert gradcheck(lambda z, w, x: loss(toolkit, z, w, x), _leaves(toolkit, "double"), fast_mode=True)


@pytest.mark.parametrize("fn", [
    lambda z, w: z * w,
    lambda z, w: z / w,
    lambda z, w: (z.exp() - w.log()).conj(),
    lambda z, w: toolkit.view_as_real(z) * w.abs().unsqueeze(-1),
    lambda z, w: z.real * w,
    lambda z, w: z @ w,
], ids=["mul", "div", "exp_log_conj", "view_as_real", "real", "matmul"])
def test_gradcheck_with_complex_outputs(fn):
    z, w, _ = _leaves(toolkit, "double")
    assert gradcheck(fn, (z, w))
    assert gradcheck(fn, (z, w), fast_mode=True)


def test_gradgradcheck_on_complex_inputs():
    z, w, _ = _leaves(toolkit, "double")
    assert gradgradcheck(lambda z, w: (z * w).exp(), (z, w))
    assert gradgradcheck(lambda z, w: (z * w.conj()).abs(), (z, w))
    assert gradgradcheck(lambda z: toolkit.sgn(z) * z.angle(), (z,))


class _WrongConj(toolkit.autograd.Function):
    """``z * c`` whose backward forgets to conjugate ``c``: a gradient gradcheck must reject."""

    @staticmethod
    def forward(ctx, z):
        return z * (1 + 2j)

    @staticmethod
    def backward(ctx, grad):
        return grad * (1 + 2j)


def test_gradcheck_catches_a_wrong_complex_gradient():
    z = toolkit.tensor(Z, dtype=toolkit.complex128, requires_grad=True)
    assert gradcheck(lambda z: z * (1 + 2j), (z,))
    with pytest.raises(toolkit.autograd.GradcheckError, match="Jacobian mismatch"):
        gradcheck(_WrongConj.apply, (z,))
    assert not gradcheck(_WrongConj.apply, (z,), raise_exception=False, fast_mode=True)


def test_grads_of_complex_leaves_are_complex_and_real_leaves_real():
    z, w, x = _leaves(toolkit, "float")
    (z * x).abs().sum().backward()
    assert z.grad.dtype is toolkit.complex64 and x.grad.dtype is toolkit.float32
    tz, tw, tx = _leaves(torch, "float")
    (tz * tx).abs().sum().backward()
    assert_close(x.grad, tx.grad)
    assert_close(z.grad, tz.grad)


def test_backward_of_complex_output_needs_a_gradient():
    z, _, _ = _leaves(toolkit, "double")
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        z.sum().backward()
    with pytest.raises(RuntimeError):
        _leaves(torch, "double")[0].sum().backward()
    out = z * 2
    out.backward(toolkit.ones(3, dtype=toolkit.complex128) * 1j)
    tz = _leaves(torch, "double")[0]
    (tz * 2).backward(torch.ones(3, dtype=torch.complex128) * 1j)
    assert_close(z.grad, tz.grad)


def test_requires_grad_on_complex_and_on_integers():
    assert toolkit.zeros(2, dtype=toolkit.complex64).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        toolkit.zeros(2, dtype=toolkit.int64).requires_grad_()


def test_imag_grad_and_conj_flow_through_views():
    z = toolkit.tensor(Z, dtype=toolkit.complex128, requires_grad=True)
    tz = torch.tensor(Z, dtype=torch.complex128, requires_grad=True)
    (z.imag * 3 + z.real).sum().backward()
    (tz.imag * 3 + tz.real).sum().backward()
    assert_close(z.grad, tz.grad)
    np.testing.assert_allclose(z.grad.numpy(), np.full(3, 1 + 3j))
