"""``toolkit.profiler.profile``: the session with activities, a step schedule and trace callbacks.

    with toolkit.profiler.profile(
        schedule=toolkit.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
        on_trace_ready=toolkit.profiler.tensorboard_trace_handler("./log"),
    ) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

Each step runs inside a ``ProfilerStep#<n>`` range; a cycle's events are handed
to ``on_trace_ready(prof)`` when its last active step ends.
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from functools import partial

from .. import cuda
from ._session import profile as _session
from ._session import record_function
from .events import EventList


class ProfilerActivity(enum.Enum):
    """What to record: host-side ops (``CPU``) and device kernels (``CUDA``, from CUDA events)."""

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during one step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """``CPU``, plus ``CUDA`` when numba finds a GPU."""
    acts = {ProfilerActivity.CPU}
    if cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


def kineto_available() -> bool:
    return True


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable:
    """Step -> action: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup`` and ``active``
    recorded steps, ``repeat`` times (0: until profiling ends)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable:
    """An ``on_trace_ready`` that writes ``<worker>.<ns>.pt.trace.json[.gz]`` into ``dir_name``."""
    def handler_fn(prof) -> None:
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except Exception as e:
            raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """The profiler context manager of ``torch.profiler``; see the module docstring."""

    def __init__(self, *, activities: Iterable | None = None, schedule: Callable | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None, custom_trace_id_callback=None):
        acts = set(activities) if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning,
                          stacklevel=2)
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            else:
                acts.discard(ProfilerActivity.CUDA)
        if not acts:
            raise AssertionError("No valid profiler activities found")
        self.activities = acts
        self.use_device = "cuda" if ProfilerActivity.CUDA in acts else None
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.profiler: _session | None = None
        self.record_steps = bool(schedule)
        self.schedule = schedule if schedule else _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn: record_function | None = None
        self.current_action = self.schedule(self.step_num)
        A = ProfilerAction
        warn = partial(warnings.warn, stacklevel=3)
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warn, "Incorrect schedule: WARMUP followed by NONE"),
                                 self.start_trace, self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warn, "Incorrect schedule: RECORD followed by NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warn, "Incorrect schedule: RECORD followed by WARMUP"),
                                   self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready, self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                            self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                                     self.start_trace],
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    # -- session control ---------------------------------------------------------------------
    def prepare_trace(self) -> None:
        if self.profiler is None or not self.acc_events:
            self.profiler = _session(use_device=self.use_device, record_shapes=self.record_shapes,
                                     with_flops=self.with_flops,
                                     profile_memory=self.profile_memory, with_stack=self.with_stack,
                                     with_modules=self.with_modules, acc_events=self.acc_events)
        self.profiler._prepare_trace()

    def start_trace(self) -> None:
        self.profiler._start_trace()

    def stop_trace(self) -> None:
        if self.profiler is not None and self.profiler._recorder is not None:
            self.profiler._stop_trace()

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev, current) -> None:
        for action in self.action_map.get((prev, current), ()):
            action()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """Signals that the next step starts (the schedule decides whether it is recorded)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    # -- results -------------------------------------------------------------------------------
    def _session(self) -> _session:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        return self.profiler

    def events(self) -> EventList:
        """The last cycle's unaggregated events."""
        return self._session().function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """Events averaged per name (and input shapes / stack frames when asked)."""
        return self._session().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str, use_python_export: bool = False, *,
                            max_events: int | None = None) -> None:
        """Chrome trace of the last cycle (``.gz``: compressed); at most ``max_events`` ranges."""
        self._session().export_chrome_trace(path, max_events=max_events)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Folded stacks for flame graphs (``with_stack=True``)."""
        self._session().export_stacks(path, metric)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Jupyter's rich display, drawn by toolkit.notebook (imported only when a notebook asks)."""
        from ..notebook.reprs import mimebundle  # optional: notebook views, loaded on demand

        return mimebundle(self, include, exclude)
