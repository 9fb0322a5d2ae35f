"""A traced graph names values after the Python variables holding them, as TorchScript's tracer does.

Each case is written once against a library (``toolkit`` or ``torch``), traced by both, and the names each
graph gives its values are compared: PyTorch's graph is the expected answer, so no name is typed here.
A value is named when it is used again by a recorded op (a value only returned stays numbered), after
the innermost variable bound to it, and a reassigned variable names its latest value plainly and the
earlier ones ``.1``, ``.3``, ...
"""

import warnings

import pytest
import torch

import toolkit

_COMPARED = ("prim::ListUnpack", "prim::TupleUnpack", "prim::TupleConstruct", "prim::CallMethod")


def _compared(kind: str) -> bool:
    return kind.startswith("aten::") or kind in _COMPARED


def _torch_names(graph) -> list:
    """(kind, output names) of PyTorch's ops, in order; a numbered value is None."""
    return [(n.kind(), [None if v.debugName().isdigit() else v.debugName() for v in n.outputs()])
            for n in graph.nodes() if _compared(n.kind())]


def _names(graph) -> list:
    """(kind, output names) of toolkit's ops, in order; a numbered value is None."""
    return [(n.kind, [v.debug_name if v.has_debug_name() else None for v in n.outputs])
            for n in graph.nodes() if _compared(n.kind)]


def _named(names: list) -> list:
    return [name for _, outs in names for name in outs if name is not None]


def _trace(lib, fn, *shapes):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.jit.trace(fn, tuple(lib.rand(*s) for s in shapes))


def _build(case, lib):
    fn, shapes = case(lib)
    return (fn, *shapes)


# -- functions ------------------------------------------------------------------------------------------
def lstm_cell(lib):
    def cell(x, h, c, w_ih, w_hh, b):
        gates = x.mm(w_ih.t()) + h.mm(w_hh.t()) + b
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = ingate.sigmoid(); forgetgate = forgetgate.sigmoid(); cellgate = cellgate.tanh(); outgate = outgate.sigmoid()  # noqa: E702, E501
        cy = forgetgate * c + ingate * cellgate
        hy = outgate * cy.tanh()
        return hy, cy

    return cell, [(3, 4), (3, 5), (3, 5), (20, 4), (20, 5), (20,)]


def reassigned(lib):
    def f(x):
        y = x.sin()
        y = y.sin()
        y = y.sin()
        y = y.sin()
        return y.cos()

    return f, [(3,)]


def reassigned_input(lib):
    def f(x):
        x = x.sin()
        x = x.cos()
        return x.tan()

    return f, [(3,)]


def loop(lib):
    def f(x):
        for _ in range(3):
            x = x * 2
        return x.relu()

    return f, [(3,)]


def tensor_list(lib):
    def f(x, y):
        a = x.sin()
        b = y.cos()
        return lib.cat([a, b]).relu()

    return f, [(3,), (3,)]


def parameter_named_self(lib):
    def helper(self):
        return self.sin()

    def f(x):
        y = x.cos()
        return helper(y)

    return f, [(3,)]


def in_place(lib):
    def f(x):
        y = x * 2
        y.add_(1)
        return y.relu()

    return f, [(3,)]


@pytest.mark.parametrize("case", [lstm_cell, reassigned, reassigned_input, loop, tensor_list, parameter_named_self,
                                  in_place], ids=lambda c: c.__name__)
def test_traced_function_names_values_as_torch_does(case):
    tk = _trace(toolkit, *_build(case, toolkit))
    th = _trace(torch, *_build(case, torch))
    assert [v.debug_name for v in tk.graph.inputs] == [v.debugName() for v in th.graph.inputs()]
    assert _names(tk.graph) == _torch_names(th.graph)


def test_the_lstm_cell_names_its_gates():
    """Not a vacuous comparison: the cell's names are there, and a value only returned stays numbered."""
    g = _trace(toolkit, *_build(lstm_cell, toolkit)).graph
    named = _named(_names(g))
    assert len(named) == len(_named(_torch_names(_trace(torch, *_build(lstm_cell, torch)).graph))) >= 9
    returned = g.outputs[0].node.inputs
    assert not returned[0].has_debug_name() and returned[1].has_debug_name()


def test_a_constant_used_twice_is_named_as_torch_names_it():
    def case(lib):
        def f(x):
            w = lib.tensor([1.0, 2.0, 3.0])
            return x * w + w

        return f, [(3,)]

    # PyTorch records the constant's copy (aten::to, aten::detach), toolkit the constant: compare the names alone
    tk = _trace(toolkit, *_build(case, toolkit)).graph
    th = _trace(torch, *_build(case, torch)).graph
    ours = [v.debug_name for n in tk.nodes() for v in n.outputs if v.has_debug_name()]
    assert ours == _named(_torch_names(th)) and ours


# -- modules --------------------------------------------------------------------------------------------
def _net(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            h = F.relu(self.fc1(x))
            h = F.relu(self.fc2(h))
            out = h * 2
            return out.sum(1)

    lib.manual_seed(0)
    return Net()


def test_traced_module_names_values_as_torch_does():
    """Frames in ``nn`` count as code, as PyTorch's own ``functional.py`` does: ``relu``'s ``input``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tk = toolkit.jit.trace(_net(toolkit), toolkit.rand(2, 4))
        th = torch.jit.trace(_net(torch), torch.rand(2, 4))
    assert _names(tk.inlined_graph) == _torch_names(th.inlined_graph)
    assert _names(tk.graph) == _torch_names(th.graph)
    assert _names(tk.fc1.graph) == _torch_names(th.fc1.graph)
    assert [v.debug_name for v in tk.graph.inputs[1:]] == [v.debugName() for v in list(th.graph.inputs())[1:]]
    assert _named(_names(tk.inlined_graph))


def test_the_seed_net_names_values_as_torch_does():
    from toolkit.demo import seed_net

    graphs = []
    for lib in (toolkit, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graphs.append(lib.jit.trace(seed_net(lib).eval(), lib.rand(2, 1, 28, 28)).inlined_graph)
    # the convolution's op differs (aten::conv2d, PyTorch's aten::_convolution): compare the names alone
    assert [o for _, o in _names(graphs[0])] == [o for _, o in _torch_names(graphs[1])]
