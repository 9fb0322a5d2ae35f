"""Automatic differentiation: ``backward``, ``grad``, grad modes, custom Functions and gradcheck."""

from __future__ import annotations

from collections.abc import Sequence

from ..dispatch import STATE
from ..tensor import Tensor
from . import recording as _recording
from .engine import run_backward
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

STATE.record = _recording.record


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs, create_graph: bool):
    from ..factories import ones_like

    grads = []
    for i, t in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None and i < len(grad_outputs) else None
        if g is None:
            if not t._requires_grad:
                raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.is_floating_point():
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
            g = ones_like(t)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradient must be a Tensor or None, got {type(g).__name__}")
            if g.shape != t.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] has a "
                    f"shape of {tuple(t.shape)}."
                )
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(tensors):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    grads = _make_grads(tensors, grad_tensors, create_graph)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        captured = run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs)
        from .engine import accumulate_into_leaf

        prev = STATE.grad_enabled
        STATE.grad_enabled = create_graph
        try:
            for t, g in zip(inputs, captured):
                accumulate_into_leaf(t, g)
        finally:
            STATE.grad_enabled = prev
        return
    run_backward(tensors, grads, retain_graph, create_graph)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """Gradients of ``outputs`` with respect to ``inputs``, returned rather than accumulated."""
    outputs = _as_tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs, create_graph)
    result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                from ..factories import zeros_like

                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
        out.append(g)
    return tuple(out) if not single else (out[0],)


__all__ = [
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "Sequence",
]

from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402, F401
