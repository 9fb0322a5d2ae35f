"""Compile errors name the construct, the file:line and show the source line with a caret."""

import os
import warnings

import pytest

import toolkit
from toolkit.jit.script import FrontendError, ScriptFallbackWarning

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
