"""Device times for the profiler: CUDA events around every op and fused kernel that runs on ``cuda``.

A profile that asks for CUDA (``ProfilerActivity.CUDA``, ``use_device="cuda"``)
records with ``CudaRecorder`` instead of the plain ``Recorder``; the choice is
made once, when the session starts, so a CPU-only profile never pays for
anything here. Each op whose tensors (or requested device) are on ``cuda``
gets two timed ``toolkit.cuda.Event`` objects recorded on the current stream,
one just before and one just after it, which is how PyTorch times devices
without CUPTI (its "legacy" event-based timing). Nothing is read back while
recording: the profile synchronizes the device once when it stops and only
then reads every pair's ``elapsed_time``, so the GPU keeps running ahead of
the host as it would unprofiled.

A reference event recorded at start, right after a synchronize, ties the
device clock to the host's: an op's device start is the reference's host time
plus ``ref.elapsed_time(start)``; the Chrome trace draws it on the GPU track.
"""

from __future__ import annotations

import threading
import time

from .. import cuda
from ..tensor import Tensor
from ._recorder import _DETAIL, _END, _FUSED, _OP, _START, Recorder, _nbytes, fusion_group_name


def _on_cuda(op, bound: list) -> bool:
    """Whether the op runs on a CUDA device: a tensor argument there, or a ``device=`` that names it."""
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, Tensor):
            if v._storage.device.type == "cuda":
                return True
        elif isinstance(v, list):
            for e in v:
                if isinstance(e, Tensor) and e._storage.device.type == "cuda":
                    return True
    if op.device_arg is not None:
        return getattr(bound[op.device_arg], "type", None) == "cuda"
    return False


class CudaRecorder(Recorder):
    """A ``Recorder`` that also times the device side of every op and fused kernel run on ``cuda``."""

    use_device = "cuda"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending: list = []  # (raw index, start event, end event) until the profile stops
        self._spans: dict = {}  # raw index -> (device start, perf_counter ns; duration, us)
        self._fused_on_cuda: dict = {}
        self._stream = None
        self._ref = None
        self._ref_ns = 0
        self.device_index = 0

    def _event(self):
        e = cuda.Event(enable_timing=True)
        e.record(self._stream)
        return e

    # -- activation ----------------------------------------------------------------------------
    def start(self) -> None:
        if self._running:
            return

        cuda.synchronize()  # an idle device: the reference event runs when it is recorded
        # toolkit's kernels queue on the default stream; numba's simulator has no default_stream() to ask
        self._stream = None if cuda.simulated() else cuda.current_stream()
        self.device_index = cuda.current_device()
        self._ref = self._event()
        self._ref_ns = time.perf_counter_ns()
        super().start()

    def stop(self) -> None:
        if not self._running:
            return
        super().stop()

        cuda.synchronize()  # the one wait of the profile: every recorded event has completed after it
        ref, ref_ns = self._ref, self._ref_ns
        for i, start, end in self._pending:
            self._spans[i] = (ref_ns + ref.elapsed_time(start) * 1e6, max(start.elapsed_time(end), 0.0) * 1e3)
        self._pending.clear()

    # -- ranges --------------------------------------------------------------------------------
    def on_call(self, op, bound: list, run):
        """As ``Recorder.on_call``; an op on ``cuda`` also gets CUDA events around it."""
        if not _on_cuda(op, bound):
            return Recorder.on_call(self, op, bound, run)
        tid = threading.get_native_id()
        tops = self._tops
        parent = tops.get(tid, -1)
        raw = self._raw
        i = len(raw)
        ev = [op.qualified_name, 0, 0, parent, tid, _OP, None]
        tops[tid] = i
        raw.append(ev)
        if self._detail:
            ev[_DETAIL] = self._details(op, bound)
        start = self._event()
        ev[_START] = time.perf_counter_ns()
        try:
            out = run()
        finally:
            ev[_END] = time.perf_counter_ns()
            self._pending.append((i, start, self._event()))
            tops[tid] = parent
        if self.profile_memory:  # its outputs live on the device: PyTorch counts them as CUDA memory
            d = ev[_DETAIL] or {}
            d["device_mem"] = _nbytes(out, bound)
            ev[_DETAIL] = d
        return out

    def on_fusion_group(self, node, run):
        """As ``Recorder.on_fusion_group``; a group compiled for ``cuda`` also gets CUDA events around it."""
        on_cuda = self._fused_on_cuda.get(node)
        if on_cuda is None:
            from ..jit.codegen.cuda_fused_kernel import group_device  # lazy: CUDA profiles only

            on_cuda = self._fused_on_cuda[node] = group_device(node) == "cuda"
        if not on_cuda:
            return Recorder.on_fusion_group(self, node, run)
        info = self._groups.get(node)
        if info is None:
            info = self._groups[node] = fusion_group_name(node)
        start = self._event()
        i = self.push(info[0], _FUSED, {"fused": info[1]})
        try:
            return run()
        finally:
            self.pop(i)
            self._pending.append((i, start, self._event()))

    # -- results -------------------------------------------------------------------------------
    def _attach_device_times(self, events: list) -> None:
        """Give each timed event its ``Kernel`` and device start; children first, so a parent's span
        is never shorter than the device time of the ops it called (timer rounding aside). Device
        memory is summed up the tree as host memory is."""
        base = self._base_ns
        spans = self._spans
        raw = self._raw
        for i in range(len(events) - 1, -1, -1):
            if self.profile_memory:
                e = events[i]
                d = raw[i][_DETAIL]
                e.device_memory_usage = (sum(c.device_memory_usage for c in e.cpu_children) if e.cpu_children
                                         else (d or {}).get("device_mem", 0))
            span = spans.get(i)
            if span is None:
                continue
            e = events[i]
            dev_start_ns, dur = span
            inner = sum(c.device_time_total for c in e.cpu_children)
            e.append_kernel(e.name, self.device_index, max(dur, inner))
            e.is_legacy = True
            e.device_index = self.device_index
            e.device_start_us = max((dev_start_ns + base) / 1000.0, e.time_range.start)


__all__ = ["CudaRecorder"]
