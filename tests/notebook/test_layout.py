"""The pure-Python layered layout: edges point down, rows keep their gaps, crossings get removed."""

from __future__ import annotations

import pytest

from toolkit.notebook.layout import H_GAP, assign_layers, layout, reduce_crossings


def _sizes(names, w=60.0, h=30.0):
    return {n: (w, h) for n in names}


def test_every_edge_points_down_and_long_edges_get_routes_through_each_layer():
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")]
    lay = layout(_sizes("abcd"), edges)
    for a, b in edges:
        assert lay.positions[a][1] < lay.positions[b][1]
    assert len(lay.routes[3]) == 4  # a -> d crosses the layers of b and c: two bends
    assert lay.routes[3][0] == lay.positions["a"] and lay.routes[3][-1] == lay.positions["d"]


def test_nodes_in_a_layer_do_not_overlap():
    names = [f"n{i}" for i in range(8)]
    edges = [("src", n) for n in names] + [(n, "dst") for n in names]
    sizes = _sizes(names + ["src", "dst"], w=80.0)
    lay = layout(sizes, edges)
    row = sorted(lay.positions[n][0] for n in names)
    assert all(b - a >= 80.0 + H_GAP - 1e-6 for a, b in zip(row, row[1:]))
    assert lay.width >= 8 * 80.0
    # the source sits centred over its fan-out
    assert abs(lay.positions["src"][0] - (row[0] + row[-1]) / 2) < 1.0


def test_barycenter_ordering_removes_avoidable_crossings():
    # upper row a, b; lower row in the crossing order: a -> y, b -> x with x placed first
    layers = [["a", "b"], ["x", "y"]]
    best, crossings = reduce_crossings(layers, [("a", "y"), ("b", "x")])
    assert crossings == 0
    assert best[1] == ["y", "x"]
    lay = layout(_sizes(["a", "b", "x", "y"]), [("a", "y"), ("b", "x"), ("a", "b")])
    assert lay.crossings == 0


def test_sources_are_placed_next_to_their_first_use():
    layers = assign_layers(["x", "a", "b", "c", "k"], [("x", "a"), ("a", "b"), ("b", "c"), ("k", "c")])
    assert layers["k"] == layers["c"] - 1


def test_a_cycle_is_refused_by_name():
    with pytest.raises(ValueError, match="cycle"):
        layout(_sizes("ab"), [("a", "b"), ("b", "a")])


def test_empty_graph_has_a_size():
    lay = layout({}, [])
    assert lay.width > 0 and lay.height > 0 and lay.positions == {}
