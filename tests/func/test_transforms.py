"""toolkit.func's differentiating transforms against torch.func on the same functions."""

import numpy as np
import pytest
import torch
import torch.func as PF

import toolkit
import toolkit.func as TF
from tests.autograd.test_functional import raise_alike
from tests.conftest import assert_close

LIBS = ((toolkit, TF), (torch, PF))


def _data(lib, seed=0):
    r = np.random.default_rng(seed)
    return lib.tensor(r.random((5, 3))), lib.tensor(r.random(3)), lib.tensor(r.integers(0, 2, 5))


def both(call, accum=3):
    ours = call(toolkit, TF, _data(toolkit))
    theirs = call(torch, PF, _data(torch))
    assert_close(ours, theirs, accum=accum)
    return ours, theirs


def f_sin(x, y):
    return (x.sin() * y).sum()


def test_grad_and_argnums():
    both(lambda lib, m, d: m.grad(f_sin)(d[1], d[1] * 2))
    both(lambda lib, m, d: m.grad(f_sin, argnums=1)(d[1], d[1] * 2))
    ours, _ = both(lambda lib, m, d: m.grad(f_sin, argnums=(0, 1))(d[1], d[1] * 2))
    assert isinstance(ours, tuple) and len(ours) == 2
    both(lambda lib, m, d: m.grad(f_sin, argnums=-1)(d[1], d[1] * 2))


def test_grad_pytree_and_aux():
    def f(p, x):
        return ((x @ p["w"]).tanh() + p["b"]).sum(), {"mean": x.mean()}

    def call(lib, m, d):
        p = {"w": d[0][:3], "b": d[1]}
        g, aux = m.grad(f, has_aux=True)(p, d[0])
        assert set(g) == {"w", "b"}
        return [g["w"], g["b"], aux["mean"]]

    both(call)
    both(lambda lib, m, d: list(m.grad_and_value(lambda x: (x ** 2).sum())(d[1])), accum=3)


def test_grad_does_not_mark_or_track_inputs():
    x = _data(toolkit)[1]
    g = TF.grad(lambda a: (a ** 2).sum())(x)
    assert not x.requires_grad and not g.requires_grad
    xr = x.clone().requires_grad_()
    g = TF.grad(lambda a: (a ** 3).sum())(xr)
    assert g.requires_grad  # the caller's graph is kept, as torch.func does
    assert_close(toolkit.autograd.grad(g.sum(), xr)[0], 6 * x)


def test_unused_input_gives_zeros():
    both(lambda lib, m, d: m.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(d[1], d[1]))


def test_higher_order():
    both(lambda lib, m, d: m.grad(m.grad(lambda x: x.sin() * x ** 2))(d[1][0]))
    both(lambda lib, m, d: m.jacrev(m.jacrev(lambda x: x.exp() * x.sum()))(d[1]))
    both(lambda lib, m, d: m.hessian(lambda x: (x ** 3).prod())(d[1]))
    both(lambda lib, m, d: m.hessian(f_sin, argnums=(0, 1))(d[1], d[1] * 2))


def test_jacrev_jacfwd():
    both(lambda lib, m, d: m.jacrev(lambda x: x @ d[0].t())(d[1]))
    both(lambda lib, m, d: m.jacfwd(lambda x: x @ d[0].t())(d[1]))
    both(lambda lib, m, d: m.jacrev(lambda x, y: (x * y, x.sum()), argnums=(0, 1))(d[1], d[1] * 3))
    both(lambda lib, m, d: list(m.jacfwd(lambda x: (x.sin(), x.cos()), has_aux=True)(d[1])))
    with pytest.raises(ValueError, match="jacrev: `chunk_size` should be greater than 0."):
        TF.jacrev(f_sin, chunk_size=0)


def test_vjp_jvp_linearize():
    def call_vjp(lib, m, d):
        out, fn = m.vjp(lambda x, y: (x * y).sin(), d[1], d[1] * 2)
        return [out, *fn(d[1])]

    both(call_vjp)

    def call_vjp_aux(lib, m, d):
        out, fn, aux = m.vjp(lambda x: (x.exp(), x.sum()), d[1], has_aux=True)
        return [out, fn(d[1])[0], aux]

    both(call_vjp_aux)
    both(lambda lib, m, d: list(m.jvp(lambda x: x.sin() * x, (d[1],), (d[1] * 2,))))
    both(lambda lib, m, d: [m.jvp(lambda x, y: {"a": x * y}, (d[1], d[1]), (d[1], d[0][0]))[1]["a"]])

    def call_lin(lib, m, d):
        out, fn = m.linearize(lambda x: x.sin() * x, d[1])
        return [out, fn(d[1]), fn(d[1] * 3)]

    both(call_lin)


def test_per_sample_gradients_of_a_model():
    def call(lib, m, d):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def loss(p, b, x, t):
            out = m.functional_call(model, (p, b), (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))

        grads = m.vmap(m.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, d[0], d[2])
        return [grads[k] for k in sorted(grads)]

    ours = call(toolkit, TF, _data(toolkit))
    theirs = call(torch, PF, _data(torch))
    assert [g.shape[0] for g in ours] == [5] * 4
    assert_close(ours, theirs, accum=4)


def test_stack_module_state_ensemble():
    def call(lib, m, d):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2).double() for _ in range(4)]
        params, buffers = m.stack_module_state(models)
        assert all(p.requires_grad and p.is_leaf for p in params.values())
        base = models[0]
        return m.vmap(lambda p, b, x: m.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, d[0])

    both(call)
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0."):
        TF.stack_module_state([])


def test_replace_all_batch_norm_modules():
    net = toolkit.nn.Sequential(toolkit.nn.Linear(2, 2), toolkit.nn.BatchNorm1d(2))
    assert TF.replace_all_batch_norm_modules_(net) is net
    assert net[1].running_mean is None and not net[1].track_running_stats


def test_functionalize():
    def f(x):
        y = x.clone()
        y.add_(1)
        return y * 2

    x = _data(toolkit)[1]
    assert_close(TF.functionalize(f)(x), f(x))
    with pytest.raises(RuntimeError, match="received invalid argument for remove=nope"):
        TF.functionalize(f, remove="nope")


@pytest.mark.parametrize("case", [
    lambda lib, m: m.grad(lambda x: x)(lib.ones(2)),
    lambda lib, m: m.grad(lambda x: 3)(lib.ones(2)),
    lambda lib, m: m.grad(lambda x: x.sum(), argnums=3)(lib.ones(2)),
    lambda lib, m: m.grad(lambda x: x.sum(), argnums=[0])(lib.ones(2)),
    lambda lib, m: m.grad(lambda x, y: x.sum(), argnums=(0, 0))(lib.ones(2), lib.ones(2)),
    lambda lib, m: m.grad(lambda x: x.sum(), has_aux=True)(lib.ones(2)),
    lambda lib, m: m.grad(lambda x: x.sum())(3.0),
    lambda lib, m: m.jvp(lambda x: x, [lib.ones(2)], [lib.ones(2)]),
    lambda lib, m: m.jvp(lambda x: x, (lib.ones(2),), (lib.ones(3),)),
    lambda lib, m: m.jvp(lambda x: x, (lib.ones(2),), (lib.ones(2), lib.ones(2))),
    lambda lib, m: m.vjp(lambda x: x, lib.ones(2))[1]((lib.ones(2),)),
    lambda lib, m: m.vjp(lambda x: (x > 0).long(), lib.ones(2)),
    lambda lib, m: m.linearize(lambda x: x, lib.ones(2))[1](lib.ones(3)),
])
def test_errors_match_torch(case):
    raise_alike(case, LIBS)
