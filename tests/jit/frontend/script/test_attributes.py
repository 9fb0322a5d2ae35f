"""Assignment to module attributes in scripted methods: ``prim::SetAttr`` on int, float, bool and Tensor
attributes that exist, as TorchScript allows; a new attribute is a compile error naming it."""

import os
import warnings

import pytest
import torch

import toolkit
from toolkit import nn
from toolkit.jit.frontend.script import FrontendError

from .helpers import same

HERE = os.path.abspath(__file__)


def _counter(base):
    class Counter(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.count = 0
            self.scale = 0.5
            self.seen = False
            self.register_buffer("total", base.zeros(2))
            self.last = base.ones(2)

        def forward(self, x):
            self.count = self.count + 1
            self.scale *= 2.0
            self.seen = True
            self.total = self.total + x
            for _i in range(3):
                self.count += 1
            self.last = self.last * 2
            return x * self.count + self.total * self.scale + self.last

    return Counter


def test_attribute_updates_match_python_over_runs():
    m, s = _counter(toolkit)(), toolkit.jit.script(_counter(toolkit)())
    x = toolkit.ones(2)
    for _ in range(4):  # profiling run, then optimized plans
        assert same(s(x), m(x))
        assert (s.count, s.scale, s.seen) == (m.count, m.scale, m.seen) and s.count > 0
        assert same(s.total, m.total) and same(s.last, m.last)
    s.graph.verify()


def test_setattr_nodes_match_torchscript():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ts = torch.jit.script(_counter(torch)())
    s = toolkit.jit.script(_counter(toolkit)())
    ours = [(n.kind, n["name"]) for n in s.graph.all_nodes() if n.kind == "prim::SetAttr"]
    theirs = [(n.kind(), n.s("name")) for n in ts.graph.findAllNodes("prim::SetAttr")]
    assert ours == theirs == [("prim::SetAttr", a) for a in ("count", "scale", "seen", "total", "count", "last")]
    x = toolkit.ones(2)
    assert s(x).tolist() == ts(torch.ones(2)).tolist() and s.count == ts.count == 4


def test_attribute_written_from_python_is_seen_by_compiled_code():
    m, s = _counter(toolkit)(), toolkit.jit.script(_counter(toolkit)())
    m.count = s.count = 10
    m.scale = s.scale = 3.0
    x = toolkit.ones(2)
    for count in (14, 18):
        assert same(s(x), m(x)) and s.count == m.count == count
    assert s.scale == m.scale == 12.0


class Adds(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = 0

    def forward(self, x, n: int):
        before = self.steps
        for _i in range(n):
            self.steps = self.steps + 1
        return x + (self.steps - before)


def test_reads_around_a_loop_are_not_merged():
    s = toolkit.jit.script(Adds())
    x = toolkit.zeros(1)
    for k in range(1, 4):
        assert s(x, 3).tolist() == [3.0]
        assert s.steps == 3 * k
    assert s.graph_for(x, 3) is not None and s(x, 2).tolist() == [2.0]


class NewAttribute(nn.Module):
    def forward(self, x):
        self.brand_new = 1
        return x


class WrongType(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        self.count = x
        return x


def _line(cls, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(cls)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_new_attribute_is_a_compile_error_naming_it():
    with pytest.raises(FrontendError) as e:
        toolkit.jit.script(NewAttribute())
    assert str(e.value) == (
        "Tried to set nonexistent attribute: brand_new. Did you forget to initialize it in __init__()?:\n"
        f'  File "{HERE}", line {_line(NewAttribute, "self.brand_new")}, in forward\n'
        "    self.brand_new = 1\n"
        "    ^~~~~~~~~~~~~~")


def test_assigning_a_value_of_another_type_is_a_compile_error():
    with pytest.raises(FrontendError) as e:
        toolkit.jit.script(WrongType())
    msg = str(e.value)
    assert msg.startswith("Wrong type for attribute assignment: 'count' is int but the value is Tensor:")
    assert "    self.count = x\n    ^~~~~~~~~~" in msg


class AssignsSubmodule(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        self.lin = self.lin
        return x


def test_assigning_a_submodule_is_a_compile_error():
    with pytest.raises(FrontendError, match="cannot assign to submodule 'lin' of 'AssignsSubmodule'"):
        toolkit.jit.script(AssignsSubmodule())
