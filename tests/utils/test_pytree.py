"""``toolkit.utils._pytree``: tensors out of nested outputs, and the same structure rebuilt around new ones."""

from collections import namedtuple

import toolkit
from toolkit.utils._pytree import tree_rebuild, tree_tensors

Pair = namedtuple("Pair", "a b")


def test_tensors_come_out_depth_first_and_rebuild_keeps_the_structure():
    a, b, c, d = (toolkit.full((1,), float(i)) for i in range(4))
    obj = (a, [b, {"k": c, "n": 3}], Pair(d, None), "s")
    found = tree_tensors(obj)
    assert [float(t) for t in found] == [0.0, 1.0, 2.0, 3.0]
    new = tree_rebuild(obj, iter([t * 10 for t in found]))
    assert isinstance(new[2], Pair) and new[2].b is None and new[3] == "s" and new[1][1]["n"] == 3
    assert [float(t) for t in tree_tensors(new)] == [0.0, 10.0, 20.0, 30.0]


def test_a_lone_tensor_and_empty_containers():
    t = toolkit.ones(2)
    assert tree_tensors(t) == [t] and tree_tensors(([], {}, ())) == []
    assert tree_rebuild(t, iter([t + 1])).tolist() == [2.0, 2.0]
