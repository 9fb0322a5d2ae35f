"""nn.utils.parametrize against torch: the registered property, ParametrizationList, state-dict keys, caching,
assignment through right_inverse, removal and errors."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch
from torch.nn.utils import parametrize as TP

import toolkit
from tests.conftest import assert_close
from toolkit import nn
from toolkit.nn.utils import parametrize as P

from .helpers import inputs, raises_like, same_grads, same_state, twins


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.s = lib.nn.Parameter(lib.tensor(2.0))

        def forward(self, X):
            return X * self.s

    return Scale()


def _split(lib):
    class Split(lib.nn.Module):
        """Two originals: the weight is their sum."""

        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return X * 0.25, X * 0.75

    return Split()


def _pair(rng):
    return twins(lambda: torch.nn.Linear(4, 4), lambda: nn.Linear(4, 4))


def test_register_parametrization_matches_torch(rng):
    tm, km = _pair(rng)
    TP.register_parametrization(tm, "weight", _symmetric(torch))
    P.register_parametrization(km, "weight", _symmetric(toolkit))
    TP.register_parametrization(tm, "weight", _scale(torch))
    P.register_parametrization(km, "weight", _scale(toolkit))
    assert type(km).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert P.type_before_parametrizations(km) is nn.Linear
    assert P.is_parametrized(km) and P.is_parametrized(km, "weight") and not P.is_parametrized(km, "bias")
    assert isinstance(km.parametrizations.weight, P.ParametrizationList)
    same_state(km, tm)
    assert_close(km.weight, tm.weight)
    assert_close(km.parametrizations.weight.original, tm.parametrizations.weight.original)
    tx, kx = inputs(rng, (3, 4))
    tout, kout = tm(tx), km(kx)
    assert_close(kout, tout, accum=4)
    tout.square().sum().backward()
    kout.square().sum().backward()
    same_grads(km, tm, accum=16)
    # assignment goes through every parametrization's right_inverse: Scale has none
    raises_like(lambda: setattr(km, "weight", toolkit.eye(4)), lambda: setattr(tm, "weight", torch.eye(4)))


def test_right_inverse_and_remove(rng):
    for leave in (True, False):
        tm, km = _pair(rng)
        TP.register_parametrization(tm, "weight", _symmetric(torch))
        P.register_parametrization(km, "weight", _symmetric(toolkit))
        w = rng.standard_normal((4, 4)).astype("float32")
        tm.weight = torch.tensor(w)
        km.weight = toolkit.tensor(w)
        same_state(km, tm)
        TP.remove_parametrizations(tm, "weight", leave_parametrized=leave)
        P.remove_parametrizations(km, "weight", leave_parametrized=leave)
        assert type(km) is nn.Linear and not hasattr(km, "parametrizations")
        assert isinstance(km.weight, nn.Parameter)
        same_state(km, tm)


def test_several_originals_and_state_dict(rng):
    tm, km = _pair(rng)
    TP.register_parametrization(tm, "weight", _split(torch))
    P.register_parametrization(km, "weight", _split(toolkit))
    assert list(km.state_dict()) == list(tm.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    same_state(km, tm)
    assert_close(km.weight, tm.weight)
    fresh = P.register_parametrization(nn.Linear(4, 4), "weight", _split(toolkit))
    fresh.load_state_dict(km.state_dict())
    assert_close(fresh.weight, km.weight)
    raises_like(lambda: P.remove_parametrizations(km, "weight", leave_parametrized=False),
                lambda: TP.remove_parametrizations(tm, "weight", leave_parametrized=False))
    P.remove_parametrizations(km, "weight")
    TP.remove_parametrizations(tm, "weight")
    same_state(km, tm)


def test_buffer_parametrization_and_cached(rng):
    km = nn.BatchNorm1d(3)
    calls = []

    class Double(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 2

    P.register_parametrization(km, "running_var", Double())
    assert "parametrizations.running_var.original" in km.state_dict()
    with P.cached():
        a = km.running_var
        b = km.running_var
    assert a is b and len(calls) == 2  # one check at registration, one computation in the block
    _ = km.running_var
    assert len(calls) == 3


def test_copy_and_pickle():
    km = P.register_parametrization(nn.Linear(3, 3), "weight", _symmetric(toolkit))
    clone = copy.deepcopy(km)
    assert_close(clone.weight, km.weight)
    assert clone.parametrizations.weight.original is not km.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only supported through"):
        pickle.dumps(km)


def test_transfer_parametrizations_and_params(rng):
    km = P.register_parametrization(nn.Linear(3, 3), "weight", _symmetric(toolkit))
    other = nn.Linear(3, 3)
    P.transfer_parametrizations_and_params(km, other)
    assert other.parametrizations.weight.original is km.parametrizations.weight.original
    assert_close(other.weight, km.weight)


def test_errors_match_torch():
    class Shape(torch.nn.Module):
        def forward(self, X):
            return X[:1]

    class KShape(nn.Module):
        def forward(self, X):
            return X[:1]

    class Dtype(torch.nn.Module):
        def forward(self, X):
            return X.double()

    class KDtype(nn.Module):
        def forward(self, X):
            return X.double()

    raises_like(lambda: P.register_parametrization(nn.Linear(2, 2), "weight", KShape()),
                lambda: TP.register_parametrization(torch.nn.Linear(2, 2), "weight", Shape()))
    raises_like(lambda: P.register_parametrization(nn.Linear(2, 2), "weight", KDtype()),
                lambda: TP.register_parametrization(torch.nn.Linear(2, 2), "weight", Dtype()))
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        P.register_parametrization(nn.Linear(2, 2), "nope", KShape())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(nn.Linear(2, 2), "weight")
    with pytest.raises(ValueError, match="ParametrizationList requires one or more modules."):
        P.ParametrizationList([], toolkit.ones(2))
    km = P.register_parametrization(nn.Linear(2, 2), "weight", KShape(), unsafe=True)
    assert tuple(km.weight.shape) == (1, 2)
