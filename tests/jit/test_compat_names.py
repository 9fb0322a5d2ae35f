# ruff: noqa: UP006, UP007, UP045  (the typing generics are what these tests feed toolkit.jit.isinstance)
"""torch.jit's remaining public names against PyTorch: isinstance, script_if_tracing, interface, Error,
export_opnames, the fusion switches and CompilationUnit."""

from __future__ import annotations

import warnings
from typing import Dict, List, Optional, Tuple, Union  # noqa: UP035

import pytest
import torch

import toolkit
import toolkit.nn as nn


def test_all_names_exist():
    missing = [name for name in torch.jit.__all__ if not hasattr(toolkit.jit, name)]
    assert missing == []


ISINSTANCE_CASES = [
    ([1, 2], List[int]), ([1, "a"], List[int]), ([], List[int]), ({"a": 1}, Dict[str, int]),
    ({"a": "b"}, Dict[str, int]), (None, Optional[int]), (3, Optional[int]), ("x", Optional[int]),
    ((1, "a"), Tuple[int, str]), ((1,), Tuple[int, str]), ([[1], [2]], List[List[int]]), (3, (str, int)),
    (3, int), ([1], list[int]), ({1: [2]}, Dict[int, List[int]]), (3, Union[int, str]), (3, int | str),
    ([1], Optional[List[int]]), ([1], Optional[List[str]]), ({}, Dict[str, int]),
]


def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except RuntimeError as e:
            result = ("error", str(e).replace("torch", "toolkit"))
    return result, [str(w.message).replace("torch", "toolkit") for w in caught]


@pytest.mark.parametrize("obj, target", ISINSTANCE_CASES + [([1], t) for t in (List, list, Dict, dict, Optional,
                                                                                Tuple, [int])])
def test_isinstance_matches_torch(obj, target):
    assert _outcome(lambda: toolkit.jit.isinstance(obj, target)) == _outcome(lambda: torch.jit.isinstance(obj, target))


def test_isinstance_on_tensors():
    x = toolkit.ones(2)
    assert toolkit.jit.isinstance([x, x], List[toolkit.Tensor])
    assert toolkit.jit.isinstance({"a": x}, Dict[str, toolkit.Tensor])
    assert not toolkit.jit.isinstance({"a": 1}, Dict[str, toolkit.Tensor])


@toolkit.jit.script_if_tracing
def _clamp_negative(x):
    if bool(x.sum() > 0):
        return x * 2
    return x - 1


def _uses_helper(x):
    return _clamp_negative(x) + 1


def test_script_if_tracing_keeps_control_flow_under_trace():
    x = toolkit.ones(2)
    assert _clamp_negative(x).tolist() == [2.0, 2.0]  # eagerly: the function itself
    assert _clamp_negative.__script_if_tracing_wrapper is True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = toolkit.jit.trace(_uses_helper, (x,))
    assert traced(-x).tolist() == [-1.0, -1.0]  # the other branch: compiled, not traced through one path


class _Iface:
    def run(self, x: int) -> int:
        pass


class _Derived(_Iface):
    pass


def test_interface():
    with pytest.warns(DeprecationWarning, match="interface` is deprecated"):
        assert toolkit.jit.interface(_Iface) is _Iface
    assert hasattr(_Iface, "__torch_script_interface__")
    for bad in (3, _Derived):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(RuntimeError) as expected:
                torch.jit.interface(bad)
            with pytest.raises(RuntimeError) as got:
                toolkit.jit.interface(bad)
        assert str(got.value) == str(expected.value)


def test_error_and_strict_fusion():
    assert issubclass(toolkit.jit.Error, Exception)
    assert toolkit.jit.Error.__mro__[1:] == torch.jit.Error.__mro__[1:]
    with pytest.warns(UserWarning, match="Only works in script mode"), toolkit.jit.strict_fusion() as s:
        assert s is None


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_set_fusion_strategy_as_torch():
    with pytest.warns(DeprecationWarning, match="set_fusion_strategy` is deprecated"):
        toolkit.jit.set_fusion_strategy(toolkit.jit.set_fusion_strategy([("STATIC", 1)]))
    new = [("DYNAMIC", 3)]
    before_torch = torch.jit.set_fusion_strategy(new)
    before = toolkit.jit.set_fusion_strategy(new)
    try:
        assert before == before_torch
        assert toolkit.jit.set_fusion_strategy(new) == torch.jit.set_fusion_strategy(new) == new
        for bad in ([("FOO", 2)], "x"):
            with pytest.raises((ValueError, TypeError)) as expected:
                torch.jit.set_fusion_strategy(bad)
            with pytest.raises(expected.type) as got:
                toolkit.jit.set_fusion_strategy(bad)
            assert str(got.value) == str(expected.value)
    finally:
        toolkit.jit.set_fusion_strategy(before)
        torch.jit.set_fusion_strategy(before_torch)


def test_onednn_fusion_switch():
    assert toolkit.jit.onednn_fusion_enabled() is torch.jit.onednn_fusion_enabled() is False
    toolkit.jit.enable_onednn_fusion(True)
    try:
        assert toolkit.jit.onednn_fusion_enabled() is True
    finally:
        toolkit.jit.enable_onednn_fusion(False)


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(2, 2)

    def forward(self, x):
        y = x.sum(0)  # noqa: F841  (dead: not in the op list)
        return toolkit.cat([toolkit.relu(self.l(x)), x]).view(-1)


class _TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(2, 2)

    def forward(self, x):
        y = x.sum(0)  # noqa: F841
        return torch.cat([torch.relu(self.l(x)), x]).view(-1)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_export_opnames_reads_the_graphs():
    assert toolkit.jit.export_opnames(toolkit.jit.script(_Net())) == torch.jit.export_opnames(
        torch.jit.script(_TorchNet()))
    with pytest.raises(AttributeError) as expected:
        torch.jit.export_opnames(_TorchNet())
    with pytest.raises(AttributeError) as got:
        toolkit.jit.export_opnames(_Net())
    assert str(got.value) == str(expected.value).replace("_TorchNet", "_Net")


SOURCE = '''
def foo(x):
    return x + 1

def bar(x, n: int):
    for _ in range(n):
        x = foo(x) * 2
    return torch.relu(x)
'''


def test_compilation_unit_as_torch():
    cu, tcu = toolkit.jit.CompilationUnit(SOURCE), torch.jit.CompilationUnit(SOURCE)
    x = [-3.0, 0.5]
    assert cu.bar(toolkit.tensor(x), 2).tolist() == tcu.bar(torch.tensor(x), 2).tolist()
    assert cu.find_function("foo") is cu.foo and cu.find_function("nope") is tcu.find_function("nope") is None
    assert len(cu.get_functions()) == len(tcu.get_functions()) == 2
    assert "aten::add" in str(cu.foo.graph)
    cu.define("def baz(x):\n    return x.neg() - 1\n")
    tcu.define("def baz(x):\n    return x.neg() - 1\n")
    assert cu.baz(toolkit.tensor(x)).tolist() == tcu.baz(torch.tensor(x)).tolist()
    for unit in (cu, tcu):  # a later source does not see the functions of an earlier one
        with pytest.raises(RuntimeError, match="undefined value bar|bar"):
            unit.define("def qux(x):\n    return bar(x, 1)\n")
    with pytest.raises(AttributeError, match="'CompilationUnit' has no attribute 'nope'"):
        cu.nope  # noqa: B018
    with pytest.raises(RuntimeError):
        toolkit.jit.CompilationUnit("def h(x:\n")
