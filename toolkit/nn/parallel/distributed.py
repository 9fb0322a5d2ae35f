"""``DistributedDataParallel``: one model replica per process, gradients averaged over the group in backward.

Gradients are packed into buckets (``bucket_cap_mb``; with the default 25 MB the first one is 1 MiB, as in PyTorch; filled from the last
parameter backwards because backward produces gradients roughly in that order). A hook on each parameter's
gradient accumulation copies the gradient into its bucket; when a bucket is full its non-blocking all-reduce
starts at once, so communication overlaps the rest of backward. A callback queued on the autograd engine waits
for every bucket when backward ends and writes the averaged gradients back into ``.grad``::

    model = DistributedDataParallel(Net())
    loss_fn(model(x), y).backward()     # .grad is the average over the ranks' batches
"""

from __future__ import annotations

import contextlib
import pickle
import time

import numpy as np

from ...autograd import grad_mode
from ...autograd.engine import ENGINE, reachable_nodes
from ...autograd.node import AccumulateGrad
from ...distributed._mpi import mpi
from ...distributed.p2p import allgather_bytes
from ...distributed.process_group import resolve_group
from ...distributed.work import Work, wait_requests
from ...tensor import Tensor, wrap
from ...utils._pytree import tree_tensors
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`toolkit.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
    "participate in calculating loss. Parameters that did not receive grad for rank {rank}: {names}"
)


class _Bucket:
    """Parameters of one dtype whose gradients travel in one all-reduce."""

    def __init__(self, index: int, params: list) -> None:
        self.index = index
        self.params = params
        sizes = [p._data.size for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.flat = np.zeros(int(self.offsets[-1]), dtype=params[0]._data.dtype)
        self.pending = len(params)
        self.work: Work | None = None

    def slice(self, k: int) -> np.ndarray:
        return self.flat[self.offsets[k]:self.offsets[k + 1]]


def _broadcast_arrays(pg, arrays: list, what: str) -> None:
    """Overwrite every rank's arrays with rank 0's, in one coalesced broadcast."""
    if not arrays or pg.size() == 1:
        return
    flat = np.concatenate([np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in arrays])
    wait_requests(pg, [pg._comm.Ibcast(flat, 0)], what)
    pos = 0
    for a in arrays:
        n = a.nbytes
        a[...] = flat[pos:pos + n].view(a.dtype).reshape(a.shape)
        pos += n


class DistributedDataParallel(Module):
    """Data parallelism over a process group, as ``torch.nn.parallel.DistributedDataParallel`` (CPU, MPI)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, **kwargs) -> None:
        super().__init__()
        self.module = module
        pg = resolve_group(process_group)
        if pg is None:
            raise RuntimeError("DistributedDataParallel: this rank is not a member of the given process group")
        self.process_group = pg
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.dim = dim
        self.device_ids = device_ids
        self.output_device = output_device
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._default_cap = bucket_cap_mb is None
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._param_names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._verify_model_across_ranks()
        if init_sync:
            _broadcast_arrays(pg, [p._data for p in self._params] + [b._data for b in module.buffers()],
                              "DistributedDataParallel: broadcasting the initial parameters")
            for t in list(self._params) + list(module.buffers()):
                t._storage.version += 1
        self._build_buckets()
        self._expect_hooks = False
        self._callback_queued = False
        self._unused: set = set()
        self._unfinished: list[str] = []
        self._comm_events: list = []
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in self._params]

    def _verify_model_across_ranks(self) -> None:
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in zip(self._param_names, self._params)]
        every = [pickle.loads(b) for b in allgather_bytes(self.process_group, pickle.dumps(mine),
                                                          "DistributedDataParallel: verifying the model")]
        ref = every[0]
        for r, other in enumerate(every[1:], 1):
            if len(other) != len(ref):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank 0 has {len(ref)} params, "
                                   f"while rank {r} has inconsistent {len(other)} params.")
            for k, (a, b) in enumerate(zip(ref, other)):
                if a[1:] != b[1:]:
                    raise RuntimeError(f"DDP expects same model across all ranks, but Rank 0 has parameter {k} "
                                       f"({a[0]}) of shape {list(a[1])} and {a[2]}, while rank {r} has "
                                       f"{list(b[1])} and {b[2]}.")

    def _build_buckets(self) -> None:
        """Assign parameters (last first) to buckets by dtype and size, as PyTorch's reducer does."""
        open_: dict = {}
        done: list = []
        limit = _FIRST_BUCKET_BYTES if self._default_cap else self.bucket_bytes_cap
        for p in reversed(self._params):
            cur = open_.setdefault(p._data.dtype, [[], 0])
            cur[0].append(p)
            cur[1] += p._data.nbytes
            if cur[1] >= limit:
                done.append(cur[0])
                del open_[p._data.dtype]
                limit = self.bucket_bytes_cap
        done += [c[0] for c in open_.values()]
        self._buckets = [_Bucket(i, ps) for i, ps in enumerate(done)]
        self._where = {id(p): (b, k) for b in self._buckets for k, p in enumerate(b.params)}
        self._next_launch = 0

    def _prepare_iteration(self, outputs) -> None:
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._next_launch = 0
        self._ready_ids: set = set()
        self._comm_events = []
        self._expect_hooks = True
        self._callback_queued = False
        self._unused = set()
        if self.find_unused_parameters:
            nodes = reachable_nodes([t.grad_fn for t in tree_tensors(outputs) if t.grad_fn is not None])
            reached = {id(n.variable) for n in nodes if isinstance(n, AccumulateGrad)}
            self._unused = {id(p) for p in self._params if id(p) not in reached}

    def forward(self, *inputs, **kwargs):
        if self._unfinished:
            names, self._unfinished = self._unfinished, []
            raise RuntimeError(_UNFINISHED.format(rank=self.process_group.rank(), names=", ".join(names)))
        if self.require_forward_param_sync and self.broadcast_buffers:
            bufs = list(self.module.buffers())
            if bufs:
                _broadcast_arrays(self.process_group, [b._data for b in bufs],
                                  "DistributedDataParallel: broadcasting buffers")
                for b in bufs:
                    b._storage.version += 1
        out = self.module(*inputs, **kwargs)
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_iteration(out)
        else:
            self._expect_hooks = False
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients locally (no all-reduce) inside the block; the next synced backward averages
        the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _grad_ready(self, p: Tensor) -> None:
        if not self._expect_hooks or id(p) in self._ready_ids:
            return
        if not self._callback_queued:
            self._callback_queued = True
            ENGINE.queue_callback(self._finalize)
            for q in self._params:
                if id(q) in self._unused:
                    self._mark_ready(q, None)
        self._comm_events.append((time.perf_counter(), "grad", self._where[id(p)][0].index))
        self._mark_ready(p, p._grad)

    def _mark_ready(self, p: Tensor, grad) -> None:
        self._ready_ids.add(id(p))
        b, k = self._where[id(p)]
        dst = b.slice(k)
        if grad is None:
            dst[...] = 0
        else:
            dst[...] = grad._data.reshape(-1)
        b.pending -= 1
        if b.pending == 0:
            while self._next_launch < len(self._buckets) and self._buckets[self._next_launch].pending == 0:
                self._launch(self._buckets[self._next_launch])
                self._next_launch += 1

    def _launch(self, b: _Bucket) -> None:
        pg = self.process_group
        req = pg._comm.Iallreduce(mpi().IN_PLACE, b.flat, mpi().SUM)
        b.work = Work(pg, f"DistributedDataParallel all_reduce of gradient bucket {b.index}", [req])
        self._comm_events.append((time.perf_counter(), "launch", b.index))

    def _finalize(self) -> None:
        """At the end of backward: wait for the buckets, average, and write the gradients back."""
        self._expect_hooks = False
        self._comm_events.append((time.perf_counter(), "backward_end", -1))
        n = self.process_group.size()
        used = None
        if self.find_unused_parameters:
            local = np.array([id(p) not in self._unused for p in self._params], dtype=np.int32)
            used = np.empty_like(local)
            req = self.process_group._comm.Iallreduce(local, used, mpi().MAX)
        for b in self._buckets:
            if b.work is not None:
                b.work.wait()
                b.flat /= n
        self._comm_events.append((time.perf_counter(), "reduced", -1))
        if used is not None:
            wait_requests(self.process_group, [req], "DistributedDataParallel: exchanging used parameters")
        self._unfinished = [name for name, p in zip(self._param_names, self._params)
                            if id(p) not in self._ready_ids]
        for i, p in enumerate(self._params):
            b, k = self._where[id(p)]
            if b.work is None or (used is not None and not used[i]):
                continue
            view = b.slice(k).reshape(p._data.shape)
            if self.gradient_as_bucket_view:
                p._grad = wrap(view)
            elif p._grad is None or not p._grad._data.flags.writeable:
                p._grad = wrap(view.copy())
            else:
                p._grad._data[...] = view
                p._grad._storage.version += 1
