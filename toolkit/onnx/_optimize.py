"""Clean-ups of a built ``GraphProto`` before it is checked and written: constant folding and dead nodes.

Constant folding (``export(do_constant_folding=True)``, PyTorch's default): a node whose inputs are all
initializers or constants (a ``Transpose`` of a weight, a ``Reshape`` or ``Cast`` of a constant) is run once here
by onnx's reference evaluator and replaced by initializers holding its outputs, so the file holds the values the
runtime would compute on every call. Dead nodes (outputs nobody reads) are removed whatever the option: ONNX
Runtime runs every node, so a stale node computed for the traced sizes could fail at another size.
"""

from __future__ import annotations

import numpy as np

# Ops whose result changes from run to run: never folded, as PyTorch's folding leaves them.
_RANDOM = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli",
           "Dropout"}
# A folded result may be this many elements larger than its inputs together (an ``Expand`` of a scalar to a
# large shape is cheaper to compute than to store).
_GROWTH_LIMIT = 1 << 20


def fold_constants(graph, opset: int) -> int:
    """Replace each main-graph node computable from initializers and constants by initializers; returns how
    many nodes were folded. Nodes with subgraphs (``If``/``Loop``) and random ops are kept."""
    import onnx.numpy_helper  # optional dependency: only export needs it

    known = _Known({t.name: t for t in graph.initializer}, onnx.numpy_helper.to_array)
    outputs = {o.name for o in graph.output}
    kept, folded = [], 0
    for node in graph.node:
        values = _evaluate(node, known, outputs, opset)
        if values is None:
            kept.append(node)
            continue
        known.update(zip(node.output, values))
        if node.op_type == "Constant":
            kept.append(node)  # kept as written; removed below if every reader was folded
            continue
        for name, value in zip(node.output, values):
            graph.initializer.append(onnx.numpy_helper.from_array(value, name))
        folded += 1
    del graph.node[:]
    graph.node.extend(kept)
    return folded


class _Known(dict):
    """Name -> array of the constant values: initializers are read into arrays only when a node needs them
    (a large model's weights are not copied for the few folded ones)."""

    def __init__(self, tensors: dict, to_array):
        super().__init__()
        self._tensors, self._to_array = tensors, to_array

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or name in self._tensors

    def __missing__(self, name):
        value = self[name] = self._to_array(self._tensors[name])
        return value


def _evaluate(node, known: dict, outputs: set, opset: int):
    """The output arrays of ``node`` when it can be folded, else None."""
    if node.domain not in ("", "ai.onnx") or node.op_type in _RANDOM or any(o in outputs for o in node.output):
        return None
    if any(a.type in (a.GRAPH, a.GRAPHS) for a in node.attribute):
        return None
    inputs = [i for i in node.input if i]
    if node.op_type != "Constant" and (not inputs or any(i not in known for i in inputs)):
        return None
    from onnx.reference import ReferenceEvaluator  # optional dependency: folding runs onnx's evaluator

    try:
        values = ReferenceEvaluator(node, opsets={"": opset}).run(None, {i: known[i] for i in inputs})
    except Exception:  # an op or dtype the reference evaluator lacks: the runtime computes it instead
        return None
    values = [np.asarray(v) for v in values]
    if sum(v.size for v in values) > sum(known[i].size for i in inputs) + _GROWTH_LIMIT:
        return None
    return values


def remove_dead_nodes(graph) -> int:
    """Remove the nodes whose outputs no node, subgraph or graph output reads (in subgraphs too), then the
    initializers nothing reads; returns how many nodes were removed."""
    removed = _prune(graph)
    used = _reads(graph) | {o.name for o in graph.output}
    unused = [t for t in graph.initializer if t.name not in used]
    for t in unused:
        graph.initializer.remove(t)
    return removed


def _prune(graph) -> int:
    needed = {o.name for o in graph.output}
    kept, removed = [], 0
    for node in reversed(graph.node):
        if not any(o in needed for o in node.output if o):
            removed += 1
            continue
        kept.append(node)
        needed.update(i for i in node.input if i)
        for sub in _subgraphs(node):
            removed += _prune(sub)
            needed |= _reads(sub)
    kept.reverse()
    del graph.node[:]
    graph.node.extend(kept)
    return removed


def _reads(graph) -> set:
    """Every name the nodes of ``graph`` and of its subgraphs read (a subgraph reads outer values by name)."""
    names: set = set()
    for node in graph.node:
        names.update(i for i in node.input if i)
        for sub in _subgraphs(node):
            names |= _reads(sub) | {o.name for o in sub.output}
    return names


def _subgraphs(node) -> list:
    subs = []
    for a in node.attribute:
        if a.type == a.GRAPH:
            subs.append(a.g)
        elif a.type == a.GRAPHS:
            subs.extend(a.graphs)
    return subs
