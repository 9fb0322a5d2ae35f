"""Python fallback (``script(fn, fallback=True)``) for values of any Python type: statements the compiler cannot
handle bind ``PyObject`` values that later statements, compiled or not, use as Python does. Every case is
compared with the function run unscripted."""

import io
import warnings

import numpy as np
import pytest

import toolkit
from toolkit.jit.frontend.script import FrontendError, ScriptFallbackWarning
from toolkit.jit.ir import types as T

from ....conftest import assert_close

pytestmark = pytest.mark.filterwarnings("ignore::toolkit.jit.frontend.script.errors.ScriptFallbackWarning")


def _same(got, expected):
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, toolkit.Tensor):
        assert_close(got, expected)
    elif isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
    elif isinstance(expected, np.ndarray):
        assert np.array_equal(got, expected)
    else:
        assert got == expected, (got, expected)


def _check(fn, *args, runs: int = 3):
    """Script ``fn`` with fallback, run it ``runs`` times (profiling and optimized runs) and compare with Python."""
    s = toolkit.jit.script(fn, fallback=True)
    expected = fn(*args)
    for _ in range(runs):
        _same(s(*args), expected)
    s.graph.verify()
    return s


# -- what fallback statements bind --------------------------------------------------------------------------------
def uses_set(x):
    s = {1, 2}
    return x * len(s)


def numpy_import_and_array(x):
    import numpy as np

    a = np.arange(4)
    return x * int(a.sum()), float(a.mean())


def from_import(x):
    from collections import Counter

    c = Counter("abracadabra")
    top = c.most_common(1)
    return top[0][0], c["a"]


def returns_the_objects(x):
    s = {3, 1}
    a = np.ones(2)
    return s, a, x


def nested_def_and_lambda(x):
    def inc(v):
        return v + 1

    double = lambda v: v * 2  # noqa: E731
    return inc(3), double(x)


@pytest.mark.parametrize("fn", [uses_set, numpy_import_and_array, from_import, returns_the_objects,
                                nested_def_and_lambda], ids=lambda f: f.__name__)
def test_fallback_values_of_any_type(fn):
    _check(fn, toolkit.ones(2))


def test_new_names_of_a_fallback_statement_are_python_objects():
    s = _check(numpy_import_and_array, toolkit.ones(2))
    ops = [n for n in s.graph.all_nodes() if n.kind == "prim::PythonOp" and n.attributes.get("unpack")]
    assert [o.debug_name for n in ops for o in n.outputs] == ["np"]  # np.arange(4) and a.sum() are compiled calls
    assert all(o.type == T.PYOBJECT for n in ops for o in n.outputs)
    printed = str(s.graph)
    assert "%np : PyObject = prim::PythonOp" in printed and 'callable=getattr .arange](%np)' in printed
    assert "np = prim::PythonOp()" in s.code


# -- compiled operations on Python objects ------------------------------------------------------------------------
def len_index_slice(x):
    a = np.arange(10)
    d = {"k": 3, "j": 4}
    return len(a), int(a[3]), float(a[2:5].sum()), d["k"], len(d)


def call_with_keywords(x):
    import math

    r = sorted([3, 1, 2], reverse=True)
    f = math.floor
    return r, f(2.5), x


def iterate(x):
    s = {5, 7, 9}
    total = 0
    for k in s:
        total = total + k
    names = []
    for i, k in enumerate(sorted(s)):
        names.append(i * k)
    return total, names


def conversions_and_truthiness(x):
    a = np.float64(2.5)
    e = set()
    n = 0
    if a:
        n = n + 1
    if e:
        n = n + 10
    if not e:
        n = n + 100
    return int(a), float(a), bool(e), n, x * int(a)


def is_none_and_in(x):
    d = {}.get("missing")
    s = {1, 2}
    out = 0
    if d is None:
        out = 1
    if 2 in s and 3 not in s:
        out = out + 2
    return out


def operators_with_plain_values(x):
    a = np.arange(3)
    b = a * 2 + 1
    eq = a == 1
    return b.tolist(), int(eq.sum()), -a[2]


def tensor_times_object(x):
    s = np.float32(2.0)
    y = x * s
    return y + 1


def returns_a_tensor_expression_with_an_object(x):
    s = 3
    s = {1, 2, 3}  # a name typed int before: now a Python object
    k = len(s)
    m = np.int64(k)
    return x * m


def set_item_and_attribute_calls(x):
    a = np.zeros(4)
    a[1] = 5.0
    a[2:] = 1.0
    s = set()
    s.add(4)
    s.add(4)
    return float(a.sum()), len(s)


def passes_objects_between_fallback_statements(x):
    s = {1, 2}
    t = s | {3}
    u = frozenset(t)
    return sorted(u), isinstance(u, frozenset)


def merges_at_if_and_loop(x, flag: bool, n: int):
    if flag:
        v = {1}
    else:
        v = 3
    acc = 0
    for i in range(n):
        acc = acc + len({i, 1})
    return v, acc


def f_string_and_print(x):
    s = {3}
    return f"{s} has {len(s)}"


def attribute_read_after_a_change(x):
    from types import SimpleNamespace

    o = SimpleNamespace(v=1)
    p = o.v
    o.v = 5  # a Python statement between two compiled reads of the same attribute: the reads stay apart
    q = o.v
    return p, q


def comprehension_over_an_object(x):
    s = {3, 1, 2}
    return [k * 2 for k in sorted(s)], [k for k in s if k > 1]


def import_seen_by_later_fallback_statements(x):
    import numpy as np

    s = {int(v) for v in np.arange(3)}
    t = {k: np.int64(k) for k in s}
    return sorted(s), len(t)


def deleted_name(x):
    y = {1}
    z = y
    del y
    return z


CASES = [(len_index_slice, ()), (call_with_keywords, ()), (iterate, ()), (conversions_and_truthiness, ()),
         (is_none_and_in, ()), (operators_with_plain_values, ()), (tensor_times_object, ()),
         (returns_a_tensor_expression_with_an_object, ()), (set_item_and_attribute_calls, ()),
         (passes_objects_between_fallback_statements, ()), (merges_at_if_and_loop, (True, 3)),
         (merges_at_if_and_loop, (False, 0)), (f_string_and_print, ()), (deleted_name, ()),
         (attribute_read_after_a_change, ()), (comprehension_over_an_object, ()),
         (import_seen_by_later_fallback_statements, ())]


@pytest.mark.parametrize(("fn", "extra"), CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_compiled_operations_on_python_objects(fn, extra):
    _check(fn, toolkit.ones(2), *extra)


def test_operations_on_objects_are_compiled_not_fallback():
    """len, indexing, attribute reads, calls, iteration and conversions of a Python object stay graph nodes."""
    s = _check(numpy_import_and_array, toolkit.ones(2))
    statements = [n for n in s.graph.all_nodes() if n.kind == "prim::PythonOp" and n.attributes.get("unpack")]
    assert len(statements) == 1  # the import; np.arange(4), a.sum() and a.mean() are calls in the graph
    s = _check(len_index_slice, toolkit.ones(2))
    kinds = {n.kind for n in s.graph.all_nodes()}
    assert {"aten::len", "aten::__getitem__", "aten::Int", "aten::Float"} <= kinds
    s = _check(iterate, toolkit.ones(2))
    assert "prim::Loop" in {n.kind for n in s.graph.all_nodes()}


def test_a_tensor_op_on_an_object_runs_the_statement_as_python():
    s = _check(tensor_times_object, toolkit.ones(2))
    (y,) = [o for n in s.graph.all_nodes() if n.kind == "prim::PythonOp" for o in n.outputs if o.debug_name == "y"]
    assert y.type == T.PYOBJECT


def test_gradients_flow_through_fallback_statements():
    def f(x):
        s = {1, 2}
        a = np.float32(3.0)
        y = x * a
        return (x * len(s) + y).sum()

    s = toolkit.jit.script(f, fallback=True)
    for _ in range(3):
        x = toolkit.ones(3, requires_grad=True)
        s(x).backward()
        assert x.grad.tolist() == [5.0, 5.0, 5.0]


# -- names keep their type: rebinding a typed name is checked when the statement runs -------------------------
def rebinds_a_tensor(x):
    x = {1}
    return x


def test_rebinding_a_typed_name_to_another_type_names_the_statement_and_both_types():
    s = toolkit.jit.script(rebinds_a_tensor, fallback=True)
    import inspect

    line = inspect.getsourcelines(rebinds_a_tensor)[1] + 1
    with pytest.raises(TypeError, match=rf"rebinds_a_tensor:{line}: the Python statement bound 'x' to a value of "
                                        r"type 'set', but the script graph expects Tensor"):
        s(toolkit.ones(1))


# -- without fallback, archives ----------------------------------------------------------------------------------
def test_without_fallback_the_same_functions_give_located_errors():
    with pytest.raises(FrontendError) as e:
        toolkit.jit.script(uses_set)
    assert "line" in str(e.value) and "s = {1, 2}" in str(e.value) and "^" in str(e.value)
    with pytest.raises(FrontendError, match="Python construct 'Import'"):
        toolkit.jit.script(numpy_import_and_array)


def test_archives_refuse_fallback_nodes_with_a_clear_message():
    s = toolkit.jit.script(uses_set, fallback=True)
    with pytest.raises(TypeError, match=r"runs Python code \(prim::PythonOp 'uses_set:\d+' at .*a Python fallback"):
        toolkit.jit.save(s, io.BytesIO())


def test_fallback_warning_names_each_line():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        toolkit.jit.script(numpy_import_and_array, fallback=True)
    assert len([x for x in w if issubclass(x.category, ScriptFallbackWarning)]) == 1
