"""The pass manager: running passes in order, verifying, history and report, and users' own passes."""

import numpy as np
import pytest

import toolkit
from toolkit.jit import Graph, Pass, PassManager, register_pass, run_passes
from toolkit.jit.passes import get_pass, registered_passes

from ..pass_helpers import aten, check_same_values_and_grads, ftype, text

F = ftype(2, 3)


def _f(x, y):
    a = (x * 1).t().t()
    unused = a.exp()  # noqa: F841
    s = toolkit.ones(3, dtype=toolkit.float64) * 2
    return (a + y) * (a + y) + s


def _traced():
    """``_f`` traced, with its unused ``a.exp()`` put back: the tracer drops dead nodes, and ``dce`` is tested here."""
    x, y = toolkit.randn(2, 3, dtype=toolkit.float64), toolkit.randn(2, 3, dtype=toolkit.float64)
    t = toolkit.jit.trace(_f, (x, y))
    g = t.graph
    a = [n for n in g.nodes() if n.kind == "aten::t"][-1]
    with g.inserting_before(g.block.nodes[g.block.nodes.index(a) + 1]):
        aten(g, "exp", a.output(), typ=F)
    return t, [x, y]


def test_builtin_passes_are_registered():
    assert {"dce", "cse", "constant_propagation", "peephole"} <= set(registered_passes())
    with pytest.raises(KeyError, match="no pass named 'nope'"):
        get_pass("nope")


def test_history_snapshots_and_report():
    t, inputs = _traced()
    original = text(t.graph)
    pm = PassManager(["constant_propagation", "peephole", "cse", "dce", "cse"])
    g = pm.run(t.graph.copy())
    assert text(t.graph) == original  # the manager edits the graph it is given, not the traced one
    assert [r.name for r in pm.history] == ["constant_propagation", "peephole", "cse", "dce", "cse"]
    assert [r.changed for r in pm.history] == [True, True, True, True, False]
    cp, ph, cse, dce, cse2 = pm.history
    assert cp.removed["aten::ones"] == 1 and cp.removed["aten::mul"] == 1 and cp.added["prim::Constant"] >= 1
    assert ph.removed == {"aten::mul": 1, "aten::t": 1} and not ph.added
    assert cse.removed["aten::add"] == 1
    assert dce.removed["aten::exp"] == 1 and dce.removed["aten::t"] == 1
    assert cse2.summary == "no change"
    # each snapshot is its own graph, frozen at that step
    assert all(r.graph is not g for r in pm.history)
    assert "aten::exp" in text(ph.graph) and "aten::exp" not in text(dce.graph)
    assert text(pm.history[-1].graph) == text(g)
    for r in pm.history:
        r.graph.verify()
    report = pm.report()
    assert report.splitlines()[0].startswith("0: constant_propagation: removed ")
    assert "1: peephole: removed 1 aten::mul, 1 aten::t" in report
    assert "4: cse: no change" in report
    assert text(dce.graph) in pm.report(graphs=True)
    check_same_values_and_grads(_f, g, inputs)


def test_default_pipeline_matches_eager():
    t, inputs = _traced()
    g = run_passes(t.graph.copy())
    assert [n.kind for n in g.nodes()].count("aten::add") == 2
    check_same_values_and_grads(_f, g, inputs)


def test_user_function_pass_registered_and_run_by_name():
    @register_pass("test_exp_neg_via_sigmoid")
    def exp_neg_via_sigmoid(graph):
        """Rewrite exp(neg(x)) as 1 / sigmoid(x) - 1."""
        from toolkit.ops import registry as R

        def add(kind, *inputs, typ):
            n = graph.insert(f"aten::{kind}", inputs, op=R.get(kind))
            n.output().type = typ
            return n.output()

        for n in graph.nodes():
            uses = n.output().uses if n.kind == "aten::neg" else []
            if len(uses) == 1 and uses[0].user.kind == "aten::exp":
                exp = uses[0].user
                typ = exp.output().type
                with graph.inserting_before(exp):
                    one = graph.insert_constant(1)
                    r = add("reciprocal", add("sigmoid", n.inputs[0], typ=typ), typ=typ)
                    exp.output().replace_all_uses_with(add("sub", r, one, one, typ=typ))
        return graph

    def f(x):
        return x.neg().exp() * 3

    x = toolkit.randn(5, dtype=toolkit.float64)
    t = toolkit.jit.trace(f, (x,))
    pm = PassManager(["test_exp_neg_via_sigmoid", "dce"])
    g = pm.run(t.graph.copy())
    kinds = [n.kind for n in g.nodes()]
    assert "aten::exp" not in kinds and "aten::sigmoid" in kinds
    assert pm.history[0].added == {"aten::sigmoid": 1, "aten::reciprocal": 1, "aten::sub": 1, "prim::Constant": 1}
    check_same_values_and_grads(f, g, [x])
    with pytest.raises(ValueError, match="already registered"):
        register_pass("test_exp_neg_via_sigmoid")(lambda g: g)


def test_user_class_pass_with_requires():
    @register_pass("test_count_nodes", requires=("dce",))
    class CountNodes(Pass):
        """Records how many nodes the graph has; changes nothing."""

        def __call__(self, graph):
            self.count = len(graph.nodes())

    p = get_pass("test_count_nodes")
    t, _ = _traced()
    with pytest.raises(RuntimeError, match=r"pass 'test_count_nodes' requires \['dce'\] to run before it"):
        PassManager([p]).run(t.graph.copy())
    pm = PassManager(["dce", p])
    g = pm.run(t.graph.copy())
    assert p.count == len(g.nodes()) and pm.history[1].changed is False


def test_plain_function_and_returned_graph():
    def rebuild(graph):
        return graph.copy()

    t, _ = _traced()
    pm = PassManager([rebuild])
    g0 = t.graph.copy()
    g = pm.run(g0)
    assert g is not g0 and pm.history[0].name == "rebuild" and not pm.history[0].changed


def test_broken_pass_is_caught_by_the_verifier():
    def breaks_ssa(graph):
        nodes = graph.nodes()
        nodes[-1].move_before(nodes[0])
        return graph

    def wrong_return(graph):
        return 3

    g = Graph()
    x = g.add_input("x", F)
    g.register_output(aten(g, "exp", aten(g, "sin", x, typ=F), typ=F))
    with pytest.raises(RuntimeError, match=r"after pass 'breaks_ssa': .*used before it is defined"):
        PassManager([breaks_ssa]).run(g.copy())
    with pytest.raises(TypeError, match="pass 'wrong_return' returned int"):
        PassManager([wrong_return]).run(g.copy())
    with pytest.raises(TypeError, match="a pass must be a name, a function or a Pass"):
        PassManager([3])


@pytest.mark.parametrize("seed", range(8))
def test_random_elementwise_graphs_same_before_and_after(seed):
    rng = np.random.default_rng(seed)
    unary = ["exp", "sin", "tanh", "neg", "sigmoid"]
    binary = ["add", "mul", "sub"]

    def f(x, y):
        vals = [x, y, x * 1, y + 0]
        for _ in range(12):
            if rng.random() < 0.5:
                v = getattr(vals[rng.integers(len(vals))], unary[rng.integers(len(unary))])()
            else:
                a, b = vals[rng.integers(len(vals))], vals[rng.integers(len(vals))]
                v = getattr(a, binary[rng.integers(len(binary))])(b)
            vals.append(v.t().t() if rng.random() < 0.2 else v)
        return vals[-1] + vals[-2] * 0.5

    x, y = toolkit.randn(3, 2, dtype=toolkit.float64), toolkit.randn(3, 2, dtype=toolkit.float64)
    state = rng.bit_generator.state
    t = toolkit.jit.trace(f, (x, y), check_trace=False)
    g = run_passes(t.graph.copy())
    rng.bit_generator.state = state
    assert len(g.nodes()) <= len(t.graph.nodes())
    check_same_values_and_grads(f, g, [x, y])
