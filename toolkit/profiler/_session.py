"""``record_function`` and the profiling session behind both profiler APIs.

``toolkit.autograd.profiler.profile`` is this session as a context manager;
``toolkit.profiler.profile`` drives one (or a new one per scheduled cycle).

    with toolkit.autograd.profiler.profile(record_shapes=True) as prof:
        with toolkit.autograd.profiler.record_function("forward"):
            y = model(x)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
"""

from __future__ import annotations

import functools
import warnings

from .. import cuda
from . import _recorder
from .events import EventList, FunctionEventAvg


class record_function:
    """A named range in the profile, as context manager or decorator; free when no profiler runs.

    >>> with record_function("preprocess"):
    ...     x = x * 2
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._opened: list = []

    def __enter__(self) -> record_function:
        if _recorder.ACTIVE:
            self._opened = [(r, r.push(self.name)) for r in _recorder.ACTIVE]
        return self

    def __exit__(self, *exc) -> None:
        for r, i in self._opened:
            r.pop(i)
        self._opened = []

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


def _checked_device(use_device: str | None) -> str | None:
    """``use_device`` as PyTorch's profiler takes it: unknown names and absent devices warn and become None."""
    if use_device is None:
        return None
    if use_device not in ("cuda", "xpu", "mtia", "hpu"):
        warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=3)
        return None
    if use_device == "cuda":
        if cuda.is_available():
            return "cuda"
    if use_device == "mtia":
        raise AssertionError("Legacy MTIA profiling is not supported. Requires use_kineto=True on MTIA devices.")
    warnings.warn(f"{use_device.upper()} is not available, disabling {use_device.upper()} profiling", stacklevel=3)
    return None


class profile:
    """Op-level profiler (``torch.autograd.profiler.profile``): every op, backward node and fused kernel
    run inside the block becomes a ``FunctionEvent``.

    ``use_device="cuda"`` (or the deprecated ``use_cuda=True``) also times every op run on
    ``cuda`` with CUDA events (see ``_cuda``); without a GPU it warns and records CPU times
    only, as PyTorch does. ``profile_memory`` counts the
    bytes of each op's newly allocated outputs; ``with_flops`` estimates FLOPs of matrix
    products, convolutions, ``mul`` and ``add``; ``with_stack`` records the Python frames
    outside toolkit (``file(line): function``) of each op call.
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config=None, acc_events: bool = False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        self.use_device = _checked_device(use_device)
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.entered = False
        self.function_events: EventList | None = None
        self._recorder: _recorder.Recorder | None = None

    # -- context manager -----------------------------------------------------------------------
    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def __exit__(self, *exc) -> bool:
        if not self.enabled:
            return False
        self._stop_trace()
        return False

    def _prepare_trace(self) -> None:
        self.entered = True
        if self._recorder is None or not self.acc_events:
            cls = _recorder.Recorder
            if self.use_device == "cuda":  # the one check: a CPU-only profile never loads the CUDA path
                from ._cuda import CudaRecorder  # lazy: for CUDA profiles only

                cls = CudaRecorder
            self._recorder = cls(self.record_shapes, self.profile_memory, self.with_stack, self.with_flops)

    def _start_trace(self) -> None:
        self.entered = True
        self._recorder.start()

    def _stop_trace(self) -> None:
        self._recorder.stop()
        self.function_events = self._recorder.events()

    # -- results -------------------------------------------------------------------------------
    def _check_finish(self) -> None:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def __repr__(self) -> str:
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self) -> str:
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def events(self) -> EventList:
        self._check_finish()
        return self.function_events

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path: str, *, max_events: int | None = None) -> None:
        """Chrome trace JSON (``.gz``: compressed); at most ``max_events`` ranges (default 1,000,000)."""
        self._check_finish()
        self.function_events.export_chrome_trace(path, max_events=max_events)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Folded stacks for flame graphs (needs ``with_stack=True``)."""
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self) -> FunctionEventAvg:
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """Total CPU time spent in all ranges' own code (microseconds)."""
        self._check_finish()
        return self.function_events.self_cpu_time_total
