"""Automatic differentiation: ``backward``, ``grad``, grad modes, custom Functions and gradcheck."""

from __future__ import annotations

import numpy as np

from .._core.state import STATE, TensorAutograd
from ..ops import api
from ..tensor import Tensor, wrap
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
from .hooks import register_post_accumulate_grad_hook, register_tensor_hook, retain_grad

STATE.record = _recording.record
STATE.check_inplace = _recording.check_inplace


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs) -> list:
    """Seed gradients: the given ones (shape-checked), or ones for scalar outputs."""
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(grad_outputs)} tensors and {len(outputs)} gradients")
    grads = []
    for i, t in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None else None
        if g is None:
            if t._requires_grad:
                if t.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not t.is_floating_point():
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                    )
                g = wrap(np.ones(t._data.shape, t._data.dtype), None, t.device) if t.device.type == "cpu" \
                    else t.new_ones(t.shape)
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradient must be a Tensor or None, got {type(g).__name__}")
        elif g.shape != t.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape of "
                f"{t.shape}."
            )
        elif g.is_floating_point() != t.is_floating_point():
            raise RuntimeError(
                f"For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch "
                f"in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a dtype of {t.dtype}."
            )
        grads.append(g)
    return grads


def _check_roots(tensors) -> None:
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward(): tensors must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on (or of ``inputs``)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif inputs is not None:
        inputs = tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grad_tensors = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    _check_roots(tensors)
    grads = _make_grads(tensors, grad_tensors)
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """Gradients of ``outputs`` with respect to ``inputs``, returned rather than accumulated.

    Only the part of the graph between ``outputs`` and ``inputs`` runs.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    grad_outputs = _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    _check_roots(outputs)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, accumulate=False)
    return _finish(inputs, result, allow_unused, materialize_grads)


def _finish(inputs, result, allow_unused: bool, materialize_grads: bool) -> tuple:
    out = []
    for t, g in zip(inputs, result):
        if g is None:
            if materialize_grads:
                g = api.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. Set "
                    "allow_unused=True if this is the desired behavior."
                )
        out.append(g)
    return tuple(out)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``is_grads_batched``: one backward per slice of the leading dim of ``grad_outputs``, stacked."""
    if grad_outputs is None:
        raise RuntimeError("is_grads_batched=True requires grad_outputs")
    n = grad_outputs[0].shape[0]
    per = []
    for b in range(n):
        gos = [g[b] for g in grad_outputs]
        per.append(grad(outputs, inputs, gos, retain_graph=True if b < n - 1 else retain_graph,
                        create_graph=create_graph, allow_unused=True))
    out = []
    for i, t in enumerate(inputs):
        gs = [p[i] for p in per]
        if all(g is None for g in gs):
            if materialize_grads:
                out.append(api.zeros((n, *t.shape), dtype=t.dtype))
                continue
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. Set "
                    "allow_unused=True if this is the desired behavior."
                )
            out.append(None)
            continue
        out.append(api.stack([g if g is not None else api.zeros_like(t) for g in gs]))
    return tuple(out)


class set_detect_anomaly:
    """Accepted for compatibility: errors already name the op that failed; ``check_nan`` is recorded only."""

    def __init__(self, mode: bool, check_nan: bool = True):
        global _anomaly
        self.prev = _anomaly
        _anomaly = (bool(mode), bool(check_nan))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        global _anomaly
        _anomaly = self.prev
        return False


class detect_anomaly(set_detect_anomaly):
    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)


_anomaly = (False, True)


def is_anomaly_enabled() -> bool:
    return _anomaly[0]


def is_anomaly_check_nan_enabled() -> bool:
    return _anomaly[1]


STATE.autograd = TensorAutograd(backward=backward, register_hook=register_tensor_hook, retain_grad=retain_grad,
                                register_post_accumulate_grad_hook=register_post_accumulate_grad_hook)

from . import function, functional, graph, profiler  # noqa: E402
from .function import Function, FunctionCtx, once_differentiable  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from .variable import Variable  # noqa: E402

__all__ = [
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "Variable",
    "set_detect_anomaly",
    "detect_anomaly",
    "function",
    "graph",
]
