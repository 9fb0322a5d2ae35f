"""nn.utils.spectral_norm / remove_spectral_norm (the hook form) against torch: the same seeded u and v, the
same power iteration in train mode, none in eval mode, the same state dict and errors."""

from __future__ import annotations

import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import nn

from .helpers import inputs, raises_like, same_grads, same_state, twins


@pytest.mark.parametrize("make,shape,kwargs", [
    (lambda lib: lib.nn.Linear(6, 4), (3, 6), {}),
    (lambda lib: lib.nn.Linear(6, 4), (3, 6), {"n_power_iterations": 3, "dim": 1}),
    (lambda lib: lib.nn.Conv2d(2, 3, 3), (2, 2, 5, 5), {}),
    (lambda lib: lib.nn.ConvTranspose2d(3, 2, 3), (2, 3, 4, 4), {}),
])
def test_spectral_norm_matches_torch(rng, make, shape, kwargs):
    tm, km = twins(lambda: make(torch), lambda: make(toolkit))
    torch.manual_seed(3)
    torch.nn.utils.spectral_norm(tm, **kwargs)
    toolkit.manual_seed(3)
    nn.utils.spectral_norm(km, **kwargs)
    same_state(km, tm)
    accum = tm.weight_orig.numel()
    for _ in range(3):
        tx, kx = inputs(rng, shape)
        tout, kout = tm(tx), km(kx)
        assert_close(kout, tout, accum=accum)
        (tout * tout).sum().backward()
        (kout * kout).sum().backward()
        same_grads(km, tm, accum=accum * 4)
        same_state(km, tm, accum=accum)  # u and v updated in place by the power iteration
    tm.eval()
    km.eval()
    tx, kx = inputs(rng, shape)
    assert_close(km(kx), tm(tx), accum=accum)
    same_state(km, tm, accum=accum)  # eval: no iteration
    assert km.state_dict()._metadata[""]["spectral_norm"] == tm.state_dict()._metadata[""]["spectral_norm"]
    torch.nn.utils.remove_spectral_norm(tm)
    nn.utils.remove_spectral_norm(km)
    same_state(km, tm, accum=accum)
    assert not km._forward_pre_hooks and not km._state_dict_hooks and not km._load_state_dict_pre_hooks


def test_spectral_norm_state_dict_round_trip():
    toolkit.manual_seed(0)
    a = nn.utils.spectral_norm(nn.Linear(4, 3))
    b = nn.utils.spectral_norm(nn.Linear(4, 3))
    b.load_state_dict(a.state_dict())
    a.eval()
    b.eval()
    x = toolkit.randn(2, 4)
    assert_close(b(x), a(x))


def test_spectral_norm_errors():
    km, tm = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    raises_like(lambda: nn.utils.spectral_norm(km, n_power_iterations=0),
                lambda: torch.nn.utils.spectral_norm(tm, n_power_iterations=0))
    nn.utils.spectral_norm(km)
    torch.nn.utils.spectral_norm(tm)
    raises_like(lambda: nn.utils.spectral_norm(km), lambda: torch.nn.utils.spectral_norm(tm))
    raises_like(lambda: nn.utils.remove_spectral_norm(km, "bias"),
                lambda: torch.nn.utils.remove_spectral_norm(tm, "bias"))
    km.bias = None
    tm.bias = None
    raises_like(lambda: nn.utils.spectral_norm(km, "bias"), lambda: torch.nn.utils.spectral_norm(tm, "bias"))
