"""The backward engine: iterative, in dependency order, never recursive.

Gradients flow from the roots through ``next_functions``; a node runs once all
the gradients it will receive have arrived, summed per output. Among ready
nodes the most recently created runs first (PyTorch's order), and leaves
accumulate as soon as their gradient is complete. With ``inputs`` only the
part of the graph that leads to them runs. With ``create_graph`` the
derivatives themselves are recorded, so higher-order gradients work.
"""

from __future__ import annotations

import heapq
import itertools

from .._core.names import NAME_STATE
from ..dispatch import STATE
from .grad_mode import LOCAL, _set_grad
from .graph import gradient_edge
from .node import AccumulateGrad, Node, OpNode, accumulate_grad


class _ExecutionEngine:
    """``Variable._execution_engine``: ``queue_callback(fn)`` runs ``fn()`` once the current backward pass ends."""

    def __init__(self) -> None:
        self._callbacks: list | None = None

    def queue_callback(self, callback) -> None:
        if self._callbacks is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        self._callbacks.append(callback)


ENGINE = _ExecutionEngine()


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def reachable_nodes(roots: list) -> list:
    """Every node reachable from the roots, children before parents (iterative post-order DFS)."""
    seen = set()
    post = []
    for r in roots:
        if r in seen:
            continue
        seen.add(r)
        stack = [(r, iter(r.next_functions))]
        while stack:
            n, it = stack[-1]
            for nxt, _ in it:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                stack.pop()
                post.append(n)
    return post


def _dependencies(roots: list) -> dict:
    """Every node reachable from the roots, with how many edges of reachable nodes lead to it."""
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    while stack:
        for c, _ in stack.pop().next_functions:
            if c is not None:
                if c in deps:
                    deps[c] += 1
                else:
                    deps[c] = 1
                    stack.append(c)
    return deps


def _call_tensor_hooks(node: Node, gin: list) -> list:
    """Hooks registered on the tensors this node's outputs are, then retain_grad (PyTorch's order)."""
    if isinstance(node, AccumulateGrad):
        ex = node.variable._extra
        hooks = ex.get("hooks") if ex else None
        if hooks and gin[0] is not None:
            g = gin[0]
            for fn in tuple(hooks):
                r = fn(g)
                if r is not None:
                    g = r
            gin[0] = g
        return gin
    if node._tensor_hooks:
        for nr, fns in node._tensor_hooks.items():
            if nr < len(gin) and gin[nr] is not None:
                g = gin[nr]
                for fn in tuple(fns):
                    r = fn(g)
                    if r is not None:
                        g = r
                gin[nr] = g
    if node._retain_hooks:
        for nr, fn in tuple(node._retain_hooks.items()):
            if nr < len(gin) and gin[nr] is not None:
                fn(gin[nr])
    return gin


def _call_pre_hooks(node: Node, gin: list) -> list:
    for fn in tuple(node._pre_hooks):
        r = fn(tuple(gin))
        if r is not None:
            gin = list(r)
    return gin


def _apply(node: Node, gin: list, i: int = 0):
    """Run one node; observers with ``on_backward`` (profilers) time it as a backward range."""
    obs = STATE.observers
    if i == len(obs):
        return node.apply(gin)
    if hasattr(obs[i], "on_backward"):
        return obs[i].on_backward(node, lambda: _apply(node, gin, i + 1))
    return _apply(node, gin, i + 1)


def run_backward(roots, grads, retain_graph: bool, create_graph: bool, inputs=None, accumulate: bool = True):
    """Run the graph backward from ``roots`` (tensors) seeded with ``grads``.

    Without ``inputs``, every leaf reached gets its gradient accumulated into
    ``.grad``. With ``inputs`` and ``accumulate=False`` (``autograd.grad``) the
    gradients w.r.t. ``inputs`` are returned; with ``accumulate=True``
    (``backward(inputs=...)``) only those inputs' ``.grad`` change.
    """
    root_edges = []
    for i, t in enumerate(roots):
        edge = gradient_edge(t)
        if edge[0] is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        root_edges.append(edge)
    capture_at: dict = {}
    captures = None
    late_accumulate = []
    if inputs is None:
        deps = _dependencies([n for n, _ in root_edges])
        needed = active = deps  # every reachable node runs; membership is all that is asked of these
    else:
        post = reachable_nodes([n for n, _ in root_edges])
        exec_targets = set()
        captures = [None] * len(inputs)
        for k, t in enumerate(inputs):
            node, nr = gradient_edge(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            if accumulate and isinstance(node, AccumulateGrad):
                exec_targets.add(node)
            else:
                capture_at.setdefault(node, []).append((nr, k))
                if accumulate:
                    late_accumulate.append((k, t))
        needed = set()
        for n in post:
            if n in exec_targets or any(
                c is not None and (c in needed or c in capture_at) for c, _ in n.next_functions
            ):
                needed.add(n)
        active = needed | (capture_at.keys() & set(post))
        deps = dict.fromkeys(active, 0)
        for n in needed:
            for c, _ in n.next_functions:
                if c is not None and c in active:
                    deps[c] += 1

    buffers: dict = {}
    for (node, nr), g in zip(root_edges, grads):
        if node not in active:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs()
        buf[nr] = _add(buf[nr], g)

    tie = itertools.count()
    ready = []
    for node in buffers:
        if deps[node] == 0:
            heapq.heappush(ready, (-node._seq, next(tie), node))

    prev = LOCAL.grad_enabled
    _set_grad(create_graph)
    prev_callbacks, ENGINE._callbacks = ENGINE._callbacks, []
    names_were_off, NAME_STATE.off = NAME_STATE.off, True  # derivative rules work on positions, not names
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            gin = buffers.pop(node, None)
            if gin is None:
                gin = [None] * node._num_outputs()
            if type(node) is AccumulateGrad:
                ex = node.variable._extra
                if ex and ex.get("hooks"):
                    gin = _call_tensor_hooks(node, gin)
            elif node._tensor_hooks or node._retain_hooks:
                gin = _call_tensor_hooks(node, gin)
            if capture_at and node in capture_at:
                for nr, k in capture_at[node]:
                    captures[k] = _add(captures[k], gin[nr] if nr < len(gin) else None)
            if node not in needed:
                continue
            if node._pre_hooks:
                gin = _call_pre_hooks(node, gin)
            observed = STATE.observers
            if isinstance(node, AccumulateGrad):
                if observed:
                    _apply(node, gin)
                else:
                    node.apply(gin)
                if node._post_hooks:
                    for fn in tuple(node._post_hooks):
                        fn((), tuple(gin))
                continue
            if isinstance(node, OpNode) and (gin[0] is None if len(gin) == 1 else all(g is None for g in gin)):
                out = (None,) * len(node.next_functions)
            else:
                out = _apply(node, gin) if observed else node.apply(gin)
            if node._post_hooks:
                for fn in tuple(node._post_hooks):
                    r = fn(tuple(out), tuple(gin))
                    if r is not None:
                        out = tuple(r)
            if not retain_graph:
                node.release()
            if len(out) != len(node.next_functions):
                raise RuntimeError(
                    f"Function {node.name()} returned an incorrect number of gradients (expected "
                    f"{len(node.next_functions)}, got {len(out)})"
                )
            for (child, nr), g in zip(node.next_functions, out):
                if child is None or child not in active:
                    continue
                if g is not None:
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child._num_outputs()
                    held = buf[nr]
                    buf[nr] = g if held is None else held + g
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    heapq.heappush(ready, (-child._seq, next(tie), child))
        for k, t in late_accumulate:
            accumulate_grad(t, captures[k])
        callbacks = ENGINE._callbacks
        while callbacks:
            callbacks.pop(0)()
    finally:
        ENGINE._callbacks = prev_callbacks
        NAME_STATE.off = names_were_off
        _set_grad(prev)
    return captures
