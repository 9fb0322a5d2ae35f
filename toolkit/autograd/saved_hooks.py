"""Default hooks for saved tensors: how what a node saves for backward is packed and unpacked.

Every tensor an op's node (or a custom Function's ``ctx.save_for_backward``)
keeps for backward becomes a ``SavedTensor``; while a ``saved_tensors_hooks``
block is active its constructor hands the tensor to ``pack_hook`` and keeps
only the packed object, and ``unpack_hook`` gives a tensor back when backward
needs it. This is how activations are moved to the CPU (``save_on_cpu``) or
dropped and recomputed (``toolkit.utils.checkpoint``). With no block active the
constructor pays one check of the thread's hook stack.

Example::

    with saved_tensors_hooks(lambda t: t.numpy().copy(), lambda a: toolkit.from_numpy(a)):
        y = x.exp()          # the result is saved as a numpy copy
    y.sum().backward()       # unpack_hook turns it back into a tensor
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from ..tensor import Tensor, wrap
from .grad_mode import no_grad


class _HookState(threading.local):
    """The thread's stack of ``(pack_hook, unpack_hook)`` pairs and the message that forbids pushing one."""

    def __init__(self):
        self.stack: list = []
        self.disabled_message: str | None = None


HOOKS = _HookState()

PACK_MODIFIED_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need "
    "to perform in-place operations on the input to a pack hook."
)


class PackedTensor:
    """A saved tensor as its pack hook left it, with the autograd metadata the unpacked tensor gets back.

    As in PyTorch, the unpacked tensor is a new tensor over the hook's result: an
    output of the node gets the node as ``grad_fn``, another non-leaf its own
    ``grad_fn``, a leaf its accumulator (held weakly, as PyTorch does), so double
    backward through hooked saved tensors reaches the original leaves.
    """

    __slots__ = ("packed", "unpack_hook", "grad_fn", "output_nr", "requires_grad", "accumulator")

    def __init__(self, t: Tensor, is_output: bool, output_nr: int):
        pack_hook, self.unpack_hook = HOOKS.stack[-1]
        self.output_nr = output_nr if is_output else t._output_nr
        self.requires_grad = t._requires_grad
        self.grad_fn = None if is_output else t.grad_fn
        acc = t._extra.get("grad_accumulator") if t._extra and t.grad_fn is None else None
        self.accumulator = None if acc is None else weakref.ref(acc)
        version = t._storage.version
        with no_grad():
            self.packed = pack_hook(t)
        if t._storage.version != version:
            raise RuntimeError(PACK_MODIFIED_MESSAGE)

    def unpack(self, node, is_output: bool) -> Tensor:
        data = self.unpack_hook(self.packed)
        if not isinstance(data, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                f"{type(data).__name__}"
            )
        t = wrap(data._data, data._storage)
        if is_output or self.grad_fn is not None:
            t.grad_fn = node if is_output else self.grad_fn
            t._output_nr = self.output_nr
            t._requires_grad = True
        elif self.requires_grad:
            t._requires_grad = True
            acc = self.accumulator() if self.accumulator is not None else None
            if acc is not None:
                t._extras()["grad_accumulator"] = acc
        return t


def push_hooks(pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
    if HOOKS.disabled_message is not None:
        raise RuntimeError(HOOKS.disabled_message)
    HOOKS.stack.append((pack_hook, unpack_hook))


def pop_hooks() -> None:
    HOOKS.stack.pop()


class saved_tensors_hooks:
    """Pack every tensor saved for backward in this block with ``pack_hook``; ``unpack_hook`` restores it.

    ``pack_hook(tensor) -> Any`` runs under ``no_grad`` when the tensor is saved;
    ``unpack_hook(packed) -> Tensor`` runs when backward (or ``grad_fn._saved_*``)
    needs it. Nested blocks: only the innermost pair applies. The packed object
    should not hold the tensor itself (``lambda x: x.detach()``, not ``lambda x: x``),
    or the graph keeps itself alive through it.
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        push_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        pop_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Keep the tensors saved in this block on the CPU, copied back to their device for backward.

    Trades device memory for transfers; tensors already on the CPU are saved as
    they are (a copy only where the device differs). ``pin_memory`` is accepted
    for PyTorch's signature: toolkit's host copies are ordinary memory.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Forbid saved-tensor hooks in this block: registering one raises ``RuntimeError(error_message)``.

    For features that cannot work with hooks; it raises at once if a hook is already active.
    """
    prev = HOOKS.disabled_message
    try:
        HOOKS.disabled_message = error_message
        if HOOKS.stack:
            raise RuntimeError(error_message)
        yield
    finally:
        HOOKS.disabled_message = prev


def saved_tensors_hooks_enabled() -> bool:
    """Whether hooks may be registered on this thread (``torch._C._autograd._saved_tensors_hooks_is_enabled``)."""
    return HOOKS.disabled_message is None


def current_hooks() -> tuple | None:
    """The innermost ``(pack_hook, unpack_hook)`` in force on this thread, or None."""
    return HOOKS.stack[-1] if HOOKS.stack else None


__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]
