"""Custom differentiable functions: ``toolkit.autograd.Function``, with PyTorch's API.

Example::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)          # y.grad_fn is an ExpBackward node

As in PyTorch, the ``ctx`` is the backward node itself, named
``<ClassName>Backward``; ``forward`` runs without recording, and ``backward``
runs under the engine's grad mode, so it is differentiable again when built
from differentiable ops (``create_graph=True``).
"""

from __future__ import annotations

import functools
from typing import Any

from .._core.shape import broadcast_shapes_or_none
from ..ops import api
from ..tensor import Tensor, wrap
from .grad_mode import LOCAL, no_grad
from .graph import gradient_edge
from .node import FREED_MESSAGE, Node
from .recording import check_inplace
from .saved import SavedTensor


class FunctionCtx:
    """What ``forward``/``setup_context`` may call on ``ctx``."""

    __slots__ = ()

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare tensors the forward modified in place: their history moves onto this node."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that get no gradient (their grads reach backward as zeros)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ctx) of one ``Function.apply``; its class is ``<Function name>Backward``."""

    _forward_cls: type

    def __init__(self):
        Node.__init__(self)
        self.to_save = ()
        self.dirty_tensors = ()
        self.non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None
        self._had_saved = False
        self._output_meta = ()
        self._input_meta = ()
        self._arg_is_tensor = ()

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            if self._had_saved:
                raise RuntimeError(FREED_MESSAGE)
            return tuple(self.to_save)
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    def _num_outputs(self) -> int:
        return len(self._output_meta)

    def release(self) -> None:
        if self._saved is not None:
            self._saved = None

    def apply(self, grads: list) -> tuple:
        if self.materialize_grads:
            grads = [
                api.zeros(m[0], dtype=m[1]) if g is None and m is not None else g
                for g, m in zip(grads, self._output_meta)
            ]
        res = self._forward_cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n_args = len(self._arg_is_tensor)
        name = type(self).__name__
        if len(res) < n_args or any(r is not None for r in res[n_args:]):
            raise RuntimeError(
                f"function {name} returned an incorrect number of gradients (expected {n_args}, got {len(res)})"
            )
        out = []
        for i, (r, is_t) in enumerate(zip(res, self._arg_is_tensor)):
            if not is_t:
                if r is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position {i + 1}, but the "
                        "corresponding forward input was not a Variable"
                    )
                continue
            meta = self._input_meta[len(out)]
            if r is not None and meta is not None:
                r = _validate_grad(name, len(out), r, meta)
            out.append(r if meta is not None else None)
        return tuple(out)


def _validate_grad(name: str, index: int, g, meta):
    """PyTorch's check of a returned gradient: same shape, or one that sums down to it; cast to the input dtype."""
    if not isinstance(g, Tensor):
        raise TypeError(f"function {name} returned a gradient of type {type(g).__name__} at index {index}")
    shape, dt = meta
    if g._data.shape != shape:
        if broadcast_shapes_or_none(shape, g._data.shape) != g._data.shape:
            raise RuntimeError(
                f"Function {name} returned an invalid gradient at index {index} - got {list(g._data.shape)} but "
                f"expected shape compatible with {list(shape)}"
            )
        g = g.sum_to_size(shape)
    if g._data.dtype != dt.np:
        g = g.to(dt)
    return g


class FunctionMeta(type):
    """Gives each Function subclass its own backward node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom autograd functions: define static ``forward`` and ``backward``, call ``apply``."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html"
            "#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it "
            "with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` without recording, then connect its outputs to a ``<Name>Backward`` node."""
        if cls.backward is Function.backward and cls.vjp is not Function.vjp:
            cls.backward = cls.vjp
        ctx = cls._backward_cls()
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        recording = LOCAL.grad_enabled and any(needs)
        custom_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if custom_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if not recording:
            return output
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx._arg_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        ctx.next_functions = tuple(gradient_edge(a) for a in tensor_args)
        ctx._input_meta = tuple(
            (a._data.shape, a.dtype) if a._data.dtype.kind in "fc" else None for a in tensor_args
        )
        return _wrap_outputs(ctx, tensor_args, output)


def _wrap_outputs(ctx: BackwardCFunction, inputs: list, output):
    """Give the outputs their history; dirty inputs are rebased onto the node, returned inputs aliased."""
    single = not isinstance(output, tuple)
    outs = (output,) if single else output
    dirty = {id(t) for t in ctx.dirty_tensors}
    non_diff = {id(t) for t in ctx.non_differentiable}
    input_ids = {id(t) for t in inputs}
    wrapped, metas = [], []
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            wrapped.append(o)
            metas.append(None)
            continue
        if id(o) in dirty:
            check_inplace(None, o)
            t = o
        elif id(o) in input_ids:
            t = wrap(o._data, o._storage)  # returned unchanged: an alias with its own history
        else:
            t = o
        differentiable = id(o) not in non_diff and o._data.dtype.kind in "fc"
        metas.append((o._data.shape, o.dtype) if o._data.dtype.kind in "fc" else None)
        if differentiable:
            t.grad_fn = ctx
            t._requires_grad = True
            t._output_nr = k
        elif t is not o or id(o) not in dirty:
            t._requires_grad = False
        wrapped.append(t)
    ctx._output_meta = tuple(metas)
    by_id = {id(o): w for o, w in zip(outs, wrapped) if isinstance(o, Tensor)}
    out_nr = {id(o): k for k, o in enumerate(outs) if isinstance(o, Tensor)}
    saved = []
    for t in ctx.to_save:
        if t is None:
            saved.append(None)
        elif id(t) in out_nr and by_id[id(t)].grad_fn is ctx:
            saved.append(SavedTensor(by_id[id(t)], is_output=True, output_nr=out_nr[id(t)]))
        else:
            saved.append(SavedTensor(t))
    ctx._saved = saved
    ctx._had_saved = bool(saved)
    ctx.to_save = ()
    return wrapped[0] if single else tuple(wrapped)


def once_differentiable(fn):
    """Mark a ``backward`` as not differentiable: it runs without recording, and differentiating it again raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not LOCAL.grad_enabled:
            return outputs
        requires = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not requires:
            return outputs

        err = DelayedError()
        err.next_functions = tuple(gradient_edge(a) for a in requires)
        single = not isinstance(outputs, tuple)
        res = []
        for o in (outputs,) if single else outputs:
            if isinstance(o, Tensor) and o._data.dtype.kind in "fc":
                o = wrap(o._data, o._storage)
                o.grad_fn = err
                o._requires_grad = True
            res.append(o)
        return res[0] if single else tuple(res)

    return wrapper


class DelayedError(Node):
    """Stands in the graph of a ``once_differentiable`` backward; running it is the error."""

    def apply(self, grads: list) -> tuple:
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]
