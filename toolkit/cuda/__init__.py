"""The CUDA device runtime, as ``torch.cuda``: availability, devices, streams, events, memory, seeding.

numba.cuda is imported on the first call that needs it, so ``import toolkit``
stays fast and compiles nothing. Tensors on ``cuda`` hold device arrays from a
caching allocator (see :mod:`toolkit.backends.cuda`).

numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) runs kernels as Python
threads on the CPU. It counts as a CUDA device only when asked for explicitly
with ``TOOLKIT_CUDA_SIMULATOR=1`` in the environment before the first CUDA
call (toolkit then sets ``NUMBA_ENABLE_CUDASIM=1`` itself if numba is not yet
imported); without it the simulator is never mistaken for a GPU. The tests
use it to run every CUDA kernel without a GPU.

Example::

    >>> if toolkit.cuda.is_available():                        # doctest: +SKIP
    ...     x = toolkit.ones(3, device="cuda"); toolkit.cuda.synchronize()
"""

from __future__ import annotations

import functools
import os
import sys
import time

from .._core.device import as_device
from .._core.device import device as _device
from ..random import manual_seed as _seed

__all__ = [
    "Event", "Stream", "current_device", "current_stream", "device_count", "empty_cache", "get_device_name",
    "is_available", "manual_seed", "manual_seed_all", "max_memory_allocated", "memory_allocated",
    "memory_reserved", "reset_peak_memory_stats", "set_device", "simulated", "stream", "synchronize",
]


def simulated() -> bool:
    """True when toolkit runs CUDA on numba's simulator (explicitly enabled with ``TOOLKIT_CUDA_SIMULATOR=1``)."""
    return os.environ.get("TOOLKIT_CUDA_SIMULATOR") == "1" and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _select_simulator() -> None:
    """With ``TOOLKIT_CUDA_SIMULATOR=1``, make numba.cuda the simulator if it is not imported yet."""
    if os.environ.get("TOOLKIT_CUDA_SIMULATOR") != "1" or "numba.cuda" in sys.modules:
        return
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if "numba" in sys.modules:  # numba read its configuration at import: read it again
        sys.modules["numba"].core.config.reload_config()


@functools.lru_cache(maxsize=1)
def is_available() -> bool:
    """True when numba.cuda finds a usable GPU, or the simulator was enabled explicitly (see the module doc)."""
    _select_simulator()
    sim_env = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    if sim_env and not simulated():
        return False
    try:
        from numba import cuda  # optional: numba, never loaded by import toolkit
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    try:
        if sim_env:
            return bool(getattr(cuda, "simulator_enabled", True)) and cuda.is_available()
        return bool(cuda.is_available())
    except Exception:  # a broken driver means no GPU for us
        return False


_state = {"device": 0, "initialized": False}


def _lazy_init() -> None:
    """Check there is a device and register the CUDA kernels (once)."""
    if _state["initialized"]:
        return
    if not is_available():
        raise RuntimeError(
            "Found no NVIDIA driver on your system or CUDA is unavailable: toolkit.cuda needs a GPU visible to "
            "numba.cuda (or TOOLKIT_CUDA_SIMULATOR=1 for numba's simulator)."
        )
    from ..backends import cuda as backend  # optional: the CUDA backend (numba.cuda)

    backend.register_kernels()
    _state["initialized"] = True


def device_count() -> int:
    if not is_available():
        return 0
    from numba import cuda  # optional: numba, never loaded by import toolkit

    return len(cuda.gpus)


def current_device() -> int:
    _lazy_init()
    return _state["device"]


def set_device(device) -> None:
    """Select the device new CUDA tensors go to (``int``, ``'cuda:1'`` or a device)."""
    idx = device if isinstance(device, int) else as_device(device).index
    if idx is None or idx < 0:
        return
    _lazy_init()
    if idx >= device_count():
        raise RuntimeError(f"CUDA error: invalid device ordinal {idx} (device count {device_count()})")
    from numba import cuda  # optional: numba, never loaded by import toolkit

    cuda.select_device(idx)
    _state["device"] = idx


def get_device_name(device=None) -> str:
    _lazy_init()
    from numba import cuda  # optional: numba, never loaded by import toolkit

    if simulated():
        return "numba CUDA simulator"
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device=None) -> None:
    """Wait for every kernel queued on the device."""
    _lazy_init()
    from numba import cuda  # optional: numba, never loaded by import toolkit

    cuda.synchronize()


class Stream:
    """A CUDA stream (numba's); toolkit's kernels run on the default stream, so this orders user work only."""

    def __init__(self, device=None, priority: int = 0):
        _lazy_init()
        from numba import cuda  # optional: numba, never loaded by import toolkit

        default = device is _DEFAULT_MARK
        index = None if default or device is None else as_device(device).index
        self.device = _device("cuda", _state["device"] if index is None else index)
        self.priority = priority
        # The simulator has no default stream (its streams only synchronize): one of its streams stands in.
        self._stream = cuda.default_stream() if default and hasattr(cuda, "default_stream") else cuda.stream()

    def synchronize(self) -> None:
        self._stream.synchronize()

    def query(self) -> bool:
        self._stream.synchronize()
        return True

    def wait_stream(self, stream: Stream) -> None:
        stream.synchronize()

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        event.synchronize()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> None:
        return None


_DEFAULT_MARK = object()


def current_stream(device=None) -> Stream:
    return Stream(_DEFAULT_MARK)


def stream(s: Stream | None):
    """``with toolkit.cuda.stream(s):`` (kernels still queue on the default stream)."""
    return s if s is not None else _NullContext()


class _NullContext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


class Event:
    """A CUDA event; ``elapsed_time`` gives milliseconds between two recorded, timed events.

    Under the simulator (whose device timings are meaningless) events record
    the host clock after synchronizing, which measures the same span.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        _lazy_init()
        self.enable_timing = enable_timing
        self._host_time = None
        self._event = None
        if not simulated():
            from numba import cuda  # optional: numba, never loaded by import toolkit

            self._event = cuda.event(timing=enable_timing)

    def record(self, stream: Stream | None = None) -> None:
        if self._event is not None:
            self._event.record(stream._stream if stream is not None else 0)
        else:
            self._host_time = time.perf_counter()

    def synchronize(self) -> None:
        if self._event is not None:
            self._event.synchronize()

    def wait(self, stream: Stream | None = None) -> None:
        self.synchronize()

    def query(self) -> bool:
        return self._event.query() if self._event is not None else True

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event`` (both recorded, created with ``enable_timing=True``)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._event is not None:
            end_event.synchronize()
            return self._event.elapsed_time(end_event._event)
        if self._host_time is None or end_event._host_time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._host_time - self._host_time) * 1000.0


def _allocator():
    from ..backends.cuda.runtime import ALLOCATOR  # optional: the CUDA backend (numba.cuda)

    return ALLOCATOR


def memory_allocated(device=None) -> int:
    """Bytes held by live CUDA tensors (in the allocator's rounded block sizes)."""
    return _allocator().allocated


def max_memory_allocated(device=None) -> int:
    return _allocator().peak


def reset_peak_memory_stats(device=None) -> None:
    _allocator().reset_peak()


def memory_reserved(device=None) -> int:
    """Bytes the caching allocator holds from the driver: live blocks and cached free ones."""
    return _allocator().reserved


def empty_cache() -> None:
    """Give cached free blocks back to the driver (live tensors keep theirs)."""
    _allocator().empty_cache()


def manual_seed(seed: int) -> None:
    """Seed CUDA random numbers: they are drawn on the host from toolkit's default generator, so this seeds it.

    ``toolkit.rand(..., device='cuda')`` draws with the CPU generator and copies,
    so it equals ``toolkit.rand(...).cuda()`` under the same seed (PyTorch's
    CUDA generator gives other numbers than its CPU one).
    """
    _seed(seed)


manual_seed_all = manual_seed


def is_initialized() -> bool:
    return _state["initialized"]


def init() -> None:
    _lazy_init()
