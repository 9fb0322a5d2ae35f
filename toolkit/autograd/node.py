"""Graph nodes (``grad_fn``): one per recorded op application, plus AccumulateGrad for leaves.

An op's node applies the op's registered derivative, so eager autograd and
the JIT's symbolic differentiation share one source of derivatives.
"""

from __future__ import annotations

import itertools

from ..tensor import Tensor
from .saved import SavedTensor

_sequence = itertools.count()


class Node:
    """Base of all graph nodes; ``next_functions`` mirrors PyTorch's ``(node, input_nr)`` pairs."""

    __slots__ = ("next_functions", "_pre_hooks", "_post_hooks", "_seq", "metadata", "__weakref__", "__dict__")

    def __init__(self):
        self.next_functions = ()
        self._pre_hooks = None  # output_nr -> list of tensor hooks on the gradient flowing in
        self._post_hooks = None
        self._seq = next(_sequence)

    def name(self) -> str:
        return type(self).__name__

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return new grad_inputs."""
        from .hooks import RemovableHandle

        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        from .hooks import RemovableHandle

        lst = self._hooks_for(-1)
        lst.append(fn)
        return RemovableHandle(lst, fn)

    def _hooks_for(self, output_nr: int) -> list:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return self._pre_hooks.setdefault(output_nr, [])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def apply(self, grads: list) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, *grads):
        return self.apply(list(grads))


class AccumulateGrad(Node):
    """Sink for a leaf tensor: adds the incoming gradient into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        super().__init__()
        self.variable = variable

    def apply(self, grads: list) -> tuple:
        from .engine import accumulate_into_leaf

        accumulate_into_leaf(self.variable, grads[0])
        return ()


class OpNode(Node):
    """A recorded op: inputs' metadata, saved tensors, and the op whose derivative to apply."""

    __slots__ = ("op", "_saved", "_attrs", "_input_meta", "_needs", "_n_outputs", "_output_meta", "_freed")

    def apply(self, grads: list) -> tuple:
        op = self.op
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward."
            )
        kwargs = dict(self._attrs)
        for name, s in self._saved.items():
            if isinstance(s, SavedTensor):
                kwargs[name] = s.unpack(self)
            elif isinstance(s, list):
                kwargs[name] = [e.unpack(self) if isinstance(e, SavedTensor) else e for e in s]
            elif isinstance(s, tuple) and s and isinstance(s[0], SavedTensor):
                kwargs[name] = tuple(e.unpack(self) for e in s)
            else:
                kwargs[name] = s
        if op.wants_needs_input_grad:
            kwargs["needs_input_grad"] = self._needs
        if self._n_outputs == 1:
            g = grads[0]
        else:
            g = tuple(self._zeros_for(i) if gi is None else gi for i, gi in enumerate(grads))
        res = op.derivative(g, **kwargs)
        if not isinstance(res, (tuple, list)) or (len(op.diff_args) == 1 and isinstance(res, list)):
            res = (res,)
        flat = []
        for r in res:
            if isinstance(r, list):
                flat.extend(r)
            else:
                flat.append(r)
        out = []
        for r, meta in zip(flat, self._input_meta):
            if r is not None and meta is not None:
                shape, dt = meta
                if r._data.shape != shape:
                    r = r.sum_to_size(shape)
                if r._data.dtype != dt.np:
                    r = r.to(dt)
            out.append(r)
        if len(out) < len(self._input_meta):
            out.extend([None] * (len(self._input_meta) - len(out)))
        return tuple(out)

    def _zeros_for(self, i: int):
        meta = self._output_meta[i]
        if meta is None:
            return None
        from ..factories import zeros

        return zeros(meta[0], dtype=meta[1])

    def release(self) -> None:
        self._saved = None
        self._freed = True

    @property
    def saved_tensors(self):
        return tuple(v for v in (self._saved or {}).values() if isinstance(v, SavedTensor))


_node_classes: dict = {}


def node_class(op) -> type:
    """The grad_fn class for an op, named as PyTorch names them (``MulBackward0``)."""
    cls = _node_classes.get(op)
    if cls is None:
        base = op.name.rstrip("_").lstrip("_")
        camel = "".join(p[:1].upper() + p[1:] for p in base.split("_"))
        cls = type(f"{camel}Backward0", (OpNode,), {"__slots__": ()})
        _node_classes[op] = cls
    return cls
