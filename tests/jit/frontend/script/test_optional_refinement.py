"""Optional values in script code: accepted where a schema says ``Tensor?``, narrowed to their element type
after ``is not None`` tests (``if``, ``and``/``or`` chains, ``not``, ``assert``), as TorchScript refines.
Also the small language pieces the standard modules need: ``warnings.warn``, a tuple passed for a ``List``
parameter, and lists built by ``append`` that must not be folded to constants."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toolkit
from toolkit import Tensor

from .helpers import check, same


def add_bias(x: Tensor, b: Tensor | None) -> Tensor:
    if b is not None:
        return x + b
    return x


def bias_is_none_else(x: Tensor, b: Tensor | None) -> Tensor:
    if b is None:
        y = x * 2
    else:
        y = x + b.sum()
    return y


def and_chain(x: Tensor, h: Tensor | None) -> int:
    if h is not None and h.dim() == 2:
        return 2
    return 0


def or_chain(x: Tensor, h: Tensor | None) -> int:
    if h is None or h.dim() != 2:
        return 0
    return h.size(0)


def not_none(x: Tensor, h: Tensor | None) -> Tensor:
    if h is not None:
        return x + h
    return x


def asserted(x: Tensor, h: Tensor | None) -> Tensor:
    assert h is not None
    return x * h.size(0)


def early_return(x: Tensor, h: Tensor | None) -> Tensor:
    if h is None:
        return x
    return x - h


def linear_optional_bias(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    return toolkit.nn.functional.linear(x, w, b)


@pytest.mark.parametrize("fn", [add_bias, bias_is_none_else, not_none, early_return])
def test_refined_tensor_ops(fn):
    x, b = toolkit.randn(3, 4), toolkit.randn(4)
    check(fn, x, b)
    check(fn, x, None)


def test_and_or_chains_refine_the_rest_of_the_chain():
    x = toolkit.randn(3, 4)
    for fn in (and_chain, or_chain):
        check(fn, x, toolkit.randn(5, 2))
        check(fn, x, toolkit.randn(5))
        check(fn, x, None)


def test_assert_refines_after_it():
    x = toolkit.randn(3)
    check(asserted, x, toolkit.randn(4))
    s = toolkit.jit.script(asserted)
    with pytest.raises(AssertionError):
        s(x, None)


def test_optional_value_accepted_where_schema_says_optional_tensor():
    x, w, b = toolkit.randn(3, 4), toolkit.randn(5, 4), toolkit.randn(5)
    s = check(linear_optional_bias, x, w, b)
    check(linear_optional_bias, x, w, None)
    s.graph.verify()


def test_module_with_optional_bias_attribute_scripts():
    for bias in (True, False):
        m = toolkit.nn.Conv2d(2, 3, 3, bias=bias)
        s = toolkit.jit.script(m)
        x = toolkit.randn(1, 2, 5, 5)
        assert same(s(x), m(x), 1e-5)


def warns(x: Tensor) -> Tensor:
    warnings.warn("careful", DeprecationWarning, stacklevel=2)
    warnings.warn("plain", stacklevel=2)
    return x + 1


def test_warnings_warn_runs_each_call_with_its_category():
    s = toolkit.jit.script(warns)
    assert "prim::PythonOp" not in str(s.graph)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s(toolkit.ones(2))
    assert [(type(x.message), str(x.message)) for x in w] == [(DeprecationWarning, "careful"),
                                                              (UserWarning, "plain")]


def total(xs: list[int]) -> int:
    t = 0
    for i in range(len(xs)):
        t += xs[i] * (i + 1)
    return t


def tuple_for_list(x: Tensor) -> int:
    return total((2, 3, 4)) + x.dim()


def test_tuple_argument_becomes_a_list_parameter():
    check(tuple_for_list, toolkit.ones(2))


def built_by_append(x: Tensor) -> Tensor:
    size: list[int] = []
    for d in (2, 3):
        size.append(d)
    return x.reshape(size)


def test_list_built_by_append_is_not_folded_to_a_constant():
    s = check(built_by_append, toolkit.arange(6.0))
    assert tuple(s(toolkit.arange(6.0)).shape) == (2, 3)


def test_backward_of_a_plan_does_not_replay_a_stale_dropout_mask():
    """Dropout's mask is made inside the op: a plan's backward must not freeze the first call's mask."""
    m = toolkit.nn.Dropout()
    s = toolkit.jit.script(m)
    rng = np.random.default_rng(0)
    for i in range(4):
        x = toolkit.tensor(rng.standard_normal((4, 5)).astype(np.float32)).requires_grad_(True)
        out = s(x)
        out.sum().backward()
        assert np.array_equal(out.detach().numpy() != 0, x.grad.numpy() != 0), f"call {i}"
