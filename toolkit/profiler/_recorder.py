"""The recorder: a dispatch observer that times every op call while a profiler runs.

It sits in ``dispatch.STATE.observers`` only while recording, so an idle
profiler costs the dispatcher nothing beyond its one ``if STATE.observers``.
Besides ``on_call`` (every op), the backward engine calls ``on_backward``
around each autograd node and the JIT's fusion-group runner calls
``on_fusion_group`` around each fused kernel; ``record_function`` ranges go
through ``push``/``pop``. Ranges are kept as small lists while recording and
turned into ``FunctionEvent`` objects only when asked for.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from .. import dispatch
from ..tensor import Tensor
from .events import EventList, FunctionEvent

# Recorders currently collecting: ``record_function`` ranges go to each.
ACTIVE: list = []

_NAME, _START, _END, _PARENT, _TID, _KIND, _DETAIL = range(7)
_OP, _ANNOTATION, _BACKWARD, _FUSED, _ENGINE = range(5)
_CATEGORY = {_OP: "cpu_op", _ANNOTATION: "user_annotation", _BACKWARD: "cpu_op", _FUSED: "cpu_op",
             _ENGINE: "cpu_op"}

_TOOLKIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_USER_VISIBLE = (os.path.join(_TOOLKIT_DIR, "nn", "modules") + os.sep,)
_INTERNAL: dict = {}


def _is_internal(filename: str) -> bool:
    r = _INTERNAL.get(filename)
    if r is None:
        r = _INTERNAL[filename] = filename.startswith(_TOOLKIT_DIR) and not filename.startswith(_USER_VISIBLE)
    return r


def python_stack(skip: int = 2) -> list[str]:
    """The caller's Python frames, innermost first, as ``file(line): function`` (toolkit internals left out)."""
    f = sys._getframe(skip)
    out = []
    while f is not None:
        co = f.f_code
        if not _is_internal(co.co_filename):
            out.append(f"{co.co_filename}({f.f_lineno}): {co.co_name}")
        f = f.f_back
    return out


def _nbytes(out, bound) -> int:
    """Bytes newly allocated for an op's outputs (views and in-place results allocate nothing)."""
    if isinstance(out, Tensor):
        if out._base is not None or any(out is b for b in bound):
            return 0
        return out._data.nbytes
    if isinstance(out, (tuple, list)):
        return sum(_nbytes(o, bound) for o in out)
    return 0


def _flops(op, bound: list) -> int:
    """The op's estimated floating point operations for this call (0 for ops without a ``flops`` rule)."""
    if op.flops is None:
        return 0
    try:
        return int(op.flops(bound))
    except (ValueError, TypeError, IndexError):
        return 0


def _dtype_name(v) -> str:
    if isinstance(v, Tensor):
        return v.dtype.__repr__().replace("toolkit.", "")
    if v is None:
        return ""
    return "Scalar" if isinstance(v, (int, float, bool)) else type(v).__name__


def fusion_group_name(node) -> tuple[str, tuple]:
    """``prim::FusionGroup_<i>: mul+sigmoid+add`` (``i`` as the graph printer numbers it) and the ops inside."""
    ops = tuple(n.kind for n in node["Subgraph"].nodes() if n.kind.startswith("aten::"))
    index = 0
    block = node.owning_block
    if block is not None:
        for n in block.nodes:
            if n is node:
                break
            if n.kind == "prim::FusionGroup":
                index += 1
    short = "+".join(k.split("::", 1)[1] for k in ops)
    return f"prim::FusionGroup_{index}: {short}", ops


class Recorder:
    """Collects ranges from the dispatcher, the backward engine, fused kernels and ``record_function``.

    Host times only; ``_cuda.CudaRecorder`` adds device times when a profile asks for CUDA.
    """

    use_device: str | None = None

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self._detail = record_shapes or with_stack or with_flops
        self._raw: list = []
        self._tops: dict = {}
        self._groups: dict = {}
        self._running = False
        self._base_ns = time.time_ns() - time.perf_counter_ns()

    # -- activation ----------------------------------------------------------------------------
    def start(self) -> None:
        if self._running:
            return
        self._running = True
        dispatch.STATE.observers.append(self)
        ACTIVE.append(self)

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        dispatch.STATE.observers.remove(self)
        ACTIVE.remove(self)
        now = time.perf_counter_ns()
        for ev in self._raw:
            if not ev[_END]:
                ev[_END] = now

    # -- ranges --------------------------------------------------------------------------------
    def push(self, name: str, kind: int = _ANNOTATION, detail=None, top: bool = True) -> int:
        """Open a range on this thread. ``top=False``: a range that ends on another thread (an RPC's, when its
        reply arrives): it nests in this thread's current range without becoming the thread's top, so this
        thread's later ranges are not its children; ``close`` ends it."""
        tid = threading.get_native_id()
        parent = self._tops.get(tid, -1)
        i = len(self._raw)
        self._raw.append([name, time.perf_counter_ns(), 0, parent, tid, kind, detail])
        if top:
            self._tops[tid] = i
        return i

    def pop(self, i: int) -> None:
        ev = self.close(i)
        self._tops[ev[_TID]] = ev[_PARENT]

    def close(self, i: int) -> list:
        ev = self._raw[i]
        ev[_END] = time.perf_counter_ns()
        return ev

    def on_call(self, op, bound: list, run):
        """Every op dispatch: one range named ``aten::<op>``."""
        tid = threading.get_native_id()
        tops = self._tops
        parent = tops.get(tid, -1)
        raw = self._raw
        ev = [op.qualified_name, 0, 0, parent, tid, _OP, None]
        tops[tid] = len(raw)
        raw.append(ev)
        if self._detail:
            ev[_DETAIL] = self._details(op, bound)
        ev[_START] = time.perf_counter_ns()
        try:
            out = run()
        finally:
            ev[_END] = time.perf_counter_ns()
            tops[tid] = parent
        if self.profile_memory:
            d = ev[_DETAIL] or {}
            d["mem"] = _nbytes(out, bound)
            ev[_DETAIL] = d
        return out

    def _details(self, op, bound: list) -> dict:
        d: dict = {}
        if self.record_shapes:
            d["shapes"] = [list(v.shape) if isinstance(v, Tensor) else [] for v in bound]
            d["types"] = [_dtype_name(v) for v in bound]
        if self.with_flops:
            d["flops"] = _flops(op, bound)
        if self.with_stack:
            d["stack"] = python_stack(2)
        return d

    def on_backward(self, node, run):
        """One autograd node run by the engine, as PyTorch shows it: ``autograd::engine::evaluate_function:
        MulBackward0`` around ``MulBackward0`` (tagged backward) around the ops its derivative calls."""
        name = node.name()
        if name == "AccumulateGrad":
            name = "torch::autograd::AccumulateGrad"
        outer = self.push("autograd::engine::evaluate_function: " + name, _ENGINE)
        inner = self.push(name, _BACKWARD)
        try:
            return run()
        finally:
            self.pop(inner)
            self.pop(outer)

    def on_fusion_group(self, node, run):
        """One fused kernel run: a single range named after its group, listing the ops inside."""
        info = self._groups.get(node)
        if info is None:
            info = self._groups[node] = fusion_group_name(node)
        i = self.push(info[0], _FUSED, {"fused": info[1]})
        try:
            return run()
        finally:
            self.pop(i)

    # -- results -------------------------------------------------------------------------------
    def events(self) -> EventList:
        """The recorded ranges as ``FunctionEvent`` objects with parents and children linked."""
        base = self._base_ns
        out = []
        for i, (name, start, end, parent, tid, kind, d) in enumerate(self._raw):
            d = d or {}
            e = FunctionEvent(
                i + 1, name, tid, (start + base) / 1000.0, ((end or start) + base) / 1000.0,
                input_shapes=d.get("shapes"), input_types=d.get("types"), stack=d.get("stack"),
                scope=1 if kind == _BACKWARD else 0, cpu_memory_usage=d.get("mem", 0), flops=d.get("flops"),
                is_user_annotation=kind == _ANNOTATION, category=_CATEGORY[kind], fused_ops=d.get("fused"),
                use_device=self.use_device)
            if parent >= 0:
                p = out[parent]
                e.cpu_parent = p
                p.cpu_children.append(e)
            out.append(e)
        if self.profile_memory:
            for e in reversed(out):  # a range's memory is what its children allocated (a composite's output too)
                if e.cpu_children:
                    e.cpu_memory_usage = sum(c.cpu_memory_usage for c in e.cpu_children)
        if self.use_device:
            self._attach_device_times(out)
        return EventList(out, use_device=self.use_device, profile_memory=self.profile_memory,
                         with_flops=self.with_flops)
