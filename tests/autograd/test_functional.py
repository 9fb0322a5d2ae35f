"""toolkit.autograd.functional against torch.autograd.functional on the same functions and inputs."""

import numpy as np
import pytest
import torch
import torch.autograd.functional as PF

import toolkit
import toolkit.autograd.functional as TF
from tests.conftest import assert_close

LIBS = ((toolkit, TF), (torch, PF))


def _inputs(lib, rng_seed=0):
    r = np.random.default_rng(rng_seed)
    return lib.tensor(r.random((2, 3))), lib.tensor(r.random(3))


def poly(x):
    return (x ** 3 - 2 * x).sum(dim=-1)


def two_in_two_out(x, y):
    return x.exp() * y, (x ** 2).sum() * y


def mlp(w, b):
    x = w.new_ones(4, 2) * 0.5
    return (x @ w + b).tanh().sum()


def both(call):
    """``call(lib, module, inputs)`` for toolkit and torch, compared."""
    ours = call(toolkit, TF, _inputs(toolkit))
    theirs = call(torch, PF, _inputs(torch))
    assert_close(ours, theirs, accum=3)
    return ours, theirs


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_single(vectorize):
    ours, _ = both(lambda lib, m, xy: m.jacobian(poly, xy[0], vectorize=vectorize))
    assert isinstance(ours, toolkit.Tensor) and ours.shape == (2, 2, 3)


def test_jacobian_tuples():
    ours, theirs = both(lambda lib, m, xy: m.jacobian(two_in_two_out, xy))
    assert isinstance(ours, tuple) and isinstance(ours[0], tuple) and len(ours[1]) == 2


def test_jacobian_forward_mode():
    both(lambda lib, m, xy: m.jacobian(two_in_two_out, xy, vectorize=True, strategy="forward-mode"))
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        TF.jacobian(poly, _inputs(toolkit)[0], strategy="forward-mode")
    with pytest.raises(AssertionError, match="Expected strategy"):
        TF.jacobian(poly, _inputs(toolkit)[0], strategy="sideways")


def test_jacobian_create_graph_second_order():
    def call(lib, m, xy):
        x = xy[1].clone().requires_grad_()
        j = m.jacobian(lambda a: a.sin() * a.sum(), x, create_graph=True)
        assert j.requires_grad
        return lib.autograd.grad(j.sum(), x)[0]
    both(call)


def test_jacobian_does_not_mark_inputs():
    x = _inputs(toolkit)[0]
    TF.jacobian(poly, x)
    assert not x.requires_grad and x.grad is None


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(vectorize):
    both(lambda lib, m, xy: m.hessian(lambda x: (x ** 3).sum(), xy[1], vectorize=vectorize))
    both(lambda lib, m, xy: m.hessian(mlp, xy))


def test_vjp_jvp_hvp_vhp():
    both(lambda lib, m, xy: m.vjp(poly, xy[0], lib.ones(2, dtype=lib.float64)))
    both(lambda lib, m, xy: m.vjp(two_in_two_out, xy, (xy[0], xy[1])))
    both(lambda lib, m, xy: m.jvp(poly, xy[0], xy[0]))
    both(lambda lib, m, xy: m.jvp(two_in_two_out, xy, xy))
    both(lambda lib, m, xy: m.hvp(mlp, xy, xy))
    both(lambda lib, m, xy: m.vhp(mlp, xy, xy))
    both(lambda lib, m, xy: m.vjp(lambda x: x.sum(), xy[1]))


def test_create_graph_results_require_grad():
    for lib, m in LIBS:
        x = _inputs(lib)[1]
        out, v = m.vhp(lambda a: (a ** 3).sum(), x, x, create_graph=True)
        assert out.requires_grad and v.requires_grad
        out, v = m.vjp(lambda a: a ** 2, x, x)
        assert not out.requires_grad and not v.requires_grad


def test_unused_input_zeros_and_strict():
    f = lambda x, y: x * 2  # noqa: E731
    for lib, m in LIBS:
        xy = _inputs(lib)
        _, (gx, gy) = m.vjp(f, xy, xy[0])
        assert float(gy.abs().sum()) == 0.0
    for case in (lambda lib, m: m.vjp(f, _inputs(lib), _inputs(lib)[0], strict=True),
                 lambda lib, m: m.jacobian(f, _inputs(lib), strict=True),
                 lambda lib, m: m.jacobian(lambda x: x.detach(), _inputs(lib)[1], strict=True),
                 lambda lib, m: m.hessian(lambda x: x.sum(), _inputs(lib)[1], strict=True),
                 lambda lib, m: m.jacobian(f, _inputs(lib), strict=True, vectorize=True)):
        raise_alike(case, LIBS)


@pytest.mark.parametrize("case", [
    lambda lib, m: m.vjp(poly, _inputs(lib)[0], lib.ones(3)),
    lambda lib, m: m.vjp(two_in_two_out, _inputs(lib), (_inputs(lib)[0],)),
    lambda lib, m: m.vjp(two_in_two_out, _inputs(lib), (_inputs(lib)[1], _inputs(lib)[1])),
    lambda lib, m: m.vjp(poly, _inputs(lib)[0]),
    lambda lib, m: m.jvp(poly, _inputs(lib)[0]),
    lambda lib, m: m.hvp(lambda x: x.sum(), _inputs(lib)[0]),
    lambda lib, m: m.vhp(poly, _inputs(lib)[0], _inputs(lib)[0]),
    lambda lib, m: m.hessian(poly, _inputs(lib)[0]),
    lambda lib, m: m.jacobian(poly, [1.0]),
    lambda lib, m: m.jacobian(poly, (_inputs(lib)[0], 2)),
    lambda lib, m: m.jacobian(lambda x: 3, _inputs(lib)[0]),
])
def test_errors_match_torch(case):
    raise_alike(case, LIBS)


def raise_alike(case, libs) -> None:
    """``case(lib, module)`` raises the same error type and message with toolkit as with torch."""
    errors = []
    for lib, m in libs:
        with pytest.raises(Exception) as e:
            case(lib, m)
        errors.append((type(e.value), str(e.value).replace("torch.", "").replace("toolkit.", "")))
    assert errors[0] == errors[1]
