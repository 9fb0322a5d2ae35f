"""The backward engine: iterative, in dependency order, never recursive.

Gradients flow from the roots through ``next_functions``; a node runs once all
the gradients it will receive have arrived, summed per output. With
``create_graph`` the derivatives themselves are recorded, so higher-order
gradients work.
"""

from __future__ import annotations

import heapq

from ..dispatch import STATE
from ..tensor import Tensor, _wrap
from .node import AccumulateGrad, Node


def accumulate_into_leaf(t: Tensor, grad) -> None:
    """Add ``grad`` into ``t.grad`` (in place unless the graph of the gradient itself is being built)."""
    if grad is None:
        return
    ex = t._extra
    if ex:
        for hook in ex.get("hooks", ()):
            r = hook(grad)
            if r is not None:
                grad = r
    if t._grad is None:
        # The same gradient tensor may reach several leaves (``a + b``): each leaf gets its own copy.
        t._grad = grad.clone() if STATE.grad_enabled else _wrap(grad._data.copy(), None, grad.device)
    elif STATE.grad_enabled:
        t._grad = t._grad + grad
    else:
        t._grad.add_(grad)
    if ex:
        for hook in ex.get("post_accumulate_hooks", ()):
            hook(t)


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _collect(roots: list) -> tuple[dict, list]:
    """Dependency counts of every node reachable from the roots, found with an explicit stack."""
    deps: dict = {}
    seen = set()
    stack = [n for n, _ in roots if n is not None]
    order = []
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    stack.append(nxt)
    return deps, order


def _needed(order: list, targets: set) -> set:
    """Nodes from which some target is reachable: only these run when gradients are asked for inputs."""
    needed = set()
    changed = True
    index = {n: i for i, n in enumerate(order)}
    # Reverse discovery order approximates post-order; iterate to a fixed point for DAG sharing.
    while changed:
        changed = False
        for n in sorted(order, key=index.get, reverse=True):
            if n in needed:
                continue
            if n in targets or any(nxt in needed for nxt, _ in n.next_functions if nxt is not None):
                needed.add(n)
                changed = True
    return needed


def run_backward(roots, grads, retain_graph: bool, create_graph: bool, inputs=None):
    """Run the graph backward from ``roots`` (tensors) seeded with ``grads``.

    With ``inputs`` the gradients of those inputs are returned instead of
    accumulated into ``.grad`` (``autograd.grad``, ``backward(inputs=...)``).
    """
    root_edges = []
    for t, g in zip(roots, grads):
        if t.grad_fn is not None:
            root_edges.append(((t.grad_fn, t._output_nr), g))
        elif t._requires_grad:
            from .recording import grad_accumulator

            root_edges.append(((grad_accumulator(t), 0), g))
        else:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    edges = [e for e, _ in root_edges]
    deps, order = _collect(edges)

    captures = None
    capture_at: dict = {}
    if inputs is not None:
        from .recording import gradient_edge

        captures = [None] * len(inputs)
        for k, t in enumerate(inputs):
            node, nr = gradient_edge(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            capture_at.setdefault(node, []).append((nr, k, t))
        needed = _needed(order, set(capture_at))
    else:
        needed = None

    buffers: dict = {}
    for (node, nr), g in root_edges:
        buf = buffers.setdefault(node, {})
        buf[nr] = _add(buf.get(nr), g)

    ready = []
    for (node, _nr), _g in root_edges:
        if deps.get(node, 0) == 0 and all(node is not r[1] for r in ready):
            heapq.heappush(ready, (-node._seq, id(node), node))

    prev = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    try:
        while ready:
            _, _, node = heapq.heappop(ready)
            buf = buffers.pop(node, {})
            if needed is not None and node not in needed:
                _release_edges(node, deps, ready, buffers)
                continue
            n_out = getattr(node, "_n_outputs", 1)
            gin = [buf.get(i) for i in range(n_out)]
            if node._pre_hooks:
                gin = _run_pre_hooks(node, gin)
            if captures is not None and node in capture_at:
                for nr, k, t in capture_at[node]:
                    g = gin[nr] if nr < len(gin) else None
                    if isinstance(node, AccumulateGrad) and g is not None and t._extra:
                        for hook in t._extra.get("hooks", ()):
                            r = hook(g)
                            if r is not None:
                                g = r
                    captures[k] = _add(captures[k], g)
                if isinstance(node, AccumulateGrad) or not _leads_further(node, needed):
                    _release_edges(node, deps, ready, buffers)
                    continue
            if isinstance(node, AccumulateGrad):
                if captures is None:
                    node.apply(gin)
                continue
            if all(g is None for g in gin):
                out = (None,) * len(node.next_functions)
            else:
                out = node.apply(gin)
                if node._post_hooks:
                    for hook in node._post_hooks:
                        r = hook(out, tuple(gin))
                        if r is not None:
                            out = tuple(r)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(node.next_functions, out):
                if nxt is None:
                    continue
                if g is not None:
                    b = buffers.setdefault(nxt, {})
                    b[nr] = _add(b.get(nr), g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))
    finally:
        STATE.grad_enabled = prev
    return captures


def _leads_further(node, needed) -> bool:
    # A captured non-leaf node still runs when another target lies beyond it.
    return any(nxt is not None and nxt in needed for nxt, _ in node.next_functions)


def _release_edges(node: Node, deps: dict, ready: list, buffers: dict) -> None:
    for nxt, _ in node.next_functions:
        if nxt is None:
            continue
        deps[nxt] -= 1
        if deps[nxt] == 0:
            heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))


def _run_pre_hooks(node: Node, gin: list) -> list:
    hooks = node._pre_hooks
    for nr, fns in hooks.items():
        if nr < 0:
            continue
        for fn in list(fns):
            if gin[nr] is not None:
                r = fn(gin[nr])
                if r is not None:
                    gin[nr] = r
    for fn in list(hooks.get(-1, ())):
        r = fn(tuple(gin))
        if r is not None:
            gin = list(r)
    return gin
