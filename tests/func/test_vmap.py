"""toolkit.func.vmap against torch.func.vmap: in_dims/out_dims over pytrees, errors, randomness."""

import functools

import numpy as np
import pytest
import torch
import torch.func as PF

import toolkit
import toolkit.func as TF
from tests.autograd.test_functional import raise_alike
from tests.conftest import assert_close

LIBS = ((toolkit, TF), (torch, PF))


def _data(lib):
    r = np.random.default_rng(0)
    return lib.tensor(r.random((4, 3))), lib.tensor(r.random((3, 4))), lib.tensor(r.random(3))


def both(call, accum=3):
    ours = call(toolkit, TF, _data(toolkit))
    theirs = call(torch, PF, _data(torch))
    assert_close(ours, theirs, accum=accum)
    return ours, theirs


def test_torch_vmap_is_func_vmap():
    assert toolkit.vmap is TF.vmap


def test_in_dims():
    both(lambda lib, m, d: m.vmap(lib.dot)(d[0], d[1].t()))
    both(lambda lib, m, d: m.vmap(lib.dot, in_dims=(0, 1))(d[0], d[1]))
    both(lambda lib, m, d: m.vmap(lib.dot, in_dims=(0, None))(d[0], d[2]))
    both(lambda lib, m, d: m.vmap(lib.dot, in_dims=(-2, -1))(d[0], d[1]))
    both(lambda lib, m, d: m.vmap(lambda x, k: x * k, in_dims=(0, None))(d[0], 3.0))
    both(lambda lib, m, d: m.vmap(lambda x, scale=1.0: x * scale)(d[0], scale=2.0))


def test_nested_pytrees():
    def f(pair, p):
        return pair[0] * p["a"] + pair[1].sum() * p["b"]

    both(lambda lib, m, d: m.vmap(f, in_dims=((0, 1), {"a": None, "b": 0}))((d[0], d[1]), {"a": d[2], "b": d[0]}))
    both(lambda lib, m, d: m.vmap(f, in_dims=((0, 1), None))((d[0], d[1]), {"a": d[2], "b": d[2]}))


def test_out_dims_and_structures():
    both(lambda lib, m, d: m.vmap(lambda x: x * 2, out_dims=1)(d[0]))
    both(lambda lib, m, d: m.vmap(lambda x: x.outer(x), out_dims=-1)(d[0]))
    both(lambda lib, m, d: list(m.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(d[0])))

    def dict_out(lib, m, d):
        r = m.vmap(lambda x: {"s": x.sum(), "m": [x.max()]})(d[0])
        return [r["s"], r["m"][0]]

    both(dict_out)

    def with_none(lib, m, d):
        out, k, w = m.vmap(lambda x: (x.sum(), 7, d[2]), out_dims=(0, None, None))(d[0])
        assert k == 7
        return [out, w]

    both(with_none)


def test_nested_vmap_and_transforms():
    both(lambda lib, m, d: m.vmap(m.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(d[2], d[0]))
    both(lambda lib, m, d: m.vmap(m.grad(lambda x: (x.sin() * x).sum()))(d[0]))
    both(lambda lib, m, d: m.vmap(m.jacrev(lambda x: x.exp() * x.sum()))(d[0]))
    both(lambda lib, m, d: m.grad(lambda x: m.vmap(lambda r: (r ** 2).sum())(x).sum())(d[0]))


def test_randomness():
    x = toolkit.ones(3, 2)
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        TF.vmap(lambda r: r + toolkit.rand(2))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        TF.vmap(lambda r: r.clone().normal_())(x)
    same = TF.vmap(lambda r: r + toolkit.rand(2), randomness="same")(x)
    assert_close(same[0], same[1])
    different = TF.vmap(lambda r: r + toolkit.rand(2), randomness="different")(x)
    assert not bool(toolkit.equal(different[0], different[1]))
    ev = TF.vmap(lambda r: toolkit.nn.functional.dropout(r, 0.5, training=False))(x)  # no random op runs
    assert_close(ev, x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        TF.vmap(lambda r: r, randomness="maybe")


@pytest.mark.parametrize("case", [
    lambda lib, m: m.vmap(lambda x, y: x + y, in_dims=(0,))(lib.ones(2, 3), lib.ones(2, 3)),
    lambda lib, m: m.vmap(lambda x, y: x + y)(lib.ones(2, 3), lib.ones(3, 3)),
    lambda lib, m: m.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(lib.ones(2, 3)),
    lambda lib, m: m.vmap(lambda x: 1)(lib.ones(2, 3)),
    lambda lib, m: m.vmap(lambda x: x, out_dims=None)(lib.ones(2, 3) + lib.arange(2.).unsqueeze(1)),
    lambda lib, m: m.vmap(lambda x: x, in_dims=None)(lib.ones(2, 3)),
    lambda lib, m: m.vmap(lambda x: x, in_dims=[0])(lib.ones(2, 3)),
    lambda lib, m: m.vmap(lambda x: x, in_dims=(2,))(lib.ones(2, 3)),
    lambda lib, m: m.vmap(lambda x: x, in_dims=(0.5,))(lib.ones(2, 3)),
    lambda lib, m: m.vmap(lambda x, k: x, in_dims=(0, 0))(lib.ones(2, 3), 3),
    lambda lib, m: m.vmap(lambda: 1)(),
    lambda lib, m: m.vmap(functools.partial(lambda x: x, ), out_dims="x")(lib.ones(2)),
    lambda lib, m: m.vmap(lambda x: x, chunk_size=0),
])
def test_errors_match_torch(case):
    raise_alike(case, LIBS)
