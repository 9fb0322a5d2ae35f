"""Tracing named inputs: the graph's tensor types print their names (``Float(2, 3, names=['N', 'C'], ...)``),
and the traced function on named inputs gives eager's names (the interpreter runs the registry's ops)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.jit.ir.types import TensorType


def _f(x, y):
    return toolkit.cat([x * y, x]).sum("C").relu()


def _inputs():
    return toolkit.randn(2, 3, names=("N", "C")), toolkit.randn(3, names=("C",))


def test_graph_types_print_names():
    x, y = _inputs()
    g = str(toolkit.jit.trace(_f, (x, y)).graph)
    assert "%x : Float(2, 3, names=['N', 'C'], strides=[3, 1]" in g
    assert "%y : Float(3, names=['C'], strides=[1]" in g
    assert "Float(4, names=['N'], strides=[1]" in g  # the sum over 'C'
    assert str(TensorType.of(toolkit.randn(2, 3))) == "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"
    assert str(TensorType.of(toolkit.randn(2, names=(None,)))).startswith("Float(2, strides=")  # all None: unnamed


def test_traced_run_gives_eager_names_and_values():
    x, y = _inputs()
    traced = toolkit.jit.trace(_f, (x, y))
    got, want = traced(x, y), _f(x, y)
    assert got.names == want.names == ("N",)
    tx, ty = (torch.from_numpy(t.rename(None).numpy()) for t in (x, y))
    np.testing.assert_allclose(got.rename(None).numpy(), torch.cat([tx * ty, tx]).sum(1).relu().numpy(), rtol=1e-5)
    assert not traced(x.rename(None), y.rename(None)).has_names()  # unnamed in, unnamed out


def test_traced_module_names():
    lin = toolkit.nn.Linear(3, 2)
    x = toolkit.randn(4, 3, names=("N", "C"))
    traced = toolkit.jit.trace(lin, (x,))
    assert traced(x).names == lin(x).names == ("N", None)


def test_named_runs_stay_named_after_profiling():
    """Past the profiling run the executor fuses; named inputs run their own fused plan and get the names their
    profiling run gave, and unnamed calls in between keep their fused plan's values."""
    def f(x, y):
        return ((x * y).sigmoid() + 1).tanh() * 2

    x, y = _inputs()
    traced = toolkit.jit.trace(f, (x, y))
    want = f(x, y)
    for _ in range(6):
        got = traced(x, y)
        assert got.names == ("N", "C")
        np.testing.assert_allclose(got.rename(None).numpy(), want.rename(None).numpy(), rtol=1e-6)
        plain = traced(x.rename(None), y.rename(None))
        assert not plain.has_names()
        np.testing.assert_allclose(plain.numpy(), want.rename(None).numpy(), rtol=1e-6)


def _chain(x, y):
    return ((x * y).sigmoid() + 1).tanh() * 2


def test_fusion_groups_keep_names_and_run_fused():
    x, y = _inputs()
    traced = toolkit.jit.trace(_chain, (x, y))
    g = str(traced.graph_for(x, y))
    assert "prim::FusionGroup" in g
    group = g[g.index("with prim::FusionGroup_0"):]
    assert "Float(2, 3, names=['N', 'C'], strides=[3, 1]" in group and "aten::tanh" in group
    plans = traced._executor.plans
    assert len(plans) == 1
    (plan,) = plans.values()
    before = plan.runs
    got = traced(x, y)
    assert plan.runs == before + 1  # the fused plan served the named call
    assert got.names == ("N", "C")
    tx, ty = (torch.from_numpy(t.rename(None).numpy()) for t in (x, y))
    np.testing.assert_allclose(got.rename(None).numpy(), _chain(tx, ty).numpy(), rtol=1e-6)


def test_named_signatures_are_their_own_and_still_checked():
    x, y = _inputs()
    traced = toolkit.jit.trace(_chain, (x, y))
    for _ in range(3):
        traced(x, y)
    renamed = traced(x.rename("B", "C"), y)
    assert renamed.names == ("B", "C")
    assert traced(x, y.rename(None)).names == ("N", "C")
    with pytest.raises(RuntimeError, match="do not match"):  # a new signature profiles op by op, names checked
        traced(x, y.rename("D"))
    assert len(traced._executor.plans) == 1  # only the first signature ran often enough to be planned


def test_fused_plan_with_gradients_keeps_names():
    x = toolkit.randn(2, 3, names=("N", "C"), requires_grad=True)
    y = toolkit.randn(3, names=("C",))
    traced = toolkit.jit.trace(_chain, (x, y))
    for _ in range(3):
        x.grad = None
        out = traced(x, y)
        out.sum().backward()
    assert out.names == ("N", "C") and x.grad.names == ("N", "C")
    tx = torch.from_numpy(x.rename(None).detach().numpy()).requires_grad_()
    _chain(tx, torch.from_numpy(y.rename(None).numpy())).sum().backward()
    np.testing.assert_allclose(x.grad.rename(None).numpy(), tx.grad.numpy(), rtol=1e-5)


def _nested(x):
    return ((x.sigmoid() * 2, x.tanh() + 1), {"a": x.exp() * 3})


def test_nested_outputs_keep_names_past_profiling():
    x = toolkit.randn(2, 3, names=("A", "B"))
    traced = toolkit.jit.trace(_nested, (x,), strict=False)
    for _ in range(4):
        (u, v), d = traced(x)
        assert u.names == v.names == d["a"].names == ("A", "B")


class _ScaledByNamedBuffer(toolkit.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", toolkit.ones(3, names=("C",)))

    def forward(self, x):
        return (x * self.scale).relu()


def test_module_with_named_buffer_keeps_names_past_profiling():
    m = _ScaledByNamedBuffer()
    x = toolkit.randn(2, 3)
    traced = toolkit.jit.trace(m, (x,))
    for _ in range(4):
        assert traced(x).names == m(x).names == (None, "C")
