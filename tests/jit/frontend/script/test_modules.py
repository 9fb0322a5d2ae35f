"""toolkit.jit.script on nn.Module instances: parameters, buffers, submodules, constants, ModuleList,
inheritance, @ignore, @unused, @export."""

import pytest

import toolkit
import toolkit.nn.functional as F
from toolkit import nn

from .helpers import same


class Block(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.register_buffer("offset", toolkit.ones(n))
        self.scale = 2
        self.layers = nn.ModuleList([nn.Linear(n, n), nn.Linear(n, n)])

    def helper(self, x):
        return F.relu(x) * self.scale

    def forward(self, x):
        x = self.lin(x) + self.offset
        for layer in self.layers:
            x = layer(x)
        if self.training:
            x = x + 1
        return self.helper(x)


def test_module_with_submodules_buffers_constants_and_modulelist():
    toolkit.manual_seed(0)
    m = Block(4)
    s = toolkit.jit.script(m)
    x = toolkit.randn(2, 4)
    for _ in range(3):
        assert same(s(x), m(x), 1e-5)
    m.eval()
    s.eval()
    assert same(s(x), m(x), 1e-5)
    assert isinstance(s, toolkit.jit.ScriptModule)
    assert s.lin.weight is m.lin.weight  # shared parameters
    text = s.graph.to_string(source_locations=False)
    assert 'prim::GetAttr[name="training"]' in text and "prim::If" in text
    s.train()
    s(x).sum().backward()
    assert m.lin.weight.grad is not None


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(toolkit.ones(3))

    def act(self, x):
        return x * self.w

    def forward(self, x):
        return self.act(x) + 1


class Child(Base):
    def act(self, x):
        return super().act(x) * 3


def test_inheritance_resolves_methods_through_the_class_hierarchy():
    m = Child()
    s = toolkit.jit.script(m)
    x = toolkit.randn(3)
    assert same(s(x), m(x))


class WithDecorators(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    @toolkit.jit.ignore
    def python_side(self, x):
        self.calls += 1
        return x.numpy().sum() * toolkit.ones(1)

    @toolkit.jit.unused
    def never(self, x):
        return x

    @toolkit.jit.export
    def double(self, x):
        return x * 2

    def forward(self, x, flag: bool):
        if flag:
            return self.never(x)
        return self.python_side(x) + self.double(x)


def test_ignore_unused_and_export():
    m = WithDecorators()
    s = toolkit.jit.script(m)
    x = toolkit.ones(2)
    assert same(s(x, False), m(x, False))
    assert m.calls == 2
    assert same(s.double(x), x * 2)
    kinds = [n.kind for n in s.graph.all_nodes()]
    assert "prim::PythonOp" in kinds
    with pytest.raises(RuntimeError, match="unused"):
        s(x, True)


class Traced(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return toolkit.tanh(self.lin(x))


class HoldsTraced(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = toolkit.jit.trace(Traced(), toolkit.randn(2, 3))

    def forward(self, x, n: int):
        for _ in range(n):
            x = self.inner(x)
        return x


def test_scripted_module_holding_a_traced_submodule():
    m = HoldsTraced()
    s = toolkit.jit.script(m)
    x = toolkit.randn(2, 3)
    with toolkit.no_grad():  # the traced submodule's own autodiff plan is not what this test checks
        assert same(s(x, 3), m(x, 3), 1e-5)
    assert "prim::Loop" in s.graph.to_string(False)
