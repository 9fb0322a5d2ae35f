"""Non-reentrant activation checkpointing: saved tensors dropped in the forward, recomputed on first unpack.

The checkpointed call runs under ``_checkpoint_hook``: each tensor its ops save
becomes a ``_Holder`` (nothing of the tensor is kept but its metadata). The
first unpack in a backward pass reruns the call under ``_recomputation_hook``,
which routes the tensors the rerun saves, in order, to the holders; each holder
is handed its tensor once, and the pass's recomputed tensors are dropped when
the pass ends. ``toolkit.utils.checkpoint.checkpoint(use_reentrant=False)`` is
the public face.
"""

from __future__ import annotations

import contextlib
import uuid
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator

from ..autograd.engine import ENGINE
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..autograd.multi_grad_hook import current_graph_task
from ..autograd.saved import SavedTensor
from ..random import fork_rng, get_rng_state, set_rng_state
from ..tensor import Tensor
from .checkpoint_debug import debug_context_and_callback

DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Override ``checkpoint(debug=...)`` inside the block (None defers to each call's own setting)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether non-reentrant recomputation stops as soon as every saved tensor is recomputed (default True)."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    try:
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def noop_context_fn() -> tuple:
    """The default ``context_fn``: no context around the forward or its recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


SUPPRESSED_MESSAGE = (
    "toolkit.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised during the "
    "checkpointed forward. This is not supported because checkpoint cannot return a value for a failed forward."
)


def _internal_assert(cond) -> None:
    if not cond:
        raise AssertionError(
            "Something went unexpectedly wrong in activation checkpoint. Please report this bug by filing an issue "
            "to PyTorch."
        )


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`toolkit.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with toolkit.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint-debug mode globally.
"""


class _Handle:
    pass


class _Holder:
    """What the pack hook saves in place of a tensor: a handle per backward pass to its recomputed value."""

    def __init__(self) -> None:
        self.handles: dict = {}


def _default_meta_extractor(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns: dict = {
    DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _StopRecomputationError(Exception):
    pass


class _CheckpointFrame:
    """One checkpointed call: its inputs, a weak holder per saved tensor, the recomputed tensors per pass."""

    def __init__(self, recompute_fn, early_stop: bool, unpack_error_cb, metadata_fn) -> None:
        self.recompute_fn = recompute_fn
        self.saved_args: list = []
        self.weak_holders: list = []
        self.recomputed: defaultdict = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict = defaultdict(int)
        self.is_recomputed: defaultdict = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.x_metadatas: list = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args) -> None:
        # Saved as a node saves tensors: version-checked, and packed by an enclosing checkpoint's hooks.
        self.saved_args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def forget(self, gid) -> None:
        """Drop what one backward pass recomputed, once that pass is over."""
        self.recomputed.pop(gid, None)
        self.recomp_counter.pop(gid, None)
        self.is_recomputed.pop(gid, None)
        for ref in self.weak_holders:
            holder = ref()
            if holder is not None:
                holder.handles.pop(gid, None)

    def check_recomputed_tensors_match(self, gid) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "toolkit.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}"
            )
        mismatched = ""
        for idx, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            _internal_assert(holder.handles.get(gid) in self.recomputed[gid])
            x_meta = self.x_metadatas[idx]
            recomputed_meta = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if x_meta != recomputed_meta:
                mismatched += (
                    f"tensor at position {idx}:\nsaved metadata: {x_meta}\nrecomputed metadata: {recomputed_meta}\n"
                )
        if mismatched:
            raise CheckpointError(
                "toolkit.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{mismatched}.\n"
                f"{_debug_tip_msg}"
            )


class _recomputation_hook(saved_tensors_hooks):
    """During a recomputation: each saved tensor goes, in order, to the holder of the one the forward saved."""

    def __init__(self, target_frame_ref: weakref.ref, gid) -> None:
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = target_frame_ref()
            _internal_assert(frame is not None)
            recomp_idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if recomp_idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:
                    # Recomputing a region whose forward is still running (a nested checkpoint's backward).
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "toolkit.utils.checkpoint: trying to save more tensors during "
                    "recomputation than during the original forward pass.\n"
                    f"{_debug_tip_msg}"
                )
            holder = frame.weak_holders[recomp_idx]()
            if holder is not None:
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


def _current_gid():
    """The running backward pass, whose recomputation is shared by all unpacks in it (or a fresh id outside)."""
    task = current_graph_task()
    return int(uuid.uuid4()) if task is None else task


class _checkpoint_hook(saved_tensors_hooks):
    """During the forward: a placeholder per saved tensor; on unpack, recompute once per pass and hand out."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            task = _current_gid()
            gid = id(task) if isinstance(task, list) else task
            if not frame.is_recomputed[gid]:
                if isinstance(task, list):
                    ENGINE.queue_callback(lambda: frame.forget(gid))
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                raise CheckpointError(
                    "toolkit.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                    "unpacked once. If you are calling ctx.saved_tensors in backward, make sure "
                    "to do so only once. Otherwise please open an issue with details on your use case."
                )
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        if frame.unpack_error_cb is not None:
            def unpack_hook_with_error_cb(holder):
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)

            super().__init__(pack_hook, unpack_hook_with_error_cb)
        else:
            super().__init__(pack_hook, unpack_hook)


def checkpoint_without_reentrant(
    fn,
    preserve_rng_state: bool = True,
    context_fn: Callable[[], tuple] = noop_context_fn,
    determinism_check: str = DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    *args,
    **kwargs,
):
    """The non-reentrant variant, as a generator: set up, yield while the forward runs, then finish."""
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = debug_context_and_callback()
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError(
            f"determinism_check should be one of {list(_allowed_determinism_checks_to_fns.keys())}, "
            f"but got {determinism_check}"
        )
    metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs) -> None:
        with fork_rng(enabled=preserve_rng_state):
            if preserve_rng_state:
                set_rng_state(fwd_cpu_state)
            with recompute_context:
                fn(*inputs, **kwargs)

    frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
        unpack_error_cb,
        metadata_fn,
    )
    if not is_grad_enabled():
        yield
        return
    frame.save_inputs(*args)
    suppressed = False
    with _checkpoint_hook(frame), forward_context:
        try:
            yield
        except BaseException:
            suppressed = True
            raise
    if suppressed:
        raise RuntimeError(SUPPRESSED_MESSAGE)
    frame.forward_completed = True
