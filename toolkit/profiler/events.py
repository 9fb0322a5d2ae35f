"""Profiled events and their summaries, in ``torch.autograd.profiler_util``'s shapes.

A ``FunctionEvent`` is one timed range (an op, a backward node, a fused kernel,
a ``record_function`` block); an ``EventList`` holds them in start order with
each event's parent and children, and summarizes them: ``key_averages()``,
``total_average()``, ``table()``, ``export_chrome_trace()``, ``export_stacks()``.
Times are in microseconds, as in PyTorch.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import NamedTuple

from ._device_type import DeviceType
from .table import build_table, format_time


class Kernel(NamedTuple):
    """Device work attributed to an event: its name, device index and duration (us)."""

    name: str
    device: int
    duration: float


def _deprecated(old: str, new: str, sep: str = ".") -> None:
    warnings.warn(f"`{old}` is deprecated{sep} {'please use' if sep == ',' else 'Use'} `{new}` instead.",
                  FutureWarning, stacklevel=3)


class Interval:
    """A time range in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _FormattedTimes:
    """``cpu_time_str`` and friends, from the ``*_time*`` numbers."""

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def cuda_time(self) -> float:
        _deprecated("cuda_time", "device_time", ",")
        return self.device_time

    @property
    def cpu_time_str(self) -> str:
        return format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self) -> str:
        return format_time(self.device_time)

    @property
    def device_time_total_str(self) -> str:
        return format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self) -> str:
        return format_time(self.self_device_time_total)


class FunctionEvent(_FormattedTimes):
    """One profiled range: name, time range (us), thread, parent and children, shapes, memory, FLOPs.

    ``scope`` is 1 for autograd nodes run by the backward engine (PyTorch's
    ``BACKWARD_FUNCTION``), 0 otherwise; ``fused_ops`` lists the ops inside a
    fused kernel's event. With a device profiled (``use_device="cuda"``), an op
    that ran on the device holds one ``Kernel``: its device time, measured with
    CUDA events around the op (PyTorch's event-based CUDA timing, ``is_legacy``),
    so it includes the device time of the ops it called; ``device_start_us`` places
    that span on the trace's clock. Ranges without their own measurement (Python
    ranges, autograd nodes, host-only ops) sum their children's device time.
    """

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float, *,
                 input_shapes=None, stack=None, scope: int = 0, cpu_memory_usage: int = 0,
                 flops: int | None = None, is_user_annotation: bool = False, category: str = "cpu_op",
                 sequence_nr: int = -1, fused_ops=None, input_types=None, use_device: str | None = None):
        self.id = id
        self.node_id = -1
        self.name = name
        self.overload_name = ""
        self.trace_name = name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = 0
        self.kernels: list[Kernel] = []
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = 0
        self.is_async = False
        self.is_remote = False
        self.sequence_nr = sequence_nr
        self.device_type = DeviceType.CPU
        self.device_index = 0
        self.device_resource_id = thread
        self.is_legacy = False
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.category = category
        self.fused_ops = fused_ops
        self.device_start_us: float | None = None

    def append_kernel(self, name: str, device: int, duration: float) -> None:
        if self.device_type != DeviceType.CPU:
            raise AssertionError("Expected device_type to be CPU")
        self.kernels.append(Kernel(name, device, duration))

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self) -> int:
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    @property
    def self_cuda_memory_usage(self) -> int:
        _deprecated("self_cuda_memory_usage", "self_device_memory_usage")
        return self.self_device_memory_usage

    @property
    def device_time_total(self) -> float:
        """Device time (us): a measured op's own span (its callees' included), else its children's sum."""
        if self.is_async or not self.use_device:
            return 0
        if self.is_legacy:
            return sum(k.duration for k in self.kernels)
        return sum(k.duration for k in self.kernels) + sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        if self.is_async or not self.use_device:
            return 0
        return self.device_time_total - sum(c.device_time_total for c in self.cpu_children)

    @property
    def cuda_time_total(self) -> float:
        _deprecated("cuda_time_total", "device_time_total")
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        _deprecated("self_cuda_time_total", "self_device_time_total")
        return self.self_device_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} {self.use_device}_time={self.device_time_str} "
                f"thread={self.thread} input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"scope={self.scope}>")


class FunctionEventAvg(_FormattedTimes):
    """Sums of the events that share a key (name, and input shapes or stack when grouped by them)."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.self_device_time_total = 0.0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other) -> FunctionEventAvg:
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        if other.use_device:
            self.device_time_total += other.device_time_total
            self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        if other.use_device:
            self.device_memory_usage += other.device_memory_usage
            self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if other.flops is not None:
            self.flops = (self.flops or 0) + other.flops
        return self

    def __iadd__(self, other) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        dev = self.use_device or "cuda"
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{dev}_time={self.self_device_time_total_str} "
                f"{dev}_time={self.device_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} {dev}_memory_usage={self.device_memory_usage}>")


class EventList(list):
    """Profiled events (or their averages) with PyTorch's summary methods."""

    def __init__(self, *args, use_device=None, profile_memory: bool = False, with_flops: bool = False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = True

    def __str__(self) -> str:
        return self.table()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Jupyter's rich display, drawn by toolkit.notebook (imported only when a notebook asks)."""
        from ..notebook.reprs import mimebundle  # optional: notebook views, loaded on demand

        return mimebundle(self, include, exclude)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as PyTorch's text table, sorted by ``sort_by`` (an attribute such as
        ``"self_cpu_time_total"``, ``"cpu_time_total"``, ``"count"``) and cut at ``row_limit`` rows."""
        return build_table(self, sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           profile_memory=self._profile_memory, with_flops=self._with_flops,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path: str, *, max_events: int | None = None) -> None:
        """Write the events as a Chrome trace (gzip-compressed when ``path`` ends in ``.gz``)."""
        from ._chrome import write_chrome_trace  # lazy: trace export (gzip), on demand

        write_chrome_trace(self, path, max_events=max_events)

    def supported_export_stacks_metrics(self) -> list[str]:
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total", "self_privateuse1_time_total"]

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Folded stacks (``outer;inner value`` per line, microseconds) for flamegraph.pl or speedscope."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: " + str(self.supported_export_stacks_metrics()))
        attr = metric.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        translate = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for evt in self:
                if evt.stack:
                    value = getattr(evt, attr)
                    if int(value) > 0:
                        frames = ";".join(entry.translate(translate) for entry in reversed(evt.stack))
                        f.write(f"{frames} {int(value)}\n")

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One ``FunctionEventAvg`` per name (and input shapes / top stack frames when asked)."""
        stats: dict = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [evt.key, str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        out = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops)
        for evt in out:
            evt.stack = evt.stack[:group_by_stack_n] if evt.stack else []
            if not group_by_input_shapes:
                evt.input_shapes = ""
            evt.overload_name = ""
        return out

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one ``FunctionEventAvg`` keyed ``"Total"``."""
        total = FunctionEventAvg()
        for evt in self:
            total.key = None
            total += evt
        total.key = "Total"
        return total
