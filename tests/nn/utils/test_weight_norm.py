"""nn.utils.weight_norm / remove_weight_norm (the hook form) against torch."""

from __future__ import annotations

import warnings

import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import nn

from .helpers import inputs, raises_like, same_grads, same_state, twins

pytestmark = pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated:FutureWarning")


@pytest.mark.parametrize("make,shape,dim", [
    (lambda lib: lib.nn.Linear(5, 4), (3, 5), 0),
    (lambda lib: lib.nn.Linear(5, 4), (3, 5), None),
    (lambda lib: lib.nn.Linear(5, 4), (3, 5), 1),
    (lambda lib: lib.nn.Conv2d(2, 3, 3), (2, 2, 5, 5), 0),
    (lambda lib: lib.nn.Conv1d(2, 3, 3), (2, 2, 6), 2),
])
def test_weight_norm_matches_torch(rng, make, shape, dim):
    tm, km = twins(lambda: make(torch), lambda: make(toolkit))
    torch.nn.utils.weight_norm(tm, dim=dim)
    nn.utils.weight_norm(km, dim=dim)
    same_state(km, tm)
    assert [n for n, _ in km.named_parameters()] == [n for n, _ in tm.named_parameters()]
    tx, kx = inputs(rng, shape)
    tout, kout = tm(tx), km(kx)
    accum = tm.weight.numel()
    assert_close(kout, tout, accum=accum)
    (tout * tout).sum().backward()
    (kout * kout).sum().backward()
    same_grads(km, tm, accum=accum * 4)
    torch.nn.utils.remove_weight_norm(tm)
    nn.utils.remove_weight_norm(km)
    same_state(km, tm, accum=accum)
    assert isinstance(km.weight, nn.Parameter) and not km._forward_pre_hooks


def test_weight_norm_errors_and_warning():
    km, tm = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated in favor of"):
        nn.utils.weight_norm(km)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(tm)
        raises_like(lambda: nn.utils.weight_norm(km), lambda: torch.nn.utils.weight_norm(tm))
    raises_like(lambda: nn.utils.remove_weight_norm(km, "bias"), lambda: torch.nn.utils.remove_weight_norm(tm, "bias"))
