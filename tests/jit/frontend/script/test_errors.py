"""Compile errors name the construct, the file:line and show the source line with a caret."""

import os
import warnings

import pytest

import toolkit
from toolkit.jit.frontend.script import FrontendError, ScriptFallbackWarning

HERE = os.path.abspath(__file__)


def uses_try(x):
    try:
        x = x + 1
    except RuntimeError:
        pass
    return x


def undefined_name(x):
    return x + not_defined_anywhere  # noqa: F821


def type_mismatch(x, n: int):
    if n > 0:
        y = x
    else:
        y = 3
    return y


def _line(fn, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return first + i
    raise AssertionError(text)


def loop_type_mismatch(x, n: int):
    y = 0
    for _i in range(n):
        y = x
    return y


def argument_type_mismatch(x):
    return toolkit.relu("a")


def undefined_in_a_method(x):
    y = x + 1
    return y * undefined_scale  # noqa: F821


def unsupported_del(x):
    y = x
    del y
    return x


# (function, message, text on the line the error points at, that line as printed, its caret line)
GOLDEN = [
    (uses_try, "Python construct 'Try' (try/except) is not supported in script code", "try:",
     "    try:", "    ^~~~"),
    (undefined_name, "undefined value not_defined_anywhere", "not_defined_anywhere",
     "    return x + not_defined_anywhere  # noqa: F821", "               ^~~~~~~~~~~~~~~~~~~~"),
    (type_mismatch, "Type mismatch: 'y' is Tensor in the true branch and int in the false branch", "if n > 0",
     "    if n > 0:", "    ^~~~~~~~~"),
    (loop_type_mismatch, "Type mismatch: loop-carried 'y' is int before the loop and Tensor after an iteration",
     "for _i in", "    for _i in range(n):", "    ^~~~~~~~~~~~~~~~~~~"),
    (argument_type_mismatch, "Arguments for call are not valid: relu() got (str), but expected one of:\n"
     "  relu(Tensor self) -> Tensor\nThe call is", "relu(",
     '    return toolkit.relu("a")', "           ^~~~~~~~~~~~~~~~~"),
    # an undefined name inside an expression: the caret points at the name
    (undefined_in_a_method, "undefined value undefined_scale", "undefined_scale",
     "    return y * undefined_scale  # noqa: F821", "               ^~~~~~~~~~~~~~~"),
    (unsupported_del, "Python construct 'Delete' (del) is not supported in script code", "del y",
     "    del y", "    ^~~~~"),
]


@pytest.mark.parametrize(("fn", "message", "marker", "source", "caret"), GOLDEN, ids=[g[0].__name__ for g in GOLDEN])
def test_golden_message(fn, message, marker, source, caret):
    with pytest.raises(FrontendError) as e:
        toolkit.jit.script(fn)
    assert str(e.value) == (
        f"{message}:\n"
        f'  File "{HERE}", line {_line(fn, marker)}, in {fn.__name__}\n'
        f"{source}\n"
        f"{caret}")


def helper_with_error(x):
    return x.no_such_method()


def caller(x):
    return helper_with_error(x) * 2


def test_error_in_a_called_function_shows_both_places():
    with pytest.raises(FrontendError) as e:
        toolkit.jit.script(caller)
    msg = str(e.value)
    assert msg.startswith("Tensor has no attribute 'no_such_method'")
    assert "in helper_with_error" in msg and "'helper_with_error' is being compiled since it was called from 'caller'" in msg


def test_fallback_turns_unsupported_statements_into_python_nodes():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = toolkit.jit.script(uses_try, fallback=True)
    msgs = [str(x.message) for x in w if issubclass(x.category, ScriptFallbackWarning)]
    assert len(msgs) == 1 and f"line {_line(uses_try, 'try:')} of 'uses_try'" in msgs[0]
    assert [x.filename for x in w if issubclass(x.category, ScriptFallbackWarning)] == [HERE]
    ops = [n for n in s.graph.all_nodes() if n.kind == "prim::PythonOp"]
    assert len(ops) == 1 and ops[0].outputs[0].debug_name.startswith("x")
    x = toolkit.ones(2)
    assert s(x).tolist() == uses_x_plus_one(x)
    printed = str(s.graph_for(x)).splitlines()
    (op_line,) = [p for p in printed if "prim::PythonOp" in p]
    assert f'name="uses_try:{_line(uses_try, "try:")}"' in op_line
    assert op_line.endswith(f"# {HERE}:{_line(uses_try, 'try:')}")  # the user's source line


def uses_x_plus_one(x):
    return (x + 1).tolist()


def fallback_mix(x, n: int):
    total = x * 0
    for i in range(n):
        with toolkit.no_grad():
            y = x * i
        total = total + y
    return total


def test_fallback_inside_a_loop_keeps_the_loop_compiled():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScriptFallbackWarning)
        s = toolkit.jit.script(fallback_mix, fallback=True)
    kinds = [n.kind for n in s.graph.all_nodes()]
    assert "prim::Loop" in kinds and "prim::PythonOp" in kinds
    x = toolkit.ones(2)
    assert s(x, 4).tolist() == fallback_mix(x, 4).tolist()


def test_fallback_output_type_is_checked_at_run_time():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScriptFallbackWarning)
        s = toolkit.jit.script(bad_fallback, fallback=True)
    with pytest.raises(TypeError, match="expects Tensor"):
        s(toolkit.ones(1))


def bad_fallback(x):
    with toolkit.no_grad():
        x = 3
    return x


def test_argument_types_are_checked():
    s = toolkit.jit.script(uses_x_plus_one_s)
    with pytest.raises(TypeError, match="Expected a value of type 'Tensor' for argument 'x'"):
        s(3)


def uses_x_plus_one_s(x):
    return x + 1


# -- errors the argument types already show: located compile errors, as torch.jit.script gives them --------------
def sorted_of_a_dict(d: dict[str, int]) -> int:
    n = 0
    for k in sorted(d):
        n += d[k]
    return n


def indexes_an_int(n: int) -> int:
    return n[0]


def unknown_tensor_attribute(x):
    return x.no_such_attr


def _two(a, b):
    return a + b


def too_few_arguments(x):
    return _two(x)


def too_many_arguments(x):
    return _two(x, x, x)


def sorted_with_reverse(values: list[int]) -> list[int]:
    return sorted(values, reverse=True)


def print_with_keywords(x):
    print(x, end="")
    return x


def calls_an_int(n: int) -> int:
    return n(1)


def iterates_an_int(n: int) -> int:
    t = 0
    for i in n:
        t += i
    return t


def unknown_int_attribute(n: int):
    return n.real


def min_of_str_and_int(s: str, n: int):
    return min(s, n)


def range_of_a_float(f: float) -> int:
    t = 0
    for i in range(f):
        t += i
    return t


def unknown_list_method(values: list[int]) -> list[int]:
    values.no_such()
    return values


def int_of_a_list(values: list[int]) -> int:
    return int(values)


def abs_of_a_str(s: str):
    return abs(s)


def tuple_index_out_of_range(t: tuple[int, int]) -> int:
    return t[5]


def dict_indexed_by_a_wrong_key(d: dict[str, int]) -> int:
    return d[1]


def list_indexed_by_a_str(values: list[int]) -> int:
    return values["a"]


def size_with_three_dims(x):
    return x.size(1, 2, 3)


def size_of_a_str_dim(x, s: str):
    return x.size(s)


def dim_with_an_argument(x):
    return x.dim(0)


# (function, start of our message, text on the line the error points at)
TYPE_ERRORS = [
    (sorted_of_a_dict, "Arguments for call are not valid: sorted() expected a value of type 'List[t]'", "sorted(d)"),
    (indexes_an_int, "'int' object is not subscriptable", "n[0]"),
    (unknown_tensor_attribute, "Tensor has no attribute 'no_such_attr'", "x.no_such_attr"),
    (too_few_arguments, "_two() missing required argument 'b'", "_two(x)"),
    (too_many_arguments, "_two() takes 2 positional arguments but 3 were given", "_two(x, x, x)"),
    (sorted_with_reverse, "Arguments for call are not valid: sorted() does not take the keyword argument 'reverse'",
     "reverse=True"),
    (print_with_keywords, "print doesn't accept any keyword arguments", 'print(x, end="")'),
    (calls_an_int, "'int' object is not callable", "n(1)"),
    (iterates_an_int, "'int' object is not iterable", "for i in n"),
    (unknown_int_attribute, "'int' object has no attribute or method 'real'", "n.real"),
    (min_of_str_and_int, "Arguments for call are not valid: min() cannot compare values of types str, int",
     "min(s, n)"),
    (range_of_a_float, "all inputs of range must be ints, found float in argument 0", "range(f)"),
    (unknown_list_method, "'int[]' object has no attribute or method 'no_such'", "values.no_such()"),
    (int_of_a_list, "Arguments for call are not valid: int() expected a value of type 'Tensor', 'number' or 'str'",
     "int(values)"),
    (abs_of_a_str, "bad operand type for abs(): 'str'", "abs(s)"),
    (tuple_index_out_of_range, "Tuple index out of range. Tuple is length 2 and index is 5", "t[5]"),
    (dict_indexed_by_a_wrong_key, "a Dict(str, int) is indexed by a int, but its keys are str", "d[1]"),
    (list_indexed_by_a_str, "list indices must be integers, not str", 'values["a"]'),
    (size_with_three_dims, "Arguments for call are not valid: size() got (Tensor, int, int, int): too many "
                           "positional arguments", "x.size(1, 2, 3)"),
    (size_of_a_str_dim, "Arguments for call are not valid: size() expected a value of type 'int' for argument "
                        "'dim' but instead found type 'str'", "x.size(s)"),
    (dim_with_an_argument, "Arguments for call are not valid: dim() got (Tensor, int): too many positional "
                           "arguments", "x.dim(0)"),
]


@pytest.mark.parametrize(("fn", "message", "marker"), TYPE_ERRORS, ids=[t[0].__name__ for t in TYPE_ERRORS])
def test_type_errors_are_located_compile_errors_as_in_torch(fn, message, marker):
    import torch

    with pytest.raises(FrontendError) as e:
        toolkit.jit.script(fn)
    msg = str(e.value)
    assert msg.startswith(message), msg
    where, source, caret = msg.split(":\n", 1)[1].splitlines()[-3:]
    assert where == f'  File "{HERE}", line {_line(fn, marker)}, in {fn.__name__}'
    assert marker in source and caret.strip().startswith("^")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(RuntimeError):  # PyTorch rejects the same function when it compiles it
            torch.jit.script(fn)


def len_of_an_int(n: int) -> int:
    return len(n)


def test_len_of_an_int_is_a_compile_error():
    """Python raises TypeError for ``len(3)`` whatever the value; the types show it before any call."""
    with pytest.raises(TypeError):
        len_of_an_int(3)
    with pytest.raises(FrontendError, match=r"object of type 'int' has no len\(\)"):
        toolkit.jit.script(len_of_an_int)


def test_with_fallback_the_statement_runs_as_python():
    """``sorted(d)`` of a dict is no script code, but Python: with ``fallback=True`` the loop runs as Python."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScriptFallbackWarning)
        s = toolkit.jit.script(sorted_of_a_dict, fallback=True)
    d = {"b": 2, "a": 1}
    assert s(d) == sorted_of_a_dict(d) == 3
