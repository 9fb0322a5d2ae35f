"""JIT fusion groups on cuda: one numba.cuda kernel per group, equal to the unfused run and to the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.jit.codegen.cuda_fused_kernel import CudaFusedKernel

from ..jit.frontend.test_golden import lstm
from ..jit.fusion_helpers import fused_nodes, groups
from .helpers import needs_cuda

pytestmark = [needs_cuda, pytest.mark.cuda]


@pytest.fixture(autouse=True)
def _fusion_on():
    previous = toolkit.jit.set_fusion_enabled(True)
    yield
    toolkit.jit.set_fusion_enabled(previous)


def f(x, y):
    return toolkit.sigmoid(x * y + 1.5) * toolkit.tanh(x) - y


def script_fn(x):
    for _ in range(5):
        x = x * x
    return x


def _unfused(fn, *args):
    previous = toolkit.jit.set_fusion_enabled(False)
    try:
        return fn(*args)
    finally:
        toolkit.jit.set_fusion_enabled(previous)


def _host(t) -> np.ndarray:
    return t.detach().cpu().numpy()


def _randn(*shape, dtype=toolkit.float32, seed=0):
    rng = np.random.default_rng(seed)
    return toolkit.tensor(rng.standard_normal(shape)).to(dtype)


def test_graph_for_shows_cuda_types_and_one_group():
    x, y = _randn(6, 7).cuda(), _randn(6, 7, seed=1).cuda()
    traced = toolkit.jit.trace(f, (x, y))
    g = traced.graph_for(x, y)
    text = str(g)
    assert "device=cuda:0" in text and "device=cpu" not in text
    assert len(groups(g)) == 1 and len(g.kernels) == 1
    [k] = g.kernels
    assert isinstance(k, CudaFusedKernel)
    assert "@cuda.jit" in k.source() and "cuda.grid(1)" in k.source()
    out = traced(x, y)
    assert out.is_cuda and k.calls >= 1 and k.fallbacks == 0
    np.testing.assert_allclose(_host(out), _host(_unfused(traced, x, y)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_host(out), _host(f(x.cpu(), y.cpu())), rtol=1e-6, atol=1e-6)
    assert k.source_path().exists()


@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64])
def test_seed_script_fn_is_one_group(dtype):
    x = _randn(5, 8, dtype=dtype).cuda()
    fn = toolkit.jit.script(script_fn)
    g = fn.graph_for(x)
    [group] = groups(g)
    assert sorted(n.kind for n in fused_nodes(g)) == ["aten::mul"] * 5
    assert "device=cuda:0" in str(g)
    out = fn(x)
    assert out.is_cuda and out.dtype == dtype
    np.testing.assert_array_equal(_host(out), _host(_unfused(fn, x)))
    np.testing.assert_array_equal(_host(out), _host(script_fn(x.cpu())))


def test_lstm_gate_math_is_one_kernel_on_cuda():
    toolkit.manual_seed(0)
    args = (toolkit.randn(3, 10), (toolkit.randn(3, 20), toolkit.randn(3, 20)),
            toolkit.randn(80, 10), toolkit.randn(80, 20), toolkit.randn(80), toolkit.randn(80))
    cargs = (args[0].cuda(), (args[1][0].cuda(), args[1][1].cuda()), *(a.cuda() for a in args[2:]))
    traced = toolkit.jit.trace(lstm, cargs)
    g = traced.graph_for(*cargs)
    [group] = groups(g)
    kinds = sorted(n.kind for n in fused_nodes(g))
    assert kinds == sorted(["aten::sigmoid"] * 3 + ["aten::tanh"] * 2 + ["aten::mul"] * 3 + ["aten::add"])
    assert len(group.outputs) == 2 and isinstance(g.kernels[0], CudaFusedKernel)
    hy, cy = traced(*cargs)
    uhy, ucy = _unfused(traced, *cargs)
    ehy, ecy = lstm(*args)
    assert hy.is_cuda and cy.is_cuda and g.kernels[0].fallbacks == 0
    for got, unf, ref in ((hy, uhy, ehy), (cy, ucy, ecy)):
        np.testing.assert_allclose(_host(got), _host(unf), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_host(got), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_broadcast_strided_and_mixed_dtype_inputs():
    """A transposed input, a broadcast row and an int64 operand promoted inside the kernel."""
    def g(a, b, c):
        return toolkit.relu(a * b + c) - toolkit.exp(a * 0.5)

    a = _randn(4, 6, seed=2).cuda().t()  # (6, 4), strides (1, 6)
    b = _randn(4, seed=3).cuda()
    c = toolkit.tensor(np.arange(24).reshape(6, 4) - 10).cuda()
    traced = toolkit.jit.trace(g, (a, b, c))
    gf = traced.graph_for(a, b, c)
    assert len(gf.kernels) == 1 and isinstance(gf.kernels[0], CudaFusedKernel)
    out = traced(a, b, c)
    assert gf.kernels[0].fallbacks == 0 and out.dtype == toolkit.float32
    np.testing.assert_allclose(_host(out), _host(_unfused(traced, a, b, c)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_host(out), _host(g(a.cpu(), b.cpu(), c.cpu())), rtol=1e-6, atol=1e-6)


def test_guard_falls_back_for_other_shapes_and_autograd_records():
    x, y = _randn(3, 4).cuda(), _randn(3, 4, seed=1).cuda()
    traced = toolkit.jit.trace(f, (x, y))
    k = traced.graph_for(x, y).kernels[0]
    assert not k.matches([x.cpu()._data, y.cpu()._data])  # host arrays never pass a cuda kernel's guard
    assert not k.matches([_randn(2, 4).cuda()._data, y._data])
    xr = x.clone().requires_grad_()
    out = traced(xr, y)
    out.sum().backward()
    xe = x.cpu().requires_grad_()
    f(xe, y.cpu()).sum().backward()
    assert xr.grad.is_cuda
    np.testing.assert_allclose(_host(xr.grad), xe.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_cuda_groups_leave_reductions_unfused():
    def h(x):
        return (toolkit.sigmoid(x) * 2.0).sum()

    x = _randn(5, 5).cuda()
    traced = toolkit.jit.trace(h, (x,))
    g = traced.graph_for(x)
    assert "aten::sum" in {n.kind for n in g.graph.nodes()}
    np.testing.assert_allclose(traced(x).item(), h(x.cpu()).item(), rtol=1e-5)
