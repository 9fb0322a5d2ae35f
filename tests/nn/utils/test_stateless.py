"""toolkit.func.functional_call and nn.utils.stateless.functional_call against torch: the given parameters and
buffers are used for the call (gradients reach them), the module's own come back afterwards, tied weights,
strict mode and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import nn

from .helpers import inputs, raises_like, twins


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


def _given(rng):
    values = {"0.weight": rng.standard_normal((4, 3)), "2.bias": rng.standard_normal(2),
              "1.running_mean": rng.standard_normal(4)}
    return ({k: torch.tensor(v.astype(np.float32), requires_grad=not k.startswith("1.")) for k, v in values.items()},
            {k: toolkit.tensor(v.astype(np.float32), requires_grad=not k.startswith("1.")) for k, v in values.items()})


def test_functional_call_matches_torch(rng):
    tm, km = twins(lambda: _net(torch).eval(), lambda: _net(toolkit).eval())
    tgiven, kgiven = _given(rng)
    tx, kx = inputs(rng, (5, 3))
    tout = torch.func.functional_call(tm, tgiven, (tx,))
    kout = toolkit.func.functional_call(km, kgiven, (kx,))
    assert_close(kout, tout, accum=12)
    tout.square().sum().backward()
    kout.square().sum().backward()
    for name in tgiven:
        if tgiven[name].requires_grad:
            assert_close(kgiven[name].grad, tgiven[name].grad, accum=60)
    assert km[0].weight.grad is None and km[2].weight.grad is not None
    assert isinstance(km[0].weight, nn.Parameter)  # the module's own parameter is back
    assert_close(km(kx), tm(tx), accum=12)
    # several dicts, kwargs, a single non-tuple argument
    out = toolkit.func.functional_call(km, [{"0.weight": kgiven["0.weight"]}, {"2.bias": kgiven["2.bias"]}], kx)
    ref = torch.func.functional_call(tm, [{"0.weight": tgiven["0.weight"]}, {"2.bias": tgiven["2.bias"]}], tx)
    assert_close(out, ref, accum=12)


def test_buffers_updated_in_train_mode_go_to_the_given_tensor(rng):
    km = _net(toolkit)
    mean = toolkit.zeros(4)
    before = km[1].running_mean.clone()
    toolkit.func.functional_call(km, {"1.running_mean": mean}, (toolkit.randn(6, 3),))
    assert not toolkit.equal(mean, toolkit.zeros(4))
    assert toolkit.equal(km[1].running_mean, before)


def test_stateless_functional_call_is_deprecated(rng):
    km = nn.Linear(3, 2)
    with pytest.warns(FutureWarning, match="Please use `torch.func.functional_call` instead"):
        out = nn.utils.stateless.functional_call(km, {"bias": toolkit.zeros(2)}, toolkit.ones(1, 3))
    assert_close(out, km.weight.sum(1, keepdim=True).t().detach())


def _tied(lib):
    class Tied(lib.nn.Module):
        """b shares a's weight."""

        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2)
            self.b = lib.nn.Linear(2, 2)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    return Tied()


def test_tie_weights_and_strict(rng):
    tm, km = twins(lambda: _tied(torch), lambda: _tied(toolkit))
    w = rng.standard_normal((2, 2)).astype(np.float32)
    tx, kx = inputs(rng, (3, 2))
    for tie in (True, False):
        tout = torch.func.functional_call(tm, {"a.weight": torch.tensor(w)}, (tx,), tie_weights=tie)
        kout = toolkit.func.functional_call(km, {"a.weight": toolkit.tensor(w)}, (kx,), tie_weights=tie)
        assert_close(kout, tout, accum=4)
    raises_like(lambda: toolkit.func.functional_call(km, {"a.weight": toolkit.ones(2, 2), "b.weight": toolkit.zeros(2, 2)},
                                                     (kx,)),
                lambda: torch.func.functional_call(tm, {"a.weight": torch.ones(2, 2), "b.weight": torch.zeros(2, 2)},
                                                   (tx,)))
    raises_like(lambda: toolkit.func.functional_call(km, {"a.weight": toolkit.ones(2, 2), "c": toolkit.ones(1)}, (kx,),
                                                     strict=True),
                lambda: torch.func.functional_call(tm, {"a.weight": torch.ones(2, 2), "c": torch.ones(1)}, (tx,),
                                                   strict=True))
    raises_like(lambda: toolkit.func.functional_call(km, [{"a.bias": toolkit.ones(2)}, {"a.bias": toolkit.ones(2)}],
                                                     (kx,)),
                lambda: torch.func.functional_call(tm, [{"a.bias": torch.ones(2)}, {"a.bias": torch.ones(2)}], (tx,)))
    raises_like(lambda: toolkit.func.functional_call(km, 3, (kx,)), lambda: torch.func.functional_call(tm, 3, (tx,)))
