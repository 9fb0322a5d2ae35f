"""Graph nodes (``grad_fn``): one per recorded op application, plus AccumulateGrad for leaves.

An op's node applies the op's registered derivative, so eager autograd and
the JIT's symbolic differentiation share one source of derivatives. Names,
``next_functions`` and hook methods follow PyTorch's (``MulBackward0``,
``((AccumulateGrad, 0), (None, 0))``, ``register_hook``, ``register_prehook``).
"""

from __future__ import annotations

import itertools

import numpy as np

from .._core.names import set_names
from ..factories import tensor
from ..ops import api
from ..tensor import Tensor, wrap
from .grad_mode import LOCAL
from .handle import ListHookHandle
from .naming import is_per_call, node_name
from .saved import SavedTensor
from .views import replay_view

_sequence = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward."
)


class Node:
    """Base of all graph nodes; ``next_functions`` are PyTorch's ``(node, input_nr)`` pairs, one per input."""

    __slots__ = (
        "next_functions",
        "_tensor_hooks",
        "_retain_hooks",
        "_pre_hooks",
        "_post_hooks",
        "_seq",
        "_metadata",
        "__weakref__",
        "__dict__",
    )

    def __init__(self):
        self.next_functions = ()
        self._tensor_hooks = None  # output_nr -> hooks of the tensor this output is (Tensor.register_hook)
        self._retain_hooks = None  # output_nr -> retain_grad hook, run after the tensor hooks
        self._pre_hooks = None  # register_prehook: fn(grad_outputs) before the node runs
        self._post_hooks = None  # register_hook: fn(grad_inputs, grad_outputs) after it runs
        self._seq = next(_sequence)
        self._metadata = None

    def name(self) -> str:
        return type(self).__name__

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return replacement grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return ListHookHandle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node runs; may return replacement grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return ListHookHandle(self._pre_hooks, fn)

    def _tensor_hooks_for(self, output_nr: int) -> list:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        return self._tensor_hooks.setdefault(output_nr, [])

    def _num_outputs(self) -> int:
        return 1

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def apply(self, grads: list) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def release(self) -> None:
        """Drop what was saved for backward (after a backward without ``retain_graph``)."""

    def __call__(self, *grads):
        return self.apply(list(grads))


def accumulate_grad(t: Tensor, grad) -> None:
    """Add ``grad`` into ``t.grad`` (in place unless the graph of the gradient itself is being built)."""
    if grad is None:
        return
    if LOCAL.grad_enabled or grad.is_sparse or (t._grad is not None and t._grad.is_sparse):
        t._grad = grad.clone() if t._grad is None else _add_grads(t._grad, grad)  # sparse grads sum as sparse
    elif t._grad is None:
        # The same gradient tensor may reach several leaves (``a + b``): each leaf gets its own copy.
        t._grad = wrap(grad._data.copy(), None, grad.device)  # C order (numpy's default and CudaArray's)
    else:
        g = t._grad
        if g._data.flags.writeable and g._data.shape == grad._data.shape and g._data.dtype == grad._data.dtype:
            np.add(g._data, grad._data, out=g._data)
            g._storage.version += 1
        else:
            t._grad = g + grad
    ex = t._extra
    if ex:
        if "names" in ex:  # a gradient carries its tensor's names
            set_names(t._grad, ex["names"])
        for hook in tuple(ex.get("post_accumulate_hooks", ())):
            hook(t)


def _add_grads(g, grad):
    """``g + grad``; a dense and a sparse gradient sum to a dense one, whichever came first."""
    return grad + g if g.is_sparse and not grad.is_sparse else g + grad


class AccumulateGrad(Node):
    """Sink for a leaf tensor: adds the incoming gradient into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        super().__init__()
        self.variable = variable
        self._seq = float("inf")  # like PyTorch, leaves accumulate as soon as their gradient is complete

    def apply(self, grads: list) -> tuple:
        accumulate_grad(self.variable, grads[0])
        return ()


class OpNode(Node):
    """A recorded op: inputs' metadata, saved tensors, and the op whose derivative to apply."""

    __slots__ = ("op", "_saved", "_attrs", "_input_meta", "_needs", "_n_outputs", "_output_meta", "_had_saved")

    def _num_outputs(self) -> int:
        return self._n_outputs

    def _unpack_saved(self) -> dict:
        if self._saved is None:
            if self._had_saved:
                raise RuntimeError(FREED_MESSAGE)
            return dict(self._attrs)
        kwargs = dict(self._attrs)
        for name, s in self._saved.items():
            if type(s) is SavedTensor:
                kwargs[name] = s.unpack(self)
            elif isinstance(s, SavedTensor):
                kwargs[name] = s.unpack(self)
            elif isinstance(s, list):
                kwargs[name] = [e.unpack(self) if isinstance(e, SavedTensor) else e for e in s]
            elif isinstance(s, tuple):
                kwargs[name] = tuple(e.unpack(self) if isinstance(e, SavedTensor) else e for e in s)
            else:
                kwargs[name] = s
        return kwargs

    def apply(self, grads: list) -> tuple:
        op = self.op
        kwargs = self._unpack_saved()
        if op.wants_needs_input_grad:
            kwargs["needs_input_grad"] = self._needs
        if self._n_outputs == 1:
            g = grads[0]
            complex_grad = isinstance(g, Tensor) and g._data.dtype.kind == "c"  # (no call on the hot path)
        else:
            g = tuple(self._zeros_for(i) if gi is None else gi for i, gi in enumerate(grads))
            complex_grad = op.holomorphic_rule and _any_complex(g)
        if complex_grad and op.holomorphic_rule:
            res = _conjugated(op.derivative(_conjugated(g), **kwargs))
        else:
            res = op.derivative(g, **kwargs)
        if type(res) is not tuple and (
                not isinstance(res, (tuple, list)) or (len(op.diff_args) == 1 and isinstance(res, list))):
            res = (res,)
        flat = res
        for r in res:
            if isinstance(r, list):  # the gradients of a Tensor[] argument, one per tensor
                flat = []
                for r in res:
                    if isinstance(r, list):
                        flat.extend(r)
                    else:
                        flat.append(r)
                break
        out = []
        for r, meta, need in zip(flat, self._input_meta, self._needs):
            if r is not None and (meta is None or not need):
                r = None
            elif r is not None:
                if type(r) is not Tensor and not isinstance(r, Tensor):
                    r = tensor(r, dtype=meta[1])
                shape, dt = meta
                if r._data.shape != shape:
                    r = r.sum_to_size(shape) if r._data.ndim >= len(shape) else r.expand(shape)
                rdt = r._data.dtype
                if rdt is not dt.np and rdt != dt.np:
                    if rdt.kind == "c" and not dt.is_complex:
                        r = api.real(r)  # a real input's gradient is the real part (PyTorch's rule)
                    r = r.to(dt)
            out.append(r)
        if len(out) < len(self._input_meta):
            out.extend([None] * (len(self._input_meta) - len(out)))
        return tuple(out)

    def _zeros_for(self, i: int):
        meta = self._output_meta[i]
        if meta is None:
            return None

        return api.zeros(meta[0], dtype=meta[1])

    def release(self) -> None:
        self._saved = None

    def __getattr__(self, name: str):
        # ``grad_fn._saved_self`` / ``grad_fn._saved_result``, as PyTorch exposes saved values.
        if name.startswith("_saved_"):
            key = name[7:]
            if self._saved is not None and key in self._saved:
                s = self._saved[key]
                if isinstance(s, SavedTensor):
                    return s.unpack(self)
                if isinstance(s, (list, tuple)):
                    return type(s)(e.unpack(self) if isinstance(e, SavedTensor) else e for e in s)
                return s
            if key in self._attrs:
                return self._attrs[key]
            if self._had_saved and self._saved is None:
                raise RuntimeError(FREED_MESSAGE)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def _any_complex(g) -> bool:
    if isinstance(g, tuple):
        return any(_any_complex(e) for e in g)
    return isinstance(g, Tensor) and g._data.dtype.kind == "c"


def _conjugated(v):
    """``v`` with every complex tensor in it conjugated (tuples and lists of gradients too)."""
    if isinstance(v, (tuple, list)):
        return type(v)(_conjugated(e) for e in v)
    if isinstance(v, Tensor) and v._data.dtype.kind == "c":
        return api.conj_physical(v)
    return v


_node_classes: dict = {}  # class name -> class: ops sharing a name share the class, as in PyTorch


def node_class(op, bound: list | None = None, outputs: tuple | None = None) -> type:
    """The grad_fn class for one call of ``op``, named as PyTorch names it (``naming.node_name``:
    ``MulBackward0`` for ``mul``, ``multiply`` and ``mul_``; ``ConvolutionBackward0`` for ``conv2d``). A name
    that does not depend on the call is cached on the op, where the recorder looks first."""
    name = node_name(op, bound, outputs)
    cls = _node_classes.get(name)
    if cls is None:
        cls = type(name, (OpNode,), {"__slots__": ()})
        _node_classes[name] = cls
    if not is_per_call(op):
        op._node_class = cls
    return cls


class CopySlices(Node):
    """History of a base tensor after an in-place op wrote into one of its views.

    The gradient w.r.t. the base passes through unchanged outside the view; inside
    the view it goes through the in-place op's own node (``fn``). ``chain`` replays
    the view on the gradient, so any view op (slicing, ``view``, ``transpose``...)
    is handled by its registry definition.
    """

    __slots__ = ("fn", "chain", "base_meta")

    def __init__(self, fn: Node, chain: tuple, base_meta: tuple):
        super().__init__()
        self.fn = fn
        self.chain = chain
        self.base_meta = base_meta

    def apply(self, grads: list) -> tuple:
        if self.fn is None:
            raise RuntimeError(FREED_MESSAGE)
        grad = grads[0]
        n_rest = len(self.next_functions) - 1
        if grad is None:
            return (None,) * (n_rest + 1)
        result = api.clone(grad)
        grad_slice = replay_view(result, self.chain)
        res = self.fn.apply([api.clone(grad_slice)])
        g_self = res[0] if res else None
        if g_self is None:
            g_self = api.zeros_like(grad_slice)
        grad_slice.copy_(g_self)
        return (result, *res[1:1 + n_rest])

    def release(self) -> None:
        # PyTorch drops the in-place op's node itself, so even one that saved nothing cannot run twice.
        self.fn = None
