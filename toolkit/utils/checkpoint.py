"""Activation checkpointing, as ``torch.utils.checkpoint``: trade compute for memory.

A checkpointed region keeps only its inputs; the activations it would save for
backward are dropped and the region runs again when backward needs them, under
the random state it first ran with (so dropout draws the same masks).

Two variants, as in PyTorch:

- ``use_reentrant=True``: the region is one custom ``Function`` that runs the
  function under ``no_grad`` and, in its backward, reruns it with grad enabled
  and calls ``backward`` on that fresh graph (a backward inside a backward).
- ``use_reentrant=False`` (recommended): the region runs normally under
  ``saved_tensors_hooks`` whose pack hook keeps a placeholder instead of the
  tensor; the first unpack in a backward pass reruns the region once, collects
  the tensors it saves in the same order, and hands each one out. It works with
  ``autograd.grad``, keyword arguments and nested checkpoints.

Example::

    out = checkpoint(block, x, use_reentrant=False)       # block's activations are not kept
    out.sum().backward()                                   # block runs again here
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .. import cuda as _cuda
from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..random import fork_rng, get_rng_state, set_rng_state
from ..tensor import Tensor
from ._pytree import tree_tensors
from .checkpoint_recompute import (
    DEFAULT_DETERMINISM_MODE,
    SUPPRESSED_MESSAGE,
    CheckpointError,
    checkpoint_without_reentrant,
    noop_context_fn,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)
from .checkpoint_selective import (
    SAC_IGNORED_OPS,
    CheckpointPolicy,
    SelectiveCheckpointContext,
    create_selective_checkpoint_contexts,
)

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "get_device_states",
    "set_device_states",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "DefaultDeviceType",
    "set_checkpoint_debug_enabled",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
]

def detach_variable(inputs: tuple) -> tuple:
    """Tensors detached from their history, keeping ``requires_grad``: the fresh leaves of a recomputation."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type whose random state checkpoint saves when no argument is on a device ('cuda' or 'cpu')."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cuda" if _cuda.is_available() else "cpu"
        return DefaultDeviceType._default_device_type


def _infer_device_type(*args) -> str:
    types = [t.device.type for t in tree_tensors(args) if t.device.type != "cpu"]
    if len(set(types)) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of devices. "
            "Device state will only be saved for devices of a single device type, and the remaining "
            "devices will be ignored. Consequently, if any checkpointed functions involve randomness, "
            "this may result in incorrect gradients. (Note that if CUDA devices are among the devices "
            "detected, it will be prioritized; otherwise, the first device encountered will be selected.)"
            f"\nDevice types: {sorted(set(types))} first device type: {types[0]}", stacklevel=2
        )
    if not types:
        return DefaultDeviceType.get_device_type()
    return "cuda" if "cuda" in types else types[0]


def get_device_states(*args) -> tuple[list, list]:
    """The device ids of the tensor arguments on devices, and each one's random state.

    toolkit draws device random numbers with the host generator, so each state
    is that generator's; restoring the CPU state already restores them.
    """
    ids = [t.get_device() for t in tree_tensors(args) if t.device.type not in ("cpu", "meta")]
    return ids, [get_rng_state() for _ in ids]


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore the random states ``get_device_states`` returned."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    for _, state in zip(devices, states):
        set_rng_state(state)


class CheckpointFunction(Function):
    """The reentrant variant: forward without a graph, backward reruns the function and backpropagates it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, grad in zip(outputs, args):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(grad)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


_CHECKPOINT_WARNING = (
    "toolkit.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)
_SEQUENTIAL_WARNING = (
    "toolkit.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. In "
    "version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)


def _reentrant_or_warn(use_reentrant: bool | None, message: str) -> bool:
    """PyTorch 2.13 still defaults to the reentrant variant, with a warning, when ``use_reentrant`` is not given."""
    if use_reentrant is None:
        warnings.warn(message, stacklevel=3)
        return True
    return use_reentrant


def _unexpected(kwargs: dict):
    raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))


def checkpoint(
    function: Callable,
    *args,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple] = noop_context_fn,
    determinism_check: str = DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    **kwargs,
):
    """Run ``function(*args, **kwargs)`` without keeping its activations; they are recomputed in backward.

    Args:
        use_reentrant: pass it explicitly (a warning otherwise, and True, as PyTorch 2.13);
            False is recommended (works with ``autograd.grad``, keyword arguments, ``context_fn``).
        context_fn: returns two context managers, around the forward and around the recomputation.
        determinism_check: ``"default"`` checks recomputed tensors' shapes, dtypes and devices; ``"none"``.
        debug: on a mismatch, list the ops of the forward and of the recomputation.
        preserve_rng_state (keyword): recompute under the forward's random state (default True).
    """
    use_reentrant = _reentrant_or_warn(use_reentrant, _CHECKPOINT_WARNING)
    _infer_device_type(*args)  # warns, as PyTorch does, when the arguments span several device types
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        _unexpected(kwargs)
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = checkpoint_without_reentrant(
        function, preserve, context_fn, determinism_check, debug, early_stop, *args, **kwargs
    )
    next(gen)
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(SUPPRESSED_MESSAGE) from stop
        raise
    try:
        next(gen)
    except StopIteration:
        return ret
    raise AssertionError(
        "toolkit.utils.checkpoint: expected context_fn generator to yield exactly twice, but it yielded more than twice."
    )


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list) in ``segments`` chunks, all but the last checkpointed."""
    use_reentrant = _reentrant_or_warn(use_reentrant, _SEQUENTIAL_WARNING)
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        _unexpected(kwargs)

    def run_function(start: int, end: int, functions) -> Callable:
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    if not isinstance(functions, (list, tuple)) and callable(getattr(functions, "children", None)):
        functions = list(functions.children())  # nn.Sequential's modules, in order
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
