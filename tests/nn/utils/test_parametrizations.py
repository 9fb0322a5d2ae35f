"""nn.utils.parametrizations (orthogonal, weight_norm, spectral_norm) against torch."""

from __future__ import annotations

import pytest
import torch
from torch.nn.utils import parametrizations as TPZ

import toolkit
from tests.conftest import assert_close
from toolkit import nn
from toolkit.nn.utils import parametrizations as PZ

from .helpers import inputs, raises_like, same_grads, same_state, twins


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_matches_torch(rng, shape, orthogonal_map, use_trivialization):
    out_f, in_f = shape
    tm, km = twins(lambda: torch.nn.Linear(in_f, out_f), lambda: nn.Linear(in_f, out_f))
    torch.manual_seed(0)
    TPZ.orthogonal(tm, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    toolkit.manual_seed(0)
    PZ.orthogonal(km, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    n = max(shape)
    same_state(km, tm, accum=n * n)
    Q = km.weight
    assert_close(Q, tm.weight, accum=n * n)
    eye = toolkit.eye(min(shape))
    assert_close(Q @ Q.mT if out_f <= in_f else Q.mT @ Q, eye, accum=n * n)
    tx, kx = inputs(rng, (2, in_f))
    tout, kout = tm(tx), km(kx)
    assert_close(kout, tout, accum=n * n)
    tout.square().sum().backward()
    kout.square().sum().backward()
    same_grads(km, tm, accum=n ** 3)


def test_orthogonal_errors():
    raises_like(lambda: PZ.orthogonal(nn.Linear(3, 3), "bias"), lambda: TPZ.orthogonal(torch.nn.Linear(3, 3), "bias"))
    raises_like(lambda: PZ.orthogonal(nn.Linear(3, 3), orthogonal_map="qr"),
                lambda: TPZ.orthogonal(torch.nn.Linear(3, 3), orthogonal_map="qr"))
    raises_like(lambda: PZ.orthogonal(nn.Linear(3, 3), "nope"), lambda: TPZ.orthogonal(torch.nn.Linear(3, 3), "nope"))
    km = PZ.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix exponential"):
        km.weight = toolkit.eye(3)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(rng, dim):
    tm, km = twins(lambda: torch.nn.Conv1d(2, 3, 3), lambda: nn.Conv1d(2, 3, 3))
    TPZ.weight_norm(tm, dim=dim)
    PZ.weight_norm(km, dim=dim)
    assert list(km.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    same_state(km, tm)
    tx, kx = inputs(rng, (2, 2, 6))
    tout, kout = tm(tx), km(kx)
    assert_close(kout, tout, accum=18)
    tout.square().sum().backward()
    kout.square().sum().backward()
    same_grads(km, tm, accum=72)


def test_weight_norm_loads_old_state_dict():
    old = nn.Linear(4, 3)
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(old)
    new = PZ.weight_norm(nn.Linear(4, 3))
    new.load_state_dict(old.state_dict())
    x = toolkit.randn(2, 4)
    assert_close(new(x), old(x), accum=4)


@pytest.mark.parametrize("make,shape,kwargs", [
    (lambda lib: lib.nn.Linear(6, 4), (3, 6), {}),
    (lambda lib: lib.nn.Linear(6, 4), (3, 6), {"n_power_iterations": 2, "dim": -1}),
    (lambda lib: lib.nn.Conv2d(2, 3, 3), (2, 2, 5, 5), {}),
    (lambda lib: lib.nn.ConvTranspose1d(3, 2, 3), (2, 3, 4), {}),
])
def test_spectral_norm_matches_torch(rng, make, shape, kwargs):
    tm, km = twins(lambda: make(torch), lambda: make(toolkit))
    torch.manual_seed(1)
    TPZ.spectral_norm(tm, **kwargs)
    toolkit.manual_seed(1)
    PZ.spectral_norm(km, **kwargs)
    accum = tm.parametrizations.weight.original.numel()
    same_state(km, tm, accum=accum * 15)  # 15 power iterations at registration
    for _ in range(2):
        tx, kx = inputs(rng, shape)
        tout, kout = tm(tx), km(kx)
        assert_close(kout, tout, accum=accum * 16)
        tout.square().sum().backward()
        kout.square().sum().backward()
        same_grads(km, tm, accum=accum * 64)
        same_state(km, tm, accum=accum * 16)
    tm.eval()
    km.eval()
    tx, kx = inputs(rng, shape)
    assert_close(km(kx), tm(tx), accum=accum * 16)


def test_spectral_norm_errors():
    raises_like(lambda: PZ.spectral_norm(nn.Linear(3, 3), dim=2), lambda: TPZ.spectral_norm(torch.nn.Linear(3, 3), dim=2))
    raises_like(lambda: PZ.spectral_norm(nn.Linear(3, 3), n_power_iterations=0),
                lambda: TPZ.spectral_norm(torch.nn.Linear(3, 3), n_power_iterations=0))
    raises_like(lambda: PZ.spectral_norm(nn.Linear(3, 3), "nope"),
                lambda: TPZ.spectral_norm(torch.nn.Linear(3, 3), "nope"))
    km = PZ.spectral_norm(nn.Linear(3, 3), "bias")  # 1-D: plain normalisation
    assert_close(km.bias.norm(), toolkit.tensor(1.0))
