"""toolkit.func.tree: flatten/unflatten round trips, specs printed as torch.utils._pytree prints them."""

from collections import namedtuple

import torch.utils._pytree as tp

from toolkit.func.tree import broadcast_prefix, tree_flatten, tree_unflatten, treespec_pprint

Point = namedtuple("Point", "x y")


def test_round_trip_and_leaves():
    tree = (1, [2, (3, None)], {"a": 4, "b": Point(5, 6)})
    leaves, spec = tree_flatten(tree)
    assert leaves == tp.tree_flatten(tree)[0]
    assert tree_unflatten(leaves, spec) == tree
    assert spec.num_leaves == len(leaves)


def test_spec_prints_as_torch():
    for tree in ((1, 2), (1, [2, 3], {"a": 4}), [1], ((1,), 2)):
        assert repr(tree_flatten(tree)[1]) == repr(tp.tree_flatten(tree)[1])
        assert treespec_pprint(tree_flatten(tree)[1]) == tp.treespec_pprint(tp.tree_flatten(tree)[1])


def test_broadcast_prefix():
    spec = tree_flatten((1, {"a": 2, "b": 3}, [4, 5]))[1]
    assert broadcast_prefix(0, spec) == [0] * 5
    assert broadcast_prefix((0, None, [1, 2]), spec) == [0, None, None, 1, 2]
    assert broadcast_prefix((0, {"b": 1, "a": None}, 2), spec) == [0, None, 1, 2, 2]
    assert broadcast_prefix((0, 1), spec) is None
