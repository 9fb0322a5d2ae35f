"""``allow_mutation_on_saved_tensors``: in-place changes to saved tensors clone them first, instead of an error.

Inside the block every saved tensor is packed as a handle to the original
(a saved-tensor hook), and a dispatcher observer sees each in-place op before
it writes: any saved tensor sharing the written storage at its current version
is cloned, and backward unpacks the clone. Storage is compared as a whole (a
write into one view clones every saved view of that buffer), which is safe.

Example::

    with allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()                # b's saved value is cloned before sin_ writes
        out.backward()          # uses the value b had when it was saved
"""

from __future__ import annotations

import contextlib
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator

from ..dispatch import STATE
from ..ops import registry as R
from ..tensor import Tensor
from .saved_hooks import saved_tensors_hooks

_enabled = False


def _tid(t: Tensor) -> tuple:
    return (id(t), id(t._storage), t._storage.version)


def _sid(t: Tensor) -> tuple:
    return (id(t._storage), t._storage.version)


class _Handle:
    pass


class _AllowMutationOnSavedContext:
    """The originals of the tensors saved in the block, and the clones taken before they were written."""

    def __init__(self) -> None:
        self.cloned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.sid_to_tid: defaultdict = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


class _swap_with_cloned(saved_tensors_hooks):
    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack_hook(tensor: Tensor) -> _Handle:
            tid = _tid(tensor)
            ctx.sid_to_tid[_sid(tensor)].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            return handle

        def unpack_hook(handle: _Handle) -> Tensor:
            error_msg = (
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                "in which the graph was originally recorded."
            )
            if not _enabled:
                raise AssertionError(error_msg)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(error_msg)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


class _CloneArgBeforeMutate:
    """Dispatcher observer: before an in-place op writes ``self``, clone the saved tensors it would change."""

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        self.ctx = ctx

    def on_call(self, op, bound: list, run: Callable):
        if op.kind is R.INPLACE and isinstance(bound[0], Tensor):
            self._maybe_clone(bound[0])
        return run()

    def _maybe_clone(self, t: Tensor) -> None:
        ctx = self.ctx
        for tid in ctx.sid_to_tid.get(_sid(t), ()):
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:
                continue  # freed by a backward already, or cloned already
            ctx.cloned[handle] = ctx.original[handle].clone()
            del ctx.original[handle]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Let tensors saved for backward be modified in place: each is cloned before its first change.

    Run the forward and the backward inside the same block; its state is cleared on exit.
    """
    global _enabled
    ctx = _AllowMutationOnSavedContext()
    observer = _CloneArgBeforeMutate(ctx)
    with _swap_with_cloned(ctx):
        STATE.observers.append(observer)
        try:
            if _enabled:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _enabled = True
            yield ctx
        finally:
            STATE.observers.remove(observer)
            ctx.clear()
            _enabled = False
