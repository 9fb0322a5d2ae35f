"""The order in which calls try an op's overloads comes from the schemas alone, as in PyTorch.

PyTorch's argument parser tries an overload before another of as many arguments when each of its
argument types is the same or more specific (``Tensor`` before ``Scalar``, ``int`` before ``int[]``);
overloads that relation leaves unordered go by signature text. So the registry's order must not depend
on which module registered first: re-sorting every name's overloads from any starting order gives it.
"""

from __future__ import annotations

import random

import pytest
import torch

import toolkit
from toolkit.dispatch.calls import select_overload
from toolkit.ops import registry
from toolkit.ops.schema import parse_schema

from ..conftest import assert_close
from .test_overload_choice import torch_overload

MULTI = sorted(n for n in registry.names() if len(registry.overloads(n)) > 1)


def test_registry_has_names_with_several_overloads():
    assert len(MULTI) > 10


@pytest.mark.parametrize("name", MULTI)
def test_order_does_not_depend_on_registration_order(name):
    expected = [o.schema.full_name for o in registry.overloads(name)]
    ops = registry.overloads(name)
    for seed in range(8):
        random.Random(seed).shuffle(ops)
        assert [o.schema.full_name for o in registry.sort_overloads(ops)] == expected
    assert [o.schema.full_name for o in registry.sort_overloads(reversed(ops))] == expected


@pytest.mark.parametrize("name", MULTI)
def test_no_overload_is_tried_before_a_more_specific_one(name):
    ops = registry.overloads(name)
    for i, earlier in enumerate(ops):
        for later in ops[i + 1:]:
            assert not registry.tried_after(earlier.schema, later.schema), (earlier.schema, later.schema)


def test_all_ops_lists_each_name_in_the_order_calls_try_it():
    grouped: dict = {}
    for d in registry.all_ops():
        grouped.setdefault(d.name, []).append(d)
    assert grouped == {n: registry.overloads(n) for n in registry.names()}


def _schema(args: str):
    return parse_schema(f"f({args}) -> Tensor")


# (tried later, tried first): PyTorch's rules, one differing argument each.
MORE_SPECIFIC = [
    ("Tensor self, Scalar other", "Tensor self, Tensor other"),
    ("Tensor self, Scalar? min=None", "Tensor self, Tensor? min=None"),
    ("Tensor self, int[] dim", "Tensor self, int dim"),
    ("Tensor self, int[] dim", "Tensor self, int? dim=None"),
    ("Tensor self, SymInt[] size", "Tensor self, int[] size"),
    ("Tensor self, int repeats", "Tensor self, Tensor repeats"),
    ("Tensor self, SymInt repeats", "Tensor self, Tensor repeats"),
    ("Tensor[] tensors", "int[] sizes"),
    ("Tensor self, int dim, Tensor index, Scalar value", "Tensor self, int dim, Tensor index, Tensor src"),
]


@pytest.mark.parametrize("later,first", MORE_SPECIFIC)
def test_more_specific_argument_types_are_tried_first(later, first):
    assert registry.tried_after(_schema(later), _schema(first))
    assert not registry.tried_after(_schema(first), _schema(later))


@pytest.mark.parametrize("a,b", [
    ("Tensor self", "Tensor self, int dim"),  # different argument counts are unordered
    ("Tensor self, float p", "Tensor self, Tensor p"),  # no rule relates float and Tensor
    ("Tensor self, Scalar a, Tensor b", "Tensor self, Tensor a, Scalar b"),  # more specific in one, less in other
    ("Tensor self, int dim", "Tensor self, int dim"),  # the same types
])
def test_unrelated_schemas_are_unordered(a, b):
    assert not registry.tried_after(_schema(a), _schema(b))
    assert not registry.tried_after(_schema(b), _schema(a))


# Overloads without registry samples (in-place ops written by hand): calls that only the order tells apart.
def _hand_calls():
    x = torch.randn(3, 4)
    return [
        ("fill_", (x, 2.5)),
        ("fill_", (x, torch.tensor(2.5))),
        ("fill_", (x.to(torch.int64), torch.tensor(3))),
        ("bernoulli_", (torch.zeros(5), torch.tensor(1.0))),
        ("bernoulli_", (torch.zeros(5), 1.0)),
        ("random_", (torch.zeros(5), 3)),
        ("random_", (torch.zeros(5), 2, 4)),
        ("clamp_", (x, torch.tensor(-0.5), torch.tensor(0.5))),
        ("clamp_", (x, -0.5, 0.5)),
        ("masked_fill_", (x, x > 0, torch.tensor(7.0))),
        ("masked_fill_", (x, x > 0, 7.0)),
        ("index_fill_", (x, 1, torch.tensor([0, 2]), torch.tensor(-1.0))),
        ("scatter_", (x, 1, torch.tensor([[0], [1], [2]]), 5.0)),
    ]


def _to_toolkit(v):
    if isinstance(v, torch.Tensor):
        return toolkit.tensor(v.numpy())
    return v


@pytest.mark.parametrize("name,call", _hand_calls(), ids=lambda v: v if isinstance(v, str) else "")
def test_hand_written_overloads_match_torch(name, call):
    self_t, *rest = call
    expected = self_t.clone()
    with torch_overload(name) as seen:
        getattr(expected, name)(*rest)
    args = (_to_toolkit(self_t.clone()), *map(_to_toolkit, rest))
    chosen, _ = select_overload(registry.overloads(name), args, {})
    if seen.overload is not None:
        assert chosen.overload == seen.overload
    out = getattr(args[0], name)(*args[1:])
    assert out is args[0]
    if name != "random_":
        assert_close(out, expected)
    else:
        assert out.shape == tuple(expected.shape)
