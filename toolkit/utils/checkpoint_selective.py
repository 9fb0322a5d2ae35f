"""Selective activation checkpointing: a policy picks which ops' outputs are kept instead of recomputed.

``create_selective_checkpoint_contexts(policy)`` returns the two contexts that
``checkpoint(..., use_reentrant=False, context_fn=...)`` runs the forward and
the recomputation under. Both are dispatcher observers: in the forward each
op's output is stored when the policy says save; in the recomputation the
same op (counted per op, in call order) returns the stored output instead of
running, and autograd records it as the op would have, so the recomputation
saves the same tensors as the forward did.

Ops are the registry's ``OpDef``s (``toolkit.ops.registry.get("mm")``), where
PyTorch passes ``torch.ops.aten.mm.default``. Compositions of other ops are
transparent (their inner ops are seen), as PyTorch's composite ops are to a
dispatch mode; in-place ops always run.

Example::

    mm = toolkit.ops.registry.get("mm")
    ctx_fn = functools.partial(create_selective_checkpoint_contexts, [mm])
    out = checkpoint(fn, x, use_reentrant=False, context_fn=ctx_fn)   # mm's outputs kept, the rest recomputed
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable

from ..dispatch import STATE
from ..ops import registry as R
from ..ops.registry import OpDef
from ..tensor import Tensor, wrap
from ._pytree import tree_rebuild, tree_tensors

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "SAC_IGNORED_OPS"]

SAC_IGNORED_OPS = {R.get("detach")}


class SelectiveCheckpointContext:
    """What a policy function is told about the op call: its output (``is_recompute`` is always False)."""

    def __init__(self, *, is_recompute: bool, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """``*_SAVE``: keep the op's output; ``*_RECOMPUTE``: recompute it; ``*_CPU_OFFLOAD``: kept (as SAVE here)."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVE_POLICIES = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE, CheckpointPolicy.MUST_CPU_OFFLOAD,
                  CheckpointPolicy.PREFER_CPU_OFFLOAD)
_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = (
    "This can happen if the operations in the checkpointed region are nondeterministic or depend on global state "
    "that changed between forward and backward."
)


def _policy_from_bool(b: bool) -> CheckpointPolicy:
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


def _transparent(op: OpDef) -> bool:
    return op.composite is not None or op.kind is R.INPLACE or op in SAC_IGNORED_OPS


def _alias(t: Tensor) -> Tensor:
    """A history-free alias sharing storage and version counter, without going through the dispatcher."""
    return wrap(t._data, t._storage)


class _Observing:
    """Context manager that puts ``self`` among the dispatcher's observers."""

    def __enter__(self):
        self.func_counter = defaultdict(int)
        STATE.observers.append(self)
        return self

    def __exit__(self, *exc) -> None:
        STATE.observers.remove(self)

    def next_index(self, op: OpDef) -> int:
        idx = self.func_counter[op]
        self.func_counter[op] += 1
        return idx


class _CachingMode(_Observing):
    """The forward: runs each op and stores its output where the policy says save."""

    def __init__(self, policy_fn: Callable, storage: dict) -> None:
        self.policy_fn = policy_fn
        self.storage = storage

    def on_call(self, op: OpDef, bound: list, run: Callable):
        out = run()
        if _transparent(op):
            return out
        idx = self.next_index(op)
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), op, *bound)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in _SAVE_POLICIES:
            tensors = tree_tensors(out)
            self.storage[op][idx] = (out, [(_alias(t), t._storage.version) for t in tensors])
        else:
            self.storage[op][idx] = _RECOMPUTE
        return out


class _CachedMode(_Observing):
    """The recomputation: stored outputs are returned (and recorded by autograd), the others recomputed."""

    def __init__(self, storage: dict, allow_cache_entry_mutation: bool = False) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def on_call(self, op: OpDef, bound: list, run: Callable):
        if _transparent(op):
            return run()
        idx = self.next_index(op)
        op_storage = self.storage.get(op)
        if op_storage is None:
            raise RuntimeError(f"{op.name} encountered during backward but not found in storage. {_SAC_MISMATCH_MSG}")
        entry = op_storage.get(idx)
        if entry is None:
            raise RuntimeError(
                f"{op.name} invocation index {idx} encountered during backward but not found in storage. "
                f"{_SAC_MISMATCH_MSG}"
            )
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once on any region computed "
                "under selective activation checkpoint."
            )
        if entry is _RECOMPUTE:
            return run()
        op_storage[idx] = _CONSUMED
        structure, cached = entry
        fresh = []
        for t, version in cached:
            if t._storage.version != version and not self.allow_cache_entry_mutation:
                raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
            fresh.append(_alias(t))
        out = tree_rebuild(structure, iter(fresh))
        if STATE.grad_enabled and op.derivative is not None and _needs_grad(op, bound):
            STATE.record(op, bound, out, None)
        return out


def _needs_grad(op: OpDef, bound: list) -> bool:
    for i in op.diff_args:
        v = bound[i]
        for e in v if isinstance(v, list) else (v,):
            if isinstance(e, Tensor) and e._requires_grad:
                return True
    return False


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False) -> tuple:
    """The ``(forward, recompute)`` contexts of selective checkpointing, for ``checkpoint``'s ``context_fn``.

    ``policy_fn_or_list``: ``policy_fn(ctx, op, *args) -> CheckpointPolicy | bool``, or a list of ops
    whose outputs are kept (``MUST_SAVE``; every other op ``PREFER_RECOMPUTE``).
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpDef):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. ")
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)
