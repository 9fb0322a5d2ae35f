"""Writing your own graph pass and running it with the built-in ones.

A pass is a Python function that takes a ``toolkit.jit.Graph`` and edits it (or
returns a new one). ``toolkit.jit.register_pass(name)`` gives it a name, so a
``PassManager`` can run it between the built-in passes; the manager verifies the
graph after every pass (an edit that breaks SSA or an op's schema fails right
there, naming the pass) and keeps a snapshot of the graph after each step.

This file registers two passes:

- ``mul_two_to_add``: ``x * 2`` becomes ``x + x`` (a strength reduction);
- ``fuse_mul_add``: ``a + b * c`` becomes ``addcmul(a, b, c)``, one op instead of two.

and runs them on a traced function with ``constant_propagation``, ``cse``,
``dce`` and ``canonicalize``, printing the graph before and after, what each
pass changed, and a check that values and gradients are unchanged::

    python extensions/custom_pass.py
"""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.jit import Graph, Node, Value
from toolkit.ops import registry as R


def _constant(v: Value):
    """The value of a ``prim::Constant`` (``None`` when ``v`` is not a constant)."""
    return v.node.attributes.get("value") if v.node is not None and v.node.kind == "prim::Constant" else None


def _is_tensor(v: Value) -> bool:
    return isinstance(v.type, toolkit.jit.types.TensorType)


def _replace(old: Node, new: Node) -> None:
    """Make ``new`` (already inserted) stand in for ``old``, keeping its type, name and source line."""
    out = new.output()
    out.type = old.output().type
    new.source, new.scope = old.source, old.scope
    name = old.output()._name
    old.output().replace_all_uses_with(out)
    old.destroy()
    out.set_debug_name(name)


@toolkit.jit.register_pass("mul_two_to_add")
def mul_two_to_add(graph: Graph) -> Graph:
    """``aten::mul(x, 2)`` -> ``aten::add(x, x, 1)``: an add is cheaper than a multiply by a constant."""
    for n in list(graph.all_nodes()):
        if n.kind != "aten::mul" or not _is_tensor(n.inputs[0]):
            continue
        two = _constant(n.inputs[1])
        if type(two) not in (int, float) or two != 2:
            continue
        x = n.inputs[0]
        with graph.inserting_before(n):
            one = graph.insert_constant(1)
            add = graph.insert("aten::add", [x, x, one], op=R.get("add"))
        _replace(n, add)
    return graph


@toolkit.jit.register_pass("fuse_mul_add")
def fuse_mul_add(graph: Graph) -> Graph:
    """``aten::add(a, aten::mul(b, c), alpha)`` -> ``aten::addcmul(a, b, c, value=alpha)`` when the product
    has no other use (otherwise it would be computed twice)."""
    for n in list(graph.all_nodes()):
        if n.kind != "aten::add" or n.owning_block is None:
            continue
        a, other, alpha = n.inputs
        mul = other.node
        if mul is None or mul.kind != "aten::mul" or len(other.uses) != 1:
            continue
        b, c = mul.inputs
        if not all(_is_tensor(v) for v in (a, b, c)) or a.type.dtype != other.type.dtype:
            continue
        with graph.inserting_before(n):
            fused = graph.insert("aten::addcmul", [a, b, c, alpha], op=R.get("addcmul"))
        _replace(n, fused)
        mul.destroy()
    return graph


def f(x, y, z):
    return (x * 2).sin() + y * z


PIPELINE = ["constant_propagation", "mul_two_to_add", "fuse_mul_add", "cse", "dce", "canonicalize"]


def main() -> None:
    args = tuple(toolkit.randn(3, dtype=toolkit.float64) for _ in range(3))
    traced = toolkit.jit.trace(f, args)
    print("before:")
    print(traced.graph.to_string(source_locations=False))

    pm = toolkit.jit.PassManager(PIPELINE)
    graph = pm.run(traced.graph.copy())
    print("after:")
    print(graph.to_string(source_locations=False))
    print(pm.report())

    optimized = toolkit.jit.ScriptFunction(graph, "f")
    xs = [a.clone().requires_grad_() for a in args]
    ys = [a.clone().requires_grad_() for a in args]
    out, ref = optimized(*xs), f(*ys)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    ref.sum().backward()
    for a, b in zip(xs, ys):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    print("values and gradients match the eager function")


if __name__ == "__main__":
    main()
