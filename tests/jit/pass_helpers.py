"""Small builders shared by the pass tests: typed graphs made by hand, and eager-vs-optimized checks."""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.jit import Graph, Interpreter
from toolkit.jit.ir import types as T
from toolkit.ops import registry as R

CPU = toolkit.device("cpu")


def ftype(*sizes, strides=None, dtype=None) -> T.TensorType:
    if strides is None:
        strides, acc = [], 1
        for s in reversed(sizes):
            strides.insert(0, acc)
            acc *= s
    return T.TensorType(dtype or toolkit.float32, sizes, tuple(strides), CPU, False)


def aten(g: Graph, name: str, *inputs, typ=None, name_as: str | None = None):
    """Insert ``aten::name`` with a given output type; returns its output value."""
    n = g.insert(f"aten::{name}", inputs, op=R.get(name))
    if typ is not None:
        n.output().type = typ
    if name_as:
        n.output().set_debug_name(name_as)
    return n.output()


def text(g: Graph) -> str:
    return g.to_string(source_locations=False)


def check_same_values_and_grads(fn, graph: Graph, inputs) -> None:
    """The optimized graph computes what ``fn`` computes, and the same gradients for every input."""
    xs_g = [x.clone().requires_grad_() for x in inputs]
    xs_e = [x.clone().requires_grad_() for x in inputs]
    out_g = Interpreter(graph).run(xs_g)[0]
    out_e = fn(*xs_e)
    np.testing.assert_allclose(out_g.detach().numpy(), out_e.detach().numpy(), rtol=1e-12, atol=1e-12)
    grads_g = toolkit.autograd.grad(out_g.sum(), xs_g, allow_unused=True)
    grads_e = toolkit.autograd.grad(out_e.sum(), xs_e, allow_unused=True)
    for a, b in zip(grads_g, grads_e):
        if a is None or b is None:
            assert a is None and b is None or (a if a is not None else b).abs().sum().item() == 0
            continue
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
