"""Dict comprehensions, ``for ... else`` and ``while ... else``: compiled (no Python fallback), same results as Python."""
# ruff: noqa: UP006, UP035, B007

import warnings

import pytest
import torch

import toolkit
from toolkit.jit.frontend.script import ScriptFallbackWarning

from .helpers import check, same


def _no_python_ops(s) -> None:
    assert not [n for n in s.graph.all_nodes() if n.kind == "prim::PythonOp"]


def dict_comp(x, n: int):
    d = {str(i): x * i for i in range(n) if i != 1}
    sq = {i: i * i for i in [1, 2, 3]}
    total = x * 0
    for k in d:
        total = total + d[k]
    return total, len(d), sq[3], list(d.keys())


@pytest.mark.parametrize("n", [0, 1, 4])
def test_dict_comprehension(n):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScriptFallbackWarning)
        s = check(dict_comp, toolkit.ones(2), n)
    _no_python_ops(s)
    assert any(str(o.type) == "Dict(str, Tensor)" for nd in s.graph.all_nodes() for o in nd.outputs)


def dict_comp_values(x):
    d = {i: x[i] * 2 for i in range(x.size(0))}
    return d


def test_dict_comprehension_returns_the_same_dict():
    x = toolkit.arange(3.0)
    s = toolkit.jit.script(dict_comp_values)
    got, want = s(x), dict_comp_values(x)
    assert list(got) == list(want) and all(same(got[k], want[k]) for k in want)


def int_dict(n: int):
    return {i: i * 2 for i in range(n)}


def test_dict_comprehension_graph_has_torchscripts_structure():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ts = torch.jit.script(int_dict)
    s = toolkit.jit.script(int_dict)
    assert s(4) == ts(4) == int_dict(4)
    ours = [n.kind for n in s.graph.all_nodes() if n.kind != "prim::Constant"]
    theirs = [n.kind() for n in ts.graph.nodes() if n.kind() != "prim::Constant"]
    assert ours[:2] == theirs[:2] == ["prim::DictConstruct", "prim::Loop"]
    assert "aten::_set_item" in ours and "Dict(int, int) = prim::DictConstruct()" in str(ts.graph)
    assert "Dict(int, int) = prim::DictConstruct()" in str(s.graph)


def for_else(x, n: int, stop: int):
    found = -1
    for i in range(n):
        if i == stop:
            found = i
            break
    else:
        x = x + 100
    for j in range(n):
        x = x + j
    else:
        x = x * 2
    return x, found


@pytest.mark.parametrize("n,stop", [(0, 0), (5, 2), (5, 9)])
def test_for_else(n, stop):
    _no_python_ops(check(for_else, toolkit.ones(2), n, stop))


def for_else_tensor_break(x):
    acc = x * 0
    for t in x.split(1):
        if t.sum() > 2:
            break
        acc = acc + t.sum()
    else:
        acc = acc - 1
    return acc


@pytest.mark.parametrize("vals", [[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
def test_for_else_with_a_data_dependent_break(vals):
    check(for_else_tensor_break, toolkit.tensor(vals))


def for_else_unrolled(x):
    for k in (1, 2):
        x = x + k
    else:
        x = x * 10
    for k in (1, 2):
        if k == 2:
            break
    else:
        x = x - 1000
    return x


def test_for_else_over_a_tuple():
    check(for_else_unrolled, toolkit.ones(2))


def while_else(n: int, stop: int):
    k = 0
    while k < n:
        k += 1
        if k == stop:
            break
    else:
        k = -k
    m = 0
    while m < 3:
        m += 1
    else:
        m = m * 10
    return k, m


@pytest.mark.parametrize("n,stop", [(0, 1), (5, 2), (5, 7)])
def test_while_else(n, stop):
    _no_python_ops(check(while_else, n, stop))


def else_with_return(x, n: int):
    for i in range(n):
        if i == 2:
            return x * 5
    else:
        x = x + 1
    return x


@pytest.mark.parametrize("n", [1, 4])
def test_return_inside_a_loop_skips_its_else(n):
    check(else_with_return, toolkit.ones(2), n)


def nested_else(n: int):
    out = 0
    for i in range(n):
        for j in range(n):
            if j == i:
                break
        else:
            out += 100
        out += 1
    else:
        out += 1000
    return out


def test_nested_loops_with_else():
    for n in (0, 1, 3):
        assert toolkit.jit.script(nested_else)(n) == nested_else(n)
