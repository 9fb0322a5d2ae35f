"""``toolkit.profiler``: op-level profiling in ``torch.profiler``'s shapes.

Every op dispatch, backward node (``autograd::engine::evaluate_function: MulBackward0``)
and fused JIT kernel (``prim::FusionGroup_0: mul+sigmoid``) run inside a profile is
one event; ``record_function`` adds named ranges.

    with toolkit.profiler.profile(record_shapes=True) as prof:
        loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # chrome://tracing or ui.perfetto.dev

With ``activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`` each op run on
``cuda`` also gets its device time from CUDA events (``device_time_total``,
``self_device_time_total``), the table gets PyTorch's ``Self CUDA`` columns
(``sort_by="cuda_time_total"``), and the trace a GPU track linked to the ops.
"""

from __future__ import annotations

from ._device_type import DeviceType
from ._session import record_function
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
    "ProfilerActivity", "kineto_available", "DeviceType", "record_function", "EventList", "FunctionEvent",
    "FunctionEventAvg",
]
