"""``toolkit.autograd.profiler``: the classic profiler API (``torch.autograd.profiler``).

    with toolkit.autograd.profiler.profile(record_shapes=True) as prof:
        y = model(x)
    print(prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total"))

``profile(use_device="cuda")`` also times each op run on ``cuda`` with CUDA
events (``device_time_total``, the table's ``Self CUDA`` columns).
"""

from __future__ import annotations

from contextlib import contextmanager

from ..profiler._device_type import DeviceType
from ..profiler._session import profile, record_function
from ..profiler.events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "DeviceType", "EventList", "FunctionEvent",
           "FunctionEventAvg"]


@contextmanager
def emit_nvtx(enabled: bool = True, record_shapes: bool = False):
    """NVTX ranges for nvprof/Nsight: numba kernels carry no NVTX markers, so this records nothing."""
    yield


@contextmanager
def emit_itt(enabled: bool = True, record_shapes: bool = False):
    """Intel ITT ranges for VTune: not available here, so this records nothing."""
    yield
