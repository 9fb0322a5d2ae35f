"""Layered drawing of a DAG (Sugiyama's method) in pure Python, so graph views need no graphviz binary.

The four classic steps, each small enough to read:

1. layering: a node's layer is the longest path from a source, so every edge points down;
2. edges spanning several layers are cut into a chain of dummy nodes, one per layer crossed;
3. crossing reduction: the barycenter heuristic, sweeping down and up, keeping the best order seen;
4. coordinates: nodes pulled toward the mean x of their neighbours, then pushed apart to keep
   their order and a minimum gap (a few relaxation rounds); layer y is the running sum of row heights.

    >>> lay = layout({"a": (60, 30), "b": (60, 30)}, [("a", "b")])
    >>> lay.positions["b"][1] > lay.positions["a"][1]
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

H_GAP = 24.0
V_GAP = 46.0
MARGIN = 16.0
SWEEPS = 12
RELAX_ROUNDS = 8


@dataclass
class Layout:
    """Centres of the nodes, the points each edge passes through (dummy nodes), and the drawing's size."""

    positions: dict = field(default_factory=dict)  # node -> (x, y) of its centre
    layers: list = field(default_factory=list)  # layer -> node ids in order (dummies included)
    routes: dict = field(default_factory=dict)  # edge index -> [(x, y), ...] from source to target
    width: float = 0.0
    height: float = 0.0
    crossings: int = 0


def assign_layers(nodes: list, edges: list) -> dict:
    """Longest-path layering; raises ``ValueError`` naming a node on a cycle."""
    preds: dict = {n: [] for n in nodes}
    succs: dict = {n: [] for n in nodes}
    for a, b in edges:
        succs[a].append(b)
        preds[b].append(a)
    indegree = {n: len(preds[n]) for n in nodes}
    ready = [n for n in nodes if indegree[n] == 0]
    layer: dict = {}
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        layer[n] = max((layer[p] + 1 for p in preds[n]), default=0)
        for s in succs[n]:
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
    if len(order) != len(nodes):
        stuck = [n for n in nodes if n not in layer]
        raise ValueError(f"layout: the graph has a cycle through {stuck[0]!r}")
    # Pull sources down next to their first consumer (constants and inputs then sit beside their use).
    for n in reversed(order):
        if not preds[n] and succs[n]:
            layer[n] = max(layer[n], min(layer[s] for s in succs[n]) - 1)
    return layer


def _split_long_edges(edges: list, layer: dict) -> tuple[list, dict, dict]:
    """Chains of dummy nodes for edges spanning more than one layer; returns (short edges, layer, chains)."""
    short, chains = [], {}
    for i, (a, b) in enumerate(edges):
        chain = [a]
        for k in range(layer[a] + 1, layer[b]):
            d = ("dummy", i, k)
            layer[d] = k
            chain.append(d)
        chain.append(b)
        chains[i] = chain
        short += list(zip(chain, chain[1:]))
    return short, layer, chains


def _count_crossings(layers: list, down: dict) -> int:
    total = 0
    for upper, lower in zip(layers, layers[1:]):
        pos = {n: i for i, n in enumerate(lower)}
        pairs = [(i, pos[s]) for i, n in enumerate(upper) for s in down.get(n, ()) if s in pos]
        for x in range(len(pairs)):
            for y in range(x + 1, len(pairs)):
                (a1, b1), (a2, b2) = pairs[x], pairs[y]
                if (a1 - a2) * (b1 - b2) < 0:
                    total += 1
    return total


def _barycenter_sweep(layers: list, neighbours: dict, rng: range) -> None:
    for i in rng:
        ref = {n: k for k, n in enumerate(layers[i - 1 if rng.step > 0 else i + 1])}
        current = {n: k for k, n in enumerate(layers[i])}

        def key(n, ref=ref, current=current):
            ks = [ref[m] for m in neighbours.get(n, ()) if m in ref]
            return (sum(ks) / len(ks)) if ks else current[n]

        layers[i].sort(key=key)


def reduce_crossings(layers: list, short_edges: list) -> tuple[list, int]:
    """Barycenter ordering, sweeping down then up; the order with the fewest crossings wins."""
    down: dict = {}
    up: dict = {}
    for a, b in short_edges:
        down.setdefault(a, []).append(b)
        up.setdefault(b, []).append(a)
    best = [list(layer) for layer in layers]
    best_cross = _count_crossings(best, down)
    for _ in range(SWEEPS):
        if best_cross == 0:
            break
        _barycenter_sweep(layers, up, range(1, len(layers)))
        _barycenter_sweep(layers, down, range(len(layers) - 2, -1, -1))
        c = _count_crossings(layers, down)
        if c < best_cross:
            best, best_cross = [list(layer) for layer in layers], c
    return best, best_cross


def _place_row(row: list, want: dict, width: dict) -> dict:
    """x centres in the row's order, as close to ``want`` as the minimum gaps allow (two passes, averaged)."""
    left: dict = {}
    edge = float("-inf")
    for n in row:
        x = max(want[n], edge + width[n] / 2)
        left[n] = x
        edge = x + width[n] / 2 + H_GAP
    right: dict = {}
    edge = float("inf")
    for n in reversed(row):
        x = min(want[n], edge - width[n] / 2)
        right[n] = x
        edge = x - width[n] / 2 - H_GAP
    xs = {n: (left[n] + right[n]) / 2 for n in row}
    edge = float("-inf")  # the average keeps order; one more pass restores the gaps it may have shrunk
    for n in row:
        xs[n] = max(xs[n], edge + width[n] / 2)
        edge = xs[n] + width[n] / 2 + H_GAP
    return xs


def assign_coordinates(layers: list, short_edges: list, width: dict) -> dict:
    """x of every node (dummies included): neighbours' mean, kept in order and apart."""
    x: dict = {}
    for row in layers:
        pos = 0.0
        for n in row:
            x[n] = pos + width[n] / 2
            pos += width[n] + H_GAP
    nbrs: dict = {}
    for a, b in short_edges:
        nbrs.setdefault(a, []).append(b)
        nbrs.setdefault(b, []).append(a)
    for _ in range(RELAX_ROUNDS):
        for row in layers:
            want = {n: (sum(x[m] for m in nbrs[n]) / len(nbrs[n])) if nbrs.get(n) else x[n] for n in row}
            x.update(_place_row(row, want, width))
    return x


def layout(sizes: dict, edges: list) -> Layout:
    """Lay out nodes of the given ``(width, height)`` sizes and directed ``edges`` (pairs of node ids)."""
    nodes = list(sizes)
    edges = [(a, b) for a, b in edges if a != b]
    if not nodes:
        return Layout(width=2 * MARGIN, height=2 * MARGIN)
    layer = assign_layers(nodes, edges)
    short, layer, chains = _split_long_edges(edges, layer)
    n_layers = max(layer.values()) + 1
    layers: list = [[] for _ in range(n_layers)]
    for n in sorted(layer, key=lambda n: (layer[n], nodes.index(n) if n in sizes else len(nodes))):
        layers[layer[n]].append(n)
    layers, crossings = reduce_crossings(layers, short)
    width = {n: sizes[n][0] if n in sizes else 8.0 for n in layer}
    x = assign_coordinates(layers, short, width)
    min_x = min(x[n] - width[n] / 2 for n in x)
    row_h = [max((sizes[n][1] for n in row if n in sizes), default=10.0) for row in layers]
    ys, y = [], MARGIN
    for h in row_h:
        ys.append(y + h / 2)
        y += h + V_GAP
    pos = {n: (x[n] - min_x + MARGIN, ys[layer[n]]) for n in layer}
    routes = {i: [pos[n] for n in chain] for i, chain in chains.items()}
    w = max(pos[n][0] + width[n] / 2 for n in pos) + MARGIN
    return Layout({n: pos[n] for n in nodes}, layers, routes, w, y - V_GAP + MARGIN, crossings)
