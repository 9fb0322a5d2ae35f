"""Containers against torch.nn: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict

import pytest
import torch

import toolkit
from tests.conftest import assert_close, to_torch
from toolkit import nn


def _names(m):
    return [n for n, _ in m.named_modules()], [n for n, _ in m.named_parameters()]


def test_sequential_indexing_slicing_and_forward():
    toolkit.manual_seed(0)
    s = nn.Sequential(nn.Linear(3, 4), nn.Identity(), nn.Linear(4, 2))
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Identity(), torch.nn.Linear(4, 2))
    x = toolkit.randn(5, 3)
    assert_close(s(x), t(to_torch(x)))
    assert len(s) == 3 and s[-1] is s[2] and isinstance(s[1:], nn.Sequential)
    assert list(s[::2]._modules) == list(t[::2]._modules) == ["0", "2"]
    assert repr(s) == repr(t)
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s.append(nn.Flatten())
    t.append(torch.nn.Flatten())
    s.insert(0, nn.Identity())
    t.insert(0, torch.nn.Identity())
    s.extend([nn.Identity()])
    t.extend([torch.nn.Identity()])
    assert repr(s) == repr(t)
    del s[1]
    del t[1]
    assert repr(s) == repr(t) and list(s._modules) == list(t._modules)
    s[0] = nn.Linear(1, 1)
    t[0] = torch.nn.Linear(1, 1)
    assert repr(s) == repr(t)
    assert repr(s + s) == repr(t + t) and repr(s * 2) == repr(t * 2)
    assert type(s.pop(0)) is nn.Linear and len(s) == len(t) - 1
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        s + nn.Identity()
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
        s * 0


def test_sequential_ordereddict():
    s = nn.Sequential(OrderedDict([("conv", nn.Linear(2, 2)), ("act", nn.Identity())]))
    t = torch.nn.Sequential(OrderedDict([("conv", torch.nn.Linear(2, 2)), ("act", torch.nn.Identity())]))
    assert repr(s) == repr(t) and s.conv is s[0]
    assert _names(s) == _names(t)
    assert "conv" in dir(s) and "0" not in dir(nn.Sequential(nn.Identity()))


def test_module_list():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    tlayers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.Identity())
    tlayers.append(torch.nn.Identity())
    layers.insert(1, nn.Flatten())
    tlayers.insert(1, torch.nn.Flatten())
    layers += [nn.Identity()]
    tlayers += [torch.nn.Identity()]
    assert repr(layers) == repr(tlayers)
    assert _names(layers) == _names(tlayers)
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    del layers[0]
    del tlayers[0]
    assert repr(layers) == repr(tlayers) and list(layers._modules) == [str(i) for i in range(5)]
    assert repr(layers + layers) == repr(tlayers + tlayers)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList()) == "ModuleList()"
    with pytest.raises(IndexError, match="index 9 is out of range"):
        layers[9]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        layers.extend(3)


def test_module_dict():
    d = nn.ModuleDict({"b": nn.Linear(1, 1), "a": nn.Identity()})
    t = torch.nn.ModuleDict({"b": torch.nn.Linear(1, 1), "a": torch.nn.Identity()})
    d["c"] = nn.Flatten()
    t["c"] = torch.nn.Flatten()
    assert list(d) == list(t) == ["b", "a", "c"] and "a" in d and len(d) == 3
    assert repr(d) == repr(t)
    assert type(d.pop("a")) is nn.Identity and list(d.keys()) == ["b", "c"]
    d.update([("e", nn.Identity())])
    assert list(d) == ["b", "c", "e"]
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 1; 2 is required"):
        d.update([("x",)])
    d.clear()
    assert len(d) == 0


def test_parameter_list_and_dict():
    pl = nn.ParameterList([toolkit.ones(2, 3), nn.Parameter(toolkit.zeros(1))])
    tpl = torch.nn.ParameterList([torch.ones(2, 3), torch.nn.Parameter(torch.zeros(1))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    assert repr(pl) == repr(tpl).replace("torch.", "toolkit.")
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl.append(toolkit.ones(1))
    assert len(pl[1:]) == 2
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl()
    pd = nn.ParameterDict({"b": toolkit.ones(2), "a": toolkit.zeros(3)})
    tpd = torch.nn.ParameterDict({"b": torch.ones(2), "a": torch.zeros(3)})
    assert list(pd) == list(tpd) == ["a", "b"]  # plain dicts are taken in sorted order
    assert repr(pd) == repr(tpd)
    pd["c"] = nn.Parameter(toolkit.ones(1))
    assert "c" in pd and pd.get("z") is None and isinstance(pd["c"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert list(pd.pop("a").shape) == [3] and list(pd.keys()) == ["b", "c"]
    merged = pd | nn.ParameterDict({"z": toolkit.ones(1)})
    assert list(merged) == ["b", "c", "z"]
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key"):
        pd[1] = toolkit.ones(1)


def test_containers_state_dict_and_training():
    net = nn.Sequential(nn.ModuleList([nn.Linear(2, 2)]), nn.ModuleDict({"x": nn.Linear(2, 1)}))
    tnet = torch.nn.Sequential(torch.nn.ModuleList([torch.nn.Linear(2, 2)]),
                               torch.nn.ModuleDict({"x": torch.nn.Linear(2, 1)}))
    assert list(net.state_dict()) == list(tnet.state_dict())
    net.eval()
    assert not net[1]["x"].training
