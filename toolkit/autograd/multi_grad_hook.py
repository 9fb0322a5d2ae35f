"""``register_multi_grad_hook``: one hook over the gradients of several tensors, per backward pass.

Each backward pass (a "graph task") is told apart by the engine's list of final
callbacks, a fresh object per ``run_backward``; per-task state is dropped by a
final callback, so nothing outlives the pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from ..tensor import Tensor
from . import engine as _engine
from .handle import RemovableHandle


def current_graph_task():
    """The running backward pass's identity (an object alive for the whole pass), or None outside backward."""
    return _engine.ENGINE._callbacks


def _task_or_raise():
    task = current_graph_task()
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


class _MultiHandle(RemovableHandle):
    """Removes every per-tensor hook of one ``register_multi_grad_hook``."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __getstate__(self) -> tuple:
        return self.handles

    def __setstate__(self, state: tuple) -> None:
        self.handles = state


def register_multi_grad_hook(
    tensors: Sequence[Tensor],
    fn: Callable,
    *,
    mode: Literal["all", "any"] = "all",
) -> RemovableHandle:
    """Call ``fn`` once per backward with the gradients of ``tensors`` (``"all"``) or with the first one (``"any"``).

    ``"all"``: ``fn(grads)`` with one entry per tensor, None for tensors whose
    gradient was not computed in this pass. It runs as soon as every tensor's
    gradient is in; when some are not part of the pass, at the end of the pass
    (PyTorch runs it when the last gradient the engine will compute arrives).
    ``"any"``: ``fn(grad)`` with the first gradient computed in the pass.
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        return _MultiHandle(_register_all(tensors, fn))
    return _MultiHandle(_register_any(tensors, fn))


def _register_all(tensors: tuple, fn: Callable) -> tuple:
    n = len(tensors)
    pending: dict = {}  # id(task) -> [task, grads, count]

    def finish(key: int) -> None:
        entry = pending.pop(key, None)
        if entry is not None:
            fn(entry[1])

    def inner_hook(idx: int) -> Callable:
        def hook(grad: Tensor) -> None:
            task = _task_or_raise()
            key = id(task)
            entry = pending.get(key)
            if entry is None or entry[0] is not task:
                entry = pending[key] = [task, [None] * n, 0]
                _engine.ENGINE.queue_callback(lambda: finish(key))
            entry[1][idx] = grad
            entry[2] += 1
            if entry[2] == n:
                finish(key)

        return hook

    return tuple(t.register_hook(inner_hook(i)) for i, t in enumerate(tensors))


def _register_any(tensors: tuple, fn: Callable) -> tuple:
    ran: dict = {}  # id(task) -> task, for the passes in which fn already ran

    def hook(grad: Tensor) -> None:
        task = _task_or_raise()
        key = id(task)
        if ran.get(key) is task:
            return
        ran[key] = task
        _engine.ENGINE.queue_callback(lambda: ran.pop(key, None))
        fn(grad)

    return tuple(t.register_hook(hook) for t in tensors if t.requires_grad)


__all__ = ["register_multi_grad_hook"]
