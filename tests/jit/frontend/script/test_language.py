"""Language features: each scripted function's result equals Python's."""
# ruff: noqa: UP006, UP035, UP045, UP008, B007  (the seed's TorchScript spellings, on purpose)

from typing import Dict, List, NamedTuple, Optional

import pytest

import toolkit

from .helpers import check

T = toolkit.Tensor


def branches(x, n: int):
    if n > 2:
        y = x * 2
    elif n == 2:
        y = x + 1
    else:
        y = -x
    z = y if n % 2 == 0 else y * 3
    return z


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_if_elif_else_and_ternary(n):
    check(branches, toolkit.randn(3), n)


def tensor_condition(x):
    if x.sum() > 0:
        return x
    return -x


def test_tensor_condition_and_early_return():
    s = check(tensor_condition, toolkit.ones(2))
    assert s(-toolkit.ones(2)).tolist() == [1.0, 1.0]


def loops(x, n: int):
    acc = 0
    for i in range(2, n, 3):
        acc += i
    k = 0
    while k < n:
        k += 1
        if k == 3:
            continue
        if k > 6:
            break
        x = x + k
    for a, b in zip([1, 2, 3], [4, 5, 6]):
        acc += a * b
    for j, v in enumerate([10, 20]):
        acc += j * v
    for t in (1, 2.5):
        acc += t
    return x, acc, k


@pytest.mark.parametrize("n", [0, 4, 10])
def test_range_while_break_continue_zip_enumerate_tuple_loops(n):
    check(loops, toolkit.zeros(2), n)


def lists(x):
    xs: List[T] = []
    for i in range(3):
        xs.append(x * i)
    xs += [x]
    n = len(xs)
    first = xs[0]
    tail = xs[1:]
    ys = [t + 1 for t in xs if t.sum() >= 0]
    return toolkit.stack(ys), n, first, len(tail), toolkit.cat(xs)


def test_lists_append_index_slice_len_comprehension():
    check(lists, toolkit.ones(2))


def dicts(x):
    d: Dict[str, T] = {"a": x, "b": x * 2}
    d["c"] = x + 1
    total = x * 0
    for k in d:
        total = total + d[k]
    ints = {1: 2, 3: 4}
    return total, ints[3], len(d)


def test_dicts_with_str_and_int_keys():
    check(dicts, toolkit.ones(2))


def optional(x, h: Optional[T] = None, scale: Optional[float] = None):
    if h is not None:
        x = x + h
    if scale is None:
        scale = 2.0
    return x * scale


def test_optional_refinement_and_defaults():
    x = toolkit.ones(2)
    s = check(optional, x)
    assert s(x, toolkit.ones(2)).tolist() == [4.0, 4.0]
    assert s(x, h=None, scale=3.0).tolist() == [3.0, 3.0]


def helper(x, *args, **kwargs):
    for a in args:
        x = x + a
    return x * kwargs.get("scale", 1.0)


def uses_helpers(x):
    return helper(x, 1, 2, scale=3.0) + helper(x)


def test_star_args_and_kwargs_in_helpers():
    check(uses_helpers, toolkit.ones(2))


class Out(NamedTuple):
    value: T
    count: int


def named(x) -> Out:
    return Out(x * 2, 3)


def test_namedtuple_return():
    s = check(named, toolkit.ones(2))
    r = s(toolkit.ones(2))
    assert isinstance(r, Out) and r.count == 3


def scalars(a: int, b: float, s: str, flag: bool):
    c = a // 2 + a % 3 - a ** 2
    d = b / 2 + float(a) - abs(-b)
    e = min(a, 3) + max(a, 1)
    t = f"{s}-{a}:{b:.2f}"
    return c, d, e, t, (not flag) or a > 1, int(b), str(a)


def test_scalar_arithmetic_strings_and_builtins():
    check(scalars, 7, 2.5, "x", True)


def tensor_methods(x):
    n = x.size(0)
    d = x.dim()
    y = x.view(-1).unsqueeze(0)
    z = x[0, 1:] + x[:, 0].sum()
    return n, d, y, z, x.shape[1], x.t().contiguous()


def test_tensor_methods_indexing_and_properties():
    check(tensor_methods, toolkit.randn(3, 4))


def raises(x, n: int):
    if n < 0:
        raise ValueError("n must be non-negative")
    assert n != 1, "n must not be 1"
    return x * n


def test_raise_and_assert_at_run_time_point_at_the_line():
    s = check(raises, toolkit.ones(2), 3)
    with pytest.raises(ValueError, match="n must be non-negative"):
        s(toolkit.ones(2), -1)
    with pytest.raises(AssertionError, match=r"n must not be 1[\s\S]*test_language.py:\d+"):
        s(toolkit.ones(2), 1)


def printing(x):
    print("value", x.sum().item())
    return x


def test_print_is_kept_as_a_node(capsys):
    s = toolkit.jit.script(printing)
    assert any(n.kind == "prim::Print" for n in s.graph.all_nodes())
    s(toolkit.ones(2))
    assert capsys.readouterr().out == "value 2.0\n"


def return_in_loop(x, limit: float):
    for i in range(10):
        x = x + 1
        if x.sum() > limit:
            return x, i
    return x, -1


@pytest.mark.parametrize("limit", [3.0, 100.0])
def test_return_inside_a_loop(limit):
    check(return_in_loop, toolkit.zeros(2), limit)


def nested(x, n: int):
    total = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            total += 1
    return x * total


def test_nested_loops_with_break():
    check(nested, toolkit.ones(1), 4)


def test_gradients_flow_through_control_flow():
    x = toolkit.randn(3, requires_grad=True)
    s = toolkit.jit.script(looped_sigmoid)
    s(x, 3).backward()
    g1 = x.grad.clone()
    x.grad = None
    looped_sigmoid(x, 3).backward()
    assert toolkit.allclose(g1, x.grad)


def looped_sigmoid(x, n: int):
    for _ in range(n):
        x = toolkit.sigmoid(x) * 2
    return x.sum()


def views_by_sizes_and_by_dtype(x, n: int):
    sizes = x.size()
    a = x.view(sizes)  # int[]: view(int[] size), never view(ScalarType dtype)
    b = x.view(n, -1)
    c = x.view(toolkit.int32)
    return a, b, c


def test_view_overload_follows_the_argument_type():
    s = check(views_by_sizes_and_by_dtype, toolkit.ones(2, 3), 3)
    ops = [n.op.schema.full_name for n in s.graph.nodes() if n.kind == "aten::view"]
    assert ops == ["view", "view", "view.dtype"]


_SIZES = (2, 3)


def builtin_classes_constant_tuples_and_optional_numbers(x, k: int, scale: Optional[float]):
    sizes = list(_SIZES)  # a constant tuple becomes a list
    shaped = [k, k] if isinstance(k, (list, tuple)) else [k * s for s in sizes]
    # an Optional[float] goes on to an op's ``float?`` argument as it is
    return toolkit.nn.functional.pad(x, shaped, "constant", scale), isinstance(sizes, (int, list))


@pytest.mark.parametrize("scale", [None, 0.5])
def test_builtin_classes_in_isinstance_constant_tuples_and_optional_arguments(scale):
    s = check(builtin_classes_constant_tuples_and_optional_numbers, toolkit.ones(2, 3), 1, scale)
    assert not [n for n in s.graph.nodes() if n.kind == "prim::PythonOp"]


def lists_of_iterations(n: int, xs: List[int]):
    return list(range(n)), list(range(-n, 0)), list(zip(xs, xs)), list(enumerate(xs))


def test_list_of_range_zip_and_enumerate():
    check(lists_of_iterations, 3, [4, 5])
