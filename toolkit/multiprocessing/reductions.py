"""How tensors and storages travel between processes: as the same shared memory, never as copies.

Registered with ``multiprocessing.reduction.ForkingPickler``, the pickler behind queues, pipes and the
arguments of processes started with ``spawn`` or ``forkserver``. A CPU tensor's storage is first moved into
shared memory (``Storage.share_memory_``, in place), then only its segment travels: an open descriptor
(``file_descriptor`` strategy) or a file name in /dev/shm (``file_system``), plus the tensor's layout. The
receiving process maps the same memory, so writes on either side are seen by the other. Receiving one
segment twice gives one ``Storage`` (so views keep sharing it), found by the file's inode.

CUDA tensors are sent as copies (``Tensor.__reduce_ex__``).
"""

from __future__ import annotations

import threading
import weakref
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .._core.device import CPU
from .._core.storage import SharedSegment, Storage, move_to_shared_memory, shared_segment
from ..nn.parameter import Parameter
from ..tensor import Tensor, wrap
from ._strategy import get_sharing_strategy

__all__ = ["init_reductions", "rebuild_storage_fd", "rebuild_storage_filename", "rebuild_tensor",
           "reduce_storage", "reduce_tensor", "shared_copy"]

# (device, inode) of a segment -> the Storage over it in this process.
_storages: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_lock = threading.Lock()

Layout = tuple[str, tuple[int, ...], tuple[int, ...], int]


def _layout(arr: np.ndarray, seg: SharedSegment) -> Layout:
    offset = arr.__array_interface__["data"][0] - seg.address if arr.size else 0
    return arr.dtype.str, arr.shape, arr.strides, offset


def _array(seg: SharedSegment, layout: Layout) -> np.ndarray:
    dtype, shape, strides, offset = layout
    return np.ndarray(shape, np.dtype(dtype), buffer=seg, offset=offset, strides=strides)


def _shared(storage: Storage) -> SharedSegment:
    """The storage's segment, moving its buffer into one first if needed; remembered by the segment's inode."""
    seg = shared_segment(storage.base)
    if seg is None:
        move_to_shared_memory((storage,))
        seg = shared_segment(storage.base)
    with _lock:
        _storages.setdefault(seg.key(), storage)
    return seg


def _storage_over(seg: SharedSegment, layout: Layout) -> Storage:
    key = seg.key()
    with _lock:
        storage = _storages.get(key)
        if storage is None:
            storage = Storage(_array(seg, layout), CPU)
            _storages[key] = storage
    return storage


def rebuild_storage_fd(fd_handle, layout: Layout) -> Storage:
    """The receiving side of ``file_descriptor`` sharing: map the segment the descriptor opens."""
    return _storage_over(SharedSegment(fd_handle.detach()), layout)


def rebuild_storage_filename(name: str, layout: Layout) -> Storage:
    """The receiving side of ``file_system`` sharing: map the segment by its name in /dev/shm."""
    return _storage_over(SharedSegment.open(name), layout)


def reduce_storage(storage: Storage):
    """Pickles a CPU storage as its shared segment (moved there first if needed) and its buffer's layout."""
    if storage.device is not None and storage.device.type != "cpu":
        raise RuntimeError(f"toolkit.multiprocessing cannot share a {storage.device.type} storage between "
                           "processes; send its tensor (copied) or move it to the CPU first")
    seg = _shared(storage)
    layout = _layout(storage.base, seg)
    if get_sharing_strategy() == "file_system" and seg.name is not None:
        return rebuild_storage_filename, (seg.name, layout)
    return rebuild_storage_fd, (DupFd(seg.fd), layout)


def rebuild_tensor(cls: type, storage: Storage, layout: Layout, requires_grad: bool) -> Tensor:
    """A tensor of ``cls`` over the shared ``storage``, with the sender's offset, shape, strides and dtype."""
    t = wrap(_array(shared_segment(storage.base), layout), storage)
    if issubclass(cls, Parameter):
        return cls(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def shared_copy(tensor: Tensor) -> Tensor:
    """``tensor`` itself if it is already in shared memory or not on the CPU, else a copy of it in a new shared
    segment (same dtype, shape and values; contiguous): what a DataLoader worker sends a fresh batch as.

    Moving a tensor's storage in place (``share_memory_``) must re-point every other tensor viewing it, a scan
    of all the collector's objects; a tensor a worker has just made has no other viewers that matter, so a copy
    (one memcpy) gives the receiving process the same thing at a fraction of the cost, as PyTorch's workers
    collate straight into shared memory."""
    if (type(tensor) is not Tensor or tensor.device.type != "cpu" or tensor.requires_grad
            or shared_segment(tensor._storage.base) is not None):
        return tensor
    data = tensor._data
    seg = SharedSegment.create(data.nbytes)
    moved = np.ndarray(data.shape, data.dtype, buffer=seg)
    moved[...] = data
    return wrap(moved, Storage(moved, CPU))


def reduce_tensor(tensor: Tensor):
    """Pickles a tensor as its (shared) storage and layout; refuses tensors with autograd history."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
            "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
            "the tensor before serializing (e.g., putting it on the queue).")
    if tensor.device.type != "cpu":
        return tensor.__reduce_ex__(2)
    storage = tensor._storage
    seg = _shared(storage)
    return rebuild_tensor, (type(tensor), storage, _layout(tensor._data, seg), tensor.requires_grad)


def init_reductions() -> None:
    """Registers the reductions with ``ForkingPickler`` (done when ``toolkit.multiprocessing`` is imported)."""
    ForkingPickler.register(Storage, reduce_storage)
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
