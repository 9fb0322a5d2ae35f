"""Binding's short paths agree with the general one, generated from the registry: a call with keywords, and one
whose trailing ints pack into an int list, bind to the same values or fail with the same error as
``_bind_slow``; which overloads a call may fit is remembered by argument types and forgotten when an overload is
registered."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.dispatch import binding, calls
from toolkit.dispatch.binding import _bind_slow, bind
from toolkit.ops import registry

from .ops.test_registry import _tk

_WITH_SAMPLES = [o for o in registry.all_ops() if o.samples is not None]


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y or type(x) is type(y) and _equal(x, y) for x, y in zip(a, b))


def _equal(x, y) -> bool:
    try:
        return bool(x == y) if not isinstance(x, (toolkit.Tensor, np.ndarray)) else x is y
    except Exception:
        return False


def _outcome(fn, op, args, kwargs):
    try:
        return "ok", fn(op, args, kwargs)
    except TypeError as e:
        return "error", str(e)


def _samples(op):
    try:
        return list(op.samples(np.random.default_rng(0)))[:4]
    except Exception:  # a sample generator that needs more than a generator: covered by its op's own tests
        return []


@pytest.mark.parametrize("op", _WITH_SAMPLES, ids=lambda o: o.schema.full_name)
def test_keywords_bind_as_the_general_path_binds(op):
    """Each sample as given, and again with every argument after the first given by keyword (then with one
    keyword unknown, and one repeating a positional argument): the short path's values or error are
    ``_bind_slow``'s."""
    positional = [p for p in op.args if not p.kwarg_only]
    for args, kwargs in _samples(op):
        args, kwargs = _tk(tuple(args)), {k: _tk(v) for k, v in kwargs.items()}
        calls_to_try = [(args, kwargs)]
        if len(args) > 1 and len(args) <= len(positional):
            as_keywords = {positional[i].name: v for i, v in enumerate(args) if i}
            calls_to_try.append((args[:1], {**as_keywords, **kwargs}))
            calls_to_try.append((args[:1], {**as_keywords, **kwargs, "no_such_argument": 1}))
            calls_to_try.append((args, {positional[1].name: args[1], **kwargs}))
        for a, k in calls_to_try:
            fast, slow = _outcome(bind, op, a, k), _outcome(_bind_slow, op, a, k)
            assert fast[0] == slow[0], (a, k, fast, slow)
            assert (fast[1] == slow[1]) if fast[0] == "error" else _same(fast[1], slow[1]), (a, k, fast, slow)


def _keyword_params(op):
    return [i for i, p in enumerate(op.args) if i and p.type != "Tensor"]


_SEVERAL_KEYWORDS = [o for o in registry.all_ops() if len(_keyword_params(o)) >= 2 and o.args[0].type == "Tensor"]


@pytest.mark.parametrize("op", _SEVERAL_KEYWORDS, ids=lambda o: o.schema.full_name)
def test_a_bad_keyword_value_raises_the_general_paths_error(op):
    """Two keywords, one holding a value no parameter takes, given in both orders: the error is the one
    ``_bind_slow`` raises, which checks arguments in schema order."""
    x = toolkit.ones(2, 3)
    first, second = (op.args[i].name for i in _keyword_params(op)[:2])
    for kwargs in ({first: object(), second: object()}, {second: object(), first: object()},
                   {second: object(), first: op.args[_keyword_params(op)[0]].default}):
        fast, slow = _outcome(bind, op, (x,), kwargs), _outcome(_bind_slow, op, (x,), kwargs)
        assert fast[0] == slow[0] and (fast[1] == slow[1] if fast[0] == "error" else _same(fast[1], slow[1]))


_PACKING = [o for o in registry.all_ops() if o.args and (o._bind_plan or binding._plan(o))[9]]


@pytest.mark.parametrize("op", _PACKING, ids=lambda o: o.schema.full_name)
def test_trailing_ints_pack_as_the_general_path_packs(op):
    """``x.view(2, 3)``: ints after the last positional argument are that int list, or the general path's error
    (a value that is no int, too many values)."""
    n = (op._bind_plan or binding._plan(op))[1]
    head = (toolkit.ones(2, 3),) + tuple(p.default if p.has_default else 1 for p in op.args[1:n - 1])
    for tail in ((2, 3), (1, 2, 3), (2, "a"), (2, 3.5), (2, toolkit.ones(2))):
        args = head + tail
        fast, slow = _outcome(bind, op, args, {}), _outcome(_bind_slow, op, args, {})
        assert fast[0] == slow[0], (args, fast, slow)
        assert (fast[1] == slow[1]) if fast[0] == "error" else _same(fast[1], slow[1]), (args, fast, slow)


def test_view_and_expand_with_separate_ints_match_torch():
    import torch

    a = np.arange(6.0, dtype=np.float32)
    assert toolkit.from_numpy(a).view(2, 3).shape == torch.from_numpy(a).view(2, 3).shape
    assert toolkit.tensor(1.0).expand(3, 4).shape == torch.tensor(1.0).expand(3, 4).shape
    assert toolkit.ones(2, 3).permute(1, 0).shape == torch.ones(2, 3).permute(1, 0).shape
    with pytest.raises(TypeError, match="view"):
        toolkit.ones(6).view(2, "a")


def test_a_number_is_never_taken_for_a_dtype():
    """``view(6)`` passes over ``view.dtype`` without binding it; a dtype still takes it."""
    x = toolkit.ones(2, 3)
    view = registry.get("view", "dtype")
    assert calls._number_for_tensor(view, (x, 6), {})
    assert not calls._number_for_tensor(view, (x, toolkit.int32), {})
    assert x.view(6).shape == (6,) and x.view(toolkit.int32).dtype == toolkit.int32


def test_overloads_a_call_may_fit_are_forgotten_when_one_is_registered():
    """The remembered choice is per list of overloads and argument types; registering (or removing) an
    overload forgets every choice, so a list that gained one is looked at again."""
    x = toolkit.ones(3)
    x.clamp(min=0)
    assert calls._CANDIDATES
    lib = toolkit.library.Library("toolkit_binding_test", "DEF")
    try:
        lib.define("probe(Tensor x) -> Tensor")
        assert not calls._CANDIDATES
    finally:
        lib._destroy()
    assert not calls._CANDIDATES
    assert x.clamp(min=0).tolist() == [1.0, 1.0, 1.0]
